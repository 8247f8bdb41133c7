/*
 * cf_build.c — a control-flow node of a model under construction gets its
 * vn_cf: the subgraphs from its GRAPH attributes, where each subgraph's outer
 * values sit among the node's inputs, the Scan attributes, and the checks
 * that need no shapes (input and output counts), with errors naming the node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/cf.h"

#define W "vn_model_compile"

int32_t vn_cf_kind(const char *op_type, const char *domain)
{
    if (!op_type || (domain && domain[0] && strcmp(domain, "ai.onnx"))) return 0;
    if (!strcmp(op_type, "If")) return VN_CF_IF;
    if (!strcmp(op_type, "Loop")) return VN_CF_LOOP;
    if (!strcmp(op_type, "Scan")) return VN_CF_SCAN;
    return 0;
}

int32_t vn_cf_outer_values(const vn_gbody *body, int32_t *out)
{
    int32_t n = 0;
    for (int32_t v = 0; v < body->num_values; v++)
        if (body->values[v].kind == VN_GV_OUTER) {
            if (out) out[n] = v;
            n++;
        }
    return n;
}

static const vn_gattr *find_attr(const vn_gnode *n, const char *name)
{
    for (int32_t a = 0; a < n->num_attrs; a++)
        if (!strcmp(n->attrs[a].name, name)) return &n->attrs[a];
    return NULL;
}

typedef struct where {
    const vn_model *m;
    char label[256];
} where;

static vn_status fail(const where *w, const char *fmt, const char *a, int x, int y)
{
    char what[300];
    snprintf(what, sizeof what, fmt, a, x, y);
    return vn_error(VN_ERR_FORMAT, W, "%s: %s: %s", w->m->name, w->label, what);
}

/* Body `attr` of src: its outer values' positions among the node's inputs. */
static vn_status add_body(vn_cf *cf, const where *w, const vn_gbody *b, const vn_gnode *src,
                          const char *attr, int32_t num_explicit)
{
    const vn_gattr *a = find_attr(src, attr);
    if (!a || a->type != VN_GATTR_GRAPH || a->count != 1)
        return fail(w, "attribute '%s' is %s, not a graph", attr, a ? a->type : 0, 0);
    vn_cf_body *cb = &cf->bodies[cf->num_bodies++];
    cb->body = a->graphs[0];
    cb->attr = attr;
    snprintf(cb->name, sizeof cb->name, "%s: %s %s", w->m->name, w->label, attr);
    cb->num_inputs = cb->body->num_inputs;
    cb->num_outer = vn_cf_outer_values(cb->body, NULL);
    cb->outer_pos = malloc(((size_t)cb->num_outer + 1) * sizeof *cb->outer_pos);
    int32_t *outer = malloc(((size_t)cb->num_outer + 1) * sizeof *outer);
    if (!cb->outer_pos || !outer) {
        free(outer);
        return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", w->m->name);
    }
    vn_cf_outer_values(cb->body, outer);
    for (int32_t j = 0; j < cb->num_outer; j++) {
        const char *name = cb->body->values[outer[j]].name;
        cb->outer_pos[j] = -1;
        for (int32_t p = 0; p < src->num_implicit && cb->outer_pos[j] < 0; p++)
            if (!strcmp(b->values[src->implicit[p]].name, name))
                cb->outer_pos[j] = num_explicit + p;
    }
    free(outer);
    for (int32_t j = 0; j < cb->num_outer; j++)
        if (cb->outer_pos[j] < 0) /* the linker made every outer name an implicit input */
            return vn_error(VN_ERR_INTERNAL, W, "%s: %s: outer value %d of %s is not an input",
                            w->m->name, w->label, (int)j, attr);
    return VN_OK;
}

static vn_status scan_ints(const vn_gnode *src, const char *name, int32_t want, int64_t **out,
                           const where *w)
{
    const vn_gattr *a = find_attr(src, name);
    *out = calloc((size_t)want + 1, sizeof **out);
    if (!*out) return VN_ERR_OUT_OF_MEMORY;
    if (!a) return VN_OK; /* defaults: axis 0, forward */
    if (a->type != VN_GATTR_INTS || a->count != want)
        return fail(w, "attribute '%s' has %d values, expected %d", name, a->count, want);
    memcpy(*out, a->ints, (size_t)want * sizeof **out);
    return VN_OK;
}

