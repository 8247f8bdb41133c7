/*
 * qmatmul.c — MatMulInteger (u8/i8 x u8/i8 -> i32, exact) and QLinearMatMul
 * (requantised u8/i8 output) on the GEMM's int8 path, MatMul shapes.
 *
 * Zero points and scales are input tensors, so their values are known only
 * when the operator runs: the GEMM planned at plan time (zero points 0) serves
 * the packing of a constant B and runs without zero points; otherwise each
 * run plans a GEMM with the values read (a plan is a few hundred bytes of
 * tiling arithmetic, no packing). The packed B does not depend on them.
 *
 * The GEMM takes one zero point per operand. A per-row a_zero_point is
 * refused at plan time; a per-column b_zero_point ([N]) is accepted and must
 * hold one value in every column when the operator runs (the symmetric
 * per-channel case: all 0), else VN_ERR_UNSUPPORTED. Per-column b_scale is
 * the GEMM's col_scale. QLinearMatMul's requantisation is the epilogue's:
 * q = saturate(round_half_even(((float)acc * (a_scale*b_scale[j])) / y_scale)
 *     + y_zero_point), acc the exact zero-point-corrected i32 sum.
 */
#include <math.h>
#include <stdlib.h>

#include "ops/matmul.h"

/* QLinearMatMul's inputs (MatMulInteger: A 0, B 1, a_zp 2, b_zp 3). */
enum { QA = 0, QA_SCALE, QA_ZP, QB, QB_SCALE, QB_ZP, QY_SCALE, QY_ZP };

static bool is_int8(vn_dtype d)
{
    return d == VN_U8 || d == VN_I8;
}

/* `t` holds one value, or `per` values (one per column) when per > 1. */
static vn_status check_param(const char *where, const char *name, const vn_tensor_desc *t,
                             vn_dtype want, int64_t per)
{
    char buf[128];
    int64_t n = vn_desc_numel(t);
    if (t->dtype != want)
        return vn_error(VN_ERR_DTYPE, where, "%s %s must be %s", name,
                        vn_desc_format(t, buf, sizeof buf), vn_dtype_name(want));
    if (t->rank > 1 || (n != 1 && (per <= 1 || n != per)))
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "%s %s: only one value%s is supported (the GEMM takes one per tensor)",
                        name, vn_desc_format(t, buf, sizeof buf),
                        per > 1 ? " or one per column" : "");
    return VN_OK;
}

static vn_status check_operands(const char *where, const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    char sa[128], sb[128];
    if (!is_int8(a->dtype) || !is_int8(b->dtype))
        return vn_error(VN_ERR_DTYPE, where, "A %s and B %s must be u8 or i8",
                        vn_desc_format(a, sa, sizeof sa), vn_desc_format(b, sb, sizeof sb));
    return VN_OK;
}

/* The one zero point of `t` (absent: 0); a per-column one must be uniform. */
static vn_status read_zero(const char *where, const char *name, const vn_tensor *t, int32_t *out)
{
    *out = 0;
    if (!t || t->desc.rank < 0) return VN_OK;
    int64_t n = vn_desc_numel(&t->desc);
    const uint8_t *p = t->data;
    for (int64_t i = 0; i < n; i++) {
        int32_t v = t->desc.dtype == VN_U8 ? p[i] : (int8_t)p[i];
        if (i == 0) *out = v;
        if (v != *out)
            return vn_error(VN_ERR_UNSUPPORTED, where,
                            "%s differs between columns (%d and %d): the GEMM takes one zero point",
                            name, (int)*out, (int)v);
    }
    return VN_OK;
}

/* ---- MatMulInteger ------------------------------------------------------------ */

static vn_status mmi_check(const char *where, const vn_op_ctx *ctx, vn_tensor_desc *y,
                           vn_mm_layout *lay)
{
    const vn_tensor_desc *a = &ctx->inputs[0], *b = &ctx->inputs[1];
    vn_status st = check_operands(where, a, b);
    if (st == VN_OK) st = vn_mm_layout_nd(where, a, b, false, false, y, lay);
    if (st == VN_OK && vn_mm_has_input(ctx, 2))
        st = check_param(where, "a_zero_point", &ctx->inputs[2], a->dtype, 1);
    if (st == VN_OK && vn_mm_has_input(ctx, 3))
        st = check_param(where, "b_zero_point", &ctx->inputs[3], b->dtype, lay->N);
    y->dtype = VN_I32;
    return st;
}

