/*
 * fold_const.c — constant folding: a node whose inputs are all constant runs
 * once at compile time, through its operator's own plan and run on the
 * model's device, and its outputs become constants of the model.
 *
 * Not folded: nodes without inputs, random operators, and nodes whose
 * outputs would add more than VN_FOLD_MAX_BYTES of constants (an Expand or
 * ConstantOfShape can turn a few bytes into a large tensor that is cheaper
 * to compute per run than to store).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/compile.h"

#define VN_FOLD_MAX_BYTES ((size_t)16 << 20)
#define MAXIO             64

static bool foldable(const vn_model *m, const vn_cnode *n)
{
    if (!n->def || !n->def->run || n->cf || n->num_inputs < 1 || n->num_outputs > MAXIO)
        return false;
    if (!strncmp(n->op_type, "Random", 6) || !strcmp(n->op_type, "Dropout") ||
        !strcmp(n->op_type, "Bernoulli") || !strcmp(n->op_type, "Multinomial"))
        return false;
    bool any = false;
    for (int32_t k = 0; k < n->num_inputs; k++) {
        int32_t v = n->inputs[k];
        if (v < 0) continue;
        if (m->values[v].kind != VN_CV_CONST) return false;
        any = true;
    }
    size_t bytes = 0;
    for (int32_t k = 0; k < n->num_outputs; k++) {
        const vn_tensor_desc *d = &m->values[n->outputs[k]].desc;
        int64_t numel = vn_desc_numel(d);
        if (numel < 0 || (uint64_t)numel > VN_FOLD_MAX_BYTES) return false;
        bytes += (size_t)numel * vn_dtype_size(d->dtype);
    }
    return any && bytes <= VN_FOLD_MAX_BYTES;
}

/* Outputs become zeroed constants first; the run writes into them. */
static vn_status run_node(vn_model *m, int32_t node, const vn_op_ctx *ctx, void *plan, void *ws)
{
    const vn_cnode *n = &m->nodes[node];
    vn_tensor in[MAXIO], out[MAXIO];
    bool any_out = false;
    for (int32_t k = 0; k < n->num_inputs; k++)
        in[k] = (vn_tensor){ctx->inputs[k], (void *)ctx->input_data[k]};
    for (int32_t k = 0; k < n->num_outputs; k++) {
        int32_t v = n->outputs[k];
        vn_tensor_desc d = m->values[v].desc;
        vn_status st = vn_cg_set_const(m, v, &d, NULL);
        if (st != VN_OK) return st;
        out[k] = (vn_tensor){d, (void *)m->values[v].data};
        any_out |= vn_desc_numel(&d) > 0;
    }
    if (!any_out) return VN_OK;
    vn_op_run_ctx rc = {n->def, m->device, plan, in, n->num_inputs, out, n->num_outputs, ws, NULL};
    return n->def->run(&rc);
}

static vn_status fold(vn_model *m, int32_t node, const char *label)
{
    const vn_cnode *n = &m->nodes[node];
    vn_tensor_desc in[MAXIO], out[MAXIO];
    const void *data[MAXIO];
    vn_attrs attrs;
    vn_op_ctx ctx;
    vn_cg_op_ctx(m, node, in, data, &attrs, &ctx);
    for (int32_t k = 0; k < n->num_outputs; k++) out[k] = m->values[n->outputs[k]].desc;
    void *plan = NULL, *ws = NULL;
    size_t ws_bytes = 0;
    vn_status st = n->def->plan ? n->def->plan(&ctx, out, &plan, &ws_bytes) : VN_OK;
    if (st == VN_OK && ws_bytes && !(ws = vn_aligned_alloc(ws_bytes, 64)))
        st = VN_ERR_OUT_OF_MEMORY;
    if (st == VN_OK) st = run_node(m, node, &ctx, plan, ws);
    vn_aligned_free(ws);
    if (plan && n->def->plan_free) n->def->plan_free(plan);
    if (st == VN_OK) return VN_OK;
    char why[700];
    snprintf(why, sizeof why, "%s", vn_last_error());
    return vn_error(st, "vn_model_compile", "%s: %s: constant folding failed: %s", m->name, label,
                    why);
}

vn_status vn_fold_const(vn_model *m, int32_t node, vn_pass_report *r, bool *changed)
{
    *changed = false;
    if (!foldable(m, &m->nodes[node])) return VN_OK;
    char label[256];
    vn_cg_label(m, node, label, sizeof label);
    vn_status st = fold(m, node, label);
    if (st != VN_OK) return st;
    m->nodes[node].dead = true;
    *changed = true;
    vn_pass_note(r, label);
    return VN_OK;
}
