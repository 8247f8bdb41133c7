/*
 * compile_build.c — a model under construction from a graph's main body.
 *
 * The graph's values become model values on first reference (so unused
 * initializers cost nothing); Constant nodes disappear into constant values;
 * the remaining nodes are copied in the graph's topological order, which the
 * passes preserve (compile.h). Names, attributes and initializer bytes are
 * borrowed from the graph, which must outlive the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/cf.h"
#include "graph/compile.h"
#include "graph/infer.h"

#define W "vn_model_compile"

int32_t vn_cg_add_value(vn_model *m, const char *name, int32_t kind)
{
    void *a = m->values;
    if (m->num_values >= VN_IR_MAX_VALUES ||
        vn_gmem_grow(&m->mem, &a, &m->cap_values, m->num_values + 1, sizeof(vn_cvalue))) {
        vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no room for value %d", m->name, (int)m->num_values);
        return -1;
    }
    m->values = a;
    vn_cvalue *v = &m->values[m->num_values];
    memset(v, 0, sizeof *v);
    v->name = name ? name : "";
    v->desc.rank = -1;
    v->kind = kind;
    v->producer = v->input_index = v->output_index = v->io_index = -1;
    return m->num_values++;
}

const char *vn_cg_label(const vn_model *m, int32_t node, char *buf, size_t size)
{
    const vn_cnode *n = &m->nodes[node];
    const char *dom = n->domain && n->domain[0] ? n->domain : NULL;
    if (n->name && n->name[0])
        snprintf(buf, size, "node '%s' (%s%s%s)", n->name, dom ? dom : "", dom ? "::" : "",
                 n->op_type);
    else
        snprintf(buf, size, "node #%d (%s%s%s)", (int)node, dom ? dom : "", dom ? "::" : "",
                 n->op_type);
    return buf;
}

vn_status vn_cg_set_const(vn_model *m, int32_t v, const vn_tensor_desc *desc, const void *data)
{
    vn_cvalue *val = &m->values[v];
    int64_t numel = vn_desc_numel(desc);
    size_t bytes = numel > 0 ? (size_t)numel * vn_dtype_size(desc->dtype) : 0;
    void *copy = bytes ? vn_gmem_alloc(&m->mem, bytes) : NULL;
    if (bytes && !copy)
        return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory for constant '%s' (%zu bytes)",
                        m->name, val->name, bytes);
    if (copy && data) memcpy(copy, data, bytes);
    val->kind = VN_CV_CONST;
    val->desc = *desc;
    val->known = true;
    val->data = copy;
    val->owned = copy != NULL;
    val->nbytes = bytes;
    val->producer = -1;
    return VN_OK;
}

void vn_cg_replace_uses(vn_model *m, int32_t from, int32_t to)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        vn_cnode *n = &m->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->num_inputs; k++)
            if (n->inputs[k] == from) n->inputs[k] = to;
    }
}

int32_t vn_cg_num_uses(const vn_model *m, int32_t v)
{
    int32_t uses = 0;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->num_inputs; k++) uses += n->inputs[k] == v;
    }
    return uses;
}

/* ---- from the graph ---------------------------------------------------------------- */

typedef struct builder {
    vn_graph *g;
    const vn_gbody *b; /* the main graph or a subgraph */
    vn_model *m;
    int32_t *map; /* body value -> model value, -1 until referenced */
} builder;

/* The model value for graph value gv, created on first use. */
static int32_t value_of(builder *bd, int32_t gv)
{
    if (gv < 0) return -1;
    if (bd->map[gv] >= 0) return bd->map[gv];
    const vn_gvalue *src = &bd->b->values[gv];
    int32_t kind = src->constant                                          ? VN_CV_CONST
                   : src->kind == VN_GV_INPUT || src->kind == VN_GV_OUTER ? VN_CV_INPUT
                                                                          : VN_CV_ACT;
    int32_t v = vn_cg_add_value(bd->m, src->name, kind);
    if (v < 0) return -2;
    vn_cvalue *val = &bd->m->values[v];
    if (src->constant) {
        val->desc = src->constant->desc;
        val->data = src->constant->data; /* borrowed: the graph owns it */
        val->owned = false;
        val->nbytes = src->constant->nbytes;
        val->known = true;
    } else if (kind == VN_CV_INPUT) {
        val->desc = src->desc; /* bound by vn_infer_bind_inputs */
        val->known = true;
    }
    bd->map[gv] = v;
    return v;
}

static vn_status map_list(builder *bd, const int32_t *gvals, int32_t n, int32_t **out)
{
    *out = vn_gmem_alloc(&bd->m->mem, (size_t)(n ? n : 1) * sizeof **out);
    if (!*out) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t k = 0; k < n; k++)
        if (((*out)[k] = value_of(bd, gvals[k])) < -1) return VN_ERR_OUT_OF_MEMORY;
    return VN_OK;
}