static vn_status mmi_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_mm_layout lay;
    return mmi_check(vn_ops_where(ctx, where, sizeof where), ctx, &outputs[0], &lay);
}

/* The plan-time GEMM: int8 operands (A input 0, B input `b_index`), i32 or
 * requantised C, zero points 0. */
static vn_status int_plan(const char *where, const vn_op_ctx *ctx, vn_mm_plan *p, int32_t b_index,
                          vn_dtype c_dt, void **data)
{
    p->desc = vn_mm_gemm_desc(&p->lay);
    p->desc.a_dtype = ctx->inputs[0].dtype;
    p->desc.b_dtype = ctx->inputs[b_index].dtype, p->desc.c_dtype = c_dt;
    p->desc.compute = VN_I32;
    vn_status st = vn_mm_plan_gemm_b(where, ctx, b_index, p);
    if (st != VN_OK) {
        vn_mm_plan_free(p);
        return st;
    }
    *data = p;
    return VN_OK;
}

static vn_status mmi_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                          size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_mm_plan *p = vn_mm_plan_new();
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_tensor_desc y;
    *workspace = 0;
    vn_status st = mmi_check(where, ctx, &y, &p->lay);
    if (st != VN_OK) {
        vn_mm_plan_free(p);
        return st;
    }
    return int_plan(where, ctx, p, 1, VN_I32, data);
}

/* Run `d` (p->desc with this run's parameters): p->gemm when it is the
 * planned descriptor, else a GEMM planned for this run. */
static vn_status run_with(const char *where, const vn_op_run_ctx *ctx, const vn_gemm_desc *d,
                          bool planned, const vn_mm_io *io)
{
    const vn_mm_plan *p = ctx->plan;
    if (planned) return vn_mm_execute(p, p->gemm, io, ctx->counters);
    vn_gemm_plan *g;
    vn_status st = vn_mm_gemm_create(where, ctx->device, d, &g);
    if (st != VN_OK) return st;
    st = vn_mm_execute(p, g, io, ctx->counters);
    vn_gemm_plan_destroy(g);
    return st;
}

static const vn_tensor *opt_input(const vn_op_run_ctx *ctx, int32_t i)
{
    return ctx->num_inputs > i ? &ctx->inputs[i] : NULL;
}

static vn_status mmi_run(const vn_op_run_ctx *ctx)
{
    const char *where = "vn_op_run(MatMulInteger)";
    const vn_mm_plan *p = ctx->plan;
    vn_gemm_desc d = p->desc;
    vn_status st = read_zero(where, "a_zero_point", opt_input(ctx, 2), &d.epi.a_zero);
    if (st == VN_OK) st = read_zero(where, "b_zero_point", opt_input(ctx, 3), &d.epi.b_zero);
    if (st != VN_OK) return st;
    vn_mm_io io = {.a = ctx->inputs[0].data, .b = ctx->inputs[1].data, .c = ctx->outputs[0].data};
    return run_with(where, ctx, &d, d.epi.a_zero == 0 && d.epi.b_zero == 0, &io);
}

const vn_op_def vn_matmul_integer_def = {"MatMulInteger",
                                         "",
                                         2,
                                         4,
                                         1,
                                         VN_DTYPE_BIT(VN_U8) | VN_DTYPE_BIT(VN_I8),
                                         mmi_infer,
                                         mmi_plan,
                                         vn_mm_plan_free,
                                         mmi_run};

/* ---- QLinearMatMul --------------------------------------------------------------- */

