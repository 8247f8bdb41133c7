/*
 * misc_rotary.c — RotaryEmbedding (opset 23): rotates the first
 * rotary_embedding_dim values of each head (all by default) by the angles of
 * cos_cache / sin_cache, pairs taken as (j, j + half) or, interleaved,
 * (2j, 2j + 1). Input [batch, heads, seq, head] or [batch, seq, heads *
 * head] (num_heads given); the caches are [max_position, half] indexed by
 * position_ids [batch, seq], or [batch, seq, half] without them.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "kernel/core_internal.h"
#include "ops/misc.h"

typedef struct rope_plan {
    int64_t B, S, H, D, half;
    int64_t max_pos; /* rows of the caches with position_ids, else 0 */
    bool four_d, interleaved;
    vn_dtype dt;
    int32_t block_dim;
} rope_plan;

static vn_status rope_shape(const vn_op_ctx *ctx, const char *where, rope_plan *p, int64_t rot)
{
    const vn_tensor_desc *c = &ctx->inputs[1], *s = &ctx->inputs[2];
    bool ok = c->rank == s->rank && c->dtype == ctx->inputs[0].dtype && s->dtype == c->dtype;
    for (int32_t d = 0; ok && d < c->rank; d++) ok = c->dims[d] == s->dims[d];
    p->half = (rot ? rot : p->D) / 2;
    if (vn_so_present(ctx, 3)) {
        const vn_tensor_desc *pid = &ctx->inputs[3];
        ok = ok && c->rank == 2 && pid->rank == 2 && pid->dims[0] == p->B && pid->dims[1] == p->S &&
             (pid->dtype == VN_I64 || pid->dtype == VN_I32);
        p->max_pos = c->dims[0];
    } else {
        ok = ok && c->rank == 3 && c->dims[0] == p->B && c->dims[1] == p->S;
    }
    ok = ok && c->dims[c->rank - 1] == p->half && 2 * p->half <= p->D && (rot == 0 || rot % 2 == 0);
    if (!ok) {
        char a[96], b[96];
        return vn_error(VN_ERR_SHAPE, where,
                        "caches %s (or position_ids) do not fit input %s and rotary dim %lld",
                        vn_desc_format(c, a, sizeof a),
                        vn_desc_format(&ctx->inputs[0], b, sizeof b), (long long)(2 * p->half));
    }
    return VN_OK;
}

static vn_status rope_params(const vn_op_ctx *ctx, const char *where, rope_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t inter = 0, rot = 0, heads = 0;
    vn_status st = vn_so_attr_int(ctx, where, "interleaved", 0, &inter);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "rotary_embedding_dim", 0, &rot);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "num_heads", 0, &heads);
    if (st != VN_OK) return st;
    p->four_d = x->rank == 4;
    p->interleaved = inter != 0;
    p->dt = x->dtype;
    if (x->rank == 4) {
        p->B = x->dims[0], p->H = x->dims[1], p->S = x->dims[2], p->D = x->dims[3];
    } else if (x->rank == 3 && heads > 0 && x->dims[2] % heads == 0) {
        p->B = x->dims[0], p->S = x->dims[1], p->H = heads, p->D = x->dims[2] / heads;
    } else {
        return vn_error(VN_ERR_SHAPE, where,
                        "input must be [batch, heads, seq, head] or [batch, seq, hidden] with "
                        "num_heads dividing hidden");
    }
    return rope_shape(ctx, where, p, rot);
}

static vn_status rope_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    rope_plan p;
    vn_status st = rope_params(ctx, where, &p);
    if (st == VN_OK) *out = ctx->inputs[0];
    return st;
}

static vn_status rope_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                              size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    (void)outputs;
    rope_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = rope_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    p->block_dim = vn_ops_block_dim(ctx->device, p->B * p->S, p->H * p->D);
    *plan = p;
    return VN_OK;
}

typedef struct rope_args {
    const rope_plan *p;
    const void *x, *cos, *sin, *pid;
    vn_dtype pid_dt;
    void *y;
    atomic_int *bad; /* set when a position id is out of range */
} rope_args;

/* One head vector at element offset `o`, cache row `row`. */
static void rope_head(const rope_args *a, int64_t o, int64_t row)
{
    const rope_plan *p = a->p;
    vn_dtype dt = p->dt;
    for (int64_t j = 0; j < p->half; j++) {
        int64_t i1 = p->interleaved ? 2 * j : j, i2 = p->interleaved ? 2 * j + 1 : j + p->half;
        double c = vn_cast_load_f64(dt, a->cos, row * p->half + j);
        double s = vn_cast_load_f64(dt, a->sin, row * p->half + j);
        double x1 = vn_cast_load_f64(dt, a->x, o + i1), x2 = vn_cast_load_f64(dt, a->x, o + i2);
        vn_cast_store_f64(dt, a->y, o + i1, c * x1 - s * x2);
        vn_cast_store_f64(dt, a->y, o + i2, s * x1 + c * x2);
    }
    for (int64_t j = 2 * p->half; j < p->D; j++)
        vn_cast_store_f64(dt, a->y, o + j, vn_cast_load_f64(dt, a->x, o + j));
}

static void rope_kernel(vn_core *core, const void *args)
{
    const rope_args *a = args;
    const rope_plan *p = a->p;
    for (int64_t bs; vn_tile_next(core, &bs);) {
        int64_t b = bs / p->S, s = bs % p->S, row = bs;
        if (a->pid) {
            row = vn_cast_load_i64(a->pid_dt, a->pid, bs);
            if (row < 0 || row >= p->max_pos) {
                atomic_store(a->bad, 1);
                continue;
            }
        }
        for (int64_t h = 0; h < p->H; h++) {
            int64_t o = p->four_d ? ((b * p->H + h) * p->S + s) * p->D : (bs * p->H + h) * p->D;
            rope_head(a, o, row);
        }
        core->counters.vector_elem_ops += 6 * p->H * p->half;
    }
}

static vn_status rope_run(const vn_op_run_ctx *ctx)
{
    const rope_plan *p = ctx->plan;
    atomic_int bad = 0;
    bool has_pid = ctx->num_inputs > 3 && ctx->inputs[3].desc.rank >= 0;
    rope_args a = {p,
                   ctx->inputs[0].data,
                   ctx->inputs[1].data,
                   ctx->inputs[2].data,
                   has_pid ? ctx->inputs[3].data : NULL,
                   has_pid ? ctx->inputs[3].desc.dtype : VN_I64,
                   ctx->outputs[0].data,
                   &bad};
    vn_launch_desc d = {rope_kernel, "vn_rotary_embedding", p->block_dim, &a, -1, p->B * p->S};
    vn_status st = p->B * p->S > 0 ? vn_launch(ctx->device, &d, ctx->counters) : VN_OK;
    if (st == VN_OK && atomic_load(&bad))
        st = vn_error(VN_ERR_INVALID_ARG, "RotaryEmbedding",
                      "a position id is outside the caches' %lld rows", (long long)p->max_pos);
    return st;
}

const vn_op_def vn_misc_rotary_def = {
    "RotaryEmbedding", "", 3, 4, 1, VN_DTYPES_FLOAT, rope_infer, rope_plan_fn, free, rope_run};