/* A control-flow node's inputs: its ONNX inputs as they are (omitted ones
 * keep their place), then the outer values its subgraphs read. */
static vn_status cf_inputs(builder *bd, const vn_gnode *src, vn_cnode *n)
{
    int32_t total = src->num_inputs + src->num_implicit;
    vn_status st = map_list(bd, src->inputs, src->num_inputs, &n->inputs);
    int32_t *all = vn_gmem_alloc(&bd->m->mem, (size_t)(total ? total : 1) * sizeof *all);
    if (st != VN_OK || !all) return VN_ERR_OUT_OF_MEMORY;
    memcpy(all, n->inputs, (size_t)src->num_inputs * sizeof *all);
    for (int32_t k = 0; k < src->num_implicit; k++)
        if ((all[src->num_inputs + k] = value_of(bd, src->implicit[k])) < 0)
            return VN_ERR_OUT_OF_MEMORY;
    n->inputs = all;
    n->num_inputs = total;
    return VN_OK;
}

static vn_status add_node(builder *bd, int32_t gnode)
{
    const vn_gnode *src = &bd->b->nodes[gnode];
    bool cf = vn_cf_kind(src->op_type, src->domain) != 0;
    vn_model *m = bd->m;
    void *a = m->nodes;
    if (vn_gmem_grow(&m->mem, &a, &m->cap_nodes, m->num_nodes + 1, sizeof(vn_cnode)))
        return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no room for node %d", m->name,
                        (int)m->num_nodes);
    m->nodes = a;
    int32_t id = m->num_nodes++;
    vn_cnode *n = &m->nodes[id];
    memset(n, 0, sizeof *n);
    n->name = src->name ? src->name : "";
    n->op_type = src->op_type;
    n->domain = src->domain;
    n->def = src->def;
    n->attrs = src->reg_attrs;
    n->num_attrs = src->num_reg_attrs;
    int32_t count = src->num_inputs;
    while (!cf && count > 0 && src->inputs[count - 1] < 0) count--; /* trailing omitted inputs */
    n->num_inputs = count;
    n->num_outputs = src->num_outputs;
    vn_status st = cf ? cf_inputs(bd, src, n) : map_list(bd, src->inputs, count, &n->inputs);
    if (st == VN_OK) st = map_list(bd, src->outputs, src->num_outputs, &n->outputs);
    if (st != VN_OK) return vn_error(st, W, "%s: no memory for node %d", m->name, (int)id);
    for (int32_t k = 0; k < n->num_outputs; k++) {
        int32_t v = n->outputs[k];
        if (v >= 0) m->values[v].producer = id;
    }
    return cf ? vn_cf_create(m, bd->b, src, id, src->num_inputs) : VN_OK;
}

/* A subgraph's model takes its outer values as inputs after its own. */
static vn_status add_io(builder *bd)
{
    const vn_gbody *b = bd->b;
    vn_model *m = bd->m;
    int32_t outer = b->parent ? vn_cf_outer_values(b, NULL) : 0, n = b->num_inputs + outer;
    int32_t *in = malloc(((size_t)n + 1) * sizeof *in);
    if (!in) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", m->name);
    memcpy(in, b->inputs, (size_t)b->num_inputs * sizeof *in);
    if (outer) vn_cf_outer_values(b, in + b->num_inputs);
    vn_status st = map_list(bd, in, n, &m->inputs);
    free(in);
    if (st == VN_OK) st = map_list(bd, b->outputs, b->num_outputs, &m->outputs);
    if (st != VN_OK) return vn_error(st, W, "%s: no memory for the model's inputs", m->name);
    m->num_inputs = n;
    m->num_outputs = b->num_outputs;
    for (int32_t i = 0; i < m->num_inputs; i++) m->values[m->inputs[i]].input_index = i;
    for (int32_t i = m->num_outputs - 1; i >= 0; i--) /* the first occurrence wins */
        m->values[m->outputs[i]].output_index = i;
    return VN_OK;
}

static vn_status build(builder *bd)
{
    const vn_gbody *b = bd->b;
    vn_status st = add_io(bd); /* inputs first, so their indices are stable */
    for (int32_t i = 0; i < b->num_nodes && st == VN_OK; i++) {
        int32_t gn = b->order[i];
        if (!vn_graph_builtin_op(&b->nodes[gn])) st = add_node(bd, gn);
    }
    return st;
}

bool vn_cg_specialisable(const vn_tensor *t)
{
    int64_t n = vn_desc_numel(&t->desc);
    vn_dtype d = t->desc.dtype;
    bool integral = d == VN_I64 || d == VN_I32 || d == VN_BOOL;
    /* short float vectors are parameters (Resize's scales and roi), not data */
    bool params = t->desc.rank == 1 && (d == VN_F32 || d == VN_F16) && n <= 16;
    return (integral || params || t->desc.rank == 0) && n >= 0 && n <= VN_SPECIALISE_MAX_ELEMS &&
           (t->data || n == 0);
}

