/*
 * pass_fuse_util.c — what the fusion passes share: use counts, constant
 * look-ups, attribute reads, and vn_fuse_apply, the one place a group of
 * nodes becomes a fused node (pass_fuse.h states the invariants it keeps).
 */
#include <stdio.h>
#include <string.h>

#include "graph/pass_fuse.h"

bool vn_fuse_is_output(const vn_model *m, int32_t v)
{
    for (int32_t i = 0; i < m->num_outputs; i++)
        if (m->outputs[i] == v) return true;
    return false;
}

int32_t vn_fuse_sole_reader(const vn_model *m, int32_t v)
{
    if (v < 0 || m->values[v].kind != VN_CV_ACT || vn_fuse_is_output(m, v)) return -1;
    int32_t reader = -1, uses = 0;
    for (int32_t i = 0; i < m->num_nodes && uses < 2; i++) {
        const vn_cnode *n = &m->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->num_inputs; k++)
            if (n->inputs[k] == v) uses++, reader = i;
    }
    return uses == 1 ? reader : -1;
}

bool vn_fuse_extra_outputs_unread(const vn_model *m, const vn_cnode *n)
{
    for (int32_t k = 1; k < n->num_outputs; k++)
        if (n->outputs[k] >= 0 &&
            (vn_cg_num_uses(m, n->outputs[k]) || vn_fuse_is_output(m, n->outputs[k])))
            return false;
    return true;
}

vn_status vn_fuse_prefixed_attrs(vn_model *m, const vn_cnode *base, const vn_cnode *extra,
                                 const char *prefix, vn_attr *out, int32_t cap, int32_t *count,
                                 const char *pass)
{
    *count = -1;
    if (base->num_attrs + extra->num_attrs > cap) return VN_OK;
    size_t lp = strlen(prefix);
    memcpy(out, base->attrs, (size_t)base->num_attrs * sizeof *out);
    int32_t na = base->num_attrs;
    for (int32_t a = 0; a < extra->num_attrs; a++) {
        size_t n = strlen(extra->attrs[a].name);
        char *name = vn_gmem_alloc(&m->mem, lp + n + 1);
        if (!name) return vn_error(VN_ERR_OUT_OF_MEMORY, pass, "no memory for an attribute name");
        memcpy(name, prefix, lp), memcpy(name + lp, extra->attrs[a].name, n + 1);
        out[na] = extra->attrs[a];
        out[na++].name = name;
    }
    *count = na;
    return VN_OK;
}

bool vn_fuse_is_op(const vn_cnode *n, const char *op)
{
    return !n->dead && (!n->domain || !n->domain[0]) && !strcmp(n->op_type, op);
}

bool vn_fuse_is_const(const vn_model *m, int32_t v, vn_dtype dtype)
{
    return v >= 0 && m->values[v].kind == VN_CV_CONST && m->values[v].known && m->values[v].data &&
           m->values[v].desc.dtype == dtype;
}

bool vn_fuse_const_scalar(const vn_model *m, int32_t v, double *out)
{
    if (v < 0 || m->values[v].kind != VN_CV_CONST || !m->values[v].data) return false;
    const vn_cvalue *c = &m->values[v];
    if (vn_desc_numel(&c->desc) != 1) return false;
    switch (c->desc.dtype) {
    case VN_F32:
        *out = *(const float *)c->data;
        return true;
    default:
        return false; /* f16 / bf16 scalars stay tensor inputs */
    }
}

