/*
 * test_precision.c — --precision bf16 (vn_compile_options.precision,
 * graph/pass_precision.c, the MatMul family's attribute compute = "bf16").
 *
 * Model: y1 = Relu(MatMul(x, W1) + b1) (one FusedMatMul from O2 on) and
 * y2 = Gemm(x, W2, c2, transB = 1), both reading the model input x, so the
 * operands the GEMM rounds to bf16 are exactly known here. At O0 and O2:
 *   - bf16 matches a double reference computed from bf16-rounded x and W
 *     (f32 accumulation bound), and differs from the f32 reference by
 *     about bf16's rounding (so bf16 really ran);
 *   - f32 matches the f32 reference;
 *   - the precision pass reports both products; the stats say bf16;
 *   - a .vnm round trip runs bit for bit the same and keeps the precision.
 * Also: an unknown precision and a bad compute attribute are errors.
 */
#include <math.h>
#include <unistd.h>

#include "../../tools/cli.h"
#include "graph/compile.h"
#include "test_fuse_util.h"
#include "vinci/ops.h"

#define M  8
#define K  64
#define N1 48
#define N2 40

static float x[M * K], w1[K * N1], b1[N1], w2[N2 * K], c2[N2];

static float bf16_round(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even (finite inputs) */
    u &= 0xffff0000u;
    memcpy(&v, &u, 4);
    return v;
}

static vn_graph *model(void)
{
    ob g = {0};
    vt_rng r = {11};
    int64_t xd[2] = {M, K}, w1d[2] = {K, N1}, b1d[1] = {N1}, w2d[2] = {N2, K}, c2d[1] = {N2};
    vt_fill(&r, x, M * K, -1, 1);
    vt_fill(&r, w1, K * N1, -0.5, 0.5);
    vt_fill(&r, b1, N1, -0.5, 0.5);
    vt_fill(&r, w2, N2 * K, -0.5, 0.5);
    vt_fill(&r, c2, N2, -0.5, 0.5);
    fz_input(&g, "x", 2, xd);
    fz_init(&g, "W1", 2, w1d, w1);
    fz_init(&g, "b1", 1, b1d, b1);
    fz_init(&g, "W2", 2, w2d, w2);
    fz_init(&g, "c2", 1, c2d, c2);
    fz_node(&g, "MatMul", "mm", "x", "W1", NULL, "p", NULL);
    fz_node(&g, "Add", "add", "p", "b1", NULL, "q", NULL);
    fz_node(&g, "Relu", "relu", "q", NULL, NULL, "y1", NULL);
    ob at = {0};
    ob_attr_int(&at, "transB", 1);
    fz_node(&g, "Gemm", "gemm", "x", "W2", "c2", "y2", &at);
    fz_output(&g, "y1");
    fz_output(&g, "y2");
    return fz_load(&g, 17);
}

/* The references of y1 and y2 (with operands rounded to bf16 when `bf16`),
 * and sum |a*b| + |bias| per output (the accumulation bound's scale). */
static void reference(bool bf16, double *y1, double *m1, double *y2, double *m2)
{
    float (*rd)(float) = bf16 ? bf16_round : NULL;
#define OP(v) ((double)(rd ? rd(v) : (v)))
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N1; j++) {
            double s = b1[j], m = fabs(b1[j]);
            for (int k = 0; k < K; k++) s += OP(x[i * K + k]) * OP(w1[k * N1 + j]);
            for (int k = 0; k < K; k++) m += fabs(OP(x[i * K + k]) * OP(w1[k * N1 + j]));
            y1[i * N1 + j] = s > 0 ? s : 0, m1[i * N1 + j] = m;
        }
        for (int j = 0; j < N2; j++) {
            double s = c2[j], m = fabs(c2[j]);
            for (int k = 0; k < K; k++) s += OP(x[i * K + k]) * OP(w2[j * K + k]);
            for (int k = 0; k < K; k++) m += fabs(OP(x[i * K + k]) * OP(w2[j * K + k]));
            y2[i * N2 + j] = s, m2[i * N2 + j] = m;
        }
    }
#undef OP
}

/* Outputs within 1e-5 (1 + mag) of want: bad count; *far: the largest
 * |got - other| / (1 + mag), to show how far another reference is. */
static int64_t off(const float *got, const double *want, const double *mag, const double *other,
                   int64_t n, double *far)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        bad += !(fabs(got[i] - want[i]) <= 1e-5 * (1 + mag[i]));
        double d = fabs(got[i] - other[i]) / (1 + mag[i]);
        if (d > *far) *far = d;
    }
    return bad;
}

