/*
 * pool_op.c — the pooling operators of the registry: MaxPool (opset 12,
 * with the optional i64 Indices output), AveragePool (19), LpPool (18),
 * GlobalAveragePool, GlobalMaxPool on NCHW (1-D to 3-D, f32 / f16 / bf16
 * computed in f32), and their vinci-domain twins on NC1HWC0 (f32, C0 = 16:
 * input [N, C1, spatial..., 16], output likewise; no Indices).
 *
 * MaxPool always declares its two outputs (the registry has no optional
 * outputs): the two-phase API passes both; a graph node with one output
 * runs with num_outputs 1 and no index is computed.
 */
#include <stdlib.h>

#include "ops/pool.h"

typedef struct pool_def {
    vn_op_def def;
    vn_pool_kind kind;
    bool blocked, global;
} pool_def;

static const pool_def *def_of(const vn_op_def *d)
{
    return (const pool_def *)d;
}

/* Spatial dims of x, after validating its rank (and C0 on NC1HWC0). */
static vn_status spatial_of(const char *where, const pool_def *pd, const vn_tensor_desc *x,
                            int32_t *nsp)
{
    char buf[128];
    int32_t extra = pd->blocked ? 3 : 2;
    if (x->rank < extra + 1 || x->rank > extra + VN_POOL_DIMS)
        return vn_error(VN_ERR_SHAPE, where,
                        "X %s has rank %d; expected %d to %d (%s and 1 to 3 spatial dims)",
                        vn_desc_format(x, buf, sizeof buf), (int)x->rank, (int)extra + 1,
                        (int)extra + VN_POOL_DIMS, pd->blocked ? "N, C1, ..., C0" : "N, C");
    if (pd->blocked && x->dims[x->rank - 1] != VN_POOL_C0)
        return vn_error(VN_ERR_SHAPE, where, "X %s is not NC1HWC0: the last dim must be C0 = %d",
                        vn_desc_format(x, buf, sizeof buf), VN_POOL_C0);
    *nsp = x->rank - extra;
    return VN_OK;
}

static vn_status make_geom(const vn_op_ctx *ctx, const char *where, vn_pool_geom *g)
{
    const pool_def *pd = def_of(ctx->def);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int32_t nsp = 0;
    vn_status st = spatial_of(where, pd, x, &nsp);
    if (st != VN_OK) return st;
    if (!pd->global) return vn_pool_geom_make(where, ctx->attrs, pd->kind, nsp, x->dims + 2, g);
    vn_pool_geom z = {.nsp = nsp};
    for (int32_t i = 0; i < VN_POOL_DIMS; i++) {
        int32_t a = i - (VN_POOL_DIMS - nsp);
        z.in[i] = a < 0 ? 1 : x->dims[2 + a];
        z.out[i] = z.k[i] = z.s[i] = z.d[i] = 1;
    }
    *g = z;
    return VN_OK;
}

static vn_status pool_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_pool_geom g;
    vn_status st = make_geom(ctx, where, &g);
    if (st != VN_OK) return st;
    const vn_tensor_desc *x = &ctx->inputs[0];
    outputs[0] = *x;
    for (int32_t i = 0; i < g.nsp; i++) outputs[0].dims[2 + i] = g.out[VN_POOL_DIMS - g.nsp + i];
    if (ctx->def->num_outputs > 1) {
        outputs[1] = outputs[0];
        outputs[1].dtype = VN_I64;
    }
    return VN_OK;
}

static vn_status pool_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                           size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const pool_def *pd = def_of(ctx->def);
    const vn_tensor_desc *x = &ctx->inputs[0];
    vn_pool_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = make_geom(ctx, where, &p->g);
    p->kind = pd->kind;
    p->dtype = x->dtype;
    p->lanes = pd->blocked ? VN_POOL_C0 : 1;
    p->indices = ctx->def->num_outputs > 1;
    p->global = pd->global;
    p->planes = x->dims[0] * x->dims[1];
    if (st == VN_OK)
        st = pd->global ? vn_pool_plan_global(where, ctx->device, p)
                        : vn_pool_plan_windowed(where, ctx->device, p);
    if (st != VN_OK) {
        vn_pool_plan_release(p);
        return st;
    }
    *data = p;
    *workspace = 0;
    return VN_OK;
}

static void pool_plan_free(void *data)
{
    vn_pool_plan_release(data);
}

static vn_status pool_run(const vn_op_run_ctx *ctx)
{
    const vn_pool_plan *p = ctx->plan;
    const void *x = ctx->inputs[0].data;
    if (p->global)
        return vn_pool_run_global(ctx->device, p, x, ctx->outputs[0].data, ctx->counters);
    int64_t *idx = p->indices && ctx->num_outputs > 1 ? ctx->outputs[1].data : NULL;
    return vn_pool_run_windowed(ctx->device, p, x, ctx->outputs[0].data, idx, ctx->counters);
}

#define F32_ONLY VN_DTYPE_BIT(VN_F32)
/* MaxPool also takes 8-bit integers (ONNX opset 12): computed in f32, which
 * holds them exactly, so the max is exact */
#define MAX_TYPES (VN_DTYPES_FLOAT | VN_DTYPE_BIT(VN_U8) | VN_DTYPE_BIT(VN_I8))
#define POOL(name, domain, outs, dtypes, kind, blocked, global)                                    \
    {                                                                                              \
        {name, domain, 1, 1, outs, dtypes, pool_infer, pool_plan, pool_plan_free, pool_run}, kind, \
            blocked, global                                                                        \
    }

static const pool_def defs[] = {
    POOL("MaxPool", "", 2, MAX_TYPES, VN_POOL_MAX, false, false),
    POOL("AveragePool", "", 1, VN_DTYPES_FLOAT, VN_POOL_AVG, false, false),
    POOL("LpPool", "", 1, VN_DTYPES_FLOAT, VN_POOL_LP, false, false),
    POOL("GlobalAveragePool", "", 1, VN_DTYPES_FLOAT, VN_POOL_AVG, false, true),
    POOL("GlobalMaxPool", "", 1, VN_DTYPES_FLOAT, VN_POOL_MAX, false, true),
    POOL("MaxPoolNC1HWC0", "vinci", 1, F32_ONLY, VN_POOL_MAX, true, false),
    POOL("AveragePoolNC1HWC0", "vinci", 1, F32_ONLY, VN_POOL_AVG, true, false),
    POOL("LpPoolNC1HWC0", "vinci", 1, F32_ONLY, VN_POOL_LP, true, false),
    POOL("GlobalAveragePoolNC1HWC0", "vinci", 1, F32_ONLY, VN_POOL_AVG, true, true),
    POOL("GlobalMaxPoolNC1HWC0", "vinci", 1, F32_ONLY, VN_POOL_MAX, true, true),
};

const vn_op_def *const *vn_ops_pool_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {
        &defs[0].def, &defs[1].def, &defs[2].def, &defs[3].def, &defs[4].def,
        &defs[5].def, &defs[6].def, &defs[7].def, &defs[8].def, &defs[9].def,
    };
    _Static_assert(sizeof ptrs / sizeof ptrs[0] == sizeof defs / sizeof defs[0],
                   "one pointer per definition");
    *count = (int32_t)(sizeof ptrs / sizeof ptrs[0]);
    return ptrs;
}
