/*
 * quantize.c — QuantizeLinear and DequantizeLinear (ONNX 10 .. 25) on the
 * integer types vinci has (u8, i8, u16, i16; DequantizeLinear also reads
 * i32), scalar loops over the input.
 *
 * The scale (and the optional zero point, same shape) is per tensor (one
 * element), per axis (1-D, length dims[axis]) or blocked (block_size > 0:
 * x's rank, dims[axis] = ceil(x.dims[axis] / block_size)).
 *
 * Quantize: y = saturate(rint(x / scale) + zero_point), the quotient taken
 * in f32 like the ONNX reference and onnxruntime (f64 with precision =
 * DOUBLE), rint under the default rounding mode = round half to even. The
 * output type is the zero point's, else the attribute output_dtype, else u8.
 * Dequantize: y = (x - zero_point) * scale in f32, stored as the scale's
 * dtype or output_dtype.
 */
#include <math.h>
#include <stdlib.h>

#include "ops/cast.h"
#include "ops/quant.h"

#define Q_IN_X     0
#define Q_IN_SCALE 1
#define Q_IN_ZP    2

typedef enum q_mode { Q_TENSOR = 0, Q_AXIS, Q_BLOCKED } q_mode;

typedef struct q_plan {
    vn_dtype xdt, sdt, ydt;
    bool has_zp, dbl;
    q_mode mode;
    int64_t numel, A, inner, bs, SA; /* x around axis; scale's extent on axis (blocked) */
} q_plan;

bool vn_quant_int_range(vn_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case VN_U8:
        *lo = 0, *hi = 255;
        return true;
    case VN_I8:
        *lo = -128, *hi = 127;
        return true;
    case VN_U16:
        *lo = 0, *hi = 65535;
        return true;
    case VN_I16:
        *lo = -32768, *hi = 32767;
        return true;
    default:
        return false;
    }
}

int64_t vn_quant_saturate(double v, vn_dtype dt)
{
    int64_t lo = 0, hi = 0;
    vn_quant_int_range(dt, &lo, &hi);
    if (!(v >= (double)lo)) return lo; /* NaN too */
    if (v > (double)hi) return hi;
    return (int64_t)v;
}

static bool is_scalar(const vn_tensor_desc *d)
{
    return d->rank <= 1 && vn_desc_numel(d) == 1;
}

/* The mode and scale geometry from the scale's shape, axis and block_size. */
static vn_status q_geometry(const vn_op_ctx *ctx, const char *where, q_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[Q_IN_X], *s = &ctx->inputs[Q_IN_SCALE];
    char a[128], b[128];
    int64_t axis, bs;
    vn_status st = vn_so_attr_int(ctx, where, "axis", 1, &axis);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "block_size", 0, &bs);
    if (st != VN_OK) return st;
    p->numel = vn_desc_numel(x);
    p->A = p->inner = p->SA = 1;
    p->bs = bs;
    p->mode = bs > 0 ? Q_BLOCKED : is_scalar(s) ? Q_TENSOR : Q_AXIS;
    if (bs < 0) return vn_error(VN_ERR_INVALID_ARG, where, "block_size %lld < 0", (long long)bs);
    if (p->mode == Q_TENSOR) return VN_OK;
    if (axis < -x->rank || axis >= x->rank)
        return vn_error(VN_ERR_INVALID_ARG, where, "axis %lld out of range for x %s",
                        (long long)axis, vn_desc_format(x, a, sizeof a));
    if (axis < 0) axis += x->rank;
    p->A = x->dims[axis];
    for (int32_t d = (int32_t)axis + 1; d < x->rank; d++) p->inner *= x->dims[d];
    bool ok = true;
    if (p->mode == Q_AXIS) {
        ok = s->rank == 1 && s->dims[0] == p->A;
    } else {
        ok = s->rank == x->rank;
        for (int32_t d = 0; ok && d < x->rank; d++)
            ok = s->dims[d] == (d == axis ? vn_ops_div_up(x->dims[d], bs) : x->dims[d]);
        p->SA = ok ? s->dims[axis] : 1;
    }
    if (!ok)
        return vn_error(VN_ERR_SHAPE, where,
                        "scale %s does not fit x %s (axis %lld, block_size %lld)",
                        vn_desc_format(s, a, sizeof a), vn_desc_format(x, b, sizeof b),
                        (long long)axis, (long long)bs);
    return VN_OK;
}

