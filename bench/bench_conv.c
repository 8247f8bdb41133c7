/*
 * bench_conv.c — the convolution layers of ResNet-50 and MobileNetV2 (batch 1)
 * on vinci::ConvNC1HWC0 (weights pre-packed with vn_conv_pack_weights, bias
 * on), against oneDNN's convolution loaded at run time with dlopen (no
 * build-time dependency; "oneDNN not installed" when libdnnl.so.2 is absent)
 * in its preferred layouts (format "any"), measured in the same process,
 * interleaved by layer, with the same number of threads.
 *
 *     ./build/bench_conv [reps] [filter] [min]
 *         reps: default 7, medians; filter: a substring of the layer names to
 *         run, e.g. "dw" ("" = all); min: time single calls and report the
 *         fastest of max(reps, 50) instead of medians of >= 3 ms samples --
 *         on a machine shared with other jobs, where time slices of a few ms
 *         land in every long sample, the fastest call is what the code can do.
 *
 * Columns: ms (median), GFLOP/s (2 * MACs), % of the measured fp32 FMA peak
 * (vn_machine_peaks_get: the one-thread figure times the threads), for
 * depthwise layers % of the DRAM triad bandwidth instead (bytes = input +
 * output + weights, once), and vs oneDNN = oneDNN ms / vinci ms (> 1: faster).
 * 1x1 layers are also run as NCHW Conv (the in-place GEMM path) on row "gemm",
 * 3x3 stride-1 layers also with the direct kernel forced (row "direct"; the
 * automatic choice is Winograd there), stems (C <= 16) also reading the
 * plain NCHW image in place (row "plain": x_layout = "NCHW", as in a model;
 * oneDNN's "any" picks a plain source for them too). Each layer is measured in ROUNDS
 * interleaved rounds (oneDNN, then every vinci path) and every figure is the
 * median over rounds of medians, so a noisy neighbour hits both sides.
 */
#include <dlfcn.h>

#include "bench_util.h"
#include "ops/conv.h"
#include "vinci/machine.h"
#include "vinci/ops.h"

/* ---- oneDNN 2.x C API, declared here (values of oneDNN 2.6's dnnl_types.h) ---- */

typedef int64_t dnnl_dims[12];
typedef struct dnnl_exec_arg {
    int arg;
    void *memory;
} dnnl_exec_arg;
enum { DNNL_CPU = 1, DNNL_F32 = 3, DNNL_TAG_ANY = 1, DNNL_TAG_X = 2, DNNL_FWD_INFERENCE = 96 };
enum { DNNL_CONV_DIRECT = 1, DNNL_CONV_AUTO = 3, DNNL_STREAM_DEFAULT = 1 };
enum { DNNL_Q_SRC = 129, DNNL_Q_WEIGHTS = 131, DNNL_Q_DST = 133 };
enum { ARG_SRC = 1, ARG_DST = 17, ARG_WEIGHTS = 33, ARG_BIAS = 41 };
#define DNNL_ALLOCATE ((void *)(size_t)-1)
/* dnnl_memory_desc_t is 696 bytes and dnnl_convolution_desc_t 5976 in 2.6:
 * opaque, over-sized, aligned buffers. */
typedef struct {
    _Alignas(64) unsigned char b[2048];
} dnnl_md;
typedef struct {
    _Alignas(64) unsigned char b[16384];
} dnnl_cd;

static struct {
    int (*engine_create)(void **, int, size_t);
    int (*stream_create)(void **, void *, unsigned);
    int (*stream_wait)(void *);
    int (*md_init)(dnnl_md *, int, const int64_t *, int, int);
    int (*conv_init)(dnnl_cd *, int, int, const dnnl_md *, const dnnl_md *, const dnnl_md *,
                     const dnnl_md *, const int64_t *, const int64_t *, const int64_t *,
                     const int64_t *);
    int (*pd_create)(void **, const void *, const void *, void *, const void *);
    const dnnl_md *(*pd_query_md)(const void *, int, int);
    int (*pd_destroy)(void *);
    int (*mem_create)(void **, const dnnl_md *, void *, void *);
    int (*mem_destroy)(void *);
    int (*mem_handle)(const void *, void **);
    size_t (*md_size)(const dnnl_md *);
    int (*prim_create)(void **, const void *);
    int (*prim_exec)(const void *, void *, int, const dnnl_exec_arg *);
    int (*prim_destroy)(void *);
    void (*omp_threads)(int);
    void *engine, *stream;
    bool ok;
} dn;

