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

typedef struct block_time {
    uint64_t launch; /* the synchronous launch that ran it */
    int64_t ns;
} block_time;

static int by_launch_then_time(const void *a, const void *b)
{
    const block_time *x = a, *y = b;
    if (x->launch != y->launch) return x->launch < y->launch ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* The longest of a launch's n block times (sorted) over their median. */
static double launch_imbalance(const block_time *t, int64_t n)
{
    double median =
        n % 2 ? (double)t[n / 2].ns : ((double)t[n / 2 - 1].ns + (double)t[n / 2].ns) / 2;
    return median > 0 ? (double)t[n - 1].ns / median : 1.0;
}

/* A call's imbalance: each launch's (a node may launch several kernels, an
 * im2col then a GEMM, whose blocks are not comparable), weighted by the
 * launch's longest block, the time it costs the node (sorts t). */
static double call_imbalance(block_time *t, int64_t n)
{
    qsort(t, (size_t)n, sizeof *t, by_launch_then_time);
    double sum = 0, weight = 0;
    for (int64_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && t[j].launch == t[i].launch;) j++;
        double w = (double)t[j - 1].ns > 0 ? (double)t[j - 1].ns : 1.0;
        sum += w * launch_imbalance(t + i, j - i), weight += w;
    }
    return sum / weight;
}

static bool of_node(const vn_profile_block *b, int32_t node, int64_t t0, int64_t t1)
{
    return node >= 0 && b->stream_id == VN_PROFILE_SYNC && b->start_ns >= t0 && b->end_ns <= t1;
}

/* The node's blocks' count and imbalance (the drained records' own storage
 * is kept for the slices). */
static void count_node(vn_profiler *p, int32_t node, int64_t n, int64_t t0, int64_t t1)
{
    block_time times[256], *t = times;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += of_node(&p->drained[i], node, t0, t1);
    if (k == 0) return;
    if (k > 256 && !(t = malloc((size_t)k * sizeof *t))) return;
    k = 0;
    for (int64_t i = 0; i < n; i++)
        if (of_node(&p->drained[i], node, t0, t1))
            t[k++] =
                (block_time){p->drained[i].task, p->drained[i].end_ns - p->drained[i].start_ns};
    vn_profile_node *nd = &p->nodes[node];
    nd->blocks += k;
    p->imbalance_sum[node] += call_imbalance(t, k);
    p->imbalance_calls[node]++;
    nd->block_imbalance = p->imbalance_sum[node] / (double)p->imbalance_calls[node];
    if (t != times) free(t);
}

static void keep_slices(vn_profiler *p, int32_t node, int64_t n, int64_t t0, int64_t t1)
{
    if (p->runs >= VN_PROF_BLOCK_RUNS || n == 0) return;
    if (!vn_prof_grow((void **)&p->blocks, &p->cap_blocks, p->num_blocks + n, sizeof *p->blocks,
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
    int64_t n = vn_prof_drain(p->device, VN_PROF_BLOCKS, (void **)&p->drained, 0, &p->cap_drained,
                              INT64_MAX, &p->blocks_dropped);
    if (node >= 0) count_node(p, node, n, t0, t1);
    keep_slices(p, node, n, t0, t1);
}
