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
#include "bench_util.h"

#define PAIRS 2000 /* pairs per timed repetition */

static void *volatile sink; /* keeps the compiler from removing malloc/free pairs */

typedef enum { PEER_VINCI, PEER_MALLOC, PEER_MEMALIGN, PEER_CALLS, PEER_COUNT } peer;

static void *peer_alloc(peer k, size_t n)
{
    void *p = NULL;
    if (k == PEER_VINCI) {
        if (vn_mem_alloc(NULL, NULL, n, &p) != VN_OK) return NULL;
    } else if (k == PEER_MALLOC) {
        p = malloc(n);
    } else if (k == PEER_CALLS) {
        p = (void *)vn_status_name(VN_OK); /* a non-NULL pointer nobody writes */
    } else if (posix_memalign(&p, 64, n) != 0) {
        p = NULL;
    }
    return p;
}

static void peer_free(peer k, void *p)
{
    if (k == PEER_VINCI)
        vn_mem_free(p);
    else if (k == PEER_CALLS)
        sink = (void *)vn_status_name(VN_ERR_INTERNAL);
    else
        free(p);
}

/* Median ns per pair; `touch` writes one byte per page of the block. */
static double pair_ns(peer k, size_t n, int reps, bool touch)
{
    double ns[128];
    /* Fewer pairs where each one is slow (page faults, mmap), to bound the run. */
    size_t budget = touch ? (size_t)64 << 20 : (size_t)1 << 30;
    int pairs = n * PAIRS > budget ? (int)(budget / n) : PAIRS;
    if (pairs < 2) pairs = 2;
    if (reps > 128) reps = 128;
    for (int r = 0; r <= reps; r++) {
        double t0 = bench_now_ms();
        for (int i = 0; i < pairs; i++) {
            char *p = peer_alloc(k, n);
            if (!p) return -1.0;
            if (touch)
                for (size_t off = 0; off < n; off += 4096) p[off] = (char)i;
            sink = p;
            peer_free(k, p);
        }
        if (r > 0) ns[r - 1] = (bench_now_ms() - t0) * 1e6 / pairs; /* first run warms up */
    }
    return bench_median(ns, reps);
}

static void table(const size_t *sizes, int n_sizes, int reps, bool touch)
{
    printf("%-9s %10s %10s %10s %10s %10s %10s %10s\n", "size", "vn_mem ns", "malloc ns",
           "memalign", "x malloc", "x memalign", "2 calls", "bound");
    for (int i = 0; i < n_sizes; i++) {
        double t[PEER_COUNT];
        for (int k = 0; k < PEER_COUNT; k++)
            t[k] = k == PEER_CALLS && touch ? -1.0 : pair_ns((peer)k, sizes[i], reps, touch);
        char label[32];
        if (sizes[i] >= (1u << 20))
            snprintf(label, sizeof label, "%zu MiB", sizes[i] >> 20);
        else if (sizes[i] >= 1024)
            snprintf(label, sizeof label, "%zu KiB", sizes[i] >> 10);
        else
            snprintf(label, sizeof label, "%zu B", sizes[i]);
        printf("%-9s %10.1f %10.1f %10.1f %9.1fx %9.1fx", label, t[PEER_VINCI], t[PEER_MALLOC],
               t[PEER_MEMALIGN], t[PEER_MALLOC] / t[PEER_VINCI], t[PEER_MEMALIGN] / t[PEER_VINCI]);
        if (t[PEER_CALLS] > 0)
            printf(" %10.1f %9.1fx", t[PEER_CALLS], t[PEER_MALLOC] / t[PEER_CALLS]);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 31;
    if (reps < 1) reps = 1;
    /* The four sizes of the issue, plus 64 MiB: above glibc's largest mmap
     * threshold (32 MiB), where every malloc is a fresh mapping. */
    static const size_t sizes[] = {64, 4096, 256u << 10, 4u << 20, 64u << 20};
    printf(
        "bench_alloc: alloc + free pairs of one cached size, median of %d reps of up to %d pairs\n",
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
