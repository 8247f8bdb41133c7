/*
 * bench_gemm.c — the cube path's GEMM against the machine's measured peak and
 * two peers loaded at run time with dlopen (no build-time dependency):
 * oneDNN's dnnl_sgemm (libdnnl.so.2) and OpenBLAS's cblas_sgemm
 * (libopenblas.so.0); "not installed" when absent (scripts/setup.sh --bench).
 *
 * Run OpenBLAS with its autodetected kernels:
 *     env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ./build/bench_gemm [reps]
 * "packed": vinci with B pre-packed once and read in place (the graph
 * engine's constant weights); "ratio" columns are oneDNN's time over ours.
 * Peers get the same thread count as vinci (omp_set_num_threads for oneDNN,
 * openblas_set_num_threads). Each shape runs ROUNDS rounds of (vinci,
 * vinci packed, oneDNN, OpenBLAS); a round times each at least `reps` runs
 * and MIN_ROUND_MS of runs after a warm-up (BENCH_WARM), and every figure is the median
 * of its round medians (on a shared host a burst of slow seconds then hits
 * one round of every contender, not all rounds of one).
 */
#include <dlfcn.h>

#include "bench_util.h"
#include "vinci/gemm.h"

typedef int (*dnnl_sgemm_fn)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t,
                             const float *, int64_t, float, float *, int64_t);
typedef void (*cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                               const float *, int, float, float *, int);
typedef void (*set_threads_fn)(int);

static dnnl_sgemm_fn dnnl_sgemm;
static cblas_sgemm_fn cblas_sgemm;
static set_threads_fn omp_set_threads, openblas_set_threads;

static void load_peers(void)
{
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (h) {
        dnnl_sgemm = (dnnl_sgemm_fn)dlsym(h, "dnnl_sgemm");
        omp_set_threads = (set_threads_fn)dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    }
    h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        cblas_sgemm = (cblas_sgemm_fn)dlsym(h, "cblas_sgemm");
        openblas_set_threads = (set_threads_fn)dlsym(h, "openblas_set_num_threads");
    }
}

typedef struct shape {
    int64_t m, n, k;
    const char *what;
} shape;

static const shape shapes[] = {
    {256, 256, 256, "square"},    {512, 512, 512, "square"}, {1024, 1024, 1024, "square"},
    {2048, 2048, 2048, "square"}, {128, 768, 768, "bert"},   {128, 3072, 768, "bert"},
    {128, 768, 3072, "bert"},     {3136, 64, 576, "conv"},   {784, 128, 1152, "conv"},
    {1, 1000, 2048, "gemv"},
};

typedef struct mats {
    float *a, *b, *c;
    int64_t m, n, k;
} mats;

static int g_reps = 5;

#define ROUNDS       3
#define MIN_ROUND_MS 30.0
#define MAX_REPS     64

/* Median ms of stmt over max(g_reps, MIN_ROUND_MS worth) runs (at most
 * MAX_REPS) after BENCH_WARM_MS of warm-up runs. */
#define TIME_MS(out, stmt)                                                                         \
    do {                                                                                           \
        double v_[MAX_REPS], w_;                                                                   \
        BENCH_WARM(w_, stmt);                                                                      \
        int n_ = w_ > 0 && MIN_ROUND_MS / w_ > g_reps ? (int)(MIN_ROUND_MS / w_) : g_reps;         \
        if (n_ > MAX_REPS) n_ = MAX_REPS;                                                          \
        for (int r_ = 0; r_ < n_; r_++) {                                                          \
            double t0_ = bench_now_ms();                                                           \
            stmt;                                                                                  \
            v_[r_] = bench_now_ms() - t0_;                                                         \
        }                                                                                          \
        out = bench_median(v_, n_);                                                                \
    } while (0)

/* Median ms of one GEMM; `packed`: B pre-packed once (vn_gemm_pack_b, as the
 * graph engine does for constant weights) and read in place by every run. */
