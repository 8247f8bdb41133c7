/*
 * test_fuse_qdq.c — fuse_qdq (O3): QDQ Conv / MatMul groups become
 * QLinearConv / QLinearMatMul.
 *   - The pattern (x quantised by a QuantizeLinear, int8 per-channel weights,
 *     an f32 or an i32 DequantizeLinear bias, a Relu where y's zero point is
 *     0) fuses: the op types after, and O3's dequantised output within one
 *     output step of O2's (the f32 path: requantisation may round the other
 *     way by one).
 *   - A DequantizeLinear with another reader stays for it (the fused node
 *     reads the quantised tensor), the result unchanged.
 *   - DQ -> MaxPool -> Q with equal parameters becomes a MaxPool on the u8
 *     tensor (bit-identical to O2); with another output scale it stays.
 *   - Near misses stay as they are: a scale that is a model input, the Conv's
 *     f32 output read elsewhere, f32 weights, a Relu over a zero point that
 *     is not the type's lowest value, a per-column zero point with two values
 *     (the int8 GEMM takes one).
 *   - The int8 policy: these tests force the rewrite (VINCI_QDQ_INT8=1, as on
 *     a CPU with VNNI); 0 keeps the group in f32, and by default the group
 *     is rewritten exactly where vn_cube_int8_native() says int8 is faster.
 */
#include "test_fuse_util.h"
#include "graph/pass_fuse.h"

#define CH 3
#define KO 4
#define HW 6
#define MK 16
#define MN 8

/* What varies between the graphs. */
typedef struct qdq_case {
    bool matmul;      /* DQ, DQ -> MatMul -> Q instead of the Conv */
    int bias;         /* 0 none, 1 f32 constant, 2 DequantizeLinear of i32 */
    bool relu;        /* Relu between the product and the QuantizeLinear */
    uint8_t y_zero;   /* y's zero point (u8) */
    bool input_scale; /* x's scale is a model input */
    bool dq_shared;   /* x's DequantizeLinear output is also a model output */
    bool out_shared;  /* the product's f32 output is also a model output */
    bool float_w;     /* f32 weights, no DequantizeLinear */
    bool mixed_zero;  /* w's per-channel zero points differ */
} qdq_case;

static const float sx = 0.02f, sy = 0.05f;

static void q_init(ob *g, const char *name, int elem, int rank, const int64_t *dims, const void *v,
                   size_t bytes)
{
    ob t = {0};
    ob_tensor_raw(&t, name, elem, rank, dims, v, bytes);
    ob_msg(g, 5, &t);
}

static void axis_attr(ob *a, int64_t axis)
{
    ob_attr_int(a, "axis", axis);
}

/* int8 weights [n] in [-100, 100], per-channel scales [k], zero points. */
static void weights(ob *g, vt_rng *r, const qdq_case *c, int rank, const int64_t *wd, int64_t k)
{
    int64_t n = 1, kd[1] = {k};
    for (int i = 0; i < rank; i++) n *= wd[i];
    int8_t w[KO * CH * 9 > MK * MN ? KO * CH * 9 : MK * MN], zw[MN] = {0};
    float f[sizeof w], sw[MN];
    for (int64_t i = 0; i < n; i++) w[i] = (int8_t)(vt_uniform(r, -100, 100));
    for (int64_t i = 0; i < k; i++) sw[i] = 0.01f * (float)(i + 1);
    if (c->mixed_zero) zw[1] = 3;
    if (c->float_w) {
        for (int64_t i = 0; i < n; i++) f[i] = 0.01f * w[i];
        fz_init(g, "wd", rank, wd, f);
        return;
    }
    q_init(g, "w", OB_INT8, rank, wd, w, (size_t)n);
    fz_init(g, "sw", 1, kd, sw);
    q_init(g, "zw", OB_INT8, 1, kd, zw, (size_t)k);
    ob a = {0};
    axis_attr(&a, c->matmul ? 1 : 0);
    fz_node(g, "DequantizeLinear", "dq_w", "w", "sw", "zw", "wd", &a);
}

