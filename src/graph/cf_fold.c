/*
 * cf_fold.c — constant folding of control flow (O1 on): an If, Loop or Scan
 * whose inputs (its own and the outer values its bodies read) are all
 * constants runs once at compile time, and its outputs become constants —
 * with the shapes that run gave, so a dynamic output folds to a fixed one.
 * This is what lets expanded functions such as affine_grid's (an If on the
 * input's rank feeding the next If's Expand shape) compile. Nodes whose
 * fixed-shape outputs exceed VN_CF_FOLD_MAX_BYTES stay computed per run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/cf.h"
#include "graph/exec.h"

#define VN_CF_FOLD_MAX_BYTES ((size_t)16 << 20)

static bool all_constant(const vn_model *m, const vn_cnode *n)
{
    for (int32_t k = 0; k < n->num_inputs; k++)
        if (n->inputs[k] >= 0 && !vn_cf_fixed(&m->values[n->inputs[k]])) return false;
    return true;
}

/* A context just big enough to run node `node` of a model under construction. */
static vn_status fold_ctx(const vn_model *m, vn_model_ctx *c)
{
    size_t nv = (size_t)m->num_values + 1;
    c->model = m;
    c->ptr = calloc(nv, sizeof *c->ptr);
    c->dyn_desc = calloc(nv, sizeof *c->dyn_desc);
    c->dyn_buf = calloc(nv, sizeof *c->dyn_buf);
    c->dyn_cap = calloc(nv, sizeof *c->dyn_cap);
    c->cf = calloc((size_t)m->num_nodes + 1, sizeof *c->cf);
    if (!c->ptr || !c->dyn_desc || !c->dyn_buf || !c->dyn_cap || !c->cf)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_compile", "%s: no memory", m->name);
    for (int32_t v = 0; v < m->num_values; v++)
        if (m->values[v].kind == VN_CV_CONST) c->ptr[v] = (void *)m->values[v].data;
    return VN_OK;
}

static void fold_ctx_free(const vn_model *m, vn_model_ctx *c)
{
    for (int32_t v = 0; c->dyn_buf && v < m->num_values; v++) vn_aligned_free(c->dyn_buf[v]);
    for (int32_t i = 0; c->cf && i < m->num_nodes; i++) vn_cf_ctx_free(c->cf[i]);
    free(c->ptr);
    free(c->dyn_desc);
    free(c->dyn_buf);
    free(c->dyn_cap);
    free(c->cf);
}

/* The fixed-shape outputs fit the folding limit. */
static bool small(const vn_model *m, const vn_cnode *n)
{
    size_t bytes = 0;
    for (int32_t k = 0; k < n->num_outputs; k++) {
        const vn_cvalue *v = &m->values[n->outputs[k]];
        if (!v->dynamic) bytes += vn_cg_desc_bytes(&v->desc);
    }
    return bytes <= VN_CF_FOLD_MAX_BYTES;
}

/* Static outputs run into zeroed constants; dynamic ones into the context. */
static vn_status run(vn_model *m, int32_t node, vn_model_ctx *c)
{
    const vn_cnode *n = &m->nodes[node];
    for (int32_t k = 0; k < n->num_outputs; k++) {
        int32_t v = n->outputs[k];
        vn_tensor_desc d = m->values[v].desc;
        if (m->values[v].dynamic) continue;
        vn_status st = vn_cg_set_const(m, v, &d, NULL);
        if (st != VN_OK) return st;
        c->ptr[v] = (void *)m->values[v].data;
    }
    return vn_cf_run(m, c, node);
}

/* Dynamic outputs become constants of the shape this run gave them. */
static vn_status settle(vn_model *m, int32_t node, vn_model_ctx *c)
{
    const vn_cnode *n = &m->nodes[node];
    for (int32_t k = 0; k < n->num_outputs; k++) {
        int32_t v = n->outputs[k];
        if (!m->values[v].dynamic) continue;
        vn_status st = vn_cg_set_const(m, v, &c->dyn_desc[v], c->dyn_buf[v]);
        m->values[v].dynamic = false;
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

vn_status vn_cf_fold(vn_model *m, int32_t node, vn_pass_report *r, bool *changed)
{
    *changed = false;
    if (!all_constant(m, &m->nodes[node]) || !small(m, &m->nodes[node])) return VN_OK;
    vn_model_ctx c;
    memset(&c, 0, sizeof c);
    vn_status st = fold_ctx(m, &c);
    if (st == VN_OK) st = run(m, node, &c);
    if (st == VN_OK) st = settle(m, node, &c);
    fold_ctx_free(m, &c);
    char label[256];
    vn_cg_label(m, node, label, sizeof label);
    if (st != VN_OK) {
        char why[700];
        snprintf(why, sizeof why, "%s", vn_last_error());
        return vn_error(st, "vn_model_compile", "%s: %s: constant folding failed: %s", m->name,
                        label, why);
    }
    m->nodes[node].dead = true;
    *changed = true;
    vn_pass_note(r, label);
    return VN_OK;
}