static double run_vinci(vn_device *dev, vn_gemm_desc d, const void *a, const void *b, void *c,
                        bool packed)
{
    vn_gemm_plan *p;
    if (vn_gemm_plan_create(dev, &d, &p) != VN_OK) {
        fprintf(stderr, "plan: %s\n", vn_last_error());
        return 0;
    }
    void *pb = NULL;
    if (packed) {
        pb = vn_aligned_alloc(vn_gemm_packed_b_size(p), 64);
        if (!pb || vn_gemm_pack_b(p, b, pb) != VN_OK) {
            fprintf(stderr, "pack: %s\n", pb ? vn_last_error() : "out of memory");
            vn_aligned_free(pb);
            vn_gemm_plan_destroy(p);
            return 0;
        }
    }
    double ms;
    vn_gemm_args args = {.a = a, .b = packed ? pb : b, .b_packed = packed, .c = c};
    TIME_MS(ms, vn_gemm_run(p, &args));
    vn_aligned_free(pb);
    vn_gemm_plan_destroy(p);
    return ms;
}

static void bench_fp32(vn_device *dev, int threads, double peak)
{
    printf("\nfp32, %d thread(s): GFLOP/s, %% of measured fp32 peak (%.0f GFLOP/s), peers and our "
           "speed relative to them\n",
           threads, peak);
    printf("%-22s %8s %6s %8s | %8s %7s %7s | %8s %7s\n", "M x N x K", "vinci", "peak", "packed",
           "oneDNN", "ratio", "packed", "OpenBLAS", "ratio");
    if (omp_set_threads) omp_set_threads(threads);
    if (openblas_set_threads) openblas_set_threads(threads);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const shape *sh = &shapes[s];
        int64_t m = sh->m, n = sh->n, k = sh->k;
        float *a = vn_aligned_alloc((size_t)(m * k) * 4, 64),
              *b = vn_aligned_alloc((size_t)(k * n) * 4, 64);
        float *c = vn_aligned_alloc((size_t)(m * n) * 4, 64);
        bench_fill(a, m * k, 1), bench_fill(b, k * n, 2);
        double gf = 2e-6 * (double)m * n * k, t[4][ROUNDS] = {{0}};
        for (int r = 0; r < ROUNDS; r++) {
            if (threads > 1) bench_quiesce(200); /* the peers' OpenMP threads spin after a call */
            t[0][r] = run_vinci(dev, vn_gemm_desc_default(m, n, k), a, b, c, false);
            t[1][r] = run_vinci(dev, vn_gemm_desc_default(m, n, k), a, b, c, true);
            if (dnnl_sgemm)
                TIME_MS(t[2][r], dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n));
            if (threads > 1 && dnnl_sgemm) bench_quiesce(50);
            if (cblas_sgemm)
                TIME_MS(t[3][r], cblas_sgemm(101, 111, 111, (int)m, (int)n, (int)k, 1.0f, a, (int)k,
                                             b, (int)n, 0.0f, c, (int)n));
        }
        double ours = bench_median(t[0], ROUNDS), pk = bench_median(t[1], ROUNDS);
        double dn = bench_median(t[2], ROUNDS), ob = bench_median(t[3], ROUNDS);
        char name[48];
        snprintf(name, sizeof name, "%lldx%lldx%lld %s", (long long)m, (long long)n, (long long)k,
                 sh->what);
        printf("%-22s %8.1f %5.0f%% %8.1f |", name, gf / ours, 100 * gf / ours / peak, gf / pk);
        if (dnnl_sgemm)
            printf(" %8.1f %6.2fx %6.2fx |", gf / dn, dn / ours, dn / pk);
        else
            printf(" %24s |", "not installed");
        if (cblas_sgemm)
            printf(" %8.1f %6.2fx", gf / ob, ob / ours);
        else
            printf(" %16s", "not installed");
        if (m == 1) printf("   (%.1f GB/s of B)", 4e-6 * (double)n * k / ours);
        printf("\n");
        vn_aligned_free(a), vn_aligned_free(b), vn_aligned_free(c);
    }
}

