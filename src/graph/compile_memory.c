/*
 * compile_memory.c — where each value of a compiled model lives during a run.
 *
 * Constants stay where they are; model inputs and outputs are the caller's
 * (or the context's output buffers); every other value a node writes gets an
 * offset in the one activation arena from the static plan (plan_memory.c),
 * with step = the node's position in execution order (the span of its group
 * for nodes that run at once, compile_groups.c).
 *
 * In place: a node's output takes over an input's memory when its operator
 * declares that input in place (vn_op_in_place: element-wise operators, a
 * fused convolution's residual) and the input is an arena value read for the
 * last time by this node, with the output's exact shape and dtype
 * (may_share).
 *
 * Views (O1 on, compile_views.c): a view whose input is an arena value or a
 * model input and whose output is no model output gets its input's memory.
 * An arena value and its views (chains too) are one plan item, live until
 * the last read of any of them, so no element-wise node takes it over while
 * a view of it is still to be read.
 *
 * Concats in place (O1 on, compile_concat.c): the output is one item, each
 * input a consecutive range of it that its producer writes directly; the
 * item lives from the first of those producers to the last read of any of
 * the values in it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/compile.h"
#include "graph/plan_memory.h"

/* Whether node n's output may take over the memory of its input k (when n
 * reads it last, with the output's shape and dtype): its operator declares
 * input k in place (`in_place`, vn_op_in_place of its operator: every input of an element-wise
 * node, a fused convolution's residual Z), and no other input position that is not declared reads
 * the same value (a conv whose residual is also its X reads X at other positions). As ONNX
 * Runtime's conv with a fused Sum, a fused conv's output then lands in lines the residual's read
 * has just brought in, instead of a third tensor's: for ResNet-50's 64 > 256 @ 56 projections that
 * is 6.4 MB of traffic instead of 9.6 (residual read, output's line fills and write-back), and they
 * ran 0.72-0.75 ms instead of 0.79-0.86. */
static bool may_share(const vn_cnode *n, uint64_t in_place, int32_t k)
{
    if (k >= 64 || !(in_place >> k & 1)) return false;
    for (int32_t j = 0; j < n->num_inputs; j++)
        if (n->inputs[j] == n->inputs[k] && (j >= 64 || !(in_place >> j & 1))) return false;
    return true;
}

static bool same_desc(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Values a run reads: node inputs and model outputs (marked with item[v] = 0). */
static void mark_read(const vn_model *m, int32_t *item)
{
    for (int32_t v = 0; v < m->num_values; v++) item[v] = -1;
    for (int32_t i = 0; i < m->num_nodes; i++)
        for (int32_t k = 0; k < m->nodes[i].num_inputs; k++)
            if (m->nodes[i].inputs[k] >= 0) item[m->nodes[i].inputs[k]] = 0;
    for (int32_t i = 0; i < m->num_outputs; i++) item[m->outputs[i]] = 0;
}

/* Memory classes (item[] is scratch). Constants nothing reads any more
 * (folded away) take no memory class. */
static void classify(vn_model *m, int32_t *item)
{
    mark_read(m, item);
    for (int32_t v = 0; v < m->num_values; v++) {
        vn_cvalue *val = &m->values[v];
        bool read = item[v] == 0;
        if (val->dynamic) {
            val->mem = VN_MEM_DYNAMIC; /* sized per run (cf.h) */
            val->io_index = val->output_index;
        } else if (val->kind == VN_CV_CONST && !read) {
            val->mem = VN_MEM_NONE;
        } else if (val->kind == VN_CV_CONST) {
            val->mem = VN_MEM_CONST;
            m->stats.constant_bytes += val->nbytes;
        } else if (val->kind == VN_CV_INPUT) {
            val->mem = VN_MEM_INPUT;
            val->io_index = val->input_index;
        } else if (val->producer >= 0 && val->output_index >= 0) {
            val->mem = VN_MEM_OUTPUT;
            val->io_index = val->output_index;
        } else if (val->producer >= 0) {
            val->mem = VN_MEM_ARENA;
        } else {
            val->mem = VN_MEM_NONE;
        }
    }
}

/* Views that alias their input (in order, so a view of a view sees its
 * input's class already): the output takes the input's class and io index;
 * returns how many. Model outputs stay copies: they live in the caller's
 * buffer. */
static int32_t alias_views(vn_model *m)
{
    int32_t count = 0;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        vn_cnode *n = &m->nodes[i];
        if (!vn_cg_is_view(n)) continue;
        const vn_cvalue *x = &m->values[n->inputs[0]];
        vn_cvalue *y = &m->values[n->outputs[0]];
        if (y->mem != VN_MEM_ARENA || (x->mem != VN_MEM_ARENA && x->mem != VN_MEM_INPUT) ||
            vn_cg_desc_bytes(&x->desc) != vn_cg_desc_bytes(&y->desc))
            continue;
        n->alias = VN_ALIAS_VIEW;
        y->mem = x->mem;
        y->io_index = x->io_index;
        count++;
    }
    return count;
}

