/*
 * test_gemm.c — the GEMM API against a double-precision reference: shapes
 * (every M, N, K in 1..67 with the others small, a grid, and 127..1000),
 * transposed, strided and batched operands, every epilogue, bf16 and int8,
 * pre-packed B bit-identical to unpacked, and argument errors.
 *
 * Tolerances: f32 |c - ref| <= (K + 4) * 2^-23 * sum|a*b| (+ the output
 * rounding); bf16 inputs are rounded to bf16 in the reference, so the same
 * f32-accumulation bound applies; int8 is exact.
 */
#include "vinci/gemm.h"
#include "vinci/vinci.h"
#include "vt.h"

static vt_rng rng = {0x9e3779b97f4a7c15ULL};

typedef struct gcase {
    vn_gemm_desc d;
    bool packed;
} gcase;

static double act_ref(const vn_gemm_epilogue *e, double v)
{
    switch (e->act) {
    case VN_ACT_RELU:
        return v > 0 ? v : 0;
    case VN_ACT_CLIP:
        return v < e->clip_min ? e->clip_min : v > e->clip_max ? e->clip_max : v;
    case VN_ACT_GELU_ERF:
        return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    case VN_ACT_GELU_TANH:
        return 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case VN_ACT_SILU:
        return v / (1 + exp(-v));
    case VN_ACT_SIGMOID:
        return 1 / (1 + exp(-v));
    default:
        return v;
    }
}

static float rbf(float x)
{
    return vn_bf16_to_f32(vn_f32_to_bf16(x));
}

/* Element (i, k) of op(A) / (k, j) of op(B) in batch b, as the cube sees it. */
static double elem(const void *p, vn_dtype dt, int64_t at, bool round_bf16)
{
    switch (dt) {
    case VN_F32: {
        float x = ((const float *)p)[at];
        return round_bf16 ? rbf(x) : x;
    }
    case VN_BF16:
        return vn_bf16_to_f32(((const uint16_t *)p)[at]);
    case VN_U8:
        return ((const uint8_t *)p)[at];
    case VN_I8:
        return ((const int8_t *)p)[at];
    default:
        return 0;
    }
}

static void fill(void *p, vn_dtype dt, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double u = vt_uniform(&rng, -1, 1);
        if (dt == VN_F32) ((float *)p)[i] = (float)u;
        if (dt == VN_BF16) ((uint16_t *)p)[i] = vn_f32_to_bf16((float)u);
        if (dt == VN_U8) ((uint8_t *)p)[i] = (uint8_t)(vt_next(&rng) >> 56);
        if (dt == VN_I8) ((int8_t *)p)[i] = (int8_t)(vt_next(&rng) >> 56);
    }
}

static double out_val(const void *c, vn_dtype dt, int64_t at)
{
    switch (dt) {
    case VN_F32:
        return ((const float *)c)[at];
    case VN_F16:
        return vn_f16_to_f32(((const uint16_t *)c)[at]);
    case VN_BF16:
        return vn_bf16_to_f32(((const uint16_t *)c)[at]);
    case VN_I32:
        return ((const int32_t *)c)[at];
    case VN_U8:
        return ((const uint8_t *)c)[at];
    case VN_I8:
        return ((const int8_t *)c)[at];
    default:
        return 0;
    }
}

typedef struct bufs {
    void *a, *b, *c, *c2, *cin, *res, *packed;
    float *bias, *colscale;
    size_t csize;
} bufs;

static size_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t ld)
{
    return (size_t)((batch - 1) * stride + rows * ld + 64);
}

static int64_t ld_a(const vn_gemm_desc *d)
{
    return d->lda ? d->lda : (d->trans_a ? d->M : d->K);
}
static int64_t ld_b(const vn_gemm_desc *d)
{
    return d->ldb ? d->ldb : (d->trans_b ? d->K : d->N);
}
static int64_t ld_c(const vn_gemm_desc *d)
{
    return d->ldc ? d->ldc : d->N;
}

