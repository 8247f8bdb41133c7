/*
 * col2im.c — Col2Im (ONNX 18): input [N, C * prod(block), L] of sliding
 * blocks (column channel c * K + k, k row-major over the block dims; column
 * l row-major over the grid of block positions) summed back into an image
 * [N, C, image_shape...]: element (c, k, l) adds into position
 * l_d * stride_d - pad_begin_d + k_d * dilation_d of each dim when that lies
 * inside the image. image_shape and block_shape are constant inputs. The
 * sums are in double, one output image per (n, c).
 */
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

typedef struct c2i_plan {
    int32_t nd;
    int64_t N, C, K, L, img_numel;
    int64_t img[VN_MAX_RANK], blk[VN_MAX_RANK], grid[VN_MAX_RANK];
    int64_t stride[VN_MAX_RANK], dil[VN_MAX_RANK], pad[VN_MAX_RANK];
    vn_dtype dt;
} c2i_plan;

static vn_status attr_or_ones(const vn_op_ctx *ctx, const char *where, const char *name,
                              int32_t want, int64_t fill, int64_t *v)
{
    int32_t n = 0;
    bool present = false;
    vn_status st = vn_so_attr_ints(ctx, where, name, v, 2 * VN_MAX_RANK, &n, &present);
    if (st != VN_OK) return st;
    if (!present)
        for (int32_t i = 0; i < want; i++) v[i] = fill;
    else if (n != want)
        return vn_error(VN_ERR_INVALID_ARG, where, "'%s' needs %d values", name, (int)want);
    return VN_OK;
}

static vn_status c2i_params(const vn_op_ctx *ctx, const char *where, c2i_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t pads[2 * VN_MAX_RANK];
    int32_t ni = 0, nb = 0;
    vn_status st = vn_so_const_ints(ctx, where, 1, "image_shape", p->img, VN_MAX_RANK - 2, &ni);
    if (st == VN_OK) st = vn_so_const_ints(ctx, where, 2, "block_shape", p->blk, VN_MAX_RANK, &nb);
    if (st == VN_OK && (ni != nb || ni < 1 || x->rank != 3))
        st = vn_error(VN_ERR_SHAPE, where,
                      "needs input [N, C * prod(block), L] and image_shape, block_shape of one "
                      "length");
    p->nd = ni;
    if (st == VN_OK) st = attr_or_ones(ctx, where, "strides", ni, 1, p->stride);
    if (st == VN_OK) st = attr_or_ones(ctx, where, "dilations", ni, 1, p->dil);
    if (st == VN_OK) st = attr_or_ones(ctx, where, "pads", 2 * ni, 0, pads);
    if (st != VN_OK) return st;
    p->K = 1, p->L = 1, p->img_numel = 1;
    for (int32_t d = 0; d < ni; d++) {
        p->pad[d] = pads[d];
        int64_t span = p->dil[d] * (p->blk[d] - 1) + 1;
        p->grid[d] =
            p->stride[d] > 0 ? (p->img[d] + pads[d] + pads[ni + d] - span) / p->stride[d] + 1 : 0;
        if (p->blk[d] < 1 || p->img[d] < 0 || p->grid[d] < 1)
            return vn_error(VN_ERR_SHAPE, where, "dim %d: no sliding block fits", (int)d);
        p->K *= p->blk[d], p->L *= p->grid[d], p->img_numel *= p->img[d];
    }
    if (x->dims[1] % p->K || x->dims[2] != p->L)
        return vn_error(VN_ERR_SHAPE, where,
                        "input dims [%lld, %lld] do not match %lld block elements and %lld "
                        "block positions",
                        (long long)x->dims[1], (long long)x->dims[2], (long long)p->K,
                        (long long)p->L);
    p->N = x->dims[0], p->C = x->dims[1] / p->K, p->dt = x->dtype;
    return VN_OK;
}

static vn_status c2i_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    c2i_plan p = {0};
    vn_status st = c2i_params(ctx, where, &p);
    if (st != VN_OK) return st;
    int64_t dims[VN_MAX_RANK] = {p.N, p.C};
    memcpy(dims + 2, p.img, (size_t)p.nd * sizeof(int64_t));
    *out = vn_so_desc(ctx->inputs[0].dtype, p.nd + 2, dims);
    return VN_OK;
}

static vn_status c2i_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    c2i_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = c2i_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *workspace = (size_t)vn_ops_max(1, p->img_numel) * sizeof(double);
    *plan = p;
    return VN_OK;
}

/* Image offset of block element k at block position l; -1 outside. */
static int64_t target(const c2i_plan *p, int64_t k, int64_t l)
{
    int64_t off = 0, mul = 1;
    for (int32_t d = p->nd - 1; d >= 0; d--) {
        int64_t kd = k % p->blk[d], ld = l % p->grid[d];
        k /= p->blk[d], l /= p->grid[d];
        int64_t i = ld * p->stride[d] - p->pad[d] + kd * p->dil[d];
        if (i < 0 || i >= p->img[d]) return -1;
        off += i * mul;
        mul *= p->img[d];
    }
    return off;
}

static vn_status c2i_run(const vn_op_run_ctx *ctx)
{
    const c2i_plan *p = ctx->plan;
    double *acc = ctx->workspace;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t c = 0; c < p->C; c++) {
            memset(acc, 0, (size_t)p->img_numel * sizeof *acc);
            for (int64_t k = 0; k < p->K; k++) {
                int64_t row = ((n * p->C + c) * p->K + k) * p->L;
                for (int64_t l = 0; l < p->L; l++) {
                    int64_t t = target(p, k, l);
                    if (t >= 0) acc[t] += vn_cast_load_f64(p->dt, ctx->inputs[0].data, row + l);
                }
            }
            for (int64_t i = 0; i < p->img_numel; i++)
                vn_cast_store_f64(p->dt, ctx->outputs[0].data, (n * p->C + c) * p->img_numel + i,
                                  acc[i]);
        }
    return VN_OK;
}

const vn_op_def vn_col2im_def = {"Col2Im",        "",        3,           3,    1,
                                 VN_DTYPES_FLOAT, c2i_infer, c2i_plan_fn, free, c2i_run};
