/*
 * cf_if.c — If at run time: the condition picks then_branch or else_branch;
 * the branch's model runs with its outer values, writing straight into the
 * node's outputs where their shapes are fixed (dynamic ones are copied into
 * the context's buffers at this run's shape).
 */
#include <stdlib.h>

#include "graph/cf.h"
#include "graph/exec.h"

vn_status vn_cf_if_run(const vn_model *m, vn_model_ctx *c, int32_t node)
{
    const vn_cnode *n = &m->nodes[node];
    vn_tensor cond = vn_exec_value(m, c, n->inputs[0]);
    int64_t taken;
    vn_status st = vn_cf_scalar(m, node, "the condition", &cond, VN_BOOL, &taken);
    if (st != VN_OK) return st;
    void **dst = calloc((size_t)n->num_outputs + 1, sizeof *dst);
    if (!dst) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_run", "%s: no memory", m->name);
    for (int32_t k = 0; k < n->num_outputs; k++)
        if (!m->values[n->outputs[k]].dynamic) dst[k] = c->ptr[n->outputs[k]];
    const vn_model *sub;
    vn_model_ctx *sctx;
    st = vn_cf_run_body(m, c, node, taken ? 0 : 1, NULL, dst, &sub, &sctx);
    for (int32_t k = 0; k < n->num_outputs && st == VN_OK; k++) {
        vn_tensor r = vn_exec_result(sub, sctx, k);
        st = vn_cf_deliver(m, c, node, k, &r);
    }
    free(dst);
    return st;
}
