/*
 * plan_memory.c — greedy best-fit-by-size arena planning.
 *
 * Items that share memory in place form one buffer (a chain: a -> b -> c,
 * each taking over the previous one at the step it dies); a buffer lives
 * from its first item's first step to its last item's last step and is as
 * large as its largest item. Buffers are placed largest first; each goes
 * into the smallest free gap (between buffers already placed that are live
 * at some common step) that holds it, else above all of them.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/plan_memory.h"

typedef struct buffer {
    size_t size, offset;
    int32_t first, last;
    int32_t id; /* for a stable sort */
} buffer;

static size_t round_up(size_t x)
{
    return (x + VN_MEMPLAN_ALIGN - 1) & ~(size_t)(VN_MEMPLAN_ALIGN - 1);
}

static int by_size_desc(const void *pa, const void *pb)
{
    const buffer *a = pa, *b = pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
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

static vn_status solve(vn_mp_item *items, int32_t n, int32_t *root, buffer *bufs, buffer **placed,
                       int32_t *slot, size_t *peak)
{
    int32_t nb = 0;
    for (int32_t i = 0; i < n; i++) /* one buffer per chain */
        if (root[i] == i) {
            slot[i] = nb;
            bufs[nb++] = (buffer){0, 0, items[i].first, items[i].last, i};
        }
    for (int32_t i = 0; i < n; i++) {
        buffer *b = &bufs[slot[root[i]]];
        slot[i] = slot[root[i]];
        size_t size = round_up(items[i].size);
        if (size > b->size) b->size = size;
        if (items[i].last > b->last) b->last = items[i].last;
    }
    /* slot[] refers to creation order; remember each buffer's id before sorting. */
    qsort(bufs, (size_t)nb, sizeof *bufs, by_size_desc);
    int32_t *where = malloc(((size_t)nb + 1) * sizeof *where);
    if (!where) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < nb; i++) where[slot[bufs[i].id]] = i;
    *peak = 0;
    for (int32_t i = 0; i < nb; i++) {
        place(&bufs[i], placed, i);
        insert_sorted(placed, i, &bufs[i]);
        if (bufs[i].offset + bufs[i].size > *peak) *peak = bufs[i].offset + bufs[i].size;
    }
    for (int32_t i = 0; i < n; i++) items[i].offset = bufs[where[slot[i]]].offset;
    free(where);
    return VN_OK;
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
