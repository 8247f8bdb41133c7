/*
 * shape_ops_info.c — operators whose output is made from shapes and scalars,
 * not from an input's elements: Shape (start / end), Size, ConstantOfShape
 * and Range. Their output shape comes from constants (Range's start, limit,
 * delta; ConstantOfShape's shape); the values are written by one small
 * fill kernel or, for the few metadata elements, by the run directly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/shape_ops.h"

#define FILL_TILE 16384

/* ---- Shape / Size ------------------------------------------------------------------------ */

static void shape_range(const vn_op_ctx *ctx, int32_t rank, int64_t *lo, int64_t *hi)
{
    int64_t s, e;
    vn_attrs_int(ctx->attrs, "start", 0, &s);
    vn_attrs_int(ctx->attrs, "end", rank, &e);
    if (s < 0) s += rank;
    if (e < 0) e += rank;
    *lo = vn_ops_min(vn_ops_max(s, 0), rank);
    *hi = vn_ops_max(vn_ops_min(e, rank), *lo);
}

static vn_status shape_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t lo, hi, tmp;
    vn_status st = vn_so_attr_int(ctx, where, "start", 0, &tmp);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "end", 0, &tmp);
    if (st != VN_OK) return st;
    shape_range(ctx, ctx->inputs[0].rank, &lo, &hi);
    *out = vn_so_vec(VN_I64, hi - lo);
    return VN_OK;
}

typedef struct shape_plan {
    int64_t lo;
} shape_plan;

static vn_status shape_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                               size_t *workspace)
{
    shape_plan *p = calloc(1, sizeof *p);
    int64_t hi;
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, "Shape", "no memory for the plan");
    shape_range(ctx, ctx->inputs[0].rank, &p->lo, &hi);
    *plan = p;
    return VN_OK;
}

static vn_status shape_run(const vn_op_run_ctx *ctx)
{
    const shape_plan *p = ctx->plan;
    int64_t *y = ctx->outputs[0].data;
    for (int64_t i = 0; i < ctx->outputs[0].desc.dims[0]; i++)
        y[i] = ctx->inputs[0].desc.dims[p->lo + i];
    return VN_OK;
}

static vn_status size_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    *out = vn_so_desc(VN_I64, 0, NULL);
    return VN_OK;
}

static vn_status size_run(const vn_op_run_ctx *ctx)
{
    *(int64_t *)ctx->outputs[0].data = vn_desc_numel(&ctx->inputs[0].desc);
    return VN_OK;
}

/* ---- the fill kernel ---------------------------------------------------------------------- */

typedef struct fill_args {
    uint8_t *dst;
    int64_t n, tiles;
    int32_t esize;
    uint8_t value[8];
    /* Range: element i = start + i * delta (value unused) */
    bool range;
    double start, delta;
    vn_dtype dtype;
} fill_args;

static void fill_kernel(vn_core *core, const void *args)
{
    const fill_args *a = args;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t i1 = vn_ops_min(a->n, (t + 1) * FILL_TILE);
        for (int64_t i = t * FILL_TILE; i < i1; i++) {
            if (a->range)
                vn_cast_store_f64(a->dtype, a->dst, i, a->start + (double)i * a->delta);
            else
                memcpy(a->dst + i * a->esize, a->value, (size_t)a->esize);
        }
        core->counters.bytes_out += (i1 - t * FILL_TILE) * a->esize;
    }
}

static vn_status fill_execute(vn_device *device, fill_args *a, vn_kernel_counters *counters)
{
    a->tiles = vn_ops_div_up(a->n, FILL_TILE);
    if (a->tiles == 0) return VN_OK;
    const char *name = a->range ? "vn_range" : "vn_fill";
    int32_t blocks = vn_ops_block_dim(device, a->tiles, FILL_TILE);
    vn_launch_desc d = {fill_kernel, name, blocks, a, -1, a->tiles};
    return vn_launch(device, &d, counters);
}

/* ---- ConstantOfShape ------------------------------------------------------------------------ */

/* The 'value' attribute: a one-element tensor (default f32 0). */
static vn_status cos_value(const vn_op_ctx *ctx, const char *where, const vn_tensor **value)
{
    const vn_attr *a = vn_attrs_find(ctx->attrs, "value");
    *value = NULL;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_TENSOR || !a->t || !a->t->data || vn_desc_numel(&a->t->desc) != 1 ||
        !vn_dtype_valid(a->t->desc.dtype))
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "attribute 'value' must be a tensor of one element");
    *value = a->t;
    return VN_OK;
}