static void load_onednn(void)
{
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!h) return;
#define SYM(f, n) *(void **)&dn.f = dlsym(h, n)
    SYM(engine_create, "dnnl_engine_create");
    SYM(stream_create, "dnnl_stream_create");
    SYM(stream_wait, "dnnl_stream_wait");
    SYM(md_init, "dnnl_memory_desc_init_by_tag");
    SYM(conv_init, "dnnl_dilated_convolution_forward_desc_init");
    SYM(pd_create, "dnnl_primitive_desc_create");
    SYM(pd_query_md, "dnnl_primitive_desc_query_md");
    SYM(pd_destroy, "dnnl_primitive_desc_destroy");
    SYM(mem_create, "dnnl_memory_create");
    SYM(mem_destroy, "dnnl_memory_destroy");
    SYM(mem_handle, "dnnl_memory_get_data_handle");
    SYM(md_size, "dnnl_memory_desc_get_size");
    SYM(prim_create, "dnnl_primitive_create");
    SYM(prim_exec, "dnnl_primitive_execute");
    SYM(prim_destroy, "dnnl_primitive_destroy");
    *(void **)&dn.omp_threads = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
#undef SYM
    dn.ok = dn.engine_create && dn.conv_init && dn.prim_exec && dn.md_size &&
            dn.engine_create(&dn.engine, DNNL_CPU, 0) == 0 &&
            dn.stream_create(&dn.stream, dn.engine, DNNL_STREAM_DEFAULT) == 0;
}

/* ---- layers -------------------------------------------------------------------------- */

typedef struct layer {
    const char *net, *name;
    int64_t C, H, K, k, s, p, G;
} layer;

static const layer layers[] = {
    {"resnet50", "stem 7x7/2", 3, 224, 64, 7, 2, 3, 1},
    {"resnet50", "3x3 64@56", 64, 56, 64, 3, 1, 1, 1},
    {"resnet50", "3x3 128@28", 128, 28, 128, 3, 1, 1, 1},
    {"resnet50", "3x3 256@14", 256, 14, 256, 3, 1, 1, 1},
    {"resnet50", "3x3 512@7", 512, 7, 512, 3, 1, 1, 1},
    {"resnet50", "3x3/2 128@56", 128, 56, 128, 3, 2, 1, 1},
    {"resnet50", "3x3/2 256@28", 256, 28, 256, 3, 2, 1, 1},
    {"resnet50", "3x3/2 512@14", 512, 14, 512, 3, 2, 1, 1},
    {"resnet50", "1x1 64>256@56", 64, 56, 256, 1, 1, 0, 1},
    {"resnet50", "1x1 256>64@56", 256, 56, 64, 1, 1, 0, 1},
    {"resnet50", "1x1 128>512@28", 128, 28, 512, 1, 1, 0, 1},
    {"resnet50", "1x1 256>1024@14", 256, 14, 1024, 1, 1, 0, 1},
    {"resnet50", "1x1 512>2048@7", 512, 7, 2048, 1, 1, 0, 1},
    {"resnet50", "1x1/2 256>512@56", 256, 56, 512, 1, 2, 0, 1},
    {"resnet50", "1x1/2 512>1024@28", 512, 28, 1024, 1, 2, 0, 1},
    {"resnet50", "1x1/2 1024>2048@14", 1024, 14, 2048, 1, 2, 0, 1},
    {"mbv2", "stem 3x3/2 pad1", 3, 224, 32, 3, 2, 1, 1},
    {"mbv2", "dw3x3 32@112", 32, 112, 32, 3, 1, 1, 32},
    {"mbv2", "dw3x3/2 96@112", 96, 112, 96, 3, 2, 1, 96},
    {"mbv2", "dw3x3 144@56", 144, 56, 144, 3, 1, 1, 144},
    {"mbv2", "dw3x3/2 144@56", 144, 56, 144, 3, 2, 1, 144},
    {"mbv2", "dw3x3 384@14", 384, 14, 384, 3, 1, 1, 384},
    {"mbv2", "dw3x3 960@7", 960, 7, 960, 3, 1, 1, 960},
    {"mbv2", "pw 24>144@56", 24, 56, 144, 1, 1, 0, 1},
    {"mbv2", "pw 144>24@56", 144, 56, 24, 1, 1, 0, 1},
    {"mbv2", "pw 96>24@56", 96, 56, 24, 1, 1, 0, 1},
    {"mbv2", "pw 144>32@28", 144, 28, 32, 1, 1, 0, 1},
    {"mbv2", "pw 384>64@14", 384, 14, 64, 1, 1, 0, 1},
    {"mbv2", "pw 960>160@7", 960, 7, 160, 1, 1, 0, 1},
    {"sqz11", "stem 3x3/2", 3, 224, 64, 3, 2, 0, 1},
    {"sqz11", "e3x3 16>64@55", 16, 55, 64, 3, 1, 1, 1},
    {"sqz11", "e3x3 32>128@27", 32, 27, 128, 3, 1, 1, 1},
    {"sqz11", "e3x3 48>192@13", 48, 13, 192, 3, 1, 1, 1},
    {"sqz11", "e3x3 64>256@13", 64, 13, 256, 3, 1, 1, 1},
    {"sqz11", "1x1 512>1000@13", 512, 13, 1000, 1, 1, 0, 1},
};

