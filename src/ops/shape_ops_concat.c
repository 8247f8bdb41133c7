/*
 * shape_ops_concat.c — Concat and Split along one axis. Both see the big
 * tensor as [outer, A * inner] and each part as [outer, A_i * inner]: a tile
 * is one (outer index, part) pair and one contiguous copy of A_i * inner
 * elements.
 *
 * Split's output count comes from 'split' (input or attribute) or the
 * 'num_outputs' attribute (opset 18); without either, an equal split into
 * the node's outputs (the graph's internal '_num_outputs' attribute).
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/shape_ops.h"

#define MAX_PARTS 64

typedef struct parts_plan {
    int32_t n;
    bool split;
    int64_t outer, big_chunk;                 /* bytes per outer index of the big tensor */
    int64_t chunk[MAX_PARTS], off[MAX_PARTS]; /* bytes */
    int64_t tiles;
    int32_t block_dim;
} parts_plan;

typedef struct parts_args {
    const parts_plan *p;
    const vn_tensor *parts; /* the inputs (Concat) or outputs (Split) */
    uint8_t *big;
} parts_args;

static void parts_kernel(vn_core *core, const void *args)
{
    const parts_args *a = args;
    const parts_plan *p = a->p;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t o = t / p->n, i = t % p->n, n = p->chunk[i];
        uint8_t *part = a->parts[i].data, *big = a->big + o * p->big_chunk + p->off[i];
        if (n == 0 || !part) continue;
        if (p->split)
            memcpy(part + o * n, big, (size_t)n);
        else
            memcpy(big, part + o * n, (size_t)n);
        core->counters.bytes_in += n;
        core->counters.bytes_out += n;
    }
}

static vn_status parts_execute(vn_device *device, const parts_plan *p, const vn_tensor *parts,
                               void *big, vn_kernel_counters *counters)
{
    if (p->tiles == 0) return VN_OK;
    parts_args a = {p, parts, big};
    vn_launch_desc d = {parts_kernel, p->split ? "vn_split" : "vn_concat", p->block_dim, &a, -1,
                        p->tiles};
    return vn_launch(device, &d, counters);
}

/* Fill outer, chunks and offsets from the part sizes along `axis`. */
static vn_status parts_plan_make(const vn_op_ctx *ctx, const vn_tensor_desc *big, int32_t axis,
                                 const int64_t *sizes, int32_t n, bool split, void **plan)
{
    parts_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_concat", "no memory for the plan");
    int64_t inner = (int64_t)vn_dtype_size(big->dtype), elems = 0;
    p->outer = 1;
    for (int32_t d = 0; d < big->rank; d++) {
        if (d < axis) p->outer *= big->dims[d];
        if (d > axis) inner *= big->dims[d];
    }
    p->n = n;
    p->split = split;
    for (int32_t i = 0; i < n; i++) {
        p->off[i] = elems * inner;
        p->chunk[i] = sizes[i] * inner;
        elems += sizes[i];
    }
    p->big_chunk = elems * inner;
    p->tiles = p->big_chunk > 0 ? p->outer * n : 0;
    p->block_dim = vn_ops_block_dim(ctx->device, p->tiles, p->big_chunk / vn_ops_max(1, n) / 4);
    *plan = p;
    return VN_OK;
}

/* ---- Concat ----------------------------------------------------------------------------- */

static vn_status concat_check(const vn_op_ctx *ctx, const char *where, int32_t *axis,
                              vn_tensor_desc *out)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    char a[128], b[128];
    int64_t ax;
    vn_status st = vn_so_attr_int(ctx, where, "axis", INT64_MIN, &ax);
    if (st != VN_OK) return st;
    if (ax == INT64_MIN) return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'axis' is required");
    if (x->rank == 0) return vn_error(VN_ERR_SHAPE, where, "cannot concatenate scalars");
    st = vn_so_axis(where, "axis", ax, x->rank, axis);
    if (st != VN_OK) return st;
    *out = *x;
    out->dims[*axis] = 0;
    for (int32_t i = 0; i < ctx->num_inputs; i++) {
        const vn_tensor_desc *y = &ctx->inputs[i];
        bool ok = y->rank == x->rank && y->dtype == x->dtype;
        for (int32_t d = 0; ok && d < x->rank; d++) ok = d == *axis || y->dims[d] == x->dims[d];
        if (!ok)
            return vn_error(y->dtype != x->dtype ? VN_ERR_DTYPE : VN_ERR_SHAPE, where,
                            "input %d %s does not match input 0 %s off axis %d", (int)i,
                            vn_desc_format(y, a, sizeof a), vn_desc_format(x, b, sizeof b),
                            (int)*axis);
        out->dims[*axis] += y->dims[*axis];
    }
    return VN_OK;
}

