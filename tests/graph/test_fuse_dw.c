/*
 * test_fuse_dw.c — the O3 pass fuse_pointwise_depthwise (pass_fuse_dw.c):
 * an inverted-residual block's expansion 1x1 (with or without its ReLU) and
 * the depthwise 3x3 after it become one FusedConvNC1HWC0 with dw_*
 * attributes, and every level's outputs still equal O0's; a pointwise map
 * with another reader, or read by a dense 3x3 instead, stays unfused. The
 * fused model round-trips through a .vnm.
 */
#include <math.h>

#include "graph/pass_fuse.h"
#include "test_fuse_util.h"
#include "vnm_fixture.h"

#define C_IN 16
#define EXP  96

/* Conv y = x * w (k x k, pads k / 2, stride s, group g) of c -> k_out channels. */
static void conv(ob *g, vt_rng *r, const char *x, const char *w, int64_t k_out, int64_t c,
                 int64_t k, int64_t s, int64_t group, const char *y)
{
    int64_t wd[4] = {k_out, c / group, k, k}, pads[4] = {k / 2, k / 2, k / 2, k / 2};
    int64_t st[2] = {s, s};
    fz_rand_init(g, r, w, 4, wd, -0.3, 0.3);
    ob a = {0};
    fz_attr_ints(&a, "pads", 4, pads);
    fz_attr_ints(&a, "strides", 2, st);
    ob_attr_int(&a, "group", group);
    fz_node(g, "Conv", y, x, w, NULL, y, &a);
}

/* x [1, 16, hw, hw] -> 3x3 conv + Relu -> 1x1 16 -> 96 (+ Relu) -> depthwise
 * (or with `dense`, a full) 3x3 / stride (+ Relu) -> 1x1 96 -> 24 = y. */
static vn_graph *block(int64_t hw, int64_t stride, bool relu, bool expose, bool dense)
{
    ob g = {0};
    vt_rng r = {21};
    int64_t xd[4] = {1, C_IN, hw, hw};
    fz_input(&g, "x", 4, xd);
    conv(&g, &r, "x", "w0", C_IN, C_IN, 3, 1, 1, "c0");
    fz_node(&g, "Relu", "r0", "c0", NULL, NULL, "r0", NULL);
    conv(&g, &r, "r0", "w1", EXP, C_IN, 1, 1, 1, "c1");
    if (relu) fz_node(&g, "Relu", "r1", "c1", NULL, NULL, "r1", NULL);
    conv(&g, &r, relu ? "r1" : "c1", "w2", EXP, EXP, 3, stride, dense ? 1 : EXP, "c2");
    if (relu) fz_node(&g, "Relu", "r2", "c2", NULL, NULL, "r2", NULL);
    conv(&g, &r, relu ? "r2" : "c2", "w3", 24, EXP, 1, 1, 1, "y");
    fz_output(&g, "y");
    if (expose) fz_output(&g, relu ? "r1" : "c1");
    return fz_load(&g, 17);
}

static vn_named_tensor input(float *x, int64_t hw)
{
    vt_rng rng = {5};
    vt_fill(&rng, x, (size_t)(C_IN * hw * hw), -1, 1);
    return (vn_named_tensor){"x", {{VN_F32, 4, {1, C_IN, hw, hw}}, x}};
}

/* Every level equals O0; O3's pass made want_fused changes. */
static void check(vn_graph *gr, int64_t hw, const char *const *outs, int want_fused)
{
    float *x = malloc((size_t)(C_IN * hw * hw) * sizeof *x);
    vn_named_tensor in[1] = {input(x, hw)};
    vn_model_stats o2;
    fz_levels(gr, in, 1, outs, &o2);
    int got = fz_changes(&fz_o3, "fuse_pointwise_depthwise");
    VT_CHECK(got == want_fused, "fuse_pointwise_depthwise: %d changes, want %d", got, want_fused);
    free(x);
}

/* The O3 model through a .vnm and back: the fused node's attributes and
 * inputs survive, and every output is byte-identical. */
static void check_vnm(vn_graph *gr, int64_t hw)
{
    float *x = malloc((size_t)(C_IN * hw * hw) * sizeof *x);
    vn_named_tensor in[1] = {input(x, hw)};
    check_o3_round_trip(gr, in, 1, "fuse_dw");
    free(x);
}

static void test_block(void)
{
    const char *outs[] = {"y", NULL};
    const int64_t hw[2] = {13, 40}; /* stride 1 on 13 x 13, stride 2 on 40 x 40 */
    for (int relu = 0; relu < 2; relu++)
        for (int64_t stride = 1; stride <= 2; stride++) {
            vn_graph *gr = block(hw[stride - 1], stride, relu, false, false);
            check(gr, hw[stride - 1], outs, 1);
            if (relu && stride == 2) check_vnm(gr, hw[1]);
            vn_graph_destroy(gr);
        }
}

/* The expanded map is also a graph output; or a dense 3x3 reads it (the
 * fused operator's plan refuses): no fusion. */
static void test_not_fused(void)
{
    const char *outs[] = {"y", "r1", NULL}, *dense[] = {"y", NULL};
    vn_graph *gr = block(40, 2, true, true, false);
    check(gr, 40, outs, 0);
    vn_graph_destroy(gr);
    gr = block(20, 1, true, false, true);
    check(gr, 20, dense, 0);
    vn_graph_destroy(gr);
}

/* --precision bf16 marks every conv after the fusions: the fused pair
 * stays f32 and the model compiles and runs (on AVX512_BF16 CPUs it did
 * not: the plan refused a bf16 pointwise half). */
static void test_bf16(void)
{
    vn_graph *gr = block(40, 2, true, false, false);
    float *x = malloc((size_t)(C_IN * 40 * 40) * sizeof *x);
    vn_named_tensor in[1] = {input(x, 40)};
    const char *outs[] = {"y", NULL};
    fz_check_bf16(gr, in, 1, outs, "fuse_pointwise_depthwise", 1, 24 * 20 * 20);
    free(x);
    vn_graph_destroy(gr);
}

int main(void)
{
    VT_RUN(test_block);
    VT_RUN(test_not_fused);
    VT_RUN(test_bf16);
    return vt_summary();
}