static int g_reps = 7;
static const char *g_filter; /* run only layers whose name contains it */
static bool g_min;           /* fastest single call instead of medians */
#define ROUNDS 5

static int64_t out_hw(const layer *l)
{
    return (l->H + 2 * l->p - l->k) / l->s + 1;
}

/* Median ms of `fn` after BENCH_WARM_MS of warm-up, each sample long enough
 * (>= 3 ms) to beat timer noise. */
typedef void (*bench_fn)(void *ctx);
static double time_ms(bench_fn fn, void *ctx)
{
    double t0, once;
    BENCH_WARM(once, fn(ctx));
    if (g_min) {
        double best = once;
        for (int r = 0; r < (g_reps > 50 ? g_reps : 50); r++) {
            t0 = bench_now_ms();
            fn(ctx);
            double t = bench_now_ms() - t0;
            best = t < best ? t : best;
        }
        return best;
    }
    int inner = once > 3 ? 1 : (int)(3 / (once + 1e-3)) + 1;
    double v[32];
    for (int r = 0; r < g_reps && r < 32; r++) {
        t0 = bench_now_ms();
        for (int i = 0; i < inner; i++) fn(ctx);
        v[r] = (bench_now_ms() - t0) / inner;
    }
    return bench_median(v, g_reps < 32 ? g_reps : 32);
}

/* ---- vinci --------------------------------------------------------------------------- */

typedef struct vrun {
    vn_op_plan *plan;
    vn_tensor in[3], out;
    void *ws;
} vrun;

static void vinci_call(void *ctx)
{
    vrun *r = ctx;
    vn_op_run(r->plan, r->in, 3, &r->out, 1, r->ws);
}

static float *filled(int64_t n, float v)
{
    float *p = vn_aligned_alloc((size_t)(n > 0 ? n : 1) * 4, 64);
    for (int64_t i = 0; i < n; i++) p[i] = v * (float)((i * 7) % 13 - 6);
    return p;
}

static vn_tensor_desc tdesc(int rank, const int64_t *dims)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = VN_F32;
    d.rank = rank;
    for (int i = 0; i < rank; i++) d.dims[i] = dims[i];
    return d;
}

/* How vinci's operator sees X and Y. */
typedef enum vin_layout {
    VIN_NCHW,    /* Conv: NCHW in and out */
    VIN_BLOCKED, /* vinci::ConvNC1HWC0: NC1HWC0 in and out */
    VIN_PLAIN_X, /* vinci::ConvNC1HWC0 reading NCHW X (x_layout; a stem in a model) */
} vin_layout;