static void alloc_bufs(const vn_gemm_desc *d, bufs *x)
{
    size_t na = extent(d->batch, d->stride_a, d->trans_a ? d->K : d->M, ld_a(d));
    size_t nb = extent(d->batch, d->stride_b, d->trans_b ? d->N : d->K, ld_b(d));
    x->csize = extent(d->batch, d->stride_c, d->M, ld_c(d)) * vn_dtype_size(d->c_dtype);
    x->a = malloc(na * 4), x->b = malloc(nb * 4);
    fill(x->a, d->a_dtype, (int64_t)na);
    fill(x->b, d->b_dtype, (int64_t)nb);
    x->c = calloc(1, x->csize), x->c2 = calloc(1, x->csize);
    size_t nc =
        extent(d->batch, d->stride_c_in > d->stride_residual ? d->stride_c_in : d->stride_residual,
               d->M, d->N + 8) +
        (size_t)(d->M * d->N);
    x->cin = malloc(nc * 4), x->res = malloc(nc * 4);
    fill(x->cin, VN_F32, (int64_t)nc), fill(x->res, VN_F32, (int64_t)nc);
    x->bias = malloc((size_t)(d->M + d->N + 1) * 4);
    x->colscale = malloc((size_t)(d->N + 1) * 4);
    fill(x->bias, VN_F32, d->M + d->N + 1);
    for (int64_t j = 0; j <= d->N; j++) x->colscale[j] = (float)vt_uniform(&rng, 0.5, 1.5);
    x->packed = NULL;
}

static void free_bufs(bufs *x)
{
    free(x->a), free(x->b), free(x->c), free(x->c2), free(x->cin), free(x->res);
    free(x->bias), free(x->colscale);
    vn_aligned_free(x->packed);
}

/* Compares C of batch bt with the reference; returns failures. */
static int check_batch(const vn_gemm_desc *d, const bufs *x, int64_t bt, const char *tag)
{
    const vn_gemm_epilogue *e = &d->epi;
    bool r16 = d->compute == VN_BF16;
    bool integer = d->compute == VN_I32;
    int bad = 0;
    for (int64_t i = 0; i < d->M; i++)
        for (int64_t j = 0; j < d->N; j++) {
            double s = 0, mag = 0;
            for (int64_t k = 0; k < d->K; k++) {
                int64_t ia = bt * d->stride_a + (d->trans_a ? k * ld_a(d) + i : i * ld_a(d) + k);
                int64_t ib = bt * d->stride_b + (d->trans_b ? j * ld_b(d) + k : k * ld_b(d) + j);
                double av = elem(x->a, d->a_dtype, ia, r16), bv = elem(x->b, d->b_dtype, ib, r16);
                if (integer) av -= e->a_zero, bv -= e->b_zero;
                s += av * bv, mag += fabs(av * bv);
            }
            double v = s;
            if (integer && d->c_dtype != VN_I32)
                v *= (e->scale ? e->scale : 1.0) * (e->has_col_scale ? x->colscale[j] : 1.0);
            double tol = (d->K + 4) * 1.2e-7 * mag * (integer ? 0 : 1);
            if (d->c_dtype != VN_I32) {
                v *= e->alpha;
                tol *= fabs(e->alpha);
                if (e->has_c_in)
                    v += e->beta *
                         ((float *)x->cin)[bt * d->stride_c_in + i * e->c_in_rs + j * e->c_in_cs];
                if (e->bias_axis == VN_BIAS_COL) v += x->bias[j];
                if (e->bias_axis == VN_BIAS_ROW) v += x->bias[i];
                if (e->has_residual)
                    v += ((float *)
                              x->res)[bt * d->stride_residual + i * (e->ldr ? e->ldr : d->N) + j];
                double va = act_ref(e, v);
                tol = tol * 1.2 + 4e-6 * (1 + fabs(va)) + (integer ? 1e-5 * fabs(v) : 0);
                v = va;
            }
            if (d->c_dtype == VN_F16) tol += fabs(v) * 1e-3 + 1e-7;
            if (d->c_dtype == VN_BF16) tol += fabs(v) * 8e-3;
            if (d->c_dtype == VN_U8 || d->c_dtype == VN_I8) {
                double q = nearbyint(v / (e->y_scale ? e->y_scale : 1.0)) + e->y_zero;
                double lo = d->c_dtype == VN_U8 ? 0 : -128, hi = d->c_dtype == VN_U8 ? 255 : 127;
                v = q < lo ? lo : q > hi ? hi : q;
                tol = 1; /* a float epilogue value on a .5 boundary may round either way */
            }
            double got = out_val(x->c, d->c_dtype, bt * d->stride_c + i * ld_c(d) + j);
            if (!(fabs(got - v) <= tol)) {
                if (bad < 3)
                    fprintf(stderr,
                            "  %s: M%lld N%lld K%lld batch %lld (%lld,%lld): got %.9g want %.9g "
                            "tol %.3g\n",
                            tag, (long long)d->M, (long long)d->N, (long long)d->K, (long long)bt,
                            (long long)i, (long long)j, got, v, tol);
                bad++;
            }
        }
    return bad;
}