static vn_status concat_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int32_t axis;
    return concat_check(ctx, where, &axis, out);
}

static vn_status concat_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int32_t axis;
    int64_t sizes[MAX_PARTS];
    vn_tensor_desc out;
    *workspace = 0;
    vn_status st = concat_check(ctx, where, &axis, &out);
    if (st != VN_OK) return st;
    for (int32_t i = 0; i < ctx->num_inputs; i++) sizes[i] = ctx->inputs[i].dims[axis];
    return parts_plan_make(ctx, &outputs[0], axis, sizes, ctx->num_inputs, false, plan);
}

static vn_status concat_run(const vn_op_run_ctx *ctx)
{
    return parts_execute(ctx->device, ctx->plan, ctx->inputs, ctx->outputs[0].data, ctx->counters);
}

/* ---- Split ------------------------------------------------------------------------------- */

static vn_status split_sizes(const vn_op_ctx *ctx, const char *where, int32_t *axis, int64_t *sizes,
                             int32_t *n)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t ax, num;
    bool given = false;
    vn_status st = vn_so_attr_int(ctx, where, "axis", 0, &ax);
    if (st == VN_OK) st = vn_so_axis(where, "axis", ax, x->rank, axis);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "num_outputs", 0, &num);
    if (st == VN_OK && vn_so_present(ctx, 1)) {
        given = true;
        st = vn_so_const_ints(ctx, where, 1, "split", sizes, MAX_PARTS, n);
    } else if (st == VN_OK) {
        st = vn_so_attr_ints(ctx, where, "split", sizes, MAX_PARTS, n, &given);
    }
    if (st != VN_OK) return st;
    if (!given && num <= 0) /* before opset 18: as many equal parts as the node has outputs */
        vn_attrs_int(ctx->attrs, "_num_outputs", 0, &num);
    int64_t dim = x->dims[*axis], sum = 0;
    if (!given && num > 0) { /* opset 18: ceil-sized parts, the last smaller */
        if (num > MAX_PARTS)
            return vn_error(VN_ERR_UNSUPPORTED, where, "more than %d outputs", MAX_PARTS);
        int64_t c = vn_ops_div_up(dim, num);
        for (*n = 0; *n < num; (*n)++) sizes[*n] = vn_ops_max(0, vn_ops_min(c, dim - *n * c));
        return VN_OK;
    }
    if (!given)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "an equal split needs 'split', 'num_outputs' or the node's output "
                        "count (internal attribute '_num_outputs')");
    for (int32_t i = 0; i < *n; i++) {
        if (sizes[i] < 0)
            return vn_error(VN_ERR_INVALID_ARG, where, "split[%d] is negative", (int)i);
        sum += sizes[i];
    }
    if (sum != dim)
        return vn_error(VN_ERR_SHAPE, where, "split sums to %lld, axis %d has %lld", (long long)sum,
                        (int)*axis, (long long)dim);
    return VN_OK;
}

static vn_status split_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int32_t axis, n = 0;
    int64_t sizes[MAX_PARTS];
    if (ctx->inputs[0].rank == 0) return vn_error(VN_ERR_SHAPE, where, "cannot split a scalar");
    vn_status st = split_sizes(ctx, where, &axis, sizes, &n);
    if (st != VN_OK) return st;
    for (int32_t i = 0; i < MAX_PARTS; i++) {
        out[i] = ctx->inputs[0];
        out[i].dims[axis] = sizes[i];
        if (i >= n) out[i].rank = -1; /* no such output */
    }
    return VN_OK;
}

static vn_status split_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int32_t axis, n = 0;
    int64_t sizes[MAX_PARTS];
    *workspace = 0;
    vn_status st = split_sizes(ctx, where, &axis, sizes, &n);
    if (st != VN_OK) return st;
    return parts_plan_make(ctx, &ctx->inputs[0], axis, sizes, n, true, plan);
}

static vn_status split_run(const vn_op_run_ctx *ctx)
{
    const parts_plan *p = ctx->plan;
    if (ctx->num_outputs < p->n) {
        /* a graph node may use fewer outputs: copy only those */
        parts_plan q = *p;
        q.n = ctx->num_outputs;
        q.tiles = q.outer * q.n;
        return parts_execute(ctx->device, &q, ctx->outputs, ctx->inputs[0].data, ctx->counters);
    }
    return parts_execute(ctx->device, p, ctx->outputs, ctx->inputs[0].data, ctx->counters);
}

const vn_op_def vn_so_concat_defs[] = {
    {"Concat", "", 1, MAX_PARTS, 1, VN_DTYPES_ALL, concat_infer, concat_plan, free, concat_run},
    {"Split", "", 1, 2, MAX_PARTS, VN_DTYPES_ALL, split_infer, split_plan, free, split_run},
};
const int32_t vn_so_concat_count = 2;