/* vinci in layout `lay` (packed weights when blocked), with the algorithm
 * `algo` forced (NULL: the automatic choice). -1 on failure. */
static double run_vinci(vn_device *dev, const layer *l, vin_layout lay, const char *algo)
{
    bool blocked = lay != VIN_NCHW, blocked_x = lay == VIN_BLOCKED;
    int64_t c1 = (l->C + 15) / 16, k1 = (l->K + 15) / 16, o = out_hw(l);
    int64_t xd5[5] = {1, c1, l->H, l->H, 16}, xd4[4] = {1, l->C, l->H, l->H};
    int64_t wd[4] = {l->K, l->C / l->G, l->k, l->k}, bd[1] = {l->K};
    int64_t ks[2] = {l->k, l->k}, st[2] = {l->s, l->s}, pd[4] = {l->p, l->p, l->p, l->p};
    vn_attr a[8] = {{.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = ks, .count = 2},
                    {.name = "strides", .type = VN_ATTR_INTS, .ints = st, .count = 2},
                    {.name = "pads", .type = VN_ATTR_INTS, .ints = pd, .count = 4},
                    {.name = "group", .type = VN_ATTR_INT, .i = l->G}};
    vn_attrs attrs = {a, 4};
    if (algo) a[attrs.count++] = (vn_attr){.name = "algo", .type = VN_ATTR_STRING, .s = algo};
    if (lay == VIN_PLAIN_X)
        a[attrs.count++] = (vn_attr){.name = "x_layout", .type = VN_ATTR_STRING, .s = "NCHW"};
    vn_tensor_desc in[3] = {blocked_x ? tdesc(5, xd5) : tdesc(4, xd4), tdesc(4, wd), tdesc(1, bd)};
    const char *op = blocked ? "vinci::ConvNC1HWC0" : "Conv";
    int64_t welems = 0;
    float *w = filled(wd[0] * wd[1] * wd[2] * wd[3], 0.01f), *wp = NULL;
    if (blocked) { /* pre-pack once, as a graph does with constant weights */
        vn_conv_pack_weights(op, in, 3, &attrs, NULL, NULL, &welems);
        wp = filled(welems, 0);
        vn_conv_pack_weights(op, in, 3, &attrs, w, wp, &welems);
        a[attrs.count++] = (vn_attr){.name = "packed", .type = VN_ATTR_INT, .i = 1};
        a[attrs.count++] =
            (vn_attr){.name = "weight_shape", .type = VN_ATTR_INTS, .ints = wd, .count = 4};
        in[1] = tdesc(1, &welems);
    }
    vrun r = {0};
    double ms = -1;
    if (vn_op_plan_create(dev, op, in, 3, &attrs, &r.plan) == VN_OK) {
        int64_t nx = blocked_x ? c1 * l->H * l->H * 16 : l->C * l->H * l->H;
        int64_t ny = blocked ? k1 * o * o * 16 : l->K * o * o;
        float *x = filled(nx, 0.1f), *b = filled(l->K, 0.1f), *y = filled(ny, 0);
        r.in[0] = (vn_tensor){in[0], x};
        r.in[1] = (vn_tensor){in[1], blocked ? wp : w};
        r.in[2] = (vn_tensor){in[2], b};
        r.out = (vn_tensor){*vn_op_plan_output(r.plan, 0), y};
        size_t ws = vn_op_plan_workspace(r.plan);
        r.ws = ws ? vn_aligned_alloc(ws, 64) : NULL;
        if (vn_op_run(r.plan, r.in, 3, &r.out, 1, r.ws) == VN_OK) ms = time_ms(vinci_call, &r);
        vn_aligned_free(r.ws);
        vn_aligned_free(x), vn_aligned_free(b), vn_aligned_free(y);
        vn_op_plan_destroy(r.plan);
    } else {
        fprintf(stderr, "vinci %s: %s\n", l->name, vn_last_error());
    }
    vn_aligned_free(w);
    vn_aligned_free(wp);
    return ms;
}