/* Conv's bias: B[k] f32, or b_i32 behind DequantizeLinear(scale sx*sw[k]). */
static void bias(ob *g, vt_rng *r, int kind)
{
    int64_t kd[1] = {KO};
    float b[KO], sb[KO];
    int32_t bq[KO];
    for (int k = 0; k < KO; k++) {
        b[k] = (float)vt_uniform(r, -0.5, 0.5);
        sb[k] = sx * (0.01f * (float)(k + 1));
        bq[k] = (int32_t)lrint(b[k] / sb[k]);
    }
    if (kind == 1) {
        fz_init(g, "b", 1, kd, b);
        return;
    }
    q_init(g, "bq", OB_INT32, 1, kd, bq, sizeof bq);
    fz_init(g, "sb", 1, kd, sb);
    ob a = {0};
    axis_attr(&a, 0);
    fz_node(g, "DequantizeLinear", "dq_b", "bq", "sb", "", "b", &a);
}

static vn_graph *qdq_graph(const qdq_case *c)
{
    ob g = {0};
    vt_rng rng = {23};
    int64_t xd[4] = {1, CH, HW, HW}, md[2] = {2, MK}, wd[4] = {KO, CH, 3, 3}, mw[2] = {MK, MN},
            pads[4] = {1, 1, 1, 1};
    uint8_t zx = 128, zy = c->y_zero;
    fz_input(&g, "x", c->matmul ? 2 : 4, c->matmul ? md : xd);
    if (c->input_scale) {
        fz_input(&g, "sx", 0, NULL);
    } else {
        fz_scalar(&g, "sx", sx);
    }
    fz_scalar(&g, "sy", sy);
    q_init(&g, "zx", OB_UINT8, 0, NULL, &zx, 1);
    q_init(&g, "zy", OB_UINT8, 0, NULL, &zy, 1);
    fz_node(&g, "QuantizeLinear", "q_x", "x", "sx", "zx", "xq", NULL);
    fz_node(&g, "DequantizeLinear", "dq_x", "xq", "sx", "zx", "xd", NULL);
    weights(&g, &rng, c, c->matmul ? 2 : 4, c->matmul ? mw : wd, c->matmul ? MN : KO);
    if (c->bias) bias(&g, &rng, c->bias);
    if (c->matmul) {
        fz_node(&g, "MatMul", "mm", "xd", "wd", NULL, "c", NULL);
    } else {
        ob ca = {0};
        fz_attr_ints(&ca, "pads", 4, pads);
        fz_node(&g, "Conv", "conv", "xd", "wd", c->bias ? "b" : NULL, "c", &ca);
    }
    if (c->relu) fz_node(&g, "Relu", "relu", "c", NULL, NULL, "r", NULL);
    fz_node(&g, "QuantizeLinear", "q_y", c->relu ? "r" : "c", "sy", "zy", "yq", NULL);
    fz_node(&g, "DequantizeLinear", "dq_y", "yq", "sy", "zy", "y", NULL);
    fz_output(&g, "y");
    if (c->dq_shared) fz_output(&g, "xd");
    if (c->out_shared) fz_output(&g, "c");
    return fz_load(&g, 17);
}

/* Compile at `level`, run on fixed inputs; y's values into got (n of them). */
static void run_level(vn_graph *gr, const qdq_case *c, int level, float **got, int64_t *n,
                      vn_model_stats *s)
{
    static float x[CH * HW * HW];
    vt_rng rng = {29};
    vt_fill(&rng, x, CH * HW * HW, -2, 2);
    float scale = sx;
    vn_named_tensor in[2] = {{"x", {{VN_F32, 4, {1, CH, HW, HW}}, x}},
                             {"sx", {{VN_F32, 0, {0}}, &scale}}};
    if (c->matmul) in[0].tensor.desc = (vn_tensor_desc){VN_F32, 2, {2, MK}};
    const char *outs[] = {"y", NULL};
    fz_run(gr, level, in, c->input_scale ? 2 : 1, outs, got, n, s);
}

/* Live op types of the O3 model, "A,B,C". */
static void o3_ops(vn_graph *gr, char *buf, size_t size)
{
    vn_compile_options o = {.opt_level = 3};
    vn_model *m = NULL;
    buf[0] = 0;
    VT_OK(vn_model_compile(gr, &o, &m));
    for (int32_t i = 0; m && i < m->num_nodes; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", used ? "," : "", m->nodes[i].op_type);
    }
    vn_model_destroy(m);
}

