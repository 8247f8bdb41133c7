/*
 * math_engine.c — the scalar element-wise engine (see math.h): validation,
 * broadcasting, tiling and the kernel.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/math.h"

#define CHUNK 1024

/* PRelu's slope [C] on X [N, C, d...] where numpy broadcasting cannot apply
 * (C differs from X's last dim): the per-channel slope of PRelu before opset 7
 * and of exporters relying on it, read as [C, 1, ...] (same bytes). */
static void prelu_channel_slope(const vn_op_ctx *ctx, vn_tensor_desc *descs, int32_t n)
{
    const vn_tensor_desc *x = &descs[0];
    vn_tensor_desc *s = &descs[1];
    if (n != 2 || strcmp(ctx->def->name, "PRelu") || x->rank < 3 || s->rank != 1 ||
        s->dims[0] != x->dims[1] || s->dims[0] == x->dims[x->rank - 1])
        return;
    s->rank = x->rank - 1;
    for (int32_t d = 1; d < s->rank; d++) s->dims[d] = 1;
}

/* Inputs present (an omitted optional input has rank -1). */
static int32_t present(const vn_op_ctx *ctx, int32_t *src, vn_tensor_desc *descs)
{
    int32_t n = 0;
    for (int32_t i = 0; i < ctx->num_inputs && n < VN_MATH_MAX_INPUTS; i++) {
        if (ctx->inputs[i].rank < 0) continue;
        if (src) src[n] = i;
        if (descs) descs[n] = ctx->inputs[i];
        n++;
    }
    if (descs) prelu_channel_slope(ctx, descs, n);
    return n;
}

static vn_status check_dtypes(const vn_op_ctx *ctx, const char *where, const vn_math_def *m)
{
    vn_dtype dt = ctx->inputs[m->decider].dtype;
    bool flt = vn_cast_is_float(dt), u64 = vn_cast_is_u64(dt);
    /* the registry checks input 0 against def.dtypes; Where's decider is input 1 */
    if ((flt && !m->f) || (!flt && !u64 && !m->fi) || (u64 && !m->fu) ||
        (m->decider == 0 && !(m->def.dtypes & VN_DTYPE_BIT(dt))))
        return vn_error(VN_ERR_DTYPE, where, "input %d has dtype %s, which %s does not accept",
                        (int)m->decider, vn_dtype_name(dt), m->def.name);
    for (int32_t i = 0; i < ctx->num_inputs; i++) {
        const vn_tensor_desc *t = &ctx->inputs[i];
        if (t->rank < 0 || i == 0 || m->mixed) continue;
        /* Where's condition (input 0 with decider 1) is bool; the rest match */
        if (t->dtype != dt && !(m->decider == 1 && i == 0))
            return vn_error(VN_ERR_DTYPE, where, "input %d is %s, input %d is %s", (int)i,
                            vn_dtype_name(t->dtype), (int)m->decider, vn_dtype_name(dt));
    }
    if (m->decider == 1 && !m->mixed && ctx->inputs[0].dtype != VN_BOOL)
        return vn_error(VN_ERR_DTYPE, where, "condition is %s (bool expected)",
                        vn_dtype_name(ctx->inputs[0].dtype));
    if (m->mixed && !m->decider) /* Pow: the exponent is any numeric dtype */
        for (int32_t i = 1; i < ctx->num_inputs; i++)
            if (ctx->inputs[i].rank >= 0 && ctx->inputs[i].dtype == VN_BOOL)
                return vn_error(VN_ERR_DTYPE, where, "input %d is bool", (int)i);
    return VN_OK;
}

vn_status vn_math_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    const vn_math_def *m = (const vn_math_def *)ctx->def;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_tensor_desc descs[VN_MATH_MAX_INPUTS];
    double p[8];
    if (ctx->num_inputs > VN_MATH_MAX_INPUTS)
        return vn_error(VN_ERR_UNSUPPORTED, where, "more than %d inputs", VN_MATH_MAX_INPUTS);
    vn_status st = check_dtypes(ctx, where, m);
    if (st == VN_OK && m->params) st = m->params(ctx, where, p);
    if (st != VN_OK) return st;
    int32_t n = present(ctx, NULL, descs);
    st = vn_broadcast_shape(where, descs, n, out);
    if (st != VN_OK) return st;
    out->dtype = m->out == VN_MATH_OUT_BOOL ? VN_BOOL : ctx->inputs[m->decider].dtype;
    return VN_OK;
}