/* Scale / zero-point element of x's element e. */
static int64_t q_index(const q_plan *p, int64_t e)
{
    if (p->mode == Q_TENSOR) return 0;
    int64_t in = e % p->inner, a = (e / p->inner) % p->A;
    if (p->mode == Q_AXIS) return a;
    int64_t o = e / (p->inner * p->A);
    return (o * p->SA + a / p->bs) * p->inner + in;
}

/* Scale float, zero point (when given) of scale's shape. */
static vn_status q_check_params(const vn_op_ctx *ctx, const char *where, q_plan *p)
{
    const vn_tensor_desc *s = &ctx->inputs[Q_IN_SCALE];
    char a[128], b[128];
    if (!vn_cast_is_float(s->dtype) || s->dtype == VN_F64)
        return vn_error(VN_ERR_DTYPE, where, "scale %s must be f32, f16 or bf16",
                        vn_desc_format(s, a, sizeof a));
    p->sdt = s->dtype;
    p->xdt = ctx->inputs[Q_IN_X].dtype;
    p->has_zp = ctx->num_inputs > Q_IN_ZP && ctx->inputs[Q_IN_ZP].rank >= 0;
    if (!p->has_zp) return q_geometry(ctx, where, p);
    const vn_tensor_desc *z = &ctx->inputs[Q_IN_ZP];
    bool same = z->rank == s->rank;
    for (int32_t d = 0; same && d < s->rank; d++) same = z->dims[d] == s->dims[d];
    if (!same && !(is_scalar(z) && is_scalar(s)))
        return vn_error(VN_ERR_SHAPE, where, "zero point %s must have the shape of scale %s",
                        vn_desc_format(z, a, sizeof a), vn_desc_format(s, b, sizeof b));
    return q_geometry(ctx, where, p);
}

/* The optional output_dtype attribute (0: absent) as a vinci dtype (-1). */
static vn_status q_output_dtype(const vn_op_ctx *ctx, const char *where, int32_t *out)
{
    int64_t code;
    *out = -1;
    vn_status st = vn_so_attr_int(ctx, where, "output_dtype", 0, &code);
    if (st != VN_OK || code == 0) return st;
    *out = vn_cast_dtype_from_onnx(code);
    if (*out < 0)
        return vn_error(VN_ERR_UNSUPPORTED, where, "output_dtype %lld: no such vinci dtype",
                        (long long)code);
    return VN_OK;
}

/* ---- QuantizeLinear ---------------------------------------------------------- */

static vn_status ql_check(const vn_op_ctx *ctx, const char *where, q_plan *p)
{
    int32_t odt;
    int64_t lo, hi, prec;
    vn_status st = q_check_params(ctx, where, p);
    if (st == VN_OK) st = q_output_dtype(ctx, where, &odt);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "precision", 0, &prec);
    if (st != VN_OK) return st;
    if (prec != 0 && prec != 1 && prec != 11)
        return vn_error(VN_ERR_UNSUPPORTED, where, "precision %lld: only FLOAT or DOUBLE",
                        (long long)prec);
    p->dbl = prec == 11 || !vn_cast_is_float(p->xdt);
    p->ydt = p->has_zp ? ctx->inputs[Q_IN_ZP].dtype : odt >= 0 ? (vn_dtype)odt : VN_U8;
    if (p->has_zp && odt >= 0 && (vn_dtype)odt != p->ydt)
        return vn_error(VN_ERR_DTYPE, where, "output_dtype %s differs from the zero point's %s",
                        vn_dtype_name((vn_dtype)odt), vn_dtype_name(p->ydt));
    if (!vn_quant_int_range(p->ydt, &lo, &hi))
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "quantized type %s: only u8, i8, u16 and i16 are supported",
                        vn_dtype_name(p->ydt));
    return VN_OK;
}

static vn_status ql_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    q_plan p = {0};
    vn_status st = ql_check(ctx, where, &p);
    out[0] = ctx->inputs[Q_IN_X];
    out[0].dtype = p.ydt;
    return st;
}