/* O3 within one output step (sy) of O2; returns fuse_qdq's change count. */
static int32_t check_case(const qdq_case *c, const char *want_ops)
{
    vn_graph *gr = qdq_graph(c);
    float *got[2][1] = {{0}};
    int64_t n[2][1] = {{0}};
    vn_model_stats s[2];
    run_level(gr, c, 2, got[0], n[0], &s[0]);
    run_level(gr, c, 3, got[1], n[1], &s[1]);
    int64_t bad = 0;
    VT_CHECK(n[0][0] == n[1][0] && n[0][0] > 0, "%lld values at O3, %lld at O2", (long long)n[1][0],
             (long long)n[0][0]);
    for (int64_t i = 0; n[0][0] == n[1][0] && i < n[0][0]; i++)
        bad += !(fabsf(got[1][0][i] - got[0][0][i]) <= sy * 1.001f);
    VT_CHECK(bad == 0, "%lld of %lld values more than one step from O2", (long long)bad,
             (long long)n[0][0]);
    char ops[256];
    o3_ops(gr, ops, sizeof ops);
    VT_CHECK(!strcmp(ops, want_ops), "O3 nodes %s, want %s", ops, want_ops);
    const vn_pass_report *r = fz_report(&s[1], "fuse_qdq");
    VT_CHECK(r != NULL, "no fuse_qdq report");
    VT_CHECK(fz_changes(&s[0], "fuse_qdq") == -1, "fuse_qdq ran at O2");
    for (int k = 0; k < 2; k++) free(got[k][0]);
    vn_graph_destroy(gr);
    return r ? r->changes : -1;
}

static void test_conv(void)
{
    const char *want = "QuantizeLinear,QLinearConv,DequantizeLinear";
    for (int b = 0; b < 3; b++) {
        qdq_case c = {.bias = b, .y_zero = 128};
        VT_CHECK(check_case(&c, want) == 1, "bias %d: not fused", b);
    }
    qdq_case relu = {.bias = 2, .relu = true, .y_zero = 0};
    VT_CHECK(check_case(&relu, want) == 1, "Relu over zero point 0: not fused");
}

static void test_conv_report(void)
{
    qdq_case c = {.bias = 2, .y_zero = 128};
    vn_graph *gr = qdq_graph(&c);
    float *got[1] = {0};
    int64_t n[1];
    vn_model_stats s;
    run_level(gr, &c, 3, got, n, &s);
    const vn_pass_report *r = fz_report(&s, "fuse_qdq");
    if (r)
        VT_CONTAINS(r->detail, "node 'conv' (Conv)+DequantizeLinear+DequantizeLinear+"
                               "DequantizeLinear+QuantizeLinear -> QLinearConv");
    free(got[0]);
    vn_graph_destroy(gr);
}

static void test_matmul(void)
{
    qdq_case c = {.matmul = true, .y_zero = 128};
    VT_CHECK(check_case(&c, "QuantizeLinear,QLinearMatMul,DequantizeLinear") == 1, "not fused");
}

/* The fused node reads x's u8 tensor; its DequantizeLinear stays for the other reader. */
static void test_shared_dq(void)
{
    qdq_case c = {.bias = 1, .y_zero = 128, .dq_shared = true};
    VT_CHECK(check_case(&c, "QuantizeLinear,DequantizeLinear,QLinearConv,DequantizeLinear") == 1,
             "not fused");
}

/* The f32 path at O3: the Conv on its blocked twin (layout_propagation). */
#define F32_CONV                                                                                   \
    "QuantizeLinear,DequantizeLinear,ConvNC1HWC0,FromNC1HWC0,QuantizeLinear,DequantizeLinear"