/* bf16 and int8 against our fp32 on the same shapes. */
static void bench_low_precision(vn_device *dev, int threads, const vn_machine_peaks *pk)
{
    static const shape lp[] = {
        {1024, 1024, 1024, "square"}, {128, 3072, 768, "bert"}, {784, 128, 1152, "conv"}};
    bool amx = pk->has_amx; /* the cube's bf16 / int8 run on AMX tiles there */
    printf("\nbf16 / int8, %d thread(s): GFLOP/s (GOP/s), speed-up over our fp32 (peaks%s: bf16 "
           "%.0f, int8 %.0f)\n",
           threads, amx ? " of the AMX tiles" : "",
           (amx ? pk->amx_bf16_gflops : pk->bf16_gflops)[threads > 1],
           (amx ? pk->amx_int8_gops : pk->int8_gops)[threads > 1]);
    printf("%-22s %8s | %8s %7s | %8s %7s || pre-packed B: %6s | %8s %7s | %8s %7s\n", "M x N x K",
           "fp32", "bf16", "x fp32", "int8", "x fp32", "fp32", "bf16", "x fp32", "int8", "x fp32");
    for (size_t s = 0; s < sizeof lp / sizeof lp[0]; s++) {
        int64_t m = lp[s].m, n = lp[s].n, k = lp[s].k;
        float *a = vn_aligned_alloc((size_t)(m * k) * 4, 64),
              *b = vn_aligned_alloc((size_t)(k * n) * 4, 64);
        float *c = vn_aligned_alloc((size_t)(m * n) * 4, 64);
        bench_fill(a, m * k, 1), bench_fill(b, k * n, 2);
        /* [0]: B as given, converted / packed by each run; [1]: B pre-packed
         * once (vn_gemm_pack_b), as a model's weights are */
        double f32[2], bf[2], i8[2];
        for (int packed = 0; packed < 2; packed++) {
            vn_gemm_desc d = vn_gemm_desc_default(m, n, k);
            d.b_prepacked = packed;
            f32[packed] = run_vinci(dev, d, a, b, c, packed);
            d.compute = VN_BF16;
            bf[packed] = run_vinci(dev, d, a, b, c, packed);
            d.compute = VN_I32, d.a_dtype = VN_U8, d.b_dtype = VN_I8, d.c_dtype = VN_I32;
            i8[packed] = run_vinci(dev, d, a, b, c, packed); /* the f32 buffers as bytes */
        }
        double gf = 2e-6 * (double)m * n * k;
        char name[48];
        snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
        printf("%-22s %8.1f | %8.1f %6.2fx | %8.1f %6.2fx ||               %6.1f | %8.1f %6.2fx | "
               "%8.1f %6.2fx\n",
               name, gf / f32[0], gf / bf[0], f32[0] / bf[0], gf / i8[0], f32[0] / i8[0],
               gf / f32[1], gf / bf[1], f32[1] / bf[1], gf / i8[1], f32[1] / i8[1]);
        vn_aligned_free(a), vn_aligned_free(b), vn_aligned_free(c);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1) g_reps = atoi(argv[1]) > 0 && atoi(argv[1]) <= MAX_REPS ? atoi(argv[1]) : 5;
    load_peers();
    vn_machine_peaks pk;
    if (vn_machine_peaks_get(&pk) != VN_OK) {
        fprintf(stderr, "peaks: %s\n", vn_last_error());
        return 1;
    }
    printf("vinci GEMM (cube path), ISA %s; DRAM triad %.1f GB/s (1 thread), %.1f (all)\n",
           vn_isa_name(vn_isa_active()), pk.dram_triad_gbs[0], pk.dram_triad_gbs[1]);
    printf("peers: oneDNN %s, OpenBLAS %s\n", dnnl_sgemm ? "loaded" : "not installed",
           cblas_sgemm ? "loaded" : "not installed");
    for (int threads = 1; threads <= 2; threads++) {
        vn_device *dev;
        vn_device_options o = {0};
        o.num_threads = threads;
        if (vn_device_create(&o, &dev) != VN_OK) {
            fprintf(stderr, "device: %s\n", vn_last_error());
            return 1;
        }
        double peak = threads == 1 ? pk.fp32_gflops[0] : pk.fp32_gflops[0] * threads;
        if (peak <= 0) peak = pk.fp32_avx2_gflops[0] * threads;
        bench_fp32(dev, threads, peak > 0 ? peak : 1);
        bench_low_precision(dev, threads, &pk);
        vn_device_destroy(dev);
    }
    return 0;
}