static bool same_desc(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank && d < VN_MAX_RANK; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Input k read as the constant t: a new constant value takes over every read
 * (the input itself stays, so the run's signature does not change). */
static vn_status specialise_input(vn_model *m, int32_t k, const vn_tensor *t)
{
    int32_t v = m->inputs[k];
    char a[160], b[160];
    if (!same_desc(&m->values[v].desc, &t->desc))
        return vn_error(VN_ERR_SHAPE, W, "%s: input '%s': value given as %s, bound as %s", m->name,
                        m->values[v].name, vn_desc_format(&t->desc, a, sizeof a),
                        vn_desc_format(&m->values[v].desc, b, sizeof b));
    int32_t c = vn_cg_add_value(m, m->values[v].name, VN_CV_CONST);
    if (c < 0) return VN_ERR_OUT_OF_MEMORY;
    vn_status st = vn_cg_set_const(m, c, &t->desc, t->data);
    if (st == VN_OK) vn_cg_replace_uses(m, v, c);
    return st;
}

static vn_status specialise(vn_model *m, vn_cg_values values)
{
    vn_status st = VN_OK;
    for (int32_t i = 0; i < values.n && st == VN_OK; i++) {
        const vn_named_tensor *t = &values.v[i];
        if (!t->name || !vn_cg_specialisable(&t->tensor)) continue;
        for (int32_t k = 0; k < m->num_inputs && st == VN_OK; k++)
            if (!strcmp(m->values[m->inputs[k]].name, t->name))
                st = specialise_input(m, k, &t->tensor);
    }
    return st;
}

/* The model of body b, specialised on `values` (by name). */
static vn_status build_model(vn_graph *g, const vn_gbody *b, const vn_compile_options *opt,
                             const char *name, vn_cg_values values, vn_model **out)
{
    vn_status st = VN_OK;
    vn_model *m = calloc(1, sizeof *m);
    builder bd = {g, b, m, malloc(((size_t)b->num_values + 1) * sizeof(int32_t))};
    if (!m || !bd.map) {
        free(m);
        free(bd.map);
        return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory for the model", name);
    }
    memset(bd.map, 0xff, ((size_t)b->num_values + 1) * sizeof(int32_t));
    m->name = name;
    m->graph = g;
    m->opt_level = opt->opt_level;
    m->precision = opt->precision;
    m->device = opt->device;
    if (!m->device) st = vn_device_default(&m->device);
    if (st == VN_OK) st = build(&bd);
    if (st == VN_OK) st = specialise(m, values);
    free(bd.map);
    if (st != VN_OK) {
        vn_model_destroy(m);
        return st;
    }
    *out = m;
    return VN_OK;
}

vn_status vn_cg_build(vn_graph *g, const vn_compile_options *opt, vn_model **out)
{
    return vn_cg_build_specialised(g, opt, (vn_cg_values){NULL, 0}, out);
}

vn_status vn_cg_build_specialised(vn_graph *g, const vn_compile_options *opt, vn_cg_values values,
                                  vn_model **out)
{
    *out = NULL;
    vn_status st = vn_infer_bind_inputs(g, opt->shapes, opt->num_shapes);
    if (st != VN_OK) return st;
    return build_model(g, g->main, opt, g->file ? g->file : "model", values, out);
}

vn_status vn_cg_build_body(vn_graph *g, const vn_gbody *body, const vn_compile_options *opt,
                           const char *name, const vn_tensor_desc *descs, const void *const *data,
                           int32_t num, vn_model **out)
{
    *out = NULL;
    vn_model *m;
    vn_status st = build_model(g, body, opt, name, (vn_cg_values){NULL, 0}, &m);
    if (st != VN_OK) return st;
    char *own = vn_gmem_alloc(&m->mem, strlen(name) + 1);
    if (!own || m->num_inputs != num) {
        vn_model_destroy(m);
        return vn_error(own ? VN_ERR_INTERNAL : VN_ERR_OUT_OF_MEMORY, W,
                        "%s: %d inputs bound, the subgraph takes %d", name, (int)num,
                        (int)m->num_inputs);
    }
    m->name = strcpy(own, name);
    for (int32_t k = 0; k < num; k++) {
        vn_cvalue *v = &m->values[m->inputs[k]];
        v->desc = descs[k];
        v->known = true;
    }
    for (int32_t k = 0; k < num && st == VN_OK; k++)
        if (data[k]) st = specialise_input(m, k, &(vn_tensor){descs[k], (void *)data[k]});
    if (st != VN_OK) {
        vn_model_destroy(m);
        return st;
    }
    *out = m;
    return VN_OK;
}
