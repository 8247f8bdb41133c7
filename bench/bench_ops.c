/*
 * bench_ops.c — the vector-operator benchmark of issue [A].
 *
 * For 1 and 2 threads, in one run, medians of several repetitions:
 *   - Add f32 on 64 Mi elements: GB/s and ratio to a STREAM triad on the same sizes;
 *   - ReLU-Add as one fused operator vs Add then Relu as two operators;
 *   - LayerNorm f16 [8,512,4096] and Softmax f32 [4096,4096]: GB/s and ratio to triad;
 *   - checked-mode slowdown on Add.
 * Bytes are counted the STREAM way: each element read or written once.
 *
 * The peer is measured between the operator's repetitions (each ratio is the
 * median of per-repetition ratios), because the machine is shared and noisy.
 *
 * Usage: bench_ops [--reps N] [--threads LIST] [--small] [--only als]
 *   --small runs reduced sizes (a smoke run for CI-like settings);
 *   --only runs some parts: a = Add family, l = LayerNorm, s = Softmax.
 */
#include "bench_util.h"

typedef struct bench_cfg {
    int reps;
    int64_t add_n;            /* Add / ReLU-Add elements */
    int64_t ln_rows, ln_h;    /* LayerNorm [rows, H] */
    int64_t sm_rows, sm_cols; /* Softmax */
    const char *only;         /* letters of the parts to run: a(dd), l(ayernorm), s(oftmax) */
} bench_cfg;

/* One planned operator with its buffers, runnable repeatedly. */
typedef struct bench_op {
    vn_op_plan *plan;
    vn_tensor in[3], out[3]; /* out[1..]: optional outputs (LayerNorm's statistics) */
    int n_in, n_out;
    void *ws;
} bench_op;

static vn_tensor_desc desc_1d(vn_dtype dt, int64_t n)
{
    vn_tensor_desc d = {dt, 1, {n}};
    return d;
}

static int bench_op_prepare(bench_op *op, vn_op_plan *plan, void **in_data, int n_in, void *out)
{
    op->plan = plan;
    op->n_in = n_in;
    for (int i = 0; i < n_in; i++) op->in[i].data = in_data[i];
    op->n_out = vn_op_plan_num_outputs(plan);
    if (op->n_out < 1 || op->n_out > 3) return -1;
    for (int i = 0; i < op->n_out; i++) {
        op->out[i].desc = *vn_op_plan_output(plan, i);
        size_t bytes =
            (size_t)vn_desc_numel(&op->out[i].desc) * vn_dtype_size(op->out[i].desc.dtype);
        op->out[i].data = i == 0 ? out : vn_aligned_alloc(bytes ? bytes : 64, 64);
        if (!op->out[i].data) return -1;
    }
    size_t ws = vn_op_plan_workspace(plan);
    op->ws = ws ? vn_aligned_alloc(ws, 64) : NULL;
    return ws && !op->ws ? -1 : 0;
}

/* The peer of one thread count: the STREAM triad on its own arrays, run
 * between the operator's repetitions so that both see the same machine load. */
typedef struct bench_peer {
    vn_device *dev;
    bench_triad t;
} bench_peer;

/* One triad repetition: the better of plain and non-temporal stores, GB/s. */
static double bench_peer_rep(bench_peer *peer)
{
    double t0 = bench_now_ms();
    vn_device_run_blocks(peer->dev, peer->t.blocks, bench_triad_block, &peer->t);
    double t1 = bench_now_ms();
    vn_device_run_blocks(peer->dev, peer->t.blocks, bench_triad_nt_block, &peer->t);
    double t2 = bench_now_ms(), best = t1 - t0 < t2 - t1 ? t1 - t0 : t2 - t1;
    return 3.0 * 4.0 * (double)peer->t.n / (best * 1e6);
}

/* A timing against the peer: median ms, median peer GB/s, and the median of
 * the per-repetition ratios (operator GB/s / triad GB/s of the same repetition). */
typedef struct bench_time {
    double ms, peer_gbs, ratio;
    double best; /* fastest operator run / fastest triad run: the quiet-machine estimate */
} bench_time;

static int bench_op_run(bench_op *op)
{
    vn_status st = vn_op_run(op->plan, op->in, op->n_in, op->out, op->n_out, op->ws);
    if (st != VN_OK) fprintf(stderr, "run failed: %s\n", vn_last_error());
    return st == VN_OK ? 0 : -1;
}