/* Where each value lies in its plan item: item[v] (or -1) and sub[v], the
 * byte offset inside it (non-zero only for the later inputs of an in-place
 * Concat and views of them). */
typedef struct placement {
    int32_t *item;
    size_t *sub;
    bool *part; /* an input of an in-place Concat */
} placement;

/* In-place Concats (after the views, so an aliased view is never a part):
 * their inputs become consecutive ranges of the output; returns how many. */
static int32_t concats_in_place(vn_model *m, placement *p)
{
    int32_t count = 0;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        vn_cnode *n = &m->nodes[i];
        if (!vn_cg_concat_in_place(m, i, p->part)) continue;
        n->alias = VN_ALIAS_CONCAT;
        size_t at = 0;
        for (int32_t k = 0; k < n->num_inputs; k++) {
            p->part[n->inputs[k]] = true;
            p->sub[n->inputs[k]] = at;
            at += vn_cg_desc_bytes(&m->values[n->inputs[k]].desc);
        }
        count++;
    }
    return count;
}

/* An item per arena value that is neither a view's alias nor an in-place
 * Concat's input; those share the item of the value they lie in (Concat
 * outputs first, since a view may read a Concat's input before the Concat
 * runs). Returns the item count. */
static int32_t number_items(const vn_model *m, placement *p)
{
    int32_t count = 0;
    for (int32_t v = 0; v < m->num_values; v++) {
        const vn_cvalue *val = &m->values[v];
        bool view = val->producer >= 0 && m->nodes[val->producer].alias == VN_ALIAS_VIEW;
        p->item[v] = val->mem == VN_MEM_ARENA && !view && !p->part[v] ? count++ : -1;
    }
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        for (int32_t k = 0; n->alias == VN_ALIAS_CONCAT && k < n->num_inputs; k++)
            p->item[n->inputs[k]] = p->item[n->outputs[0]];
    }
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        if (n->alias != VN_ALIAS_VIEW) continue;
        p->item[n->outputs[0]] = p->item[n->inputs[0]];
        p->sub[n->outputs[0]] = p->sub[n->inputs[0]];
    }
    return count;
}

/* Steps of the plan: node i lives from first[i] to last[i], its group's span
 * (compile_groups.c; i to i for a node that runs alone). */
typedef struct steps {
    int32_t *first, *last;
} steps;

/* An item lives from the first node that writes any value in it to the last
 * read of any of them (alias nodes run no kernel: they neither write nor
 * read). Its size is its own value's: the one that is no alias or part. */
static void lifetimes(const vn_model *m, const placement *p, const steps *t, vn_mp_item *items,
                      int32_t n_items)
{
    for (int32_t k = 0; k < n_items; k++) items[k] = (vn_mp_item){0, INT32_MAX, -1, -1, 0};
    for (int32_t v = 0; v < m->num_values; v++) {
        const vn_cvalue *val = &m->values[v];
        if (p->item[v] < 0) continue;
        vn_mp_item *it = &items[p->item[v]];
        bool written = !m->nodes[val->producer].alias;
        if (written && t->first[val->producer] < it->first) it->first = t->first[val->producer];
        if (written && t->last[val->producer] > it->last) it->last = t->last[val->producer];
        if (!p->part[v] && m->nodes[val->producer].alias != VN_ALIAS_VIEW)
            it->size = vn_cg_desc_bytes(&val->desc);
    }
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        for (int32_t k = 0; !n->alias && k < n->num_inputs; k++)
            if (n->inputs[k] >= 0 && p->item[n->inputs[k]] >= 0)
                items[p->item[n->inputs[k]]].last = t->last[i];
    }
}