static void check_level(vn_graph *gr, int level)
{
    static double r1[2][M * N1], m1[2][M * N1], r2[2][M * N2], m2[2][M * N2];
    reference(false, r1[0], m1[0], r2[0], m2[0]);
    reference(true, r1[1], m1[1], r2[1], m2[1]);
    vn_named_tensor in = {"x", {{VN_F32, 2, {M, K}}, x}};
    const char *outs[] = {"y1", "y2", NULL};
    for (int bf = 0; bf < 2; bf++) {
        float *got[FZ_MAX_IO] = {0};
        int64_t n[FZ_MAX_IO] = {0};
        vn_model_stats s;
        memset(&s, 0, sizeof s);
        fz_precision = bf ? VN_PRECISION_BF16 : VN_PRECISION_F32;
        fz_run(gr, level, &in, 1, outs, got, n, &s);
        fz_precision = VN_PRECISION_F32;
        if (n[0] != M * N1 || n[1] != M * N2) continue;
        double far = 0;
        int64_t bad = off(got[0], r1[bf], m1[bf], r1[!bf], M * N1, &far) +
                      off(got[1], r2[bf], m2[bf], r2[!bf], M * N2, &far);
        VT_CHECK(bad == 0, "O%d %s: %lld outputs off the reference", level, bf ? "bf16" : "f32",
                 (long long)bad);
        /* bf16 operands are 2^-9 off per value: the two references part by far more than
         * the f32 accumulation bound */
        VT_CHECK(far > 1e-4, "O%d %s: within %.2g of the other precision's reference", level,
                 bf ? "bf16" : "f32", far);
        VT_CHECK(s.precision == (bf ? VN_PRECISION_BF16 : VN_PRECISION_F32), "stats precision %d",
                 (int)s.precision);
        VT_CHECK(fz_changes(&s, "precision") == (bf ? 2 : -1), "O%d: precision pass %d changes",
                 level, (int)fz_changes(&s, "precision"));
        free(got[0]);
        free(got[1]);
    }
}

static void test_levels(void)
{
    vn_graph *gr = model();
    if (!gr) return;
    check_level(gr, 0);
    check_level(gr, 2);
    vn_graph_destroy(gr);
}

/* Run a model (compiled or loaded) on x: y1 then y2 into out. */
static void run_into(const vn_model *m, float *out)
{
    vn_model_ctx *c = NULL;
    vn_named_tensor in = {"x", {{VN_F32, 2, {M, K}}, x}};
    vn_named_tensor o[2] = {{"y1", {{VN_F32, 2, {M, N1}}, out}},
                            {"y2", {{VN_F32, 2, {M, N2}}, out + M * N1}}};
    VT_OK(vn_model_ctx_create(m, &c));
    if (c) VT_OK(vn_model_run(m, c, &in, 1, o, 2));
    vn_model_ctx_destroy(c);
}

static void test_offline_model(void)
{
    vn_graph *gr = model();
    vn_model *m = NULL, *l = NULL;
    vn_compile_options o = {.opt_level = 2, .precision = VN_PRECISION_BF16};
    if (gr) VT_OK(vn_model_compile(gr, &o, &m));
    if (!m) return vn_graph_destroy(gr);
    char path[128];
    snprintf(path, sizeof path, "/tmp/vinci_test_precision_%d.vnm", (int)getpid());
    VT_OK(vn_model_save(m, path));
    VT_OK(vn_model_load(path, NULL, &l));
    remove(path);
    static float a[M * (N1 + N2)], b[M * (N1 + N2)];
    run_into(m, a);
    if (l) {
        run_into(l, b);
        VT_CHECK(!memcmp(a, b, sizeof a), "the loaded bf16 model's outputs differ");
        vn_model_file_info fi;
        VT_OK(vn_model_file_info_get(l, &fi));
        VT_CHECK(fi.precision == VN_PRECISION_BF16, "file precision %d", (int)fi.precision);
    }
    vn_model_destroy(l);
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

static void test_errors(void)
{
    vn_graph *gr = model();
    vn_model *m = NULL;
    vn_compile_options o = {.opt_level = 1, .precision = 7};
    if (gr) VT_CHECK(vn_model_compile(gr, &o, &m) == VN_ERR_INVALID_ARG, "precision 7 accepted");
    VT_CONTAINS(vn_last_error(), "precision 7");
    vn_graph_destroy(gr);
    vn_tensor_desc in[2] = {{VN_F32, 2, {4, 8}}, {VN_F32, 2, {8, 3}}};
    vn_attr a = {.name = "compute", .type = VN_ATTR_STRING, .s = "fp8"};
    vn_attrs attrs = {&a, 1};
    vn_op_plan *p = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "MatMul", in, 2, &attrs, &p) == VN_ERR_INVALID_ARG,
             "compute fp8 accepted");
    VT_CONTAINS(vn_last_error(), "compute");
    vn_op_plan_destroy(p);
}

/* The CLI's --precision values: f32 (or fp32, as [E] spells it) and bf16. */
static void test_cli_precision(void)
{
    const char *cases[][2] = {{"f32", "0"},   {"fp32", "0"}, {"bf16", "1"},
                              {"fp16", "-1"}, {"", "-1"},    {"F32", "-1"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char opt[] = "--precision", val[16];
        snprintf(val, sizeof val, "%s", cases[c][0]);
        char *argv[] = {opt, val};
        int i = 0, level = 3, precision = 7;
        int r = vn_cli_parse_model_opt(val[0] ? 2 : 1, argv, &i, &level, &precision);
        int want = atoi(cases[c][1]);
        VT_CHECK(r == (want < 0 ? -1 : 1), "--precision '%s': %d", val, r);
        VT_CHECK(want < 0 || precision == want, "--precision '%s': precision %d", val, precision);
        VT_CHECK(level == 3, "--precision '%s' changed the level", val);
    }
}

int main(void)
{
    VT_RUN(test_levels);
    VT_RUN(test_offline_model);
    VT_RUN(test_errors);
    VT_RUN(test_cli_precision);
    return vt_summary();
}
