/*
 * test_conv_pool.c — a MaxPool fused into a stem convolution
 * (vinci::FusedConvNC1HWC0 with x_layout = "NCHW" and pool_* attributes,
 * conv_direct.c's pooled tiles) against the double reference: the
 * convolution with its epilogue (test_conv_ref.h), then the max pool in
 * double. Cases cover SqueezeNet's (3x3/2 conv, 3x3/2 ceil-mode pool) and
 * ResNet's (7x7/2 pad 3, 3x3/2 pad 1) stems, a 2x2 pool, a dilated pool,
 * a batch, K % 16 != 0 (the last block's zero lanes) and maps tall enough
 * for several bands of pooled rows; an L1 arena too small for the rows
 * (the workspace fallback); and the plans that must be refused.
 */
#include "test_conv_ref.h"

typedef struct pool_case {
    int64_t k[2], s[2], p[4], d[2], ceil;
} pool_case;

typedef struct pool_attrs {
    vn_attr items[20];
    int count;
} pool_attrs;

/* The conv's attributes (make_attrs) plus the pool's, prefixed "pool_". */
static vn_attrs pooled_attrs(pool_attrs *pa, attr_buf *ab, const cc *c, const epi_case *e,
                             const pool_case *q)
{
    vn_attrs base = make_attrs(ab, c, "direct", e, CONV_PLAIN_X);
    pa->count = 0;
    for (int i = 0; i < base.count; i++) pa->items[pa->count++] = base.items[i];
    pa->items[pa->count++] =
        (vn_attr){.name = "pool_kernel_shape", .type = VN_ATTR_INTS, .ints = q->k, .count = 2};
    pa->items[pa->count++] =
        (vn_attr){.name = "pool_strides", .type = VN_ATTR_INTS, .ints = q->s, .count = 2};
    pa->items[pa->count++] =
        (vn_attr){.name = "pool_pads", .type = VN_ATTR_INTS, .ints = q->p, .count = 4};
    pa->items[pa->count++] =
        (vn_attr){.name = "pool_dilations", .type = VN_ATTR_INTS, .ints = q->d, .count = 2};
    pa->items[pa->count++] = (vn_attr){.name = "pool_ceil_mode", .type = VN_ATTR_INT, .i = q->ceil};
    return (vn_attrs){pa->items, pa->count};
}

/* ONNX MaxPool's output size along one dim. */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                        int64_t ceil_mode)
{
    int64_t span = in + pb + pe - ((k - 1) * d + 1);
    int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + pb) o--;
    return o;
}

/* Max of the window of (ph, pw) over an OH x OW plane (padding excluded). */
static void pool_ref(const double *y, const double *mag, int64_t OH, int64_t OW, const pool_case *q,
                     int64_t ph, int64_t pw, double *out, double *out_mag)
{
    *out = -INFINITY, *out_mag = 0;
    for (int64_t i = 0; i < q->k[0]; i++)
        for (int64_t j = 0; j < q->k[1]; j++) {
            int64_t r = ph * q->s[0] - q->p[0] + i * q->d[0];
            int64_t c = pw * q->s[1] - q->p[1] + j * q->d[1];
            if (r < 0 || r >= OH || c < 0 || c >= OW) continue;
            if (y[r * OW + c] > *out) *out = y[r * OW + c];
            if (mag[r * OW + c] > *out_mag) *out_mag = mag[r * OW + c];
        }
}

/* The device the pooled plans run on (NULL: the default). */
static vn_device *pool_device;