static vn_gemm_args make_args(const vn_gemm_desc *d, bufs *x, bool packed, void *c)
{
    vn_gemm_args a = {.a = x->a, .b = packed ? x->packed : x->b, .b_packed = packed, .c = c};
    if (d->epi.has_c_in) a.c_in = x->cin;
    if (d->epi.bias_axis) a.bias = x->bias;
    if (d->epi.has_residual) a.residual = x->res;
    if (d->epi.has_col_scale) a.col_scale = x->colscale;
    return a;
}

/* Runs a case on `dev` (NULL: the default device) unpacked (checked against
 * the reference) and packed (memcmp). */
static void run_case_on(vn_device *dev, const vn_gemm_desc *d, const char *tag, bool also_packed)
{
    bufs x;
    alloc_bufs(d, &x);
    vn_gemm_plan *p = NULL;
    VT_OK(vn_gemm_plan_create(dev, d, &p));
    if (!p) {
        free_bufs(&x);
        return;
    }
    vn_gemm_args a = make_args(d, &x, false, x.c);
    VT_OK(vn_gemm_run(p, &a));
    int bad = 0;
    for (int64_t b = 0; b < d->batch; b++) bad += check_batch(d, &x, b, tag);
    VT_CHECK(bad == 0, "%s: %d wrong elements (M %lld N %lld K %lld)", tag, bad, (long long)d->M,
             (long long)d->N, (long long)d->K);
    if (also_packed) {
        x.packed = vn_aligned_alloc(vn_gemm_packed_b_size(p), 64);
        VT_OK(vn_gemm_pack_b(p, x.b, x.packed));
        vn_gemm_args ap = make_args(d, &x, true, x.c2);
        VT_OK(vn_gemm_run(p, &ap));
        VT_CHECK(memcmp(x.c, x.c2, x.csize) == 0,
                 "%s: packed B differs from unpacked (M %lld N %lld K %lld)", tag, (long long)d->M,
                 (long long)d->N, (long long)d->K);
    }
    vn_gemm_plan_destroy(p);
    free_bufs(&x);
}

static void run_case(const vn_gemm_desc *d, const char *tag, bool also_packed)
{
    run_case_on(NULL, d, tag, also_packed);
}

/* With 2 workers, an M = 128 product's column tiles are equally wide and
 * even in number, so neither worker gets more panels (768 columns had gone
 * in 10 tiles of 80: 25 panels against 23); the products stay right. */
static void test_two_workers_even_tiles(void)
{
    vn_device_options o = {0};
    o.num_threads = 2;
    vn_device *dev = NULL;
    VT_OK(vn_device_create(&o, &dev));
    if (!dev) return;
    static const int64_t ns[] = {576, 768, 1280, 3072, 4096};
    for (int i = 0; i < 5; i++) {
        vn_gemm_desc d = vn_gemm_desc_default(128, ns[i], i < 2 ? 768 : 256);
        d.b_prepacked = true;
        vn_gemm_plan *p = NULL;
        VT_OK(vn_gemm_plan_create(dev, &d, &p));
        if (!p) continue;
        vn_gemm_tiling t = vn_gemm_plan_tiling(p);
        int64_t panels = (d.N + t.nr - 1) / t.nr;
        VT_CHECK(t.nc % t.nr == 0 && panels % (t.nc / t.nr) == 0 && t.block_dim % 2 == 0,
                 "N %lld: %d tiles of %lld columns (%lld panels)", (long long)d.N, t.block_dim,
                 (long long)t.nc, (long long)panels);
        vn_gemm_plan_destroy(p);
        if (i < 2) run_case_on(dev, &d, "two workers", true);
    }
    vn_device_destroy(dev);
}

static void test_f32_sweep(void)
{
    for (int64_t v = 1; v <= 67; v++) {
        vn_gemm_desc d = vn_gemm_desc_default(v, 5, 7);
        run_case(&d, "sweep M", v % 8 == 0);
        d = vn_gemm_desc_default(3, v, 6);
        run_case(&d, "sweep N", v % 8 == 1);
        d = vn_gemm_desc_default(4, 9, v);
        run_case(&d, "sweep K", v % 8 == 2);
    }
}

