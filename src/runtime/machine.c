/*
 * machine.c — vn_machine_measure: this machine's compute and bandwidth peaks.
 *
 * Each figure is a short micro-benchmark run on the device's workers, one
 * block per thread. A block waits at a spin barrier until every thread of the
 * run has arrived, so the threads really run at once, then times its own loop;
 * a run's rate is all threads' work over (last end - first start). The loop
 * length is calibrated to a target time per run, and the reported figure is the
 * median of RUNS runs, which shrugs off the odd run a busy machine disturbs.
 *
 * Bandwidth loops use ordinary (cached) loads and stores and are counted the
 * STREAM way: the bytes the loop names, not the write-allocate reads that the
 * stores cause, so the DRAM figures are below the bus traffic (by a third for
 * copy, a quarter for triad) exactly as STREAM's are.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <xmmintrin.h>

#include "base/amx_tiles.h"
#include "runtime/machine_isa.h"
#include "vinci/machine.h"

#define RUNS               7     /* runs per figure; the median is reported */
#define COMPUTE_TARGET_S   0.015 /* time of one compute run */
#define BANDWIDTH_TARGET_S 0.020 /* time of one bandwidth run (at least one pass) */
#define CALIBRATE_MIN_S    0.002 /* a calibration run shorter than this is too noisy to scale */
#define CALIBRATE_RUNS     3     /* calibration keeps the fastest of these */
#define BARRIER_TIMEOUT_S  1.0   /* a worker the host never schedules must not hang us */
#define DRAM_ARRAY_BYTES   ((size_t)256 << 20) /* far beyond any L3 a VM sees */
#define MIN_DRAM_ARRAY     ((size_t)16 << 20)
#define L2_FOOTPRINT       ((size_t)256 << 10) /* > L1d, well inside any L2 */
#define CHUNK_FLOATS       64                  /* the bandwidth loops' unit (machine_isa.h) */
/* Gap between arrays (17 cache lines): b[i] and c[i] then sit at different
 * offsets within a 4 KiB page from a[i], which avoids 4K-aliasing stalls. */
#define PAD_FLOATS 272

typedef enum bench_kind {
    B_FMA512,
    B_FMA256,
    B_BF16,
    B_INT8,
    B_AMX_BF16,
    B_AMX_INT8,
    B_TRIAD,
    B_COPY
} bench_kind;

/* Thread t's arrays: a = base + t * thread_stride, b = a + array_stride,
 * c = b + array_stride, each `slice` floats (a multiple of CHUNK_FLOATS). */
typedef struct arrays {
    float *base;
    size_t slice, array_stride, thread_stride;
} arrays;

typedef struct bench {
    bench_kind kind;
    vn_isa isa; /* picks the bandwidth loop */
    arrays arr;
    int64_t iters; /* per thread: loop iterations (compute) or passes (bandwidth) */
    int32_t threads;
    atomic_int arrived;
    double *start, *end; /* per block, seconds */
    atomic_int_least32_t sink;
} bench;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the plain C loops (VINCI_ISA=scalar) ------------------------------- */

/* noinline plus the barrier between passes keep the compiler from merging or
 * dropping repeated passes over the same data. */
__attribute__((noinline)) static void triad_c(float *restrict a, const float *restrict b,
                                              const float *restrict c, float s, size_t n)
{
    for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

/* The copy loop must not become a memcpy call: glibc's memcpy switches to
 * non-temporal stores for large sizes, which would no longer be this loop.
 * The empty asm hides that the stored value is the loaded one, which stops
 * gcc and clang from recognising the idiom. SSE2 is baseline x86-64, which
 * is what the compiler would vectorise the plain loop to anyway. */
__attribute__((noinline)) static void copy_c(float *restrict a, const float *restrict b, size_t n)
{
    for (size_t i = 0; i < n; i += 4) {
        __m128 v = _mm_load_ps(b + i);
        __asm__("" : "+x"(v));
        _mm_store_ps(a + i, v);
    }
}

/* ---- one block: the barrier, then the timed loop ------------------------ */

static void wait_for_all(bench *b)
{
    atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel);
    double deadline = now_s() + BARRIER_TIMEOUT_S;
    while (atomic_load_explicit(&b->arrived, memory_order_acquire) < b->threads) {
        if (now_s() > deadline) break; /* measure anyway: one bad run, not a hang */
        sched_yield();                 /* on a shared CPU, let the late worker run */
    }
}

typedef void (*triad_fn)(float *restrict, const float *restrict, const float *restrict, float,
                         size_t);