/* Run the pooled operator on case c and compare every pooled value. */
static void check_pooled(cc c, const epi_case *e, pool_case q, uint64_t seed)
{
    int64_t OH, OW;
    geometry(&c, &OH, &OW);
    int64_t PH = pool_out(OH, q.k[0], q.s[0], q.d[0], q.p[0], q.p[2], q.ceil);
    int64_t PW = pool_out(OW, q.k[1], q.s[1], q.d[1], q.p[1], q.p[3], q.ceil);
    vt_rng r = {seed};
    int64_t nx = c.N * c.C * c.H * c.W, nw = c.K * c.C * c.kh * c.kw, ny = c.N * c.K * OH * OW;
    int64_t K1 = (c.K + 15) / 16, np = c.N * K1 * PH * PW * 16;
    float *x = malloc((size_t)nx * 4), *w = malloc((size_t)nw * 4), *b = malloc((size_t)c.K * 4);
    float *yb = malloc((size_t)np * 4);
    double *ref = malloc((size_t)ny * 8), *mag = malloc((size_t)ny * 8);
    vt_fill(&r, x, (size_t)nx, -1, 1);
    vt_fill(&r, w, (size_t)nw, -1, 1);
    vt_fill(&r, b, (size_t)c.K, -1, 1);
    ref_conv(&c, OH, OW, x, w, b, NULL, e, ref, mag);

    attr_buf ab;
    pool_attrs pa;
    vn_attrs attrs = pooled_attrs(&pa, &ab, &c, e, &q);
    int64_t wd[4] = {c.K, c.C, c.kh, c.kw}, kd[1] = {c.K};
    vn_tensor_desc in[3] = {fmap_desc(&c, c.C, c.H, c.W, false), make_desc(4, wd),
                            make_desc(1, kd)};
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(pool_device, "vinci::FusedConvNC1HWC0", in, 3, &attrs, &plan);
    int bad = 0;
    if (st == VN_OK) {
        const vn_tensor_desc *od = vn_op_plan_output(plan, 0);
        VT_CHECK(od->rank == 5 && od->dims[2] == PH && od->dims[3] == PW,
                 "pooled output %lld x %lld, want %lld x %lld", (long long)od->dims[2],
                 (long long)od->dims[3], (long long)PH, (long long)PW);
        vn_tensor ti[3] = {{in[0], x}, {in[1], w}, {in[2], b}};
        vn_tensor to = {*od, yb};
        size_t ws = vn_op_plan_workspace(plan);
        void *wsp = ws ? malloc(ws) : NULL;
        st = vn_op_run(plan, ti, 3, &to, 1, wsp);
        free(wsp);
        vn_op_plan_destroy(plan);
    }
    for (int64_t n = 0; n < c.N && st == VN_OK; n++)
        for (int64_t k = 0; k < K1 * 16; k++)
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    float got = yb[(((n * K1 + k / 16) * PH + ph) * PW + pw) * 16 + k % 16];
                    double want = 0, m = 0; /* lanes past K stay zero */
                    if (k < c.K)
                        pool_ref(ref + (n * c.K + k) * OH * OW, mag + (n * c.K + k) * OH * OW, OH,
                                 OW, &q, ph, pw, &want, &m);
                    if (!(fabs(got - want) <= 1e-5 * (1 + m))) bad++;
                }
    VT_CHECK(st == VN_OK && bad == 0,
             "N%lld C%lld %lldx%lld K%lld k%lld s%lld pad %lld, pool k%lldx%lld s%lld pads "
             "%lld,%lld,%lld,%lld d%lld ceil %lld act %s: %s %s, %d bad",
             (long long)c.N, (long long)c.C, (long long)c.H, (long long)c.W, (long long)c.K,
             (long long)c.kh, (long long)c.sh, (long long)c.pt, (long long)q.k[0],
             (long long)q.k[1], (long long)q.s[0], (long long)q.p[0], (long long)q.p[1],
             (long long)q.p[2], (long long)q.p[3], (long long)q.d[0], (long long)q.ceil,
             e->name ? e->name : "-", vn_status_name(st), st == VN_OK ? "" : vn_last_error(), bad);
    free(x), free(w), free(b), free(yb), free(ref), free(mag);
}

#define CONV(N, C, H, W, K, k, s, p)                                                               \
    (cc)                                                                                           \
    {                                                                                              \
        2, N, C, H, W, K, k, k, s, s, 1, 1, p, p, p, p, 1, NULL                                    \
    }

