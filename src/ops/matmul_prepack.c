/*
 * matmul_prepack.c — the pre-pack hooks of MatMul, Gemm and
 * vinci::FusedMatMul (vinci/ops.h): the constant B packed at plan time is
 * one blob (every outer launch's panels back to back), named by the GEMM's
 * packed layout; re-adopting it plans as usual with B hidden (so nothing is
 * packed) and points the plan at the blob.
 */
#include <stdio.h>
#include <string.h>

#include "ops/matmul.h"
#include "ops/prepack.h"

#define B_INPUT 1 /* B is input 1 of every operator of the family */

/* Bytes of the whole packed B the plan's shapes need. */
static size_t packed_total(const vn_mm_plan *p)
{
    int64_t packs = p->lay.b_outer ? p->lay.outer_count : 1;
    return vn_gemm_packed_b_size(p->gemm) * (size_t)(packs > 0 ? packs : 1);
}

static int32_t mm_export(const void *plan_data, vn_op_blob blobs[VN_OP_MAX_BLOBS],
                         uint64_t *consumed)
{
    const vn_mm_plan *p = plan_data;
    *consumed = 0;
    if (!p || !p->packed_b || !p->gemm || packed_total(p) == 0) return 0;
    memset(&blobs[0], 0, sizeof blobs[0]);
    blobs[0].data = p->packed_b;
    blobs[0].size = packed_total(p);
    snprintf(blobs[0].layout, sizeof blobs[0].layout, "%s", vn_gemm_packed_b_layout(p->gemm));
    *consumed = 1u << B_INPUT;
    return 1;
}

static vn_status mm_from_blobs(const vn_op_ctx *ctx, const vn_tensor_desc *outputs,
                               const vn_op_blob *blobs, int32_t num_blobs, uint64_t consumed,
                               void **plan_data, size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    *plan_data = NULL;
    if (num_blobs != 1 || consumed != (1u << B_INPUT))
        return vn_error(VN_ERR_FORMAT, where,
                        "%d packed blobs consuming inputs 0x%llx: the operator packs one (B, "
                        "input 1)",
                        (int)num_blobs, (unsigned long long)consumed);
    const void *data[64];
    vn_op_ctx c = vn_prepack_ctx(ctx, consumed, data);
    vn_status st = ctx->def->plan(&c, outputs, plan_data, workspace);
    if (st != VN_OK) return st;
    vn_mm_plan *p = *plan_data;
    if (!p->gemm) {
        st = vn_error(VN_ERR_FORMAT, where, "a packed B for a plan without a GEMM");
    } else {
        st = vn_prepack_check_blob(where, &blobs[0], 0, packed_total(p),
                                   vn_gemm_packed_b_layout(p->gemm));
    }
    if (st != VN_OK) {
        ctx->def->plan_free(p);
        *plan_data = NULL;
        return st;
    }
    p->packed_b = (void *)blobs[0].data; /* read-only: runs only read packed B */
    p->packed_one = vn_gemm_packed_b_size(p->gemm);
    p->packed_borrowed = true;
    return VN_OK;
}

static const vn_op_prepack mm_hooks = {mm_export, mm_from_blobs};

const vn_op_prepack *vn_mm_prepack_hooks(const vn_op_def *def)
{
    bool ours = def == &vn_matmul_def || def == &vn_gemm_op_def || def == &vn_fused_matmul_def;
    return ours ? &mm_hooks : NULL;
}