/* `reps` interleaved repetitions (after one warm-up of each); `bytes` moved
 * per operator run, for the ratio. peer may be NULL (ratio 0). */
static bench_time bench_op_time_vs(bench_op *op, bench_peer *peer, int reps, double bytes)
{
    double ms[64], peer_gbs[64], ratio[64];
    bench_time r = {-1, 0, 0, 0};
    double op_min = 1e300, peer_max = 0;
    for (int k = 0; k < reps + 1; k++) {
        double p = peer ? bench_peer_rep(peer) : 0.0;
        double t0 = bench_now_ms();
        if (bench_op_run(op) != 0) return r;
        if (k == 0) continue;
        ms[k - 1] = bench_now_ms() - t0;
        op_min = ms[k - 1] < op_min ? ms[k - 1] : op_min;
        peer_max = p > peer_max ? p : peer_max;
        peer_gbs[k - 1] = p;
        ratio[k - 1] = p > 0 ? bytes / (ms[k - 1] * 1e6) / p : 0.0;
    }
    r.ms = bench_median(ms, reps);
    r.peer_gbs = bench_median(peer_gbs, reps);
    r.ratio = bench_median(ratio, reps);
    r.best = peer_max > 0 ? bytes / (op_min * 1e6) / peer_max : 0.0;
    return r;
}

/* Median milliseconds of `reps` runs (after one warm-up), -1 on error. */
static double bench_op_time(bench_op *op, int reps)
{
    return bench_op_time_vs(op, NULL, reps, 0).ms;
}

static void bench_op_release(bench_op *op)
{
    for (int i = 1; i < op->n_out; i++) vn_aligned_free(op->out[i].data);
    vn_op_plan_destroy(op->plan);
    vn_aligned_free(op->ws);
}

static vn_op_plan *plan_op(vn_device *dev, const char *name, const vn_tensor_desc *in, int n,
                           const vn_attrs *attrs)
{
    vn_op_plan *p = NULL;
    if (vn_op_plan_create(dev, name, in, n, attrs, &p) != VN_OK) {
        fprintf(stderr, "plan %s failed: %s\n", name, vn_last_error());
        return NULL;
    }
    return p;
}

/* Fused ReLU-Add against Add then Relu, interleaved per repetition: median
 * of the per-repetition speed-ups. */
static double bench_fused_speedup(bench_op *add, bench_op *relu, bench_op *fused, int reps,
                                  double *two_ms, double *fused_ms)
{
    double two[64], one[64], up[64];
    for (int k = 0; k < reps + 1; k++) {
        double t0 = bench_now_ms();
        if (bench_op_run(add) != 0 || bench_op_run(relu) != 0) return -1;
        double t1 = bench_now_ms();
        if (bench_op_run(fused) != 0) return -1;
        double t2 = bench_now_ms();
        if (k == 0) continue;
        two[k - 1] = t1 - t0, one[k - 1] = t2 - t1, up[k - 1] = (t1 - t0) / (t2 - t1);
    }
    *two_ms = bench_median(two, reps);
    *fused_ms = bench_median(one, reps);
    return bench_median(up, reps);
}