static void test_stems(void)
{
    const epi_case *relu = &conv_epi_cases[1], *none = &conv_epi_cases[0];
    /* SqueezeNet 1.1: 3x3/2 conv, ReLU, 3x3/2 ceil-mode pool */
    check_pooled(CONV(1, 3, 33, 29, 20, 3, 2, 0), relu,
                 (pool_case){{3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1}, 1);
    /* ResNet: 7x7/2 pad 3, ReLU, 3x3/2 pad 1 */
    check_pooled(CONV(1, 3, 30, 34, 40, 7, 2, 3), relu,
                 (pool_case){{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0}, 2);
    /* a 2x2/2 pool, batch 2, no activation, asymmetric pool pads */
    check_pooled(CONV(2, 4, 17, 18, 16, 3, 1, 1), none,
                 (pool_case){{2, 2}, {2, 2}, {0, 1, 1, 0}, {1, 1}, 0}, 3);
    /* Sigmoid (applied after the store, before the pool), asymmetric conv pads */
    check_pooled((cc){2, 1, 3, 19, 21, 24, 3, 3, 2, 2, 1, 1, 0, 1, 2, 0, 1, NULL},
                 &conv_epi_cases[7], (pool_case){{3, 3}, {2, 2}, {1, 0, 0, 1}, {1, 1}, 1}, 9);
    /* a dilated pool, stride 1, Clip */
    check_pooled(CONV(1, 1, 15, 16, 33, 3, 1, 0), &conv_epi_cases[2],
                 (pool_case){{3, 2}, {1, 1}, {1, 0, 1, 0}, {2, 2}, 0}, 4);
}

/* Tall maps: several bands of pooled rows per image, each recomputing the
 * conv rows its windows share with the next band's. */
static void test_bands(void)
{
    check_pooled(CONV(1, 3, 230, 70, 64, 3, 2, 1), &conv_epi_cases[1],
                 (pool_case){{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1}, 5);
    check_pooled(CONV(2, 3, 161, 40, 24, 5, 1, 2), &conv_epi_cases[0],
                 (pool_case){{3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0}, 6);
}

/* An L1 arena too small for even one pooled row's conv rows: the plan
 * falls back to the whole conv map in its workspace, pooled after. */
static void test_small_l1(void)
{
    vn_device_options o = {.num_threads = 2};
    o.arena_bytes[VN_ARENA_L1] = 4096;
    VT_OK(vn_device_create(&o, &pool_device));
    check_pooled(CONV(1, 3, 30, 34, 40, 7, 2, 3), &conv_epi_cases[1],
                 (pool_case){{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0}, 7);
    check_pooled(CONV(2, 3, 33, 29, 20, 3, 2, 0), &conv_epi_cases[0],
                 (pool_case){{3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1}, 8);
    vn_device_destroy(pool_device);
    pool_device = NULL;
}

/* Plan-time refusals: a pooled conv must read a plain input and have no residual. */
static void test_refused(void)
{
    cc c = CONV(1, 3, 16, 16, 16, 3, 1, 1);
    pool_case q = {{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0};
    attr_buf ab;
    pool_attrs pa;
    vn_attrs attrs = pooled_attrs(&pa, &ab, &c, &conv_epi_cases[1], &q);
    int64_t wd[4] = {16, 3, 3, 3}, kd[1] = {16}, zd[5] = {1, 1, 16, 16, 16};
    vn_tensor_desc in[4] = {fmap_desc(&c, 3, 16, 16, false), make_desc(4, wd), make_desc(1, kd),
                            make_desc(5, zd)};
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 4, &attrs, &plan) ==
                 VN_ERR_UNSUPPORTED,
             "a pooled conv with a residual is refused");
    VT_CONTAINS(vn_last_error(), "fused MaxPool");
    vn_attr plainless[20];
    int n = 0;
    for (int i = 0; i < attrs.count; i++)
        if (strcmp(attrs.items[i].name, "x_layout") != 0) plainless[n++] = attrs.items[i];
    vn_attrs blocked = {plainless, n};
    /* a pool_ attribute MaxPool does not have */
    vn_attr extra[21];
    memcpy(extra, attrs.items, (size_t)attrs.count * sizeof *extra);
    int64_t one[2] = {1, 1};
    extra[attrs.count] =
        (vn_attr){.name = "pool_stride", .type = VN_ATTR_INTS, .ints = one, .count = 2};
    vn_attrs typo = {extra, attrs.count + 1};
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 3, &typo, &plan) ==
                 VN_ERR_INVALID_ARG,
             "an unknown pool_ attribute is refused");
    VT_CONTAINS(vn_last_error(), "pool_stride");
    in[0] = fmap_desc(&c, 3, 16, 16, true);
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 3, &blocked, &plan) ==
                 VN_ERR_UNSUPPORTED,
             "a pooled conv of a blocked input is refused");
}

int main(void)
{
    VT_RUN(test_stems);
    VT_RUN(test_bands);
    VT_RUN(test_small_l1);
    VT_RUN(test_refused);
    return vt_summary();
}