/* Scan: N states, then num_scan_inputs scan inputs (opset 8: after sequence_lens). */
static vn_status scan_attrs(vn_cf *cf, const vn_gnode *src, const where *w)
{
    const vn_gattr *a = find_attr(src, "num_scan_inputs");
    int32_t lead = cf->opset < 9 ? 1 : 0;
    if (!a || a->type != VN_GATTR_INT || a->i < 1 || a->i > cf->num_explicit - lead)
        return fail(w, "num_scan_inputs must be an int in 1..%d%s", "", cf->num_explicit - lead, 0);
    cf->num_scan_inputs = (int32_t)a->i;
    int32_t states = cf->num_explicit - lead - cf->num_scan_inputs;
    int32_t outs = src->num_outputs - states;
    vn_status st = scan_ints(src, cf->opset < 9 ? "directions" : "scan_input_directions",
                             cf->num_scan_inputs, &cf->in_dirs, w);
    if (st == VN_OK) st = scan_ints(src, "scan_input_axes", cf->num_scan_inputs, &cf->in_axes, w);
    if (st == VN_OK && outs < 0)
        return fail(w, "%s%d outputs, fewer than its %d states", "", src->num_outputs, states);
    if (st == VN_OK) st = scan_ints(src, "scan_output_axes", outs, &cf->out_axes, w);
    if (st == VN_OK) st = scan_ints(src, "scan_output_directions", outs, &cf->out_dirs, w);
    return st;
}

/* Input / output counts of the node against its bodies. */
static vn_status check_counts(const vn_cf *cf, const vn_gnode *src, const where *w)
{
    int32_t outs = src->num_outputs, ex = cf->num_explicit;
    for (int32_t i = 0; i < cf->num_bodies; i++) {
        const vn_cf_body *cb = &cf->bodies[i];
        const vn_gbody *g = cb->body;
        int32_t want_in = cf->kind == VN_CF_IF     ? 0
                          : cf->kind == VN_CF_LOOP ? ex
                                                   : ex - (cf->opset < 9 ? 1 : 0);
        int32_t want_out = cf->kind == VN_CF_LOOP ? outs + 1 : outs;
        if (g->num_inputs != want_in)
            return fail(w, "%s has %d inputs, expected %d", cb->attr, g->num_inputs, want_in);
        if (g->num_outputs != want_out)
            return fail(w, "%s has %d outputs, expected %d (the node's outputs)", cb->attr,
                        g->num_outputs, want_out);
    }
    if (cf->kind == VN_CF_IF && ex != 1) return fail(w, "%shas %d inputs, expected %d", "", ex, 1);
    if (cf->kind == VN_CF_LOOP && (ex < 2 || outs < ex - 2))
        return fail(w, "%s%d inputs and %d outputs: Loop takes M, cond, the carried values", "", ex,
                    outs);
    return VN_OK;
}

static vn_status fill(vn_cf *cf, vn_model *m, const vn_gbody *b, const vn_gnode *src, int32_t node)
{
    where w = {m, ""};
    vn_cg_label(m, node, w.label, sizeof w.label);
    vn_status st;
    if (cf->kind == VN_CF_IF) {
        st = add_body(cf, &w, b, src, "then_branch", cf->num_explicit);
        if (st == VN_OK) st = add_body(cf, &w, b, src, "else_branch", cf->num_explicit);
    } else {
        st = add_body(cf, &w, b, src, "body", cf->num_explicit);
    }
    if (st == VN_OK && cf->kind == VN_CF_SCAN) st = scan_attrs(cf, src, &w);
    return st == VN_OK ? check_counts(cf, src, &w) : st;
}

vn_status vn_cf_create(vn_model *m, const vn_gbody *b, const vn_gnode *src, int32_t node,
                       int32_t num_explicit)
{
    vn_cf *cf = calloc(1, sizeof *cf);
    void *a = m->cfs;
    if (!cf || vn_gmem_grow(&m->mem, &a, &m->cap_cfs, m->num_cfs + 1, sizeof *m->cfs)) {
        free(cf);
        return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", m->name);
    }
    m->cfs = a;
    m->cfs[m->num_cfs++] = cf; /* freed with the model from here on */
    for (int32_t i = 0; i < 2; i++) pthread_mutex_init(&cf->bodies[i].lock, NULL);
    cf->kind = vn_cf_kind(src->op_type, src->domain);
    cf->num_explicit = num_explicit;
    cf->opset = src->opset;
    cf->static_trips = -1;
    cf->graph = m->graph;
    cf->opt_level = m->opt_level;
    cf->precision = m->precision;
    cf->device = m->device;
    m->nodes[node].cf = cf;
    return fill(cf, m, b, src, node);
}

void vn_cf_free(vn_cf *cf)
{
    if (!cf) return;
    for (int32_t i = 0; i < 2; i++) {
        vn_cf_body *cb = &cf->bodies[i];
        for (int32_t e = 0; e < cb->num_entries; e++) {
            vn_model_destroy(cb->entries[e].model);
            free(cb->entries[e].key);
            free(cb->entries[e].values);
        }
        free(cb->entries);
        free(cb->outer_pos);
        pthread_mutex_destroy(&cb->lock);
    }
    free(cf->in_axes);
    free(cf->in_dirs);
    free(cf->out_axes);
    free(cf->out_dirs);
    free(cf);
}