vn_status vn_math_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                          size_t *workspace)
{
    const vn_math_def *m = (const vn_math_def *)ctx->def;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_math_plan *p = calloc(1, sizeof *p);
    vn_tensor_desc descs[VN_MATH_MAX_INPUTS];
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    if (m->params) m->params(ctx, where, p->p);
    p->num_inputs = present(ctx, p->src, descs);
    for (int32_t k = 0; k < p->num_inputs; k++) p->in_dt[k] = descs[k].dtype;
    p->out_dt = outputs[0].dtype;
    p->integer = !vn_cast_is_float(ctx->inputs[m->decider].dtype);
    /* mixed (Pow): an integer base with a float exponent is computed in double */
    for (int32_t k = 0; m->mixed && k < p->num_inputs; k++)
        p->integer &= !vn_cast_is_float(p->in_dt[k]);
    p->f = m->f;
    p->fi = vn_cast_is_u64(ctx->inputs[m->decider].dtype) ? m->fu : m->fi;
    vn_broadcast_collapse(descs, p->num_inputs, &outputs[0], &p->b);
    p->numel = vn_desc_numel(&outputs[0]);
    p->L = p->b.dims[p->b.rank - 1];
    p->rows = p->L > 0 ? p->numel / p->L : 0;
    p->cpr = vn_ops_div_up(p->L, CHUNK);
    p->tiles = p->rows * p->cpr;
    p->block_dim = vn_ops_block_dim(ctx->device, p->tiles, vn_ops_min(p->L, CHUNK));
    *plan = p;
    return VN_OK;
}

void vn_math_plan_free(void *plan)
{
    free(plan);
}

typedef struct math_args {
    const vn_math_plan *p;
    const void *in[VN_MATH_MAX_INPUTS];
    void *out;
} math_args;

/* Element offset of input k at the start of row `row` of the collapsed space. */
static int64_t row_offset(const vn_bcast *b, int32_t k, int64_t row)
{
    int64_t off = 0;
    for (int32_t d = b->rank - 2; d >= 0; d--) {
        off += row % b->dims[d] * b->strides[k][d];
        row /= b->dims[d];
    }
    return off;
}

static void load_chunk(const vn_math_plan *p, int32_t k, const void *x, int64_t off, int64_t s,
                       int64_t n, void *buf)
{
    if (p->integer)
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)buf)[i] = vn_cast_load_i64(p->in_dt[k], x, off + i * s);
    else
        for (int64_t i = 0; i < n; i++)
            ((double *)buf)[i] = vn_cast_load_f64(p->in_dt[k], x, off + i * s);
}

static void math_kernel(vn_core *core, const void *args)
{
    const math_args *a = args;
    const vn_math_plan *p = a->p;
    int32_t ni = p->num_inputs, last = p->b.rank - 1;
    vn_local scratch = vn_buf_new(core, VN_VECCALC, (int64_t)CHUNK * (ni + 1), VN_I64);
    uint8_t *base = scratch.data;
    const void *xs[VN_MATH_MAX_INPUTS];
    for (int32_t k = 0; k < ni; k++) xs[k] = base + (size_t)k * CHUNK * 8;
    void *y = base + (size_t)ni * CHUNK * 8;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t row = t / p->cpr, c0 = t % p->cpr * CHUNK, n = vn_ops_min(CHUNK, p->L - c0);
        for (int32_t k = 0; k < ni; k++) {
            int64_t s = p->b.strides[k][last];
            load_chunk(p, k, a->in[k], row_offset(&p->b, k, row) + c0 * s, s, n, (void *)xs[k]);
        }
        int64_t o = row * p->L + c0;
        if (p->integer) {
            p->fi(y, (const int64_t *const *)xs, n, p->p);
            for (int64_t i = 0; i < n; i++)
                vn_cast_store_i64(p->out_dt, a->out, o + i, ((int64_t *)y)[i]);
        } else {
            p->f(y, (const double *const *)xs, n, p->p);
            for (int64_t i = 0; i < n; i++)
                vn_cast_store_f64(p->out_dt, a->out, o + i, ((double *)y)[i]);
        }
        core->counters.bytes_out += n * (int64_t)vn_dtype_size(p->out_dt);
        core->counters.vector_elem_ops += n;
    }
}

vn_status vn_math_run(const vn_op_run_ctx *ctx)
{
    const vn_math_plan *p = ctx->plan;
    if (p->tiles == 0) return VN_OK;
    math_args a;
    memset(&a, 0, sizeof a);
    a.p = p;
    for (int32_t k = 0; k < p->num_inputs; k++) a.in[k] = ctx->inputs[p->src[k]].data;
    a.out = ctx->outputs[0].data;
    vn_launch_desc d = {math_kernel, ctx->def->name, p->block_dim, &a, -1, p->tiles};
    return vn_launch(ctx->device, &d, ctx->counters);
}