/* A node that runs alone takes over the whole item of an input it reads
 * last and may share (may_share) with its output; neither may be a range of
 * a larger item. */
static void in_place(const vn_model *m, const placement *p, const steps *t, vn_mp_item *items)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        if (n->num_outputs != 1 || t->first[i] != t->last[i]) continue;
        int32_t out = n->outputs[0];
        uint64_t shareable = n->def ? vn_op_in_place(n->def) : 0;
        if (!shareable || p->item[out] < 0 || p->part[out]) continue;
        const vn_cvalue *y = &m->values[out];
        for (int32_t k = 0; k < n->num_inputs; k++) {
            int32_t x = n->inputs[k];
            if (x < 0 || p->item[x] < 0 || items[p->item[x]].last != i ||
                !may_share(n, shareable, k))
                continue;
            if (!same_desc(&m->values[x].desc, &y->desc) ||
                vn_cg_desc_bytes(&m->values[x].desc) != items[p->item[x]].size)
                continue;
            items[p->item[out]].share = p->item[x];
            break;
        }
    }
}

static vn_status output_copies(vn_model *m)
{
    m->copies = vn_gmem_alloc(&m->mem, ((size_t)m->num_outputs + 1) * sizeof *m->copies);
    if (!m->copies) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < m->num_outputs; i++) {
        const vn_cvalue *v = &m->values[m->outputs[i]];
        if ((v->mem == VN_MEM_OUTPUT && v->io_index == i) || v->mem == VN_MEM_DYNAMIC) continue;
        if (v->mem == VN_MEM_NONE)
            return vn_error(VN_ERR_FORMAT, "vn_model_compile", "%s: output '%s' is never computed",
                            m->name, v->name);
        m->copies[m->num_copies++] = (vn_out_copy){i, m->outputs[i]};
    }
    return VN_OK;
}

void vn_cg_report(vn_model *m, const char *pass, int32_t count, const char *what)
{
    if (!count || m->stats.num_reports >= VN_MAX_PASS_REPORTS) return;
    vn_pass_report *r = &m->stats.reports[m->stats.num_reports++];
    memset(r, 0, sizeof *r);
    r->pass = pass;
    r->changes = count;
    snprintf(r->detail, sizeof r->detail, "%d %s", (int)count, what);
}

static vn_status solve(vn_model *m, placement *p)
{
    int32_t n = number_items(m, p);
    size_t nn = (size_t)m->num_nodes + 1;
    vn_mp_item *items = malloc(((size_t)n + 1) * sizeof *items);
    steps t = {malloc(nn * sizeof *t.first), malloc(nn * sizeof *t.last)};
    vn_status st = VN_OK;
    if (!items || !t.first || !t.last) {
        st = vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_compile", "no memory");
    } else {
        vn_cg_group_span(m, t.first, t.last);
        lifetimes(m, p, &t, items, n);
        in_place(m, p, &t, items);
        st = vn_memplan_solve(items, n, &m->arena_bytes, &m->stats.activation_bytes,
                              &m->stats.inplace_count);
    }
    for (int32_t v = 0; st == VN_OK && v < m->num_values; v++)
        if (p->item[v] >= 0) m->values[v].offset = items[p->item[v]].offset + p->sub[v];
    free(items);
    free(t.first);
    free(t.last);
    return st;
}

vn_status vn_cg_plan_memory(vn_model *m)
{
    size_t nv = (size_t)m->num_values + 1;
    placement p = {malloc(nv * sizeof *p.item), calloc(nv, sizeof *p.sub),
                   calloc(nv, sizeof *p.part)};
    vn_status st = VN_OK;
    if (!p.item || !p.sub || !p.part)
        st = vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_compile", "%s: no memory", m->name);
    if (st == VN_OK) {
        classify(m, p.item);
        for (int32_t i = 0; i < m->num_nodes; i++) m->nodes[i].alias = VN_ALIAS_NONE;
        if (m->stats.opt_level >= 1) {
            vn_cg_report(m, "view-alias", alias_views(m), "views share their input's memory");
            vn_cg_report(m, "concat-in-place", concats_in_place(m, &p),
                         "Concats built in place by their inputs' producers");
        }
        st = solve(m, &p);
    }
    if (st == VN_OK) st = output_copies(m);
    m->stats.arena_bytes = m->arena_bytes;
    free(p.item);
    free(p.sub);
    free(p.part);
    return st;
}
