/*
 * bench_alloc.c — the caching allocator against the C heap, in the same run.
 *
 * Table 1: one alloc + free pair of a cached size (ns, median of many
 * repetitions), for vn_mem_alloc/vn_mem_free, malloc/free and the 64-byte
 * aligned heap peer posix_memalign/free (what device memory would use
 * without the cache), and the speed-up over each.
 * Table 2: the same pair plus writing one byte per 4 KiB page, which is what a
 * real buffer costs: memory the heap returns to the OS must be faulted in
 * again, while a cached block keeps its pages.
 * glibc's malloc is itself a caching allocator below its mmap threshold (which
 * adapts up to 32 MiB), so the gap shows at the 64 MiB row and against the
 * 64-byte aligned peer.
 * Column "2 calls": the same loop calling a trivial libvinci function
 * (vn_status_name) in place of alloc and free: the floor of any allocator
 * behind a shared library's call boundary, so "x malloc" cannot exceed
 * malloc ns / that floor (printed as "bound").
 *
 *   bench_alloc [reps]    (default 31 repetitions)
 */
#include "bench_pairs.h"

#define PAIRS 2000 /* pairs per timed repetition */

/* One row per size: the median ns per pair of each peer (the floor of two
 * calls only without touch: it allocates nothing to write). */
static void table(const size_t *sizes, int n_sizes, int reps, bool touch)
{
    static const pair_peer peers[PAIR_PEERS] = {PAIR_VINCI, PAIR_MALLOC, PAIR_MEMALIGN, PAIR_CALLS};
    static double ns[PAIR_PEERS][BENCH_PAIR_MAX_REPS];
    printf("%-9s %10s %10s %10s %10s %10s %10s %10s\n", "size", "vn_mem ns", "malloc ns",
           "memalign", "x malloc", "x memalign", "2 calls", "bound");
    for (int i = 0; i < n_sizes; i++) {
        /* Fewer pairs where each one is slow (page faults, mmap), to bound the run. */
        size_t budget = touch ? (size_t)64 << 20 : (size_t)1 << 30;
        int pairs = sizes[i] * PAIRS > budget ? (int)(budget / sizes[i]) : PAIRS;
        if (pairs < 2) pairs = 2;
        int count = touch ? PAIR_CALLS : PAIR_PEERS;
        char label[32];
        bench_size_label(label, sizes[i]);
        if (!bench_pair_reps(peers, count, sizes[i], pairs, reps, touch, ns)) {
            printf("%-9s allocation failed\n", label);
            continue;
        }
        double t[PAIR_PEERS];
        for (int k = 0; k < count; k++) t[k] = bench_median(ns[k], reps);
        printf("%-9s %10.1f %10.1f %10.1f %9.1fx %9.1fx", label, t[PAIR_VINCI], t[PAIR_MALLOC],
               t[PAIR_MEMALIGN], t[PAIR_MALLOC] / t[PAIR_VINCI], t[PAIR_MEMALIGN] / t[PAIR_VINCI]);
        if (!touch) printf(" %10.1f %9.1fx", t[PAIR_CALLS], t[PAIR_MALLOC] / t[PAIR_CALLS]);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 31;
    if (reps < 1) reps = 1;
    if (reps > BENCH_PAIR_MAX_REPS) reps = BENCH_PAIR_MAX_REPS;
    /* The four sizes of the issue, plus 64 MiB: above glibc's largest mmap
     * threshold (32 MiB), where every malloc is a fresh mapping. */
    static const size_t sizes[] = {64, 4096, 256u << 10, 4u << 20, 64u << 20};
    printf("bench_alloc: alloc + free pairs of one cached size, median of %d interleaved reps of "
           "up to "
           "%d pairs\n",
           reps, PAIRS);
    table(sizes, 5, reps, false);
    printf("\nalloc + write one byte per 4 KiB page + free\n");
    table(sizes + 1, 4, reps, true);
    vn_mem_stats s;
    if (vn_mem_stats_get(NULL, &s) == VN_OK)
        printf("\nvn_mem: %llu allocations, %llu cache hits, %llu misses, peak reserved %llu B\n",
               (unsigned long long)s.num_allocs, (unsigned long long)s.cache_hits,
               (unsigned long long)s.cache_misses, (unsigned long long)s.peak_reserved);
    return 0;
}