static vn_status cos_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor *value;
    int64_t shape[VN_MAX_RANK];
    int32_t n = 0;
    vn_status st = cos_value(ctx, where, &value);
    if (st == VN_OK) st = vn_so_const_ints(ctx, where, 0, "input", shape, VN_MAX_RANK, &n);
    if (st != VN_OK) return st;
    for (int32_t d = 0; d < n; d++)
        if (shape[d] < 0)
            return vn_error(VN_ERR_SHAPE, where, "shape[%d] = %lld is negative", (int)d,
                            (long long)shape[d]);
    *out = vn_so_desc(value ? value->desc.dtype : VN_F32, n, shape);
    return VN_OK;
}

static vn_status cos_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                          size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor *value;
    *workspace = 0;
    vn_status st = cos_value(ctx, where, &value);
    if (st != VN_OK) return st;
    fill_args *a = calloc(1, sizeof *a);
    if (!a) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    a->esize = (int32_t)vn_dtype_size(outputs[0].dtype);
    if (value) memcpy(a->value, value->data, (size_t)a->esize);
    *plan = a;
    return VN_OK;
}

static vn_status cos_run(const vn_op_run_ctx *ctx)
{
    fill_args a = *(const fill_args *)ctx->plan;
    a.dst = ctx->outputs[0].data;
    a.n = vn_desc_numel(&ctx->outputs[0].desc);
    return fill_execute(ctx->device, &a, ctx->counters);
}

/* ---- Range --------------------------------------------------------------------------------- */

#define RANGE_DTYPES                                                                               \
    (VN_DTYPE_BIT(VN_F32) | VN_DTYPE_BIT(VN_F16) | VN_DTYPE_BIT(VN_BF16) | VN_DTYPE_BIT(VN_I32) |  \
     VN_DTYPE_BIT(VN_I64) | VN_DTYPE_BIT(VN_I8) | VN_DTYPE_BIT(VN_U8))

static vn_status range_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    static const char *const names[3] = {"start", "limit", "delta"};
    double v[3];
    for (int32_t i = 0; i < 3; i++) {
        if (ctx->inputs[i].dtype != ctx->inputs[0].dtype)
            return vn_error(VN_ERR_DTYPE, where, "'%s' is %s, 'start' is %s", names[i],
                            vn_dtype_name(ctx->inputs[i].dtype),
                            vn_dtype_name(ctx->inputs[0].dtype));
        vn_status st = vn_so_const_scalar(ctx, where, i, names[i], &v[i]);
        if (st != VN_OK) return st;
    }
    if (v[2] == 0) return vn_error(VN_ERR_INVALID_ARG, where, "'delta' is 0");
    double n = ceil((v[1] - v[0]) / v[2]);
    if (!(n < 1e15)) n = n > 0 ? 1e15 : 0; /* NaN or absurd: refused below */
    if (n > (double)INT32_MAX * 64)
        return vn_error(VN_ERR_SHAPE, where, "the range would have %.0f elements", n);
    *out = vn_so_vec(ctx->inputs[0].dtype, n > 0 ? (int64_t)n : 0);
    return VN_OK;
}

static vn_status range_run(const vn_op_run_ctx *ctx)
{
    fill_args a;
    memset(&a, 0, sizeof a);
    a.dst = ctx->outputs[0].data;
    a.n = vn_desc_numel(&ctx->outputs[0].desc);
    a.dtype = ctx->outputs[0].desc.dtype;
    a.esize = (int32_t)vn_dtype_size(a.dtype);
    a.range = true;
    a.start = vn_cast_load_f64(a.dtype, ctx->inputs[0].data, 0);
    a.delta = vn_cast_load_f64(a.dtype, ctx->inputs[2].data, 0);
    return fill_execute(ctx->device, &a, ctx->counters);
}

const vn_op_def vn_so_info_defs[] = {
    {"Shape", "", 1, 1, 1, VN_DTYPES_ALL, shape_infer, shape_plan_fn, free, shape_run},
    {"Size", "", 1, 1, 1, VN_DTYPES_ALL, size_infer, NULL, NULL, size_run},
    {"ConstantOfShape", "", 1, 1, 1, VN_DTYPE_BIT(VN_I64), cos_infer, cos_plan, free, cos_run},
    {"Range", "", 3, 3, 1, RANGE_DTYPES, range_infer, NULL, NULL, range_run},
};
const int32_t vn_so_info_count = sizeof vn_so_info_defs / sizeof vn_so_info_defs[0];