static vn_status qlm_check(const char *where, const vn_op_ctx *ctx, vn_tensor_desc *y,
                           vn_mm_layout *lay)
{
    const vn_tensor_desc *in = ctx->inputs;
    char buf[128];
    vn_status st = check_operands(where, &in[QA], &in[QB]);
    if (st == VN_OK) st = vn_mm_layout_nd(where, &in[QA], &in[QB], false, false, y, lay);
    if (st == VN_OK) st = check_param(where, "a_scale", &in[QA_SCALE], VN_F32, 1);
    if (st == VN_OK) st = check_param(where, "a_zero_point", &in[QA_ZP], in[QA].dtype, 1);
    if (st == VN_OK) st = check_param(where, "b_scale", &in[QB_SCALE], VN_F32, lay->N);
    if (st == VN_OK) st = check_param(where, "b_zero_point", &in[QB_ZP], in[QB].dtype, lay->N);
    if (st == VN_OK) st = check_param(where, "y_scale", &in[QY_SCALE], VN_F32, 1);
    if (st != VN_OK) return st;
    if (!is_int8(in[QY_ZP].dtype))
        return vn_error(VN_ERR_DTYPE, where, "y_zero_point %s must be u8 or i8",
                        vn_desc_format(&in[QY_ZP], buf, sizeof buf));
    st = check_param(where, "y_zero_point", &in[QY_ZP], in[QY_ZP].dtype, 1);
    y->dtype = in[QY_ZP].dtype;
    return st;
}

static vn_status qlm_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_mm_layout lay;
    return qlm_check(vn_ops_where(ctx, where, sizeof where), ctx, &outputs[0], &lay);
}

static vn_status qlm_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                          size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_mm_plan *p = vn_mm_plan_new();
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_tensor_desc y;
    *workspace = 0;
    vn_status st = qlm_check(where, ctx, &y, &p->lay);
    if (st != VN_OK) {
        vn_mm_plan_free(p);
        return st;
    }
    return int_plan(where, ctx, p, QB, y.dtype, data);
}

static vn_status read_scale(const char *where, const char *name, const vn_tensor *t, float *out)
{
    *out = ((const float *)t->data)[0];
    if (!(*out > 0.0f) || !isfinite(*out))
        return vn_error(VN_ERR_INVALID_ARG, where, "%s %g must be finite and > 0", name,
                        (double)*out);
    return VN_OK;
}

/* Scales of this run: a per-column b_scale becomes the GEMM's col_scale. */
static vn_status qlm_scales(const char *where, const vn_op_run_ctx *ctx, vn_gemm_desc *d,
                            vn_mm_io *io)
{
    const vn_tensor *in = ctx->inputs;
    float as, bs;
    vn_status st = read_scale(where, "a_scale", &in[QA_SCALE], &as);
    if (st == VN_OK) st = read_scale(where, "b_scale", &in[QB_SCALE], &bs);
    if (st == VN_OK) st = read_scale(where, "y_scale", &in[QY_SCALE], &d->epi.y_scale);
    if (st != VN_OK) return st;
    bool per_col = vn_desc_numel(&in[QB_SCALE].desc) > 1;
    d->epi.scale = per_col ? as : as * bs;
    d->epi.has_col_scale = per_col;
    io->col_scale = per_col ? in[QB_SCALE].data : NULL;
    return VN_OK;
}

static vn_status qlm_run(const vn_op_run_ctx *ctx)
{
    const char *where = "vn_op_run(QLinearMatMul)";
    const vn_mm_plan *p = ctx->plan;
    const vn_tensor *in = ctx->inputs;
    vn_gemm_desc d = p->desc;
    vn_mm_io io = {.a = in[QA].data, .b = in[QB].data, .c = ctx->outputs[0].data};
    int32_t yz = 0;
    vn_status st = read_zero(where, "a_zero_point", &in[QA_ZP], &d.epi.a_zero);
    if (st == VN_OK) st = read_zero(where, "b_zero_point", &in[QB_ZP], &d.epi.b_zero);
    if (st == VN_OK) st = read_zero(where, "y_zero_point", &in[QY_ZP], &yz);
    if (st == VN_OK) st = qlm_scales(where, ctx, &d, &io);
    if (st != VN_OK) return st;
    d.epi.y_zero = yz;
    return run_with(where, ctx, &d, false, &io);
}

const vn_op_def vn_qlinear_matmul_def = {"QLinearMatMul",
                                         "",
                                         8,
                                         8,
                                         1,
                                         VN_DTYPE_BIT(VN_U8) | VN_DTYPE_BIT(VN_I8),
                                         qlm_infer,
                                         qlm_plan,
                                         vn_mm_plan_free,
                                         qlm_run};