static const vn_attr *find_attr(const vn_cnode *n, const char *name)
{
    for (int32_t i = 0; i < n->num_attrs; i++)
        if (!strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

int64_t vn_fuse_attr_int(const vn_cnode *n, const char *name, int64_t fallback)
{
    const vn_attr *a = find_attr(n, name);
    return a && a->type == VN_ATTR_INT ? a->i : fallback;
}

double vn_fuse_attr_float(const vn_cnode *n, const char *name, double fallback)
{
    const vn_attr *a = find_attr(n, name);
    return a && a->type == VN_ATTR_FLOAT ? a->f : fallback;
}

const char *vn_fuse_attr_str(const vn_cnode *n, const char *name, const char *fallback)
{
    const vn_attr *a = find_attr(n, name);
    return a && a->type == VN_ATTR_STRING && a->s ? a->s : fallback;
}

vn_status vn_fuse_add_attr_str(vn_model *m, vn_cnode *n, const char *name, const char *value)
{
    vn_attr *a = vn_gmem_alloc(&m->mem, (size_t)(n->num_attrs + 1) * sizeof *a);
    if (!a) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_compile", "no memory for an attribute");
    if (n->num_attrs) memcpy(a, n->attrs, (size_t)n->num_attrs * sizeof *a);
    memset(&a[n->num_attrs], 0, sizeof *a);
    a[n->num_attrs].name = name;
    a[n->num_attrs].type = VN_ATTR_STRING;
    a[n->num_attrs].s = value;
    n->attrs = a;
    n->num_attrs++;
    return VN_OK;
}

int32_t vn_fuse_new_const(vn_model *m, const vn_tensor_desc *desc, const void *data)
{
    int32_t v = vn_cg_add_value(m, "", VN_CV_CONST);
    if (v >= 0 && vn_cg_set_const(m, v, desc, data) != VN_OK) return -1;
    return v;
}

/* ---- applying a rewrite --------------------------------------------------------------- */

/* Attributes and their int / float lists copied into the model (names and
 * strings are literals or borrowed from the graph, which outlives the model). */
static vn_attr *copy_attrs(vn_model *m, const vn_attr *a, int32_t n)
{
    vn_attr *out = vn_gmem_alloc(&m->mem, (size_t)(n ? n : 1) * sizeof *out);
    for (int32_t i = 0; out && i < n; i++) {
        out[i] = a[i];
        size_t bytes = (size_t)a[i].count * (a[i].type == VN_ATTR_INTS ? sizeof(int64_t) : 4);
        bool list = a[i].type == VN_ATTR_INTS || a[i].type == VN_ATTR_FLOATS;
        void *copy = list && bytes ? vn_gmem_alloc(&m->mem, bytes) : NULL;
        if (list && bytes && !copy) return NULL;
        if (copy)
            memcpy(copy, a[i].type == VN_ATTR_INTS ? (const void *)a[i].ints : a[i].floats, bytes);
        if (copy && a[i].type == VN_ATTR_INTS) out[i].ints = copy;
        if (copy && a[i].type == VN_ATTR_FLOATS) out[i].floats = copy;
    }
    return out;
}

/* "<first member's label>+Op+Op -> fused op", written before the anchor changes. */
static void describe(const vn_model *m, const vn_fuse_rewrite *rw, const int32_t *members,
                     int32_t count, char *text, size_t size)
{
    char label[256];
    vn_cg_label(m, members[0], label, sizeof label);
    size_t used = (size_t)snprintf(text, size, "%s", label);
    for (int32_t i = 1; i < count && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "+%s", m->nodes[members[i]].op_type);
    if (used < size)
        snprintf(text + used, size - used, " -> %s%s%s", rw->domain[0] ? rw->domain : "",
                 rw->domain[0] ? "::" : "", rw->op_type);
}

static bool same_desc(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Install rw into the anchor; false (nothing changed) on no memory. */
static bool install(vn_model *m, int32_t anchor, const vn_fuse_rewrite *rw, const vn_op_def *def)
{
    int32_t count = rw->num_inputs;
    while (count > 0 && rw->inputs[count - 1] < 0) count--;
    int32_t *ins = vn_gmem_alloc(&m->mem, (size_t)(count ? count : 1) * sizeof *ins);
    vn_attr *attrs = copy_attrs(m, rw->attrs, rw->num_attrs);
    if (!ins || !attrs) return false;
    memcpy(ins, rw->inputs, (size_t)count * sizeof *ins);
    vn_cnode *n = &m->nodes[anchor];
    n->op_type = rw->op_type;
    n->domain = rw->domain;
    n->name = rw->name ? rw->name : n->name;
    n->def = def;
    n->inputs = ins;
    n->num_inputs = count;
    n->attrs = attrs;
    n->num_attrs = rw->num_attrs;
    n->num_outputs = 1; /* fused operators make one output; the others are unread */
    return true;
}

/* A node's source names: its own list if it was fused before, else its name
 * (or op type when unnamed). */
static const char *origins_of(const vn_cnode *n)
{
    return n->fused_from ? n->fused_from : n->name && n->name[0] ? n->name : n->op_type;
}

/* The fused node's fused_from: the members' sources in node order, for the
 * profiler's op summary. Left unset on no memory (it is informational). */
static void record_origins(vn_model *m, int32_t anchor, const vn_cnode *old, const int32_t *members,
                           int32_t count)
{
    size_t bytes = strlen(origins_of(old)) + 1;
    for (int32_t i = 0; i < count; i++)
        if (members[i] != anchor) bytes += strlen(origins_of(&m->nodes[members[i]])) + 1;
    char *list = vn_gmem_alloc(&m->mem, bytes);
    if (!list) return;
    list[0] = 0;
    for (int32_t i = 0; i <= anchor; i++) { /* node order = execution order */
        bool member = i == anchor;
        for (int32_t k = 0; k < count && !member; k++) member = members[k] == i;
        if (!member) continue;
        if (list[0]) strcat(list, ";");
        strcat(list, origins_of(i == anchor ? old : &m->nodes[i]));
    }
    m->nodes[anchor].fused_from = list;
}

static void kill_members(vn_model *m, int32_t anchor, const vn_cnode *old, const int32_t *members,
                         int32_t count)
{
    for (int32_t k = 1; k < old->num_outputs; k++)
        if (old->outputs[k] >= 0) m->values[old->outputs[k]].producer = -1;
    for (int32_t i = 0; i < count; i++) {
        vn_cnode *n = &m->nodes[members[i]];
        if (members[i] == anchor) continue;
        n->dead = true;
        for (int32_t k = 0; k < n->num_outputs; k++)
            if (n->outputs[k] >= 0) m->values[n->outputs[k]].producer = -1;
    }
}

vn_status vn_fuse_apply(vn_model *m, int32_t anchor, const vn_fuse_rewrite *rw,
                        const int32_t *members, int32_t num_members, vn_pass_report *r, bool *done)
{
    *done = false;
    const vn_op_def *def = vn_op_find(rw->op_type, rw->domain);
    vn_cnode old = m->nodes[anchor];
    int32_t out = old.outputs[0];
    vn_tensor_desc want = m->values[out].desc;
    bool had = m->values[out].known;
    char text[320];
    describe(m, rw, members, num_members, text, sizeof text);
    if (!def || !install(m, anchor, rw, def)) return VN_OK;
    /* The fused operator's own checks decide; a refusal is not an error. */
    bool ok = rw->before_inference || (vn_cg_infer_node(m, anchor) == VN_OK &&
                                       (!had || same_desc(&want, &m->values[out].desc)));
    if (!ok) {
        m->nodes[anchor] = old;
        m->values[out].desc = want;
        m->values[out].known = had;
        vn_clear_error();
        return VN_OK;
    }
    record_origins(m, anchor, &old, members, num_members);
    kill_members(m, anchor, &old, members, num_members);
    vn_pass_note(r, text);
    *done = true;
    return VN_OK;
}