typedef void (*copy_fn)(float *restrict, const float *restrict, size_t);

static void run_bandwidth(bench *b, int32_t block)
{
    triad_fn triad = b->isa == VN_ISA_AVX512 ? vn_machine_triad_avx512
                     : b->isa == VN_ISA_AVX2 ? vn_machine_triad_avx2
                                             : triad_c;
    copy_fn copy = b->isa == VN_ISA_AVX512 ? vn_machine_copy_avx512
                   : b->isa == VN_ISA_AVX2 ? vn_machine_copy_avx2
                                           : copy_c;
    float *a = b->arr.base + (size_t)block * b->arr.thread_stride;
    float *x = a + b->arr.array_stride, *y = x + b->arr.array_stride;
    for (int64_t p = 0; p < b->iters; p++) {
        if (b->kind == B_TRIAD)
            triad(a, x, y, 3.0f, b->arr.slice);
        else
            copy(a, x, b->arr.slice);
        __asm__ __volatile__("" ::: "memory");
    }
}

/* The result goes to an atomic sink: an observable store the compiler must
 * compute, and no data race when several blocks write it at once. */
static void sink(bench *b, double v)
{
    atomic_store_explicit(&b->sink, (int32_t)v, memory_order_relaxed);
}

static void run_kernel(bench *b, int32_t block)
{
    /* Operands that keep every accumulator bounded: acc * (1 - 1e-6) + 1e-6
     * converges to 1; the bf16 pair (1, 1) . (1, -1) and the int8 quad
     * (1,1,1,1) . (1,-1,1,-1) add exactly 0. */
    switch (b->kind) {
    case B_FMA512:
        sink(b, vn_machine_fma_avx512(b->iters, 0.999999f, 1e-6f));
        break;
    case B_FMA256:
        sink(b, vn_machine_fma_avx2(b->iters, 0.999999f, 1e-6f));
        break;
    case B_BF16:
        sink(b, vn_machine_bf16_avx512(b->iters, 0x3f803f80u, 0xbf803f80u));
        break;
    case B_INT8:
        sink(b, vn_machine_int8_avx512(b->iters, 0x01010101u, 0xff01ff01u));
        break;
    case B_AMX_BF16:
        sink(b, vn_machine_bf16_amx(b->iters, 0x3f803f80u, 0xbf803f80u));
        break;
    case B_AMX_INT8:
        sink(b, vn_machine_int8_amx(b->iters, 0x01010101u, 0xff01ff01u));
        break;
    case B_TRIAD:
    case B_COPY:
        run_bandwidth(b, block);
        break;
    }
}

static void bench_block(void *ctx, int32_t worker, int32_t block)
{
    bench *b = ctx;
    wait_for_all(b);
    double t0 = now_s();
    run_kernel(b, block);
    b->end[block] = now_s();
    b->start[block] = t0;
}

/* One run on b->threads workers: the seconds from the first start to the last end. */
static vn_status run_once(vn_device *dev, bench *b, double *seconds)
{
    atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
    vn_status st = vn_device_run_blocks(dev, b->threads, bench_block, b);
    if (st != VN_OK) return st;
    double lo = b->start[0], hi = b->end[0];
    for (int32_t t = 1; t < b->threads; t++) {
        lo = fmin(lo, b->start[t]);
        hi = fmax(hi, b->end[t]);
    }
    *seconds = fmax(hi - lo, 1e-9);
    return VN_OK;
}

/* Sets b->iters so one run takes about `target` seconds (at least 1). */
/* The fastest of CALIBRATE_RUNS runs: a run in which a worker was
 * descheduled only ever looks slower, and one such run would otherwise
 * scale every later run down to microseconds, where start-up skew decides the
 * rate (a shared 2-CPU VM measured 0.3 instead of 128 GFLOP/s). */
static vn_status fastest_run(vn_device *dev, bench *b, double *seconds)
{
    *seconds = INFINITY;
    for (int r = 0; r < CALIBRATE_RUNS; r++) {
        double t = 0;
        vn_status st = run_once(dev, b, &t);
        if (st != VN_OK) return st;
        *seconds = fmin(*seconds, t);
    }
    return VN_OK;
}