static vn_status q_plan_new(const vn_op_ctx *ctx, void **plan, size_t *workspace,
                            vn_status (*check)(const vn_op_ctx *, const char *, q_plan *))
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    q_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = check(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

static vn_status ql_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                         size_t *workspace)
{
    (void)outputs;
    return q_plan_new(ctx, plan, workspace, ql_check);
}

/* f32 -> u8 / i8 with one scale and zero point (the QDQ activation case)
 * without the per-element dtype dispatch, so the loops vectorise: the same
 * arithmetic as the general loop (f32 quotient, round half to even, + zero
 * point, saturate, NaN to the low end). Adding and subtracting 1.5 * 2^23
 * rounds a float of magnitude < 2^22 to the nearest even integer under the
 * default rounding mode; anything larger saturates either way, and
 * rint(q) + zp is exact in f32 below 2^24. The count is a local (a byte
 * store may alias p->numel, which kept gcc from vectorising: the loop ran
 * scalar, ~4 cycles an element) and the store converts through i32 (exact:
 * v is integral and in range), which vectorises where f32 -> u8 does not. */
#define Q_ROUND_MAGIC 12582912.0f
static void ql_run_tensor_int8(const q_plan *p, const float *x, float s, float zp, void *y)
{
    float lo = p->ydt == VN_U8 ? 0.0f : -128.0f, hi = p->ydt == VN_U8 ? 255.0f : 127.0f;
    const int64_t n = p->numel;
    if (p->ydt == VN_U8) {
        uint8_t *o = y;
        for (int64_t e = 0; e < n; e++) {
            float v = (x[e] / s + Q_ROUND_MAGIC) - Q_ROUND_MAGIC + zp;
            v = v >= lo ? v : lo;
            o[e] = (uint8_t)(int32_t)(v <= hi ? v : hi);
        }
        return;
    }
    int8_t *o = y;
    for (int64_t e = 0; e < n; e++) {
        float v = (x[e] / s + Q_ROUND_MAGIC) - Q_ROUND_MAGIC + zp;
        v = v >= lo ? v : lo;
        o[e] = (int8_t)(int32_t)(v <= hi ? v : hi);
    }
}

static bool q_tensor_f32_int8(const q_plan *p, vn_dtype fdt, vn_dtype idt)
{
    return p->mode == Q_TENSOR && fdt == VN_F32 && p->sdt == VN_F32 &&
           (idt == VN_U8 || idt == VN_I8);
}

static vn_status ql_run(const vn_op_run_ctx *ctx)
{
    const q_plan *p = ctx->plan;
    const void *x = ctx->inputs[Q_IN_X].data, *s = ctx->inputs[Q_IN_SCALE].data;
    const void *z = p->has_zp ? ctx->inputs[Q_IN_ZP].data : NULL;
    if (!p->dbl && q_tensor_f32_int8(p, p->xdt, p->ydt)) {
        float zp = z ? (float)vn_cast_load_i64(p->ydt, z, 0) : 0.0f;
        ql_run_tensor_int8(p, x, *(const float *)s, zp, ctx->outputs[0].data);
        return VN_OK;
    }
    for (int64_t e = 0; e < p->numel; e++) {
        int64_t si = q_index(p, e);
        double q = p->dbl ? vn_cast_load_f64(p->xdt, x, e) / vn_cast_load_f64(p->sdt, s, si)
                          : (double)((float)vn_cast_load_f64(p->xdt, x, e) /
                                     (float)vn_cast_load_f64(p->sdt, s, si));
        double zp = z ? (double)vn_cast_load_i64(p->ydt, z, si) : 0.0;
        vn_cast_store_i64(p->ydt, ctx->outputs[0].data, e, vn_quant_saturate(rint(q) + zp, p->ydt));
    }
    return VN_OK;
}

/* ---- DequantizeLinear -------------------------------------------------------- */

