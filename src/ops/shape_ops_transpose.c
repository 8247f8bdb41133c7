/*
 * shape_ops_transpose.c — permutations of dims: Transpose, and DepthToSpace /
 * SpaceToDepth, which are a reshape to 6-D, a transpose and a reshape.
 * All are views (shape_ops_view.c); a permutation that swaps the last two
 * dims runs the blocked 2-D transpose kernel.
 */
#include <string.h>

#include "ops/shape_ops.h"

/* The view of `dtype` data of shape src[0..rank) read in the order perm. */
static vn_status perm_view(const vn_op_ctx *ctx, const char *where, vn_dtype dtype, int32_t rank,
                           const int64_t *src, const int32_t *perm, void **plan)
{
    vn_tensor_desc s = vn_so_desc(dtype, rank, src);
    int64_t strides[VN_VIEW_MAX_RANK];
    vn_so_strides(&s, strides);
    vn_view *v = vn_view_new(where, rank, dtype);
    if (!v) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t d = 0; d < rank; d++) {
        v->d[d].size = src[perm[d]];
        v->d[d].stride = strides[perm[d]];
    }
    vn_status st = vn_view_finish(where, ctx->device, v);
    if (st != VN_OK) {
        vn_view_free(v);
        return st;
    }
    *plan = v;
    return VN_OK;
}

/* ---- Transpose ------------------------------------------------------------------------ */

static vn_status get_perm(const vn_op_ctx *ctx, const char *where, int32_t *perm)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t p[VN_MAX_RANK + 1];
    int32_t n = 0;
    bool given, seen[VN_MAX_RANK] = {false};
    vn_status st = vn_so_attr_ints(ctx, where, "perm", p, VN_MAX_RANK + 1, &n, &given);
    if (st != VN_OK) return st;
    if (!given) {
        for (int32_t d = 0; d < x->rank; d++) perm[d] = x->rank - 1 - d;
        return VN_OK;
    }
    if (n != x->rank)
        return vn_error(VN_ERR_INVALID_ARG, where, "perm has %d values for an input of rank %d",
                        (int)n, (int)x->rank);
    for (int32_t d = 0; d < n; d++) {
        st = vn_so_axis(where, "perm value", p[d], x->rank, &perm[d]);
        if (st != VN_OK) return st;
        if (seen[perm[d]])
            return vn_error(VN_ERR_INVALID_ARG, where, "perm repeats axis %d", (int)perm[d]);
        seen[perm[d]] = true;
    }
    return VN_OK;
}

static vn_status transpose_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int32_t perm[VN_MAX_RANK];
    vn_status st = get_perm(ctx, where, perm);
    if (st != VN_OK) return st;
    *out = *x;
    for (int32_t d = 0; d < x->rank; d++) out->dims[d] = x->dims[perm[d]];
    return VN_OK;
}

static vn_status transpose_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                                size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int32_t perm[VN_MAX_RANK];
    vn_status st = get_perm(ctx, where, perm);
    *workspace = 0;
    if (st != VN_OK) return st;
    const vn_tensor_desc *x = &ctx->inputs[0];
    return perm_view(ctx, where, x->dtype, x->rank, x->dims, perm, plan);
}

/* ---- DepthToSpace / SpaceToDepth ---------------------------------------------------------- */

typedef struct d2s_shape {
    int64_t src6[6];
    int32_t perm[6];
    int64_t out[4];
} d2s_shape;

static vn_status d2s_shape_of(const vn_op_ctx *ctx, const char *where, d2s_shape *s)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    char buf[128];
    int64_t b;
    const char *mode;
    bool to_space = ctx->def->name[0] == 'D';
    vn_status st = vn_so_attr_int(ctx, where, "blocksize", 0, &b);
    if (st == VN_OK) st = vn_so_attr_string(ctx, where, "mode", "DCR", &mode);
    if (st != VN_OK) return st;
    if (x->rank != 4)
        return vn_error(VN_ERR_SHAPE, where, "input %s must be 4-D (NCHW)",
                        vn_desc_format(x, buf, sizeof buf));
    if (b < 1)
        return vn_error(VN_ERR_INVALID_ARG, where, "blocksize %lld must be >= 1", (long long)b);
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    if (to_space) {
        bool dcr = strcmp(mode, "DCR") == 0;
        if (!dcr && strcmp(mode, "CRD") != 0)
            return vn_error(VN_ERR_INVALID_ARG, where, "mode \"%s\" (DCR or CRD)", mode);
        if (C % (b * b))
            return vn_error(VN_ERR_SHAPE, where, "channels of %s are not a multiple of %lld",
                            vn_desc_format(x, buf, sizeof buf), (long long)(b * b));
        int64_t c = C / (b * b);
        const int64_t dcr6[6] = {N, b, b, c, H, W}, crd6[6] = {N, c, b, b, H, W};
        const int32_t dcrp[6] = {0, 3, 4, 1, 5, 2}, crdp[6] = {0, 1, 4, 2, 5, 3};
        memcpy(s->src6, dcr ? dcr6 : crd6, sizeof s->src6);
        memcpy(s->perm, dcr ? dcrp : crdp, sizeof s->perm);
        const int64_t out[4] = {N, c, H * b, W * b};
        memcpy(s->out, out, sizeof out);
        return VN_OK;
    }
    if (H % b || W % b)
        return vn_error(VN_ERR_SHAPE, where, "H and W of %s are not multiples of %lld",
                        vn_desc_format(x, buf, sizeof buf), (long long)b);
    const int64_t src6[6] = {N, C, H / b, b, W / b, b}, out[4] = {N, C * b * b, H / b, W / b};
    const int32_t perm[6] = {0, 3, 5, 1, 2, 4};
    memcpy(s->src6, src6, sizeof src6);
    memcpy(s->perm, perm, sizeof perm);
    memcpy(s->out, out, sizeof out);
    return VN_OK;
}

static vn_status d2s_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    d2s_shape s;
    vn_status st = d2s_shape_of(ctx, where, &s);
    if (st == VN_OK) *out = vn_so_desc(ctx->inputs[0].dtype, 4, s.out);
    return st;
}

static vn_status d2s_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                          size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    d2s_shape s;
    *workspace = 0;
    vn_status st = d2s_shape_of(ctx, where, &s);
    if (st != VN_OK) return st;
    return perm_view(ctx, where, ctx->inputs[0].dtype, 6, s.src6, s.perm, plan);
}

#define VIEW_OP(name, infer, plan)                                                                 \
    {                                                                                              \
        name, "", 1, 1, 1, VN_DTYPES_ALL, infer, plan, vn_view_free, vn_view_run                   \
    }

const vn_op_def vn_so_transpose_defs[] = {
    VIEW_OP("Transpose", transpose_infer, transpose_plan),
    VIEW_OP("DepthToSpace", d2s_infer, d2s_plan),
    VIEW_OP("SpaceToDepth", d2s_infer, d2s_plan),
};
const int32_t vn_so_transpose_count = sizeof vn_so_transpose_defs / sizeof vn_so_transpose_defs[0];