/* ---- oneDNN ---------------------------------------------------------------------------- */

typedef struct drun {
    void *prim;
    dnnl_exec_arg args[4];
} drun;

static void dnnl_call(void *ctx)
{
    drun *r = ctx;
    dn.prim_exec(r->prim, dn.stream, 4, r->args);
    dn.stream_wait(dn.stream);
}

static void *dnnl_mem(const dnnl_md *md)
{
    void *m = NULL, *h = NULL;
    if (dn.mem_create(&m, md, dn.engine, DNNL_ALLOCATE) != 0) return NULL;
    dn.mem_handle(m, &h);
    size_t n = dn.md_size(md) / 4;
    for (size_t i = 0; i < n; i++) ((float *)h)[i] = 0.01f * (float)((int)(i * 7 % 13) - 6);
    return m;
}

static double run_onednn(const layer *l)
{
    if (!dn.ok) return -1;
    int64_t o = out_hw(l);
    dnnl_dims src = {1, l->C, l->H, l->H}, dst = {1, l->K, o, o}, bias = {l->K};
    dnnl_dims w4 = {l->K, l->C, l->k, l->k}, w5 = {l->G, l->K / l->G, l->C / l->G, l->k, l->k};
    dnnl_dims s = {l->s, l->s}, d = {0, 0}, p = {l->p, l->p};
    dnnl_md ms, mw, mb, md;
    dnnl_cd cd;
    dn.md_init(&ms, 4, src, DNNL_F32, DNNL_TAG_ANY);
    dn.md_init(&mw, l->G > 1 ? 5 : 4, l->G > 1 ? w5 : w4, DNNL_F32, DNNL_TAG_ANY);
    dn.md_init(&mb, 1, bias, DNNL_F32, DNNL_TAG_X);
    dn.md_init(&md, 4, dst, DNNL_F32, DNNL_TAG_ANY);
    if (dn.conv_init(&cd, DNNL_FWD_INFERENCE, DNNL_CONV_DIRECT, &ms, &mw, &mb, &md, s, d, p, p))
        return -1;
    void *pd = NULL;
    if (dn.pd_create(&pd, &cd, NULL, dn.engine, NULL) != 0) return -1;
    drun r = {0};
    void *mem[4] = {dnnl_mem(dn.pd_query_md(pd, DNNL_Q_SRC, 0)),
                    dnnl_mem(dn.pd_query_md(pd, DNNL_Q_WEIGHTS, 0)), dnnl_mem(&mb),
                    dnnl_mem(dn.pd_query_md(pd, DNNL_Q_DST, 0))};
    double ms_ = -1;
    if (dn.prim_create(&r.prim, pd) == 0) {
        r.args[0] = (dnnl_exec_arg){ARG_SRC, mem[0]};
        r.args[1] = (dnnl_exec_arg){ARG_WEIGHTS, mem[1]};
        r.args[2] = (dnnl_exec_arg){ARG_BIAS, mem[2]};
        r.args[3] = (dnnl_exec_arg){ARG_DST, mem[3]};
        ms_ = time_ms(dnnl_call, &r);
        dn.prim_destroy(r.prim);
    }
    for (int i = 0; i < 4; i++)
        if (mem[i]) dn.mem_destroy(mem[i]);
    dn.pd_destroy(pd);
    return ms_;
}

/* ---- report ------------------------------------------------------------------------------- */

static void row(const layer *l, const char *path, double ms, double dms, double peak, double bw)
{
    int64_t o = out_hw(l);
    double macs = (double)l->K * o * o * (double)(l->C / l->G) * l->k * l->k;
    double gflops = ms > 0 ? 2 * macs / ms * 1e-6 : 0;
    bool dw = l->G > 1;
    double bytes = 4.0 * (l->C * l->H * l->H + l->K * o * o + l->K * l->k * l->k);
    double frac = dw ? (ms > 0 ? bytes / ms * 1e-6 / bw : 0) : (peak > 0 ? gflops / peak : 0);
    printf("%-9s %-18s %-7s %9.3f %9.1f %6.1f%%%s %9.3f %7.2fx\n", l->net, l->name, path, ms,
           gflops, 100 * frac, dw ? "bw" : "  ", dms, ms > 0 && dms > 0 ? dms / ms : 0);
}

