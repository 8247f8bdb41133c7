/*
 * bench_util.h — what every vinci benchmark shares: a clock, medians, and the
 * STREAM triad that serves as the memory-bandwidth peer measured in the same run.
 *
 * Benchmarks report medians of several repetitions and ratios against a peer
 * measured in the same process, because the machines are shared and noisy.
 */
#ifndef VINCI_BENCH_UTIL_H
#define VINCI_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xmmintrin.h>

#include "vinci/vinci.h"

static inline double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Sleep so that a peer's idle threads stop spinning before vinci is timed:
 * after a call, OpenMP (oneDNN) threads busy-wait for a few ms and OpenBLAS
 * threads for ~2^28 cycles (~0.1 s) before they sleep; with 2 threads on 2
 * CPUs those spinners would take a CPU from vinci's next measurement. */
static inline void bench_quiesce(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Calls of `stmt` back to back for at least BENCH_WARM_MS before a contender
 * is timed; `last_ms` gets the last call's time (what the timing loops size
 * their samples by). After an idle spell (bench_quiesce) a VM's other vCPU
 * can run 2-thread work at 1-thread speed for 10-30 ms: on the Xeon VM of
 * 2026-12-07 a 3136 x 64 x 576 GEMM took 1.4 ms a run instead of 0.72 for
 * the first 10-20 runs after a 200 ms sleep (none after 20 ms), which made
 * bench_gemm's unpacked column, timed right after its quiesce, read 0.54x
 * oneDNN at 2 threads where the packed one read 1.04x. Every contender gets
 * the same warm-up, so each is timed in its steady state. */
#define BENCH_WARM_MS 30.0
#define BENCH_WARM(last_ms, stmt)                                                                  \
    do {                                                                                           \
        double w0_ = bench_now_ms(), t_;                                                           \
        do {                                                                                       \
            t_ = bench_now_ms();                                                                   \
            stmt;                                                                                  \
            (last_ms) = bench_now_ms() - t_;                                                       \
        } while (bench_now_ms() - w0_ < BENCH_WARM_MS);                                            \
    } while (0)

/* ---- STREAM triad a = b + s*c, spread over the device's workers ---------- */

typedef struct bench_triad {
    float *a;
    const float *b, *c;
    int64_t n;
    int32_t blocks;
} bench_triad;

static void bench_triad_range(const bench_triad *t, int32_t block, int64_t *lo, int64_t *hi)
{
    int64_t per = (t->n + t->blocks - 1) / t->blocks;
    per = (per + 15) / 16 * 16; /* keep each block's start 64-byte aligned */
    *lo = per * block < t->n ? per * block : t->n;
    *hi = *lo + per < t->n ? *lo + per : t->n;
}

static void bench_triad_block(void *ctx, int32_t worker, int32_t block)
{
    const bench_triad *t = ctx;
    int64_t lo, hi;
    bench_triad_range(t, block, &lo, &hi);
    float *restrict a = t->a;
    const float *restrict b = t->b, *restrict c = t->c;
    for (int64_t i = lo; i < hi; i++) a[i] = b[i] + 3.0f * c[i];
}

/* The same triad with non-temporal stores (no read-for-ownership of `a`), the
 * way tuned STREAM builds run it: the stronger of the two is the peer. */
static void bench_triad_nt_block(void *ctx, int32_t worker, int32_t block)
{
    const bench_triad *t = ctx;
    int64_t lo, hi, i;
    bench_triad_range(t, block, &lo, &hi);
    const __m128 s = _mm_set1_ps(3.0f);
    for (i = lo; i + 4 <= hi; i += 4)
        _mm_stream_ps(t->a + i,
                      _mm_add_ps(_mm_loadu_ps(t->b + i), _mm_mul_ps(s, _mm_loadu_ps(t->c + i))));
    for (; i < hi; i++) t->a[i] = t->b[i] + 3.0f * t->c[i];
    _mm_sfence();
}

static inline double bench_triad_run(vn_device *dev, bench_triad *t, vn_block_fn fn, int reps)
{
    double ms[64];
    if (reps > 64) reps = 64;
    for (int r = 0; r < reps + 1; r++) {
        double t0 = bench_now_ms();
        vn_device_run_blocks(dev, t->blocks, fn, t);
        if (r > 0) ms[r - 1] = bench_now_ms() - t0; /* first run warms up */
    }
    return 3.0 * 4.0 * (double)t->n / (bench_median(ms, reps) * 1e6);
}

/* Median triad bandwidth in GB/s (STREAM counting: 3 arrays, no write-allocate),
 * the better of plain stores and non-temporal stores. `a` must be 64-byte aligned. */
static inline double bench_triad_gbs(vn_device *dev, float *a, const float *b, const float *c,
                                     int64_t n, int reps)
{
    bench_triad t = {a, b, c, n, vn_device_num_workers(dev)};
    double plain = bench_triad_run(dev, &t, bench_triad_block, reps);
    double nt = bench_triad_run(dev, &t, bench_triad_nt_block, reps);
    return plain > nt ? plain : nt;
}

/* Fill with a cheap deterministic pattern in [-1, 1). */
static inline void bench_fill(float *x, int64_t n, uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 1u;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) * (1.0f / 8388608.0f) - 1.0f;
    }
}

#endif /* VINCI_BENCH_UTIL_H */
