/*
 * blocks.c — the runtime's block records in a profile (vn_device_profile_drain_blocks):
 * drained at every node's end, they give the node its block count and load
 * imbalance, and the first VN_PROF_BLOCK_RUNS runs a slice per block on its
 * worker's track. A node's blocks are those of the synchronous launches
 * (VN_PROFILE_SYNC) that ran inside its time; in a synchronous run nothing
 * else launches on the device between hooks unless another thread does.
 */
#include <stdlib.h>
#include <string.h>

#include "profile/profiler.h"

/* Grows *buf (of *cap elements of `size` bytes) to hold `need`; false on no memory. */
static bool grow(void **buf, int64_t *cap, int64_t need, size_t size, int64_t limit)
{
    if (need <= *cap) return true;
    int64_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    if (c > limit) return false;
    void *p = realloc(*buf, (size_t)c * size);
    if (!p) return false;
    *buf = p;
    *cap = c;
    return true;
}

/* Everything the device recorded so far, into p->drained; how many. */
static int64_t drain_all(vn_profiler *p)
{
    int64_t n = 0;
    for (;;) {
        if (n == p->cap_drained &&
            !grow((void **)&p->drained, &p->cap_drained, n + 1, sizeof *p->drained, INT64_MAX))
            break;
        uint64_t lost = 0;
        size_t room = (size_t)(p->cap_drained - n);
        size_t got = vn_device_profile_drain_blocks(p->device, p->drained + n, room, &lost);
        p->blocks_dropped += lost;
        n += (int64_t)got;
        if (got < room) return n;
    }
    vn_profile_block sink[64]; /* no memory: the rest are lost */
    size_t got;
    while ((got = vn_device_profile_drain_blocks(p->device, sink, 64, NULL)) > 0)
        p->blocks_dropped += got;
    return n;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The longest of n block times over the median (sorts t). */
static double imbalance(int64_t *t, int64_t n)
{
    qsort(t, (size_t)n, sizeof *t, by_value);
    double median = n % 2 ? (double)t[n / 2] : ((double)t[n / 2 - 1] + (double)t[n / 2]) / 2;
    return median > 0 ? (double)t[n - 1] / median : 1.0;
}

static bool of_node(const vn_profile_block *b, int32_t node, int64_t t0, int64_t t1)
{
    return node >= 0 && b->stream_id == VN_PROFILE_SYNC && b->start_ns >= t0 && b->end_ns <= t1;
}

/* The node's blocks' count and imbalance; their times go to `times` (the
 * drained records' own storage is kept for the slices). */
static void count_node(vn_profiler *p, int32_t node, int64_t n, int64_t t0, int64_t t1)
{
    int64_t times[256], *t = times, k = 0;
    for (int64_t i = 0; i < n; i++) k += of_node(&p->drained[i], node, t0, t1);
    if (k == 0) return;
    if (k > 256 && !(t = malloc((size_t)k * sizeof *t))) return;
    k = 0;
    for (int64_t i = 0; i < n; i++)
        if (of_node(&p->drained[i], node, t0, t1))
            t[k++] = p->drained[i].end_ns - p->drained[i].start_ns;
    vn_profile_node *nd = &p->nodes[node];
    nd->blocks += k;
    p->imbalance_sum[node] += imbalance(t, k);
    p->imbalance_calls[node]++;
    nd->block_imbalance = p->imbalance_sum[node] / (double)p->imbalance_calls[node];
    if (t != times) free(t);
}

static void keep_slices(vn_profiler *p, int32_t node, int64_t n, int64_t t0, int64_t t1)
{
    if (p->runs >= VN_PROF_BLOCK_RUNS || n == 0) return;
    if (!grow((void **)&p->blocks, &p->cap_blocks, p->num_blocks + n, sizeof *p->blocks,
              VN_PROF_MAX_SLICES)) {
        p->blocks_dropped += (uint64_t)n;
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        const vn_profile_block *b = &p->drained[i];
        p->blocks[p->num_blocks++] =
            (vn_prof_block){of_node(b, node, t0, t1) ? node : -1, p->runs, *b};
    }
}

void vn_prof_take_blocks(vn_profiler *p, int32_t node, int64_t t0, int64_t t1)
{
    int64_t n = drain_all(p);
    if (node >= 0) count_node(p, node, n, t0, t1);
    keep_slices(p, node, n, t0, t1);
}