static double minv(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
    return m;
}

static double maxv(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] > m ? v[i] : m;
    return m;
}

static void bench(int threads, const vn_machine_peaks *pk)
{
    vn_device *dev = NULL;
    vn_device_options opt = {0};
    opt.num_threads = threads;
    if (vn_device_create(&opt, &dev) != VN_OK) return;
    if (dn.omp_threads) dn.omp_threads(threads);
    int idx = threads == 1 ? VN_MACHINE_ONE_THREAD : VN_MACHINE_ALL_THREADS;
    /* The roof: the one-thread FMA peak times the threads (the all-thread
     * figure is only as good as the machine was idle when it was measured). */
    double one = pk->fp32_gflops[0] > 0 ? pk->fp32_gflops[0] : pk->fp32_avx2_gflops[0];
    double peak = one * threads;
    double bw = pk->dram_triad_gbs[idx];
    printf("\n%d thread(s): fp32 peak %.1f GFLOP/s, DRAM triad %.1f GB/s, ISA %s\n", threads, peak,
           bw, vn_isa_name(vn_isa_active()));
    printf("%-9s %-18s %-7s %9s %9s %9s %9s %8s\n", "net", "layer", "path", "ms", "GFLOP/s",
           "%peak", "oneDNN ms", "vs oneDNN");
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        const layer *l = &layers[i];
        if (g_filter && !strstr(l->name, g_filter)) continue;
        /* a stem (C <= 16) also as a model runs it: the plain image read in place */
        bool gemm = l->k == 1, direct = l->k == 3 && l->s == 1 && l->G == 1;
        bool plain = l->C <= 16 && l->G == 1 && l->k > 1;
        double d[ROUNDS], v[ROUNDS], g[ROUNDS], r[ROUNDS];
        for (int k = 0; k < ROUNDS; k++) { /* interleaved: both sides see the same noise */
            d[k] = run_onednn(l);
            if (threads > 1) bench_quiesce(50); /* oneDNN's OpenMP threads spin after a call */
            v[k] = run_vinci(dev, l, VIN_BLOCKED, NULL);
            g[k] = gemm     ? run_vinci(dev, l, VIN_NCHW, NULL)
                   : direct ? run_vinci(dev, l, VIN_BLOCKED, "direct")
                   : plain  ? run_vinci(dev, l, VIN_PLAIN_X, NULL)
                            : -1;
            /* a stem's ratio is its plain path's, the one a model runs */
            double mine = plain ? g[k] : v[k];
            r[k] = d[k] > 0 && mine > 0 ? d[k] / mine : 0;
        }
        double dms = bench_median(d, ROUNDS);
        row(l, "nc1hwc0", bench_median(v, ROUNDS), dms, peak, bw);
        if (gemm || direct || plain)
            row(l,
                gemm     ? "gemm"
                : direct ? "direct"
                         : "plain",
                bench_median(g, ROUNDS), dms, peak, bw);
        printf("%-9s %-18s %-7s median of per-round ratios %.2fx (min %.2f, max %.2f)\n", "", "",
               plain ? "plain" : "nc1hwc0", bench_median(r, ROUNDS), minv(r, ROUNDS),
               maxv(r, ROUNDS));
    }
    vn_device_destroy(dev);
}

int main(int argc, char **argv)
{
    if (argc > 1) g_reps = atoi(argv[1]) > 0 ? atoi(argv[1]) : g_reps;
    if (argc > 2 && argv[2][0]) g_filter = argv[2];
    g_min = argc > 3 && strcmp(argv[3], "min") == 0;
    load_onednn();
    printf("oneDNN %s\n", dn.ok ? "loaded (libdnnl.so.2, format any)" : "not installed");
    vn_machine_peaks pk;
    if (vn_machine_peaks_get(&pk) != VN_OK) {
        fprintf(stderr, "peaks: %s\n", vn_last_error());
        return 1;
    }
    bench(1, &pk);
    bench(2, &pk);
    return 0;
}