static void test_f32_grid(void)
{
    static const int64_t g[] = {1, 7, 16, 31, 33, 64, 67};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++)
            for (int k = 0; k < 7; k++) {
                vn_gemm_desc d = vn_gemm_desc_default(g[i], g[j], g[k]);
                run_case(&d, "grid", (i + j + k) % 5 == 0);
            }
}

static void test_f32_large(void)
{
    static const int64_t s[][3] = {{127, 128, 129}, {128, 129, 127}, {129, 127, 128},
                                   {255, 33, 255},  {1000, 31, 40},  {17, 1000, 33},
                                   {20, 23, 1000},  {1, 1000, 255},  {1, 255, 1000},
                                   {128, 128, 128}, {37, 77, 1300},  {40, 96, 1100}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        vn_gemm_desc d = vn_gemm_desc_default(s[i][0], s[i][1], s[i][2]);
        run_case(&d, "large", true);
        d.ldb = d.N + 7; /* B read in place (N whole panels, few rows) with a row stride */
        run_case(&d, "large ldb", true);
    }
}

/* The b_prepacked hint retiles a product too small to pack its B once per
 * run (K = 768 is one chunk for a packed B, two otherwise, on a 48 KiB L1);
 * a larger one packs B once per run and tiles as the hint would. All these
 * tilings are right (their bits may differ: partial sums of two chunks
 * round differently from one chain). */
static void test_prepacked_hint(void)
{
    static const int64_t s[][3] = {{128, 96, 768}, {37, 64, 1300}, {20, 23, 1000}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        vn_gemm_desc d = vn_gemm_desc_default(s[i][0], s[i][1], s[i][2]);
        d.b_prepacked = true;
        run_case(&d, "prepacked hint", true);
    }
    /* N = 80: not whole 32-column panels, so AVX-512 packs B once per run too
     * instead of reading it in place (b_direct, whose K chunks are its own) */
    vn_gemm_desc big = vn_gemm_desc_default(128, 80, 768), big_h = big;
    big_h.b_prepacked = true;
    vn_gemm_plan *bp = NULL, *bq = NULL;
    VT_OK(vn_gemm_plan_create(NULL, &big, &bp));
    VT_OK(vn_gemm_plan_create(NULL, &big_h, &bq));
    VT_CHECK(bp && bq && vn_gemm_plan_tiling(bp).kc == vn_gemm_plan_tiling(bq).kc,
             "a B packed per run tiles as a pre-packed one");
    vn_gemm_plan_destroy(bp), vn_gemm_plan_destroy(bq);
    vn_gemm_desc d = vn_gemm_desc_default(16, 96, 768), h = d;
    h.b_prepacked = true;
    vn_gemm_plan *p = NULL, *q = NULL;
    VT_OK(vn_gemm_plan_create(NULL, &d, &p));
    VT_OK(vn_gemm_plan_create(NULL, &h, &q));
    if (!p || !q) return;
    bufs x;
    alloc_bufs(&d, &x);
    x.packed = vn_aligned_alloc(vn_gemm_packed_b_size(p), 64);
    VT_CHECK(vn_gemm_packed_b_size(p) == vn_gemm_packed_b_size(q), "packed sizes differ");
    VT_OK(vn_gemm_pack_b(p, x.b, x.packed));
    vn_gemm_args a = make_args(&d, &x, true, x.c), b = make_args(&d, &x, true, x.c2);
    VT_OK(vn_gemm_run(p, &a));
    VT_OK(vn_gemm_run(q, &b));
    VT_CHECK(check_batch(&d, &x, 0, "hint off") == 0, "hint off: wrong");
    memcpy(x.c, x.c2, x.csize);
    VT_CHECK(check_batch(&d, &x, 0, "hint on") == 0, "hint on: wrong");
    vn_gemm_tiling tp = vn_gemm_plan_tiling(p), tq = vn_gemm_plan_tiling(q);
    /* 12-row kernels: half of 48 KiB holds 512 k, three quarters 768 */
    bool l1_48k = vn_cpu_features_get()->l1d_bytes == 48 * 1024 && tp.mr == 12;
    VT_CHECK(tq.kc >= tp.kc && (!l1_48k || (tp.kc < 768 && tq.kc == 768)),
             "kc %lld (no hint) / %lld (hint)", (long long)tp.kc, (long long)tq.kc);
    vn_gemm_plan_destroy(p), vn_gemm_plan_destroy(q);
    free_bufs(&x);
}