static void test_near_misses(void)
{
    struct {
        qdq_case c;
        const char *ops, *why;
    } cases[] = {
        {{.bias = 1, .y_zero = 128, .input_scale = true}, F32_CONV, "x's scale a model input"},
        {{.bias = 1, .y_zero = 128, .out_shared = true},
         F32_CONV,
         "the Conv's f32 output read twice"},
        {{.bias = 1, .y_zero = 128, .float_w = true}, F32_CONV, "f32 weights"},
        {{.bias = 1, .relu = true, .y_zero = 128},
         "QuantizeLinear,DequantizeLinear,FusedConvNC1HWC0,FromNC1HWC0,QuantizeLinear,"
         "DequantizeLinear",
         "Relu over zero point 128"},
        {{.matmul = true, .y_zero = 128, .mixed_zero = true},
         "QuantizeLinear,DequantizeLinear,MatMul,QuantizeLinear,DequantizeLinear",
         "two per-column zero points"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        VT_CHECK(check_case(&cases[i].c, cases[i].ops) == 0, "fused: %s", cases[i].why);
}

/* x -> Q(sx, zx) -> DQ -> MaxPool 2x2 -> Q(s_out, zx) -> DQ -> y: with s_out =
 * sx the pool runs on the u8 tensor (exactly: O3 equals O2 bit for bit); with
 * another scale nothing changes. */
static void check_pool(float s_out, const char *want_ops)
{
    ob g = {0}, pa = {0};
    int64_t xd[4] = {1, CH, HW, HW}, k[2] = {2, 2};
    uint8_t zx = 100;
    fz_input(&g, "x", 4, xd);
    fz_scalar(&g, "sx", sx);
    fz_scalar(&g, "so", s_out);
    q_init(&g, "zx", OB_UINT8, 0, NULL, &zx, 1);
    fz_node(&g, "QuantizeLinear", "q_x", "x", "sx", "zx", "xq", NULL);
    fz_node(&g, "DequantizeLinear", "dq_x", "xq", "sx", "zx", "xd", NULL);
    fz_attr_ints(&pa, "kernel_shape", 2, k);
    fz_attr_ints(&pa, "strides", 2, k);
    fz_node(&g, "MaxPool", "pool", "xd", NULL, NULL, "p", &pa);
    fz_node(&g, "QuantizeLinear", "q_p", "p", "so", "zx", "pq", NULL);
    fz_node(&g, "DequantizeLinear", "dq_p", "pq", "so", "zx", "y", NULL);
    fz_output(&g, "y");
    vn_graph *gr = fz_load(&g, 17);
    qdq_case c = {0};
    float *got[2][1] = {{0}};
    int64_t n[2][1] = {{0}};
    vn_model_stats st[2];
    run_level(gr, &c, 2, got[0], n[0], &st[0]);
    run_level(gr, &c, 3, got[1], n[1], &st[1]);
    VT_CHECK(n[0][0] == n[1][0] && n[0][0] == CH * (HW / 2) * (HW / 2), "%lld / %lld values",
             (long long)n[0][0], (long long)n[1][0]);
    for (int64_t i = 0; n[0][0] == n[1][0] && i < n[0][0]; i++)
        VT_CHECK(got[1][0][i] == got[0][0][i], "[%lld] O3 %g, O2 %g", (long long)i, got[1][0][i],
                 got[0][0][i]);
    char ops[256];
    o3_ops(gr, ops, sizeof ops);
    VT_CHECK(!strcmp(ops, want_ops), "O3 nodes %s, want %s", ops, want_ops);
    for (int l = 0; l < 2; l++) free(got[l][0]);
    vn_graph_destroy(gr);
}

static void test_maxpool(void)
{
    check_pool(sx, "QuantizeLinear,MaxPool,DequantizeLinear");
    check_pool(sy, "QuantizeLinear,DequantizeLinear,MaxPool,QuantizeLinear,DequantizeLinear");
}

/* The Conv group under VINCI_QDQ_INT8 = `mode` (NULL: unset, the CPU decides). */
static void check_policy(const char *mode, bool fused)
{
    if (mode)
        setenv("VINCI_QDQ_INT8", mode, 1);
    else
        unsetenv("VINCI_QDQ_INT8");
    qdq_case c = {.bias = 1, .y_zero = 128};
    vn_graph *gr = qdq_graph(&c);
    char ops[256];
    o3_ops(gr, ops, sizeof ops);
    /* unfused, the f32 Conv goes on through O3's layout passes */
    VT_CHECK(fused ? !strcmp(ops, "QuantizeLinear,QLinearConv,DequantizeLinear")
                   : !strstr(ops, "QLinear") && strstr(ops, "Conv") != NULL,
             "VINCI_QDQ_INT8=%s: O3 nodes %s, %s", mode ? mode : "(unset)", ops,
             fused ? "want the QLinearConv" : "want the f32 Conv");
    vn_graph_destroy(gr);
    setenv("VINCI_QDQ_INT8", "1", 1);
}

static void test_int8_policy(void)
{
    check_policy("0", false);
    check_policy("1", true);
    check_policy(NULL, vn_cube_int8_native());
}

int main(void)
{
    setenv("VINCI_QDQ_INT8", "1", 1); /* the int8 rewrite, whatever the CPU */
    VT_RUN(test_int8_policy);
    VT_RUN(test_conv);
    VT_RUN(test_conv_report);
    VT_RUN(test_matmul);
    VT_RUN(test_shared_dq);
    VT_RUN(test_near_misses);
    VT_RUN(test_maxpool);
    return vt_summary();
}