static vn_status dql_check(const vn_op_ctx *ctx, const char *where, q_plan *p)
{
    char a[128], b[128];
    int32_t odt;
    int64_t lo, hi;
    vn_status st = q_check_params(ctx, where, p);
    if (st == VN_OK) st = q_output_dtype(ctx, where, &odt);
    if (st != VN_OK) return st;
    const vn_tensor_desc *x = &ctx->inputs[Q_IN_X];
    if (!vn_quant_int_range(x->dtype, &lo, &hi) && x->dtype != VN_I32)
        return vn_error(VN_ERR_UNSUPPORTED, where, "x %s: only u8, i8, u16, i16 and i32",
                        vn_desc_format(x, a, sizeof a));
    if (p->has_zp && ctx->inputs[Q_IN_ZP].dtype != x->dtype)
        return vn_error(VN_ERR_DTYPE, where, "zero point %s must have x's dtype (x %s)",
                        vn_desc_format(&ctx->inputs[Q_IN_ZP], a, sizeof a),
                        vn_desc_format(x, b, sizeof b));
    p->ydt = odt >= 0 ? (vn_dtype)odt : p->sdt;
    if (!vn_cast_is_float(p->ydt) || p->ydt == VN_F64)
        return vn_error(VN_ERR_UNSUPPORTED, where, "output dtype %s: only f32, f16 and bf16",
                        vn_dtype_name(p->ydt));
    return VN_OK;
}

static vn_status dql_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    q_plan p = {0};
    vn_status st = dql_check(ctx, where, &p);
    out[0] = ctx->inputs[Q_IN_X];
    out[0].dtype = p.ydt;
    return st;
}

static vn_status dql_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                          size_t *workspace)
{
    (void)outputs;
    return q_plan_new(ctx, plan, workspace, dql_check);
}

/* u8 / i8 -> f32 with one scale and zero point, a loop that vectorises
 * (the general loop's arithmetic: (x - zp) in integers, times the scale in f32). */
static void dql_run_tensor_int8(const q_plan *p, const void *x, int32_t zp, float s, float *y)
{
    if (p->xdt == VN_U8) {
        const uint8_t *in = x;
        for (int64_t e = 0; e < p->numel; e++) y[e] = (float)((int32_t)in[e] - zp) * s;
        return;
    }
    const int8_t *in = x;
    for (int64_t e = 0; e < p->numel; e++) y[e] = (float)((int32_t)in[e] - zp) * s;
}

static vn_status dql_run(const vn_op_run_ctx *ctx)
{
    const q_plan *p = ctx->plan;
    const void *x = ctx->inputs[Q_IN_X].data, *s = ctx->inputs[Q_IN_SCALE].data;
    const void *z = p->has_zp ? ctx->inputs[Q_IN_ZP].data : NULL;
    if (q_tensor_f32_int8(p, p->ydt, p->xdt)) {
        int32_t zp = z ? (int32_t)vn_cast_load_i64(p->xdt, z, 0) : 0;
        dql_run_tensor_int8(p, x, zp, *(const float *)s, ctx->outputs[0].data);
        return VN_OK;
    }
    for (int64_t e = 0; e < p->numel; e++) {
        int64_t si = q_index(p, e);
        int64_t d = vn_cast_load_i64(p->xdt, x, e) - (z ? vn_cast_load_i64(p->xdt, z, si) : 0);
        float y = (float)d * (float)vn_cast_load_f64(p->sdt, s, si);
        vn_cast_store_f64(p->ydt, ctx->outputs[0].data, e, (double)y);
    }
    return VN_OK;
}

#define Q_X_DTYPES (VN_DTYPES_FLOAT | VN_DTYPE_BIT(VN_I32))
#define DQ_X_DTYPES                                                                                \
    (VN_DTYPE_BIT(VN_U8) | VN_DTYPE_BIT(VN_I8) | VN_DTYPE_BIT(VN_U16) | VN_DTYPE_BIT(VN_I16) |     \
     VN_DTYPE_BIT(VN_I32))

const vn_op_def vn_quantize_linear_def = {"QuantizeLinear", "",       2,       3,    1,
                                          Q_X_DTYPES,       ql_infer, ql_plan, free, ql_run};
const vn_op_def vn_dequantize_linear_def = {"DequantizeLinear", "",        2,        3,    1,
                                            DQ_X_DTYPES,        dql_infer, dql_plan, free, dql_run};