/* A product that packs B once per run still runs, packing B in its tiles,
 * when that buffer cannot be had (the allocator's injected fault). */
static void test_run_pack_no_memory(void)
{
    vn_gemm_desc d = vn_gemm_desc_default(130, 70, 300);
    run_case(&d, "B packed per run", false);
    VT_OK(vn_mem_fault_inject(NULL, 1));
    run_case(&d, "B packed per run, no memory", false);
    VT_OK(vn_mem_fault_inject(NULL, 0));
}

/* A and B rows a multiple of 4 KiB apart stack in one L1 set: the mmad
 * copies such A rows apart (chunk by chunk) and the plan packs such a B
 * instead of reading it in place. Results stay right, packed = unpacked. */
static void test_crowded_rows(void)
{
    static const int64_t s[][4] = {{30, 64, 1024, 0},
                                   {13, 40, 300, 2048},
                                   {128, 96, 3072, 0},
                                   {40, 1024, 64, 0},
                                   {25, 2048, 48, 0}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        for (int t = 0; t < 3; t++) {
            vn_gemm_desc d = vn_gemm_desc_default(s[i][0], s[i][1], s[i][2]);
            d.lda = s[i][3];
            d.b_prepacked = t == 1;
            if (t == 2) d.compute = VN_BF16;
            run_case(&d, t == 2 ? "crowded bf16" : "crowded", true);
        }
    vn_gemm_desc d = vn_gemm_desc_default(24, 64, 1024);
    d.compute = VN_I32, d.a_dtype = VN_U8, d.b_dtype = VN_I8, d.c_dtype = VN_I32;
    run_case(&d, "crowded int8", true);
}

/* A crowded A over several column tiles: runs that read A in place copy it
 * once to uncrowded rows (gemm_run.c); the results are the same bits as
 * with B unpacked, and right -- also with no memory for the copy. */
static void test_padded_a(void)
{
    static const int64_t s[][3] = {{64, 1024, 1024}, {128, 768, 3072}, {37, 1640, 2048}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        for (int t = 0; t < 2; t++) {
            vn_gemm_desc d = vn_gemm_desc_default(s[i][0], s[i][1], s[i][2]);
            d.b_prepacked = t == 1;
            vn_gemm_plan *p = NULL;
            VT_OK(vn_gemm_plan_create(NULL, &d, &p));
            /* K a multiple of 1024: every row in one L1 set, crowded where MR > 4 */
            vn_gemm_tiling tp = vn_gemm_plan_tiling(p);
            VT_CHECK(tp.a_padded == (tp.mr > 4), "%lld x %lld x %lld, MR %d: A padded %d",
                     (long long)d.M, (long long)d.N, (long long)d.K, tp.mr, tp.a_padded);
            vn_gemm_plan_destroy(p);
            run_case(&d, "padded A", true);
        }
    vn_gemm_desc d = vn_gemm_desc_default(64, 1024, 1024);
    d.b_prepacked = true;
    VT_OK(vn_mem_fault_inject(NULL, 1)); /* the copy's buffer is refused */
    run_case(&d, "padded A, no memory", true);
    VT_OK(vn_mem_fault_inject(NULL, 0));
}

static void test_trans_strided(void)
{
    for (int t = 0; t < 4; t++) {
        vn_gemm_desc d = vn_gemm_desc_default(37, 45, 300);
        d.trans_a = t & 1, d.trans_b = (t >> 1) & 1;
        run_case(&d, "trans", true);
        d.lda = ld_a(&d) + 3, d.ldb = ld_b(&d) + 5, d.ldc = d.N + 2;
        run_case(&d, "strided", true);
        d.M = 1;
        d.lda = 0;
        run_case(&d, "gemv trans", true);
        /* the hint sends a transposed B down the GEMV path: packed, its
         * panels; as stored, gemv_trans; the same bits either way */
        d.b_prepacked = true;
        run_case(&d, "gemv trans, pre-packed hint", true);
        d.K = 1300, d.ldb = 0;
        run_case(&d, "gemv trans, pre-packed hint, K chunks", true);
    }
}

static void test_batch(void)
{
    vn_gemm_desc d = vn_gemm_desc_default(19, 35, 300);
    d.batch = 3;
    d.stride_a = 19 * 300, d.stride_b = 300 * 35, d.stride_c = 19 * 35;
    run_case(&d, "batch", true);
    d.stride_b = 0; /* broadcast B (MatMul [3,19,300] x [300,35]) */
    run_case(&d, "batch bcast B", true);
    d.stride_b = 300 * 35, d.stride_a = 0;
    run_case(&d, "batch bcast A", true);
    d.M = 1, d.stride_a = 300, d.stride_c = 35;
    run_case(&d, "batch gemv", true);
}

static void test_epilogues(void)
{
    for (int act = 0; act < VN_ACT_COUNT; act++)
        for (int form = 0; form < 4; form++) {
            vn_gemm_desc d = vn_gemm_desc_default(29, 70, form == 3 ? 1 : 300);
            if (form == 3) d.M = 1;
            vn_gemm_epilogue *e = &d.epi;
            e->act = (vn_act)act, e->clip_min = -0.5f, e->clip_max = 0.7f;
            e->alpha = form == 1 ? 0.5f : 1.0f;
            e->bias_axis = form == 2 ? VN_BIAS_ROW : VN_BIAS_COL;
            e->has_c_in = form != 0, e->beta = 0.75f;
            e->c_in_rs = form == 1 ? 0 : d.N, e->c_in_cs = 1; /* form 1: broadcast row */
            e->has_residual = form >= 2;
            run_case(&d, "epilogue", form == 3);
        }
    /* output casts */
    vn_dtype outs[] = {VN_F16, VN_BF16};
    for (int o = 0; o < 2; o++) {
        vn_gemm_desc d = vn_gemm_desc_default(33, 40, 500);
        d.c_dtype = outs[o];
        d.epi.act = VN_ACT_GELU_TANH;
        run_case(&d, "cast", true);
    }
    /* C broadcast forms: a column and a scalar; alpha = 0 */
    vn_gemm_desc d = vn_gemm_desc_default(12, 13, 14);
    d.epi.has_c_in = true, d.epi.beta = 2.0f, d.epi.c_in_rs = 1, d.epi.c_in_cs = 0;
    run_case(&d, "c column", false);
    d.epi.c_in_rs = 0, d.epi.alpha = 0.0f;
    run_case(&d, "c scalar alpha 0", false);
}

static void test_bf16(void)
{
    static const int64_t s[][3] = {{1, 1, 1},     {5, 7, 3},       {13, 33, 67},
                                   {67, 64, 129}, {128, 100, 700}, {1, 300, 513}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        for (int t = 0; t < 2; t++) {
            vn_gemm_desc d = vn_gemm_desc_default(s[i][0], s[i][1], s[i][2]);
            d.compute = VN_BF16;
            if (t) d.a_dtype = d.b_dtype = VN_BF16, d.trans_b = true;
            run_case(&d, "bf16", true);
        }
    /* every packer walk: depth- or row-contiguous A and B, f32 and bf16
     * sources, strided, and a K past one chunk */
    for (int t = 0; t < 8; t++) {
        vn_gemm_desc d = vn_gemm_desc_default(29, 45, t < 4 ? 301 : 1300);
        d.compute = VN_BF16;
        d.trans_a = t & 1, d.trans_b = (t >> 1) & 1;
        if (t & 2) d.a_dtype = d.b_dtype = VN_BF16;
        run_case(&d, "bf16 trans", true);
        d.lda = ld_a(&d) + 3, d.ldb = ld_b(&d) + 5, d.ldc = d.N + 2;
        run_case(&d, "bf16 strided", true);
    }
}

static void test_int8(void)
{
    static const int64_t s[][3] = {{1, 1, 1},     {5, 7, 3},       {13, 33, 67},
                                   {67, 64, 129}, {100, 70, 1500}, {1, 50, 77}};
    vn_dtype types[][2] = {{VN_U8, VN_I8}, {VN_I8, VN_I8}, {VN_U8, VN_U8}, {VN_I8, VN_U8}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        for (int t = 0; t < 4; t++) {
            vn_gemm_desc d = vn_gemm_desc_default(s[i][0], s[i][1], s[i][2]);
            d.compute = VN_I32, d.c_dtype = VN_I32;
            d.a_dtype = types[t][0], d.b_dtype = types[t][1];
            d.epi.a_zero = t == 1 ? 0 : 3 * t, d.epi.b_zero = t == 2 ? 128 : -t;
            d.trans_a = i == 3;
            run_case(&d, "int8 exact", true);
            d.c_dtype = t & 1 ? VN_I8 : VN_U8;
            d.epi.scale = 0.01f, d.epi.has_col_scale = true, d.epi.y_scale = 0.05f;
            d.epi.y_zero = t & 1 ? -3 : 100, d.epi.act = VN_ACT_RELU;
            d.epi.bias_axis = VN_BIAS_COL;
            run_case(&d, "int8 requant", true);
            d.c_dtype = VN_F32, d.epi.y_scale = 0, d.epi.y_zero = 0;
            run_case(&d, "int8 dequant", false);
        }
    /* every packer walk (depth- or row-contiguous A and B), strided, K past
     * one chunk */
    for (int t = 0; t < 8; t++) {
        vn_gemm_desc d = vn_gemm_desc_default(27, 70, t < 4 ? 303 : 4501);
        d.compute = VN_I32, d.c_dtype = VN_I32;
        d.a_dtype = t & 1 ? VN_I8 : VN_U8, d.b_dtype = t & 2 ? VN_U8 : VN_I8;
        d.epi.a_zero = 5, d.epi.b_zero = -2;
        d.trans_a = t & 1, d.trans_b = (t >> 1) & 1;
        run_case(&d, "int8 trans", true);
        d.lda = ld_a(&d) + 3, d.ldb = ld_b(&d) + 5, d.ldc = d.N + 2;
        run_case(&d, "int8 strided", true);
    }
}

static void test_errors(void)
{
    vn_gemm_plan *p = NULL;
    vn_gemm_desc d = vn_gemm_desc_default(4, 4, 4);
    d.a_dtype = VN_I8;
    VT_CHECK(vn_gemm_plan_create(NULL, &d, &p) == VN_ERR_DTYPE && !p, "i8 A in f32 accepted");
    VT_CONTAINS(vn_last_error(), "vn_gemm_plan_create");
    d = vn_gemm_desc_default(-1, 4, 4);
    VT_CHECK(vn_gemm_plan_create(NULL, &d, &p) == VN_ERR_SHAPE, "negative M accepted");
    d = vn_gemm_desc_default(4, 4, 4);
    d.lda = 2;
    VT_CHECK(vn_gemm_plan_create(NULL, &d, &p) == VN_ERR_SHAPE, "lda < K accepted");
    VT_CONTAINS(vn_last_error(), "lda");
    d = vn_gemm_desc_default(4, 4, 4);
    d.epi.bias_axis = VN_BIAS_COL;
    VT_OK(vn_gemm_plan_create(NULL, &d, &p));
    float buf[16] = {0};
    VT_CHECK(vn_gemm_run(p, &(vn_gemm_args){.a = buf, .b = buf, .c = buf}) == VN_ERR_INVALID_ARG,
             "missing bias accepted");
    VT_CONTAINS(vn_last_error(), "bias");
    VT_CHECK(vn_gemm_pack_b(p, buf, (void *)((uintptr_t)buf | 4)) == VN_ERR_INVALID_ARG,
             "misaligned pack");
    vn_gemm_plan_destroy(p);
    d = vn_gemm_desc_default(0, 5, 0); /* empty and K = 0 are fine */
    VT_OK(vn_gemm_plan_create(NULL, &d, &p));
    vn_gemm_plan_destroy(p);
    d = vn_gemm_desc_default(3, 5, 0);
    run_case(&d, "K = 0", false);
}

int main(void)
{
    VT_RUN(test_errors);
    VT_RUN(test_f32_sweep);
    VT_RUN(test_f32_grid);
    VT_RUN(test_f32_large);
    VT_RUN(test_two_workers_even_tiles);
    VT_RUN(test_prepacked_hint);
    VT_RUN(test_run_pack_no_memory);
    VT_RUN(test_crowded_rows);
    VT_RUN(test_padded_a);
    VT_RUN(test_trans_strided);
    VT_RUN(test_batch);
    VT_RUN(test_epilogues);
    VT_RUN(test_bf16);
    VT_RUN(test_int8);
    return vt_summary();
}