/* Add f32 (release and checked) and fused ReLU-Add vs Add + Relu. */
static int bench_add_family(vn_device *dev, vn_device *checked_dev, const bench_cfg *cfg,
                            bench_peer *peer)
{
    int64_t n = cfg->add_n;
    float *a = vn_aligned_alloc((size_t)n * 4, 64), *b = vn_aligned_alloc((size_t)n * 4, 64);
    float *c = vn_aligned_alloc((size_t)n * 4, 64), *d = vn_aligned_alloc((size_t)n * 4, 64);
    if (!a || !b || !c || !d) return -1;
    bench_fill(a, n, 1);
    bench_fill(b, n, 2);
    vn_tensor_desc in[2] = {desc_1d(VN_F32, n), desc_1d(VN_F32, n)};
    bench_op add = {0}, relu = {0}, fused = {0}, add_checked = {0};
    void *ab[2] = {a, b}, *cc[1] = {c};
    vn_fused_program prog = {2, 2, {{VN_VOP_ADD, 0, 1, 0}, {VN_VOP_RELU, 2, 0, 0}}};
    vn_op_plan *fp = NULL;
    if (vn_fused_plan_create(dev, &prog, in, 2, &fp) != VN_OK) {
        fprintf(stderr, "fused plan failed: %s\n", vn_last_error());
        return -1;
    }
    vn_op_plan *ap = plan_op(dev, "Add", in, 2, NULL), *rp = plan_op(dev, "Relu", in, 1, NULL);
    vn_op_plan *acp = plan_op(checked_dev, "Add", in, 2, NULL);
    if (!ap || !rp || !acp) return -1;
    bench_op_prepare(&add, ap, ab, 2, c);
    bench_op_prepare(&relu, rp, cc, 1, d);
    bench_op_prepare(&fused, fp, ab, 2, d);
    bench_op_prepare(&add_checked, acp, ab, 2, c);
    for (int i = 0; i < 2; i++) add.in[i].desc = fused.in[i].desc = add_checked.in[i].desc = in[i];
    relu.in[0].desc = in[0];

    double bytes = 3.0 * 4.0 * (double)n, two_ms = 0, fused_ms = 0;
    bench_time t_add = bench_op_time_vs(&add, peer, cfg->reps, bytes);
    double up = bench_fused_speedup(&add, &relu, &fused, cfg->reps, &two_ms, &fused_ms);
    int checked_reps = cfg->reps < 3 ? cfg->reps : 3;
    double t_checked = bench_op_time(&add_checked, checked_reps);
    if (t_add.ms < 0 || up < 0 || t_checked < 0) return -1;
    printf("  Add f32 %lld elems        %8.3f ms  %7.1f GB/s  triad %5.1f GB/s  ratio %.2f "
           "(best/best %.2f; target >= 0.9)\n",
           (long long)n, t_add.ms, bytes / (t_add.ms * 1e6), t_add.peer_gbs, t_add.ratio,
           t_add.best);
    printf("  ReLU-Add fused            %8.3f ms  vs Add+Relu %.3f ms: speed-up %.2fx (target >= "
           "1.5x)\n",
           fused_ms, two_ms, up);
    printf("  Add f32, checked mode     %8.3f ms  slowdown %.1fx (must stay <= 20x)\n", t_checked,
           t_checked / t_add.ms);
    bench_op_release(&add);
    bench_op_release(&relu);
    bench_op_release(&fused);
    bench_op_release(&add_checked);
    vn_aligned_free(a), vn_aligned_free(b), vn_aligned_free(c), vn_aligned_free(d);
    return 0;
}

static int bench_layernorm(vn_device *dev, const bench_cfg *cfg, bench_peer *peer)
{
    int64_t rows = cfg->ln_rows, h = cfg->ln_h, n = rows * h;
    uint16_t *x = vn_aligned_alloc((size_t)n * 2, 64), *y = vn_aligned_alloc((size_t)n * 2, 64);
    uint16_t *g = vn_aligned_alloc((size_t)h * 2, 64), *bta = vn_aligned_alloc((size_t)h * 2, 64);
    float *tmp = vn_aligned_alloc((size_t)n * 4, 64);
    if (!x || !y || !g || !bta || !tmp) return -1;
    bench_fill(tmp, n, 3);
    vn_f32_to_f16_array(tmp, x, (size_t)n);
    bench_fill(tmp, h, 4);
    vn_f32_to_f16_array(tmp, g, (size_t)h);
    vn_f32_to_f16_array(tmp + h, bta, (size_t)h);
    vn_tensor_desc in[3] = {{VN_F16, 3, {8, rows / 8, h}}, desc_1d(VN_F16, h), desc_1d(VN_F16, h)};
    vn_op_plan *p = plan_op(dev, "LayerNormalization", in, 3, NULL);
    if (!p) return -1;
    bench_op op = {0};
    void *ins[3] = {x, g, bta};
    bench_op_prepare(&op, p, ins, 3, y);
    for (int i = 0; i < 3; i++) op.in[i].desc = in[i];
    double bytes = 2.0 * 2.0 * (double)n;
    bench_time t = bench_op_time_vs(&op, peer, cfg->reps, bytes);
    if (t.ms < 0) return -1;
    printf("  LayerNorm f16 [8,%lld,%lld]  %8.3f ms  %7.1f GB/s  triad %5.1f GB/s  ratio %.2f "
           "(best/best %.2f; target >= 0.8)\n",
           (long long)(rows / 8), (long long)h, t.ms, bytes / (t.ms * 1e6), t.peer_gbs, t.ratio,
           t.best);
    bench_op_release(&op);
    vn_aligned_free(x), vn_aligned_free(y), vn_aligned_free(g), vn_aligned_free(bta);
    vn_aligned_free(tmp);
    return 0;
}

