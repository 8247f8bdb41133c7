/*
 * bench_pairs.h — one timed loop of alloc + free pairs of one size, shared by
 * bench_alloc (the full table) and bench_runtime (the summary row),
 * so that both print the same figure for the same call.
 *
 * The loop is written out once per allocator (a macro under a switch taken
 * before the loop), so no allocator pays for a dispatch inside it: each pair
 * is the two calls, an optional write per 4 KiB page and a store of the
 * pointer to a volatile sink (which keeps the compiler from removing a
 * malloc / free pair).
 */
#ifndef VINCI_BENCH_PAIRS_H
#define VINCI_BENCH_PAIRS_H

#include <stdbool.h>

#include "bench_util.h"

typedef enum {
    PAIR_VINCI,    /* vn_mem_alloc / vn_mem_free on the default stream */
    PAIR_MALLOC,   /* malloc / free */
    PAIR_MEMALIGN, /* posix_memalign(64) / free: what device memory would use uncached */
    PAIR_CALLS,    /* two calls of a trivial libvinci function: any allocator's floor */
    PAIR_PEERS
} pair_peer;

static void *volatile bench_pair_sink;

static inline void *bench_vn_alloc(size_t n)
{
    void *p = NULL;
    return vn_mem_alloc(NULL, NULL, n, &p) == VN_OK ? p : NULL;
}

static inline void *bench_memalign(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}

/* `pairs` pairs of ALLOC (an expression of n) and FREE (a statement on p). */
#define BENCH_PAIR_LOOP(ALLOC, FREE)                                                               \
    for (int i = 0; i < pairs; i++) {                                                              \
        char *p = (char *)(ALLOC);                                                                 \
        if (!p) return -1.0;                                                                       \
        if (touch)                                                                                 \
            for (size_t off = 0; off < n; off += 4096) p[off] = (char)i;                           \
        bench_pair_sink = p;                                                                       \
        FREE;                                                                                      \
    }

/* ns per pair over `pairs` pairs of size n (-1 when an allocation fails);
 * touch: one byte written per 4 KiB page of each block. */
static inline double bench_pair_ns(pair_peer k, size_t n, int pairs, bool touch)
{
    double t0 = bench_now_ms();
    switch (k) {
    case PAIR_VINCI:
        BENCH_PAIR_LOOP(bench_vn_alloc(n), vn_mem_free(p))
        break;
    case PAIR_MALLOC:
        BENCH_PAIR_LOOP(malloc(n), free(p))
        break;
    case PAIR_MEMALIGN:
        BENCH_PAIR_LOOP(bench_memalign(n), free(p))
        break;
    default: /* a non-NULL pointer nobody writes (touch is not used with it) */
        BENCH_PAIR_LOOP(vn_status_name(VN_OK),
                        bench_pair_sink = (void *)vn_status_name(VN_ERR_INTERNAL))
        break;
    }
    return (bench_now_ms() - t0) * 1e6 / pairs;
}

#define BENCH_PAIR_MAX_REPS 128

/* ns per pair of each of `count` peers over `reps` repetitions, interleaved
 * (peer after peer within a repetition, so that a burst of a noisy host hits
 * every peer alike) after one warm-up pass each (the first pairs take memory
 * from the OS): ns[i][r]. false when an allocation failed. */
static inline bool bench_pair_reps(const pair_peer *peers, int count, size_t n, int pairs, int reps,
                                   bool touch, double ns[][BENCH_PAIR_MAX_REPS])
{
    for (int r = -1; r < reps && r < BENCH_PAIR_MAX_REPS; r++)
        for (int i = 0; i < count; i++) {
            double t = bench_pair_ns(peers[i], n, pairs, touch);
            if (t < 0) return false;
            if (r >= 0) ns[i][r] = t;
        }
    return true;
}

/* "64 B", "4 KiB", "64 MiB". */
static inline void bench_size_label(char label[32], size_t n)
{
    if (n >= (1u << 20))
        snprintf(label, 32, "%zu MiB", n >> 20);
    else if (n >= 1024)
        snprintf(label, 32, "%zu KiB", n >> 10);
    else
        snprintf(label, 32, "%zu B", n);
}

#endif /* VINCI_BENCH_PAIRS_H */
