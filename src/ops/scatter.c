/*
 * scatter.c — ScatterElements and ScatterND (reduction none / add / mul /
 * max / min). The output starts as a copy of data; the updates are then
 * applied in index order by one block, so that repeated indices give the
 * ONNX reference's result (the last write wins, or every reduction applies).
 * Element arithmetic is in double (integers in int64) through cast.h.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/gather.h"

typedef enum red { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } red;

typedef struct scatter_plan {
    bool nd;
    red r;
    int32_t rank, axis, k;
    int64_t udims[VN_MAX_RANK], dstr[VN_MAX_RANK], ddims[VN_MAX_RANK];
    int64_t nupd, S, bytes;
    vn_dtype dt, idx_dt;
} scatter_plan;

static vn_status get_red(const vn_op_ctx *ctx, const char *where, red *r)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *s;
    vn_status st = vn_so_attr_string(ctx, where, "reduction", "none", &s);
    if (st != VN_OK) return st;
    for (int32_t i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0) {
            *r = (red)i;
            return VN_OK;
        }
    return vn_error(VN_ERR_INVALID_ARG, where, "reduction \"%s\" (none, add, mul, max, min)", s);
}

static vn_status shape_error(const char *where, const vn_op_ctx *ctx)
{
    char a[128], b[128], c[128];
    return vn_error(VN_ERR_SHAPE, where, "data %s, indices %s and updates %s do not fit",
                    vn_desc_format(&ctx->inputs[0], a, sizeof a),
                    vn_desc_format(&ctx->inputs[1], b, sizeof b),
                    vn_desc_format(&ctx->inputs[2], c, sizeof c));
}

static vn_status check(const vn_op_ctx *ctx, const char *where, scatter_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *ix = &ctx->inputs[1], *u = &ctx->inputs[2];
    vn_status st = get_red(ctx, where, &p->r);
    if (st == VN_OK) st = vn_gather_check_indices(ctx, where, 1);
    if (st != VN_OK) return st;
    if (u->dtype != x->dtype)
        return vn_error(VN_ERR_DTYPE, where, "updates are %s, data is %s", vn_dtype_name(u->dtype),
                        vn_dtype_name(x->dtype));
    p->nd = ctx->def->name[7] == 'N';
    if (!p->nd) {
        int64_t ax;
        st = vn_so_attr_int(ctx, where, "axis", 0, &ax);
        if (st == VN_OK && x->rank < 1) return shape_error(where, ctx);
        if (st == VN_OK) st = vn_so_axis(where, "axis", ax, x->rank, &p->axis);
        if (st != VN_OK) return st;
        bool ok = ix->rank == x->rank && u->rank == x->rank;
        for (int32_t d = 0; ok && d < x->rank; d++)
            ok = u->dims[d] == ix->dims[d] && (d == p->axis || ix->dims[d] <= x->dims[d]);
        return ok ? VN_OK : shape_error(where, ctx);
    }
    /* ND: updates.shape == indices.shape[:-1] + data.shape[k:] */
    int64_t k = ix->rank > 0 ? ix->dims[ix->rank - 1] : -1;
    bool ok = ix->rank >= 1 && k >= 0 && k <= x->rank && u->rank == ix->rank - 1 + x->rank - k;
    for (int32_t d = 0; ok && d < ix->rank - 1; d++) ok = u->dims[d] == ix->dims[d];
    for (int64_t d = k; ok && d < x->rank; d++) ok = u->dims[ix->rank - 1 + d - k] == x->dims[d];
    p->k = (int32_t)k;
    return ok ? VN_OK : shape_error(where, ctx);
}

static vn_status scatter_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    scatter_plan p;
    vn_status st = check(ctx, where, &p);
    if (st == VN_OK) *out = ctx->inputs[0];
    return st;
}

static vn_status scatter_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                                 size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    scatter_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = check(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    const vn_tensor_desc *x = &ctx->inputs[0], *ix = &ctx->inputs[1], *u = &ctx->inputs[2];
    p->rank = x->rank;
    p->dt = x->dtype;
    p->idx_dt = ix->dtype;
    memcpy(p->udims, u->dims, sizeof p->udims);
    memcpy(p->ddims, x->dims, sizeof p->ddims);
    vn_so_strides(x, p->dstr);
    p->bytes = vn_desc_numel(x) * (int64_t)vn_dtype_size(x->dtype);
    p->nupd = vn_desc_numel(u);
    p->S = 1;
    for (int32_t d = p->k; p->nd && d < x->rank; d++) p->S *= x->dims[d];
    *plan = p;
    return VN_OK;
}