static int bench_softmax(vn_device *dev, const bench_cfg *cfg, bench_peer *peer)
{
    int64_t n = cfg->sm_rows * cfg->sm_cols;
    float *x = vn_aligned_alloc((size_t)n * 4, 64), *y = vn_aligned_alloc((size_t)n * 4, 64);
    if (!x || !y) return -1;
    bench_fill(x, n, 5);
    vn_tensor_desc in[1] = {{VN_F32, 2, {cfg->sm_rows, cfg->sm_cols}}};
    vn_op_plan *p = plan_op(dev, "Softmax", in, 1, NULL);
    if (!p) return -1;
    bench_op op = {0};
    void *ins[1] = {x};
    bench_op_prepare(&op, p, ins, 1, y);
    op.in[0].desc = in[0];
    double bytes = 2.0 * 4.0 * (double)n;
    bench_time t = bench_op_time_vs(&op, peer, cfg->reps, bytes);
    if (t.ms < 0) return -1;
    printf("  Softmax f32 [%lld,%lld]     %8.3f ms  %7.1f GB/s  triad %5.1f GB/s  ratio %.2f "
           "(best/best %.2f; target >= 0.8)\n",
           (long long)cfg->sm_rows, (long long)cfg->sm_cols, t.ms, bytes / (t.ms * 1e6), t.peer_gbs,
           t.ratio, t.best);
    bench_op_release(&op);
    vn_aligned_free(x), vn_aligned_free(y);
    return 0;
}

static int bench_threads(int threads, const bench_cfg *cfg)
{
    vn_device_options opt = {.num_threads = threads};
    vn_device *dev = NULL, *checked = NULL;
    if (vn_device_create(&opt, &dev) != VN_OK) return -1;
    opt.checked = true;
    if (vn_device_create(&opt, &checked) != VN_OK) return -1;

    int64_t n = cfg->add_n;
    float *a = vn_aligned_alloc((size_t)n * 4, 64), *b = vn_aligned_alloc((size_t)n * 4, 64);
    float *c = vn_aligned_alloc((size_t)n * 4, 64);
    if (!a || !b || !c) return -1;
    bench_fill(b, n, 7);
    bench_fill(c, n, 8);
    bench_peer peer = {dev, {a, b, c, n, vn_device_num_workers(dev)}};
    double triad = bench_triad_gbs(dev, a, b, c, n, cfg->reps);
    printf("threads %d (isa %s): STREAM triad (peer) %.1f GB/s on %lld elements; each ratio below "
           "is the median of per-repetition ratios to a triad run just before\n",
           threads, vn_isa_name(vn_isa_active()), triad, (long long)n);

    int rc = 0;
    if (strchr(cfg->only, 'a')) rc |= bench_add_family(dev, checked, cfg, &peer);
    if (strchr(cfg->only, 'l')) rc |= bench_layernorm(dev, cfg, &peer);
    if (strchr(cfg->only, 's')) rc |= bench_softmax(dev, cfg, &peer);
    vn_aligned_free(a), vn_aligned_free(b), vn_aligned_free(c);
    vn_device_destroy(checked);
    vn_device_destroy(dev);
    return rc;
}

int main(int argc, char **argv)
{
    bench_cfg cfg = {7, 64ll << 20, 8 * 512, 4096, 4096, 4096, "als"};
    int threads[4] = {1, 2}, n_threads = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            cfg.reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            n_threads = sscanf(argv[++i], "%d,%d,%d,%d", &threads[0], &threads[1], &threads[2],
                               &threads[3]);
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            cfg.only = argv[++i];
        } else if (!strcmp(argv[i], "--small")) {
            cfg = (bench_cfg){3, 1ll << 20, 8 * 64, 1024, 256, 1024, cfg.only};
        } else {
            fprintf(stderr, "usage: bench_ops [--reps N] [--threads 1,2] [--small] [--only als]\n");
            return 2;
        }
    }
    if (cfg.reps < 1 || cfg.reps > 63 || n_threads < 1) {
        fprintf(stderr, "bench_ops: bad --reps or --threads\n");
        return 2;
    }
    printf("vinci operator benchmark: medians of %d runs\n", cfg.reps);
    for (int i = 0; i < n_threads; i++) {
        if (bench_threads(threads[i], &cfg) != 0) {
            fprintf(stderr, "bench_ops: failed: %s\n", vn_last_error());
            return 1;
        }
    }
    return 0;
}
