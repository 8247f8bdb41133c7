/*
 * misc_trilu.c — Trilu: keep the upper (j - i >= k) or lower (j - i <= k)
 * triangle of each of the last two dims' matrices, zero elsewhere; k an
 * optional scalar input read at run time (it does not change the shape).
 * A tile is one matrix row.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/misc.h"

static vn_status trilu_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX], buf[128];
    vn_ops_where(ctx, where, sizeof where);
    int64_t upper;
    vn_status st = vn_so_attr_int(ctx, where, "upper", 1, &upper);
    if (st != VN_OK) return st;
    if (ctx->inputs[0].rank < 2)
        return vn_error(VN_ERR_SHAPE, where, "input %s must have rank >= 2",
                        vn_desc_format(&ctx->inputs[0], buf, sizeof buf));
    if (vn_so_present(ctx, 1) && vn_desc_numel(&ctx->inputs[1]) != 1)
        return vn_error(VN_ERR_SHAPE, where, "k must hold one value");
    if (vn_so_present(ctx, 1) && (st = vn_so_check_int_vector(ctx, where, 1, "k")) != VN_OK)
        return st;
    *out = ctx->inputs[0];
    return VN_OK;
}

typedef struct trilu_args {
    const uint8_t *x;
    uint8_t *y;
    int64_t rows, M, N, k;
    int32_t esize, upper;
} trilu_args;

static void trilu_kernel(vn_core *core, const void *args)
{
    const trilu_args *a = args;
    int64_t es = a->esize;
    for (int64_t r; vn_tile_next(core, &r);) {
        int64_t i = r % a->M;
        for (int64_t j = 0; j < a->N; j++) {
            bool keep = a->upper ? j - i >= a->k : j - i <= a->k;
            if (keep)
                memcpy(a->y + (r * a->N + j) * es, a->x + (r * a->N + j) * es, (size_t)es);
            else
                memset(a->y + (r * a->N + j) * es, 0, (size_t)es);
        }
    }
}

static vn_status trilu_run(const vn_op_run_ctx *ctx)
{
    const vn_tensor_desc *x = &ctx->inputs[0].desc;
    trilu_args a = {ctx->inputs[0].data,
                    ctx->outputs[0].data,
                    0,
                    x->dims[x->rank - 2],
                    x->dims[x->rank - 1],
                    0,
                    (int32_t)vn_dtype_size(x->dtype),
                    1};
    if (ctx->num_inputs > 1 && ctx->inputs[1].desc.rank >= 0 && ctx->inputs[1].data)
        a.k = vn_cast_load_i64(ctx->inputs[1].desc.dtype, ctx->inputs[1].data, 0);
    a.rows = vn_desc_numel(x) / vn_ops_max(1, a.N);
    a.upper = ((const int64_t *)ctx->plan)[0] != 0;
    int32_t blocks = vn_ops_block_dim(ctx->device, a.rows, a.N);
    vn_launch_desc d = {trilu_kernel, "vn_trilu", blocks, &a, -1, a.rows};
    return a.rows ? vn_launch(ctx->device, &d, ctx->counters) : VN_OK;
}

static vn_status trilu_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    int64_t *p = malloc(sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, "Trilu", "no memory for the plan");
    vn_attrs_int(ctx->attrs, "upper", 1, p);
    *plan = p;
    return VN_OK;
}

const vn_op_def vn_misc_trilu_def = {"Trilu",       "",          1,          2,    1,
                                     VN_DTYPES_ALL, trilu_infer, trilu_plan, free, trilu_run};