static vn_status calibrate(vn_device *dev, bench *b, int64_t first, double target)
{
    double t = 0;
    for (b->iters = first;; b->iters *= 8) {
        vn_status st = fastest_run(dev, b, &t);
        if (st != VN_OK) return st;
        if (t >= CALIBRATE_MIN_S || b->iters > ((int64_t)1 << 40)) break;
    }
    double scaled = (double)b->iters * target / t;
    b->iters = scaled < 1 ? 1 : (int64_t)scaled;
    return VN_OK;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median over RUNS runs of (work per thread per iteration x threads x iters)
 * per second, in units of 1e9. */
static vn_status median_rate(vn_device *dev, bench *b, double work_per_iter, double *out)
{
    double rate[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t = 0;
        vn_status st = run_once(dev, b, &t);
        if (st != VN_OK) return st;
        rate[r] = work_per_iter * (double)b->iters * b->threads / t * 1e-9;
    }
    qsort(rate, RUNS, sizeof rate[0], cmp_double);
    *out = rate[RUNS / 2];
    return VN_OK;
}

/* ---- the figures -------------------------------------------------------- */

static vn_status measure_compute(vn_device *dev, bench *b, bench_kind kind, double op_per_iter,
                                 int32_t workers, double out[2])
{
    b->kind = kind;
    for (int i = 0; i < 2; i++) {
        b->threads = i == 0 ? 1 : workers;
        if (i == 1 && workers == 1) {
            out[1] = out[0];
            break;
        }
        vn_status st = calibrate(dev, b, 1024, COMPUTE_TARGET_S);
        if (st == VN_OK) st = median_rate(dev, b, op_per_iter, &out[i]);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

/* Triad and copy over `arr` (set up for `workers` threads): with 1 thread
 * only thread 0's arrays are used. `split`: the threads share the arrays
 * (DRAM, each a slice) rather than each owning a full set (L2). */
static vn_status measure_bandwidth(vn_device *dev, bench *b, const arrays *arr, bool split,
                                   int32_t workers, double triad[2], double copy[2])
{
    for (int k = 0; k < 2; k++) {
        b->kind = k == 0 ? B_TRIAD : B_COPY;
        double *out = k == 0 ? triad : copy;
        for (int i = 0; i < 2; i++) {
            b->threads = i == 0 ? 1 : workers;
            if (i == 1 && workers == 1) {
                out[1] = out[0];
                break;
            }
            b->arr = *arr;
            /* The L2 triad keeps three arrays in the footprint copy fills with two. */
            if (!split && k == 0) b->arr.slice = arr->slice * 2 / 3 / CHUNK_FLOATS * CHUNK_FLOATS;
            if (split && b->threads > 1) {
                b->arr.slice = arr->slice / (size_t)b->threads / CHUNK_FLOATS * CHUNK_FLOATS;
                b->arr.thread_stride = b->arr.slice;
            }
            double bytes = (k == 0 ? 12.0 : 8.0) * (double)b->arr.slice;
            vn_status st = calibrate(dev, b, 1, BANDWIDTH_TARGET_S);
            if (st == VN_OK) st = median_rate(dev, b, bytes, &out[i]);
            if (st != VN_OK) return st;
        }
    }
    return VN_OK;
}

/* First touch by the workers that will use the memory; b = 1, c = 2. */
static void init_block(void *ctx, int32_t worker, int32_t block)
{
    const bench *b = ctx;
    float *a = b->arr.base + (size_t)block * b->arr.thread_stride;
    for (size_t i = 0; i < b->arr.slice; i++) {
        a[i] = 0.0f;
        a[b->arr.array_stride + i] = 1.0f;
        a[2 * b->arr.array_stride + i] = 2.0f;
    }
}

static vn_status init_arrays(vn_device *dev, bench *b, const arrays *arr, int32_t threads)
{
    b->arr = *arr;
    return vn_device_run_blocks(dev, threads, init_block, b);
}

static vn_status measure_l2(vn_device *dev, bench *b, int32_t workers, vn_machine_peaks *out)
{
    size_t footprint = L2_FOOTPRINT;
    int32_t l2 = vn_cpu_features_get()->l2_bytes;
    if (l2 > 0 && (size_t)l2 < 2 * footprint) footprint = (size_t)l2 / 2;
    arrays arr = {0};
    arr.slice = footprint / (2 * sizeof(float)) / CHUNK_FLOATS * CHUNK_FLOATS; /* copy: 2 arrays */
    arr.array_stride = arr.slice + PAD_FLOATS;
    arr.thread_stride = 3 * arr.array_stride + 1024; /* + 4 KiB: threads apart */
    arr.base = vn_aligned_alloc(arr.thread_stride * (size_t)workers * sizeof(float), 64);
    if (!arr.base) return VN_ERR_OUT_OF_MEMORY;
    out->l2_bytes_per_thread = (int64_t)(2 * arr.slice * sizeof(float));
    vn_status st = init_arrays(dev, b, &arr, workers);
    if (st == VN_OK)
        st = measure_bandwidth(dev, b, &arr, false, workers, out->l2_triad_gbs, out->l2_copy_gbs);
    vn_aligned_free(arr.base);
    return st;
}

/* Maps three arrays of up to DRAM_ARRAY_BYTES, halving while the map fails. */
static void *map_dram(arrays *arr, size_t *mapped)
{
    for (size_t bytes = DRAM_ARRAY_BYTES; bytes >= MIN_DRAM_ARRAY; bytes /= 2) {
        arr->slice = bytes / sizeof(float);
        arr->array_stride = arr->slice + PAD_FLOATS;
        arr->thread_stride = arr->slice; /* one thread owns the whole arrays */
        *mapped = 3 * arr->array_stride * sizeof(float);
        void *p = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) continue;
#ifdef MADV_HUGEPAGE
        /* Large pages, where allowed, spare the loop TLB misses and the first
         * touch most of its page faults. Advice only: failure is harmless. */
        madvise(p, *mapped, MADV_HUGEPAGE);
#endif
        return p;
    }
    return NULL;
}

static vn_status measure_dram(vn_device *dev, bench *b, int32_t workers, vn_machine_peaks *out)
{
    arrays arr = {0};
    size_t mapped = 0;
    arr.base = map_dram(&arr, &mapped);
    if (!arr.base)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_machine_measure",
                        "cannot map 3 x %zu MiB for the DRAM bandwidth", MIN_DRAM_ARRAY >> 20);
    out->dram_array_bytes = (int64_t)(arr.slice * sizeof(float));
    /* Touch in the all-threads split, so each thread's slice is local to it. */
    arrays touch = arr;
    touch.slice = arr.slice / (size_t)workers;
    touch.thread_stride = touch.slice;
    vn_status st = init_arrays(dev, b, &touch, workers);
    /* The remainder the division left untouched. */
    for (size_t i = touch.slice * (size_t)workers; st == VN_OK && i < arr.slice; i++) {
        arr.base[i] = 0.0f;
        arr.base[arr.array_stride + i] = 1.0f;
        arr.base[2 * arr.array_stride + i] = 2.0f;
    }
    if (st == VN_OK)
        st =
            measure_bandwidth(dev, b, &arr, true, workers, out->dram_triad_gbs, out->dram_copy_gbs);
    munmap(arr.base, mapped);
    return st;
}

static vn_status measure_all(vn_device *dev, bench *b, int32_t workers, vn_machine_peaks *out)
{
    vn_status st = VN_OK;
    if (out->has_avx512)
        st = measure_compute(dev, b, B_FMA512, VN_MACHINE_FMA512_FLOP, workers, out->fp32_gflops);
    if (st == VN_OK && out->has_avx2)
        st = measure_compute(dev, b, B_FMA256, VN_MACHINE_FMA256_FLOP, workers,
                             out->fp32_avx2_gflops);
    if (st == VN_OK && out->has_bf16)
        st = measure_compute(dev, b, B_BF16, VN_MACHINE_BF16_FLOP, workers, out->bf16_gflops);
    if (st == VN_OK && out->has_vnni)
        st = measure_compute(dev, b, B_INT8, VN_MACHINE_INT8_OP, workers, out->int8_gops);
    if (st == VN_OK && out->has_amx)
        st = measure_compute(dev, b, B_AMX_BF16, VN_MACHINE_AMX_BF16_FLOP, workers,
                             out->amx_bf16_gflops);
    if (st == VN_OK && out->has_amx)
        st = measure_compute(dev, b, B_AMX_INT8, VN_MACHINE_AMX_INT8_OP, workers,
                             out->amx_int8_gops);
    if (st == VN_OK) st = measure_l2(dev, b, workers, out);
    if (st == VN_OK) st = measure_dram(dev, b, workers, out);
    return st;
}

vn_status vn_machine_measure(vn_device *device, vn_machine_peaks *out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_machine_measure", "out is NULL");
    memset(out, 0, sizeof *out);
    if (!device) {
        vn_status st = vn_device_default(&device);
        if (st != VN_OK) return st;
    }
    const vn_cpu_features *f = vn_cpu_features_get();
    int32_t workers = vn_device_num_workers(device);
    out->threads = workers;
    out->isa = vn_isa_active();
    /* The active ISA (lowered by VINCI_ISA) bounds what may run, not just the CPU. */
    out->has_avx512 = out->isa >= VN_ISA_AVX512;
    out->has_avx2 = out->isa >= VN_ISA_AVX2;
    out->has_bf16 = out->has_avx512 && f->avx512_bf16;
    out->has_vnni = out->has_avx512 && f->avx512_vnni;
    out->has_amx = out->has_avx512 && vn_amx_usable();

    bench *b = calloc(1, sizeof *b);
    double *times = calloc(2 * (size_t)workers, sizeof *times);
    vn_status st = VN_OK;
    if (!b || !times) {
        st = vn_error(VN_ERR_OUT_OF_MEMORY, "vn_machine_measure", "out of memory");
    } else {
        b->isa = out->isa;
        b->start = times;
        b->end = times + workers;
        st = measure_all(device, b, workers, out);
    }
    free(times);
    free(b);
    return st;
}

/* ---- the cached peaks ------------------------------------------------- */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static bool cache_valid;
static vn_machine_peaks cache;

vn_status vn_machine_peaks_get(vn_machine_peaks *out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_machine_peaks_get", "out is NULL");
    /* Held across the measurement so concurrent first callers wait for one
     * result instead of measuring each other's noise. */
    pthread_mutex_lock(&cache_lock);
    vn_status st = VN_OK;
    if (!cache_valid) {
        char path[1024];
        vn_device *dev = NULL;
        cache_valid =
            vn_machine_peaks_path(path, sizeof path) == VN_OK && vn_device_default(&dev) == VN_OK &&
            vn_machine_peaks_load(path, vn_device_num_workers(dev), vn_isa_active(), &cache);
    }
    if (!cache_valid) {
        st = vn_machine_measure(NULL, &cache);
        cache_valid = st == VN_OK;
    }
    if (st == VN_OK) *out = cache;
    pthread_mutex_unlock(&cache_lock);
    return st;
}

/* ---- formatting ------------------------------------------------------- */

typedef struct text {
    char *buf;
    size_t size, len;
} text;

static void put(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = t->len < t->size ? t->buf + t->len : NULL;
    int n = vsnprintf(dst, dst ? t->size - t->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n;
}

static void put_row(text *t, const char *name, const double v[2], bool on, const char *unit)
{
    if (!on) {
        put(t, "%-34s %10s %10s  %s\n", name, "n/a", "n/a", unit);
        return;
    }
    put(t, "%-34s %10.1f %10.1f  %s\n", name, v[0], v[1], unit);
}

size_t vn_machine_format(const vn_machine_peaks *p, char *buf, size_t size)
{
    text t = {buf, size, 0};
    if (buf && size) buf[0] = '\0';
    if (!p) return 0;
    char all[32], dram[48], l2[48];
    snprintf(all, sizeof all, "%d thread%s", (int)p->threads, p->threads == 1 ? "" : "s");
    snprintf(dram, sizeof dram, "DRAM triad (%lld MiB arrays)",
             (long long)(p->dram_array_bytes >> 20));
    snprintf(l2, sizeof l2, "L2 triad (%lld KiB per thread)",
             (long long)(p->l2_bytes_per_thread >> 10));
    put(&t, "%-34s %10s %10s  %s\n", "quantity", "1 thread", all, "unit");
    put_row(&t, "fp32 FMA, AVX-512", p->fp32_gflops, p->has_avx512, "GFLOP/s");
    put_row(&t, "fp32 FMA, AVX2", p->fp32_avx2_gflops, p->has_avx2, "GFLOP/s");
    put_row(&t, "bf16 dot product (vdpbf16ps)", p->bf16_gflops, p->has_bf16, "GFLOP/s");
    put_row(&t, "int8 dot product (vpdpbusd)", p->int8_gops, p->has_vnni, "GOP/s");
    put_row(&t, "bf16 AMX tiles (tdpbf16ps)", p->amx_bf16_gflops, p->has_amx, "GFLOP/s");
    put_row(&t, "int8 AMX tiles (tdpbusd)", p->amx_int8_gops, p->has_amx, "GOP/s");
    put_row(&t, dram, p->dram_triad_gbs, true, "GB/s");
    put_row(&t, "DRAM copy", p->dram_copy_gbs, true, "GB/s");
    put_row(&t, l2, p->l2_triad_gbs, true, "GB/s");
    put_row(&t, "L2 copy", p->l2_copy_gbs, true, "GB/s");
    put(&t, "(isa %s; bandwidth counted the STREAM way, without write-allocate traffic)\n",
        vn_isa_name(p->isa));
    return t.len;
}