static void apply(const scatter_plan *p, void *y, int64_t o, const void *u, int64_t j)
{
    if (p->r == RED_NONE) {
        size_t es = vn_dtype_size(p->dt);
        memcpy((uint8_t *)y + o * (int64_t)es, (const uint8_t *)u + j * (int64_t)es, es);
        return;
    }
    if (!vn_cast_is_float(p->dt)) {
        int64_t a = vn_cast_load_i64(p->dt, y, o), b = vn_cast_load_i64(p->dt, u, j);
        /* u64 (int64 bits, cast.h) orders as int64 once the sign bit is flipped */
        int64_t flip = vn_cast_is_u64(p->dt) ? INT64_MIN : 0, ka = a ^ flip, kb = b ^ flip;
        int64_t v = p->r == RED_ADD   ? (int64_t)((uint64_t)a + (uint64_t)b)
                    : p->r == RED_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                    : p->r == RED_MAX ? (ka > kb ? a : b)
                                      : (ka < kb ? a : b);
        vn_cast_store_i64(p->dt, y, o, v);
        return;
    }
    double a = vn_cast_load_f64(p->dt, y, o), b = vn_cast_load_f64(p->dt, u, j);
    double v = p->r == RED_ADD   ? a + b
               : p->r == RED_MUL ? a * b
               : p->r == RED_MAX ? (a > b ? a : b)
                                 : (a < b ? a : b);
    vn_cast_store_f64(p->dt, y, o, v);
}

typedef struct scatter_args {
    const scatter_plan *p;
    const void *x, *idx, *u;
    void *y;
} scatter_args;

static void scatter_kernel(vn_core *core, const void *args)
{
    const scatter_args *a = args;
    const scatter_plan *p = a->p;
    if (a->y != a->x) memcpy(a->y, a->x, (size_t)p->bytes);
    int64_t tuples = p->nd ? p->nupd / vn_ops_max(1, p->S) : p->nupd;
    for (int64_t j = 0; j < tuples && (p->S > 0 || !p->nd); j++) {
        vn_set_loop(core, j);
        int64_t off = 0, r = j;
        if (p->nd) {
            for (int32_t d = 0; d < p->k; d++)
                off += vn_gather_index(core, "ScatterND", p->idx_dt, a->idx, j * p->k + d,
                                       p->ddims[d]) *
                       p->dstr[d];
            for (int64_t s = 0; s < p->S; s++) apply(p, a->y, off + s, a->u, j * p->S + s);
            continue;
        }
        for (int32_t d = p->rank - 1; d >= 0; d--) {
            int64_t i = r % p->udims[d];
            r /= p->udims[d];
            if (d == p->axis)
                i = vn_gather_index(core, "ScatterElements", p->idx_dt, a->idx, j, p->ddims[d]);
            off += i * p->dstr[d];
        }
        apply(p, a->y, off, a->u, j);
    }
    core->counters.bytes_out += p->bytes;
}

static vn_status scatter_run(const vn_op_run_ctx *ctx)
{
    scatter_args a = {ctx->plan, ctx->inputs[0].data, ctx->inputs[1].data, ctx->inputs[2].data,
                      ctx->outputs[0].data};
    /* one block: updates apply in order (repeated indices are defined) */
    vn_launch_desc d = {scatter_kernel, ctx->def->name, 1, &a, -1, 0};
    return vn_launch(ctx->device, &d, ctx->counters);
}

static const vn_op_def defs[] = {
    {"ScatterElements", "", 3, 3, 1, VN_DTYPES_ALL, scatter_infer, scatter_plan_fn, free,
     scatter_run},
    {"ScatterND", "", 3, 3, 1, VN_DTYPES_ALL, scatter_infer, scatter_plan_fn, free, scatter_run},
};

const vn_op_def *const *vn_ops_scatter_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0], &defs[1]};
    *count = 2;
    return ptrs;
}
