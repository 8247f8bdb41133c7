/*
 * plan_memory.c — greedy best-fit-by-size arena planning.
 *
 * Items that share memory in place form one buffer (a chain: a -> b -> c,
 * each taking over the previous one at the step it dies); a buffer lives
 * from its first item's first step to its last item's last step and is as
 * large as its largest item. Buffers are placed one by one; each goes into
 * the smallest free gap (between buffers already placed that are live at
 * some common step) that holds it, else above all of them.
 *
 * The order matters and no one order wins everywhere (ties among equal
 * sizes are common: a transformer's activations are mostly one size), so
 * the plan is made for a few orders and the smallest peak kept; largest
 * first, the classic order, is tried first and wins ties.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/plan_memory.h"

typedef struct buffer {
    size_t size, offset;
    int32_t first, last;
    int32_t id; /* creation order: a stable sort, and where `at` keeps its offset */
} buffer;

static size_t round_up(size_t x)
{
    return (x + VN_MEMPLAN_ALIGN - 1) & ~(size_t)(VN_MEMPLAN_ALIGN - 1);
}

static int by_id(const buffer *a, const buffer *b)
{
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Largest first; ties: born first. */
static int by_size_desc(const void *pa, const void *pb)
{
    const buffer *a = pa, *b = pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    return by_id(a, b);
}

/* Largest first; ties: longest lived first. */
static int by_size_then_life(const void *pa, const void *pb)
{
    const buffer *a = pa, *b = pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    int32_t la = a->last - a->first, lb = b->last - b->first;
    if (la != lb) return la > lb ? -1 : 1;
    return by_size_desc(pa, pb);
}

/* Largest first; ties: the one that dies last first. */
static int by_size_then_last(const void *pa, const void *pb)
{
    const buffer *a = pa, *b = pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    if (a->last != b->last) return a->last > b->last ? -1 : 1;
    return by_id(a, b);
}

/* Longest lived first; ties: larger first. */
static int by_life(const void *pa, const void *pb)
{
    const buffer *a = pa, *b = pb;
    int32_t la = a->last - a->first, lb = b->last - b->first;
    if (la != lb) return la > lb ? -1 : 1;
    return by_size_desc(pa, pb);
}

/* Largest size x lifetime first. */
static int by_area(const void *pa, const void *pb)
{
    const buffer *a = pa, *b = pb;
    double aa = (double)a->size * (a->last - a->first + 1);
    double ab = (double)b->size * (b->last - b->first + 1);
    if (aa != ab) return aa > ab ? -1 : 1;
    return by_size_desc(pa, pb);
}

/* In order of birth, larger first among those born together. */
static int by_first(const void *pa, const void *pb)
{
    const buffer *a = pa, *b = pb;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    return by_size_desc(pa, pb);
}

static int by_offset(const void *pa, const void *pb)
{
    const buffer *a = *(const buffer *const *)pa, *b = *(const buffer *const *)pb;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* Follow share links to the chain's first item (links point to items that
 * start strictly earlier, so chains end). */
static int32_t find_root(const int32_t *parent, int32_t i)
{
    while (parent[i] != i) i = parent[i];
    return i;
}

/* Group items into buffers; root[i] is item i's buffer's first item. */
static size_t link_shares(vn_mp_item *items, int32_t n, int32_t *root)
{
    size_t shared = 0;
    char *taken = calloc((size_t)n + 1, 1);
    for (int32_t i = 0; i < n; i++) {
        root[i] = i;
        int32_t s = items[i].share;
        if (!taken || s < 0 || s >= n || s == i || taken[s]) continue;
        if (items[s].last != items[i].first || items[s].first >= items[i].first ||
            round_up(items[s].size) != round_up(items[i].size))
            continue;
        taken[s] = 1;
        root[i] = s; /* a parent link for now */
        shared++;
    }
    free(taken);
    for (int32_t i = 0; i < n; i++) {
        int32_t r = find_root(root, i);
        for (int32_t j = i; root[j] != j;) { /* compress the path */
            int32_t next = root[j];
            root[j] = r;
            j = next;
        }
    }
    return shared;
}

/* Place b in the smallest gap among `placed` (sorted by offset) live with it. */
static void place(buffer *b, buffer **placed, int32_t np)
{
    size_t end = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
    for (int32_t i = 0; i < np; i++) {
        const buffer *p = placed[i];
        if (p->last < b->first || b->last < p->first) continue; /* never live together */
        if (p->offset > end && p->offset - end >= b->size && p->offset - end < best_gap) {
            best_gap = p->offset - end;
            best = end;
        }
        if (p->offset + p->size > end) end = p->offset + p->size;
    }
    b->offset = best != SIZE_MAX ? best : end;
}

/* Insert b into `placed`, keeping it sorted by offset. */
static void insert_sorted(buffer **placed, int32_t np, buffer *b)
{
    int32_t i = np;
    while (i > 0 && by_offset(&placed[i - 1], &b) > 0) {
        placed[i] = placed[i - 1];
        i--;
    }
    placed[i] = b;
}

/* Place every buffer in `order` (its own array, sorted here); returns the
 * peak and each buffer's offset by id in `at`. */
static size_t place_all(buffer *order, int32_t nb, int (*cmp)(const void *, const void *),
                        buffer **placed, size_t *at)
{
    size_t peak = 0;
    qsort(order, (size_t)nb, sizeof *order, cmp);
    for (int32_t i = 0; i < nb; i++) {
        place(&order[i], placed, i);
        insert_sorted(placed, i, &order[i]);
        if (order[i].offset + order[i].size > peak) peak = order[i].offset + order[i].size;
    }
    for (int32_t i = 0; i < nb; i++) at[order[i].id] = order[i].offset;
    return peak;
}

static vn_status solve(vn_mp_item *items, int32_t n, int32_t *root, buffer *bufs, buffer **placed,
                       int32_t *slot, size_t *peak)
{
    static int (*const orders[])(const void *, const void *) = {
        by_size_desc, by_size_then_last, by_size_then_life, by_life, by_area, by_first};
    int32_t nb = 0;
    for (int32_t i = 0; i < n; i++) /* one buffer per chain; its id is its slot */
        if (root[i] == i) {
            slot[i] = nb;
            bufs[nb] = (buffer){0, 0, items[i].first, items[i].last, nb};
            nb++;
        }
    for (int32_t i = 0; i < n; i++) {
        buffer *b = &bufs[slot[root[i]]];
        slot[i] = slot[root[i]];
        size_t size = round_up(items[i].size);
        if (size > b->size) b->size = size;
        if (items[i].last > b->last) b->last = items[i].last;
    }
    size_t nn = (size_t)nb + 1;
    buffer *order = malloc(nn * sizeof *order);
    size_t *at = malloc(nn * sizeof *at), *best = malloc(nn * sizeof *best);
    vn_status st = order && at && best ? VN_OK : VN_ERR_OUT_OF_MEMORY;
    *peak = SIZE_MAX;
    for (size_t o = 0; st == VN_OK && o < sizeof orders / sizeof orders[0]; o++) {
        memcpy(order, bufs, (size_t)nb * sizeof *order);
        size_t p = place_all(order, nb, orders[o], placed, at);
        if (p >= *peak) continue;
        *peak = p;
        memcpy(best, at, (size_t)nb * sizeof *best);
    }
    for (int32_t i = 0; st == VN_OK && i < n; i++) items[i].offset = best[slot[i]];
    if (st != VN_OK || nb == 0) *peak = 0;
    free(order);
    free(at);
    free(best);
    return st;
}

vn_status vn_memplan_solve(vn_mp_item *items, int32_t n, size_t *peak, size_t *sum, size_t *shared)
{
    *peak = *sum = *shared = 0;
    if (n < 0 || (n > 0 && !items))
        return vn_error(VN_ERR_INVALID_ARG, "vn_memplan_solve", "%d items at %p", (int)n,
                        (void *)items);
    for (int32_t i = 0; i < n; i++) {
        if (items[i].first > items[i].last)
            return vn_error(VN_ERR_INVALID_ARG, "vn_memplan_solve",
                            "item %d lives from step %d to %d", (int)i, (int)items[i].first,
                            (int)items[i].last);
        *sum += round_up(items[i].size);
    }
    int32_t *root = malloc(((size_t)n + 1) * sizeof *root);
    int32_t *slot = malloc(((size_t)n + 1) * sizeof *slot);
    buffer *bufs = malloc(((size_t)n + 1) * sizeof *bufs);
    buffer **placed = malloc(((size_t)n + 1) * sizeof *placed);
    vn_status st = root && slot && bufs && placed ? VN_OK : VN_ERR_OUT_OF_MEMORY;
    if (st == VN_OK) *shared = link_shares(items, n, root);
    if (st == VN_OK) st = solve(items, n, root, bufs, placed, slot, peak);
    free(root);
    free(slot);
    free(bufs);
    free(placed);
    if (st != VN_OK)
        return vn_error(st, "vn_memplan_solve", "no memory to plan %d tensors", (int)n);
    return VN_OK;
}
