/*
 * conv_integer_prepack.c — the pre-pack hooks of ConvInteger and
 * QLinearConv (vinci/ops.h): W packed at plan time as the int8 GEMM's B
 * (every group's panels and column sums back to back) is one blob named by
 * the GEMM's packed layout; re-adopting it plans as usual with W hidden (so
 * nothing is packed) and points the plan at the blob.
 */
#include <stdio.h>
#include <string.h>

#include "ops/conv_integer.h"
#include "ops/prepack.h"

static int32_t ci_export(const void *plan_data, vn_op_blob blobs[VN_OP_MAX_BLOBS],
                         uint64_t *consumed)
{
    const ci_plan *p = plan_data;
    *consumed = 0;
    if (!p || !p->packed || vn_ci_packed_size(p) == 0) return 0;
    memset(&blobs[0], 0, sizeof blobs[0]);
    blobs[0].data = p->packed;
    blobs[0].size = vn_ci_packed_size(p);
    snprintf(blobs[0].layout, sizeof blobs[0].layout, "%s", vn_gemm_packed_b_layout(p->gemm));
    *consumed = 1ull << p->in.w;
    return 1;
}

static vn_status ci_from_blobs(const vn_op_ctx *ctx, const vn_tensor_desc *outputs,
                               const vn_op_blob *blobs, int32_t num_blobs, uint64_t consumed,
                               void **plan_data, size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int32_t w = ctx->def == &vn_qlinear_conv_def ? 3 : 1;
    *plan_data = NULL;
    if (num_blobs != 1 || consumed != (1ull << w))
        return vn_error(VN_ERR_FORMAT, where,
                        "%d packed blobs consuming inputs 0x%llx: the operator packs one (W, "
                        "input %d)",
                        (int)num_blobs, (unsigned long long)consumed, (int)w);
    const void *data[64];
    vn_op_ctx c = vn_prepack_ctx(ctx, consumed, data);
    vn_status st = ctx->def->plan(&c, outputs, plan_data, workspace);
    if (st != VN_OK) return st;
    ci_plan *p = *plan_data;
    if (!p->gemm)
        st = vn_error(VN_ERR_FORMAT, where, "a packed W for a plan without a GEMM");
    else
        st = vn_prepack_check_blob(where, &blobs[0], 0, vn_ci_packed_size(p),
                                   vn_gemm_packed_b_layout(p->gemm));
    if (st != VN_OK) {
        vn_ci_plan_free(p);
        *plan_data = NULL;
        return st;
    }
    p->packed = (void *)blobs[0].data; /* read-only: runs only read the packed W */
    p->packed_borrowed = true;
    return VN_OK;
}

static const vn_op_prepack ci_hooks = {ci_export, ci_from_blobs};

const vn_op_prepack *vn_ci_prepack_hooks(const vn_op_def *def)
{
    return def == &vn_conv_integer_def || def == &vn_qlinear_conv_def ? &ci_hooks : NULL;
}
