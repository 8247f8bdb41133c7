/*
 * compile_concat.c — concatenation in place: a Concat whose inputs are
 * contiguous byte ranges of its output has its producers write straight
 * into those ranges, and copies nothing.
 *
 * The range of input k starts at the bytes of inputs 0..k-1 when every
 * dimension before the axis is 1 (NC1HWC0 channel concats at batch 1, the
 * Fire modules of SqueezeNet, Inception branches). The memory plan
 * (compile_memory.c) then gives the output one arena item and each input
 * a sub-range of it; the Concat node is an alias and runs nothing.
 *
 * An input qualifies when it is an arena value (not a model input, output
 * or constant) that a kernel-running node writes (not another alias, so no
 * value ever needs two places), it appears once, it is not empty, and the
 * ranges before the last start on VN_MEMPLAN_ALIGN boundaries (kernels may
 * assume aligned tensors).
 */
#include <stdint.h>
#include <string.h>

#include "graph/compile.h"
#include "graph/pass_fuse.h"
#include "graph/plan_memory.h"

/* Concat with every dimension before its axis of extent 1. */
static bool concat_is_contiguous(const vn_model *m, const vn_cnode *n)
{
    if (n->domain[0] || strcmp(n->op_type, "Concat") || n->num_outputs != 1 || n->num_inputs < 1 ||
        n->outputs[0] < 0)
        return false;
    int64_t ax = vn_fuse_attr_int(n, "axis", INT64_MIN); /* required by Concat */
    const vn_tensor_desc *y = &m->values[n->outputs[0]].desc;
    if (ax == INT64_MIN || y->rank < 1) return false;
    if (ax < 0) ax += y->rank;
    if (ax < 0 || ax >= y->rank) return false;
    for (int64_t d = 0; d < ax; d++)
        if (y->dims[d] != 1) return false;
    return true;
}

bool vn_cg_concat_in_place(const vn_model *m, int32_t i, const bool *claimed)
{
    const vn_cnode *n = &m->nodes[i];
    if (!concat_is_contiguous(m, n) || m->values[n->outputs[0]].mem != VN_MEM_ARENA) return false;
    for (int32_t k = 0; k < n->num_inputs; k++) {
        int32_t v = n->inputs[k];
        if (v < 0 || claimed[v]) return false;
        const vn_cvalue *x = &m->values[v];
        if (x->mem != VN_MEM_ARENA || x->producer < 0 || m->nodes[x->producer].alias ||
            m->nodes[x->producer].cf || !vn_cg_desc_bytes(&x->desc))
            return false;
        if (k + 1 < n->num_inputs && vn_cg_desc_bytes(&x->desc) % VN_MEMPLAN_ALIGN) return false;
        for (int32_t j = 0; j < k; j++)
            if (n->inputs[j] == v) return false;
    }
    return true;
}

bool vn_cg_concat_shares(const vn_model *m, int32_t i)
{
    const vn_cnode *n = &m->nodes[i];
    if (!concat_is_contiguous(m, n)) return false;
    const vn_cvalue *y = &m->values[n->outputs[0]];
    size_t at = y->offset;
    for (int32_t k = 0; k < n->num_inputs; k++) {
        const vn_cvalue *x = n->inputs[k] >= 0 ? &m->values[n->inputs[k]] : NULL;
        if (y->mem != VN_MEM_ARENA || !x || x->mem != VN_MEM_ARENA || x->offset != at) return false;
        at += vn_cg_desc_bytes(&x->desc);
    }
    return at == y->offset + vn_cg_desc_bytes(&y->desc);
}
