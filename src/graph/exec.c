/*
 * exec.c — run contexts and the synchronous run.
 *
 * A context owns everything a run writes besides the caller's outputs: the
 * activation arena (offsets from the memory plan), one workspace (nodes run
 * one at a time, or a group at once, each member in its own slice: the
 * largest need suffices) and a buffer per output for the
 * outputs the caller does not ask for. The model is only read, so any number
 * of contexts run one model at once from different threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/cf.h"
#include "graph/exec.h"
#include "runtime/device_internal.h"
#include "profile/hook.h"

static void *alloc_zero(size_t bytes)
{
    void *p = vn_aligned_alloc(bytes ? bytes : 64, 64);
    if (p) memset(p, 0, bytes ? bytes : 64);
    return p;
}

/* Bytes the context holds for a value: none for a dynamic one (sized per run). */
static size_t value_bytes(const vn_cvalue *v)
{
    return v->dynamic ? 0 : vn_cg_desc_bytes(&v->desc);
}

static vn_status ctx_alloc(const vn_model *m, vn_model_ctx *c)
{
    size_t nv = (size_t)m->num_values + 1, no = (size_t)m->num_outputs + 1;
    size_t nio = (size_t)m->max_io + 1;
    c->arena = alloc_zero(m->arena_bytes);
    c->workspace = alloc_zero(m->workspace_bytes);
    c->ptr = calloc(nv, sizeof *c->ptr);
    c->own_out = calloc(no, sizeof *c->own_out);
    c->out_dst = calloc(no, sizeof *c->out_dst);
    c->in_t = calloc(nio * VN_GROUP_MAX, sizeof *c->in_t);
    c->out_t = calloc(nio * VN_GROUP_MAX, sizeof *c->out_t);
    c->dyn_desc = calloc(nv, sizeof *c->dyn_desc);
    c->dyn_buf = calloc(nv, sizeof *c->dyn_buf);
    c->dyn_cap = calloc(nv, sizeof *c->dyn_cap);
    c->cf = calloc((size_t)m->num_nodes + 1, sizeof *c->cf);
    c->out_want = calloc(no, sizeof *c->out_want);
    if (!c->arena || !c->workspace || !c->ptr || !c->own_out || !c->out_dst || !c->in_t ||
        !c->out_t || !c->dyn_desc || !c->dyn_buf || !c->dyn_cap || !c->cf || !c->out_want)
        return VN_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < m->num_outputs; i++)
        if (!(c->own_out[i] = alloc_zero(value_bytes(&m->values[m->outputs[i]]))))
            return VN_ERR_OUT_OF_MEMORY;
    for (int32_t v = 0; v < m->num_values; v++) {
        const vn_cvalue *val = &m->values[v];
        if (val->mem == VN_MEM_ARENA) c->ptr[v] = (char *)c->arena + val->offset;
        if (val->mem == VN_MEM_CONST) c->ptr[v] = (void *)val->data;
    }
    return VN_OK;
}

vn_status vn_model_ctx_create(const vn_model *m, vn_model_ctx **out)
{
    if (!m || !out) return vn_error(VN_ERR_INVALID_ARG, "vn_model_ctx_create", "NULL argument");
    *out = NULL;
    if (!m->final)
        return vn_error(VN_ERR_STATE, "vn_model_ctx_create", "%s: not compiled", m->name);
    vn_model_ctx *c = calloc(1, sizeof *c);
    if (!c) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_ctx_create", "no memory");
    c->model = m;
    atomic_init(&c->busy, false);
    if (ctx_alloc(m, c) != VN_OK) {
        vn_model_ctx_destroy(c);
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_ctx_create",
                        "%s: no memory for a %zu-byte arena and %zu-byte workspace", m->name,
                        m->arena_bytes, m->workspace_bytes);
    }
    *out = c;
    return VN_OK;
}

void vn_model_ctx_destroy(vn_model_ctx *c)
{
    if (!c) return;
    while (atomic_load(&c->busy)) { /* a pending asynchronous run still uses it */
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    for (int32_t i = 0; c->own_out && i < c->model->num_outputs; i++)
        vn_aligned_free(c->own_out[i]);
    for (int32_t v = 0; c->dyn_buf && v < c->model->num_values; v++) vn_aligned_free(c->dyn_buf[v]);
    for (int32_t i = 0; c->cf && i < c->model->num_nodes; i++) vn_cf_ctx_free(c->cf[i]);
    free(c->dyn_desc);
    free(c->dyn_buf);
    free(c->dyn_cap);
    free(c->cf);
    free(c->out_want);
    vn_aligned_free(c->arena);
    vn_aligned_free(c->workspace);
    free(c->ptr);
    free(c->own_out);
    free(c->out_dst);
    free(c->in_t);
    free(c->out_t);
    free(c);
}

vn_status vn_model_ctx_output(vn_model_ctx *c, const char *name, vn_tensor *out)
{
    if (!c || !name || !out)
        return vn_error(VN_ERR_INVALID_ARG, "vn_model_ctx_output", "NULL argument");
    const vn_model *m = c->model;
    for (int32_t i = 0; i < m->num_outputs; i++) {
        const vn_cvalue *v = &m->values[m->outputs[i]];
        if (strcmp(v->name, name)) continue;
        *out =
            v->dynamic ? vn_exec_value(m, c, m->outputs[i]) : (vn_tensor){v->desc, c->own_out[i]};
        return VN_OK;
    }
    return vn_error(VN_ERR_INVALID_ARG, "vn_model_ctx_output", "%s: no output named '%s'", m->name,
                    name);
}

/* ---- binding ------------------------------------------------------------------------- */

static bool same_desc(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->rank < 0 || a->rank > VN_MAX_RANK)
        return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static vn_status check_tensor(const vn_model *m, const char *where, const char *what,
                              const vn_named_tensor *t, const vn_tensor_desc *want)
{
    char a[160], b[160];
    if (!same_desc(&t->tensor.desc, want))
        return vn_error(VN_ERR_SHAPE, where, "%s: %s '%s' is %s; the model was compiled for %s",
                        m->name, what, t->name, vn_desc_format(&t->tensor.desc, a, sizeof a),
                        vn_desc_format(want, b, sizeof b));
    if (!t->tensor.data && vn_cg_desc_bytes(want) > 0)
        return vn_error(VN_ERR_INVALID_ARG, where, "%s: %s '%s' has no data", m->name, what,
                        t->name);
    return VN_OK;
}

/* Index of io value `name` among the model's inputs or outputs, -1 if none. */
static int32_t find_io(const vn_model *m, const char *name, bool output)
{
    int32_t n = output ? m->num_outputs : m->num_inputs;
    for (int32_t i = 0; name && i < n; i++)
        if (!strcmp(m->values[output ? m->outputs[i] : m->inputs[i]].name, name)) return i;
    return -1;
}

static vn_status bind_inputs(const vn_model *m, vn_model_ctx *c, const vn_named_tensor *in,
                             int32_t ni, const char *where)
{
    for (int32_t i = 0; i < m->num_inputs; i++) c->ptr[m->inputs[i]] = NULL;
    for (int32_t k = 0; k < ni; k++) {
        int32_t i = find_io(m, in[k].name, false);
        if (i < 0)
            return vn_error(VN_ERR_INVALID_ARG, where, "%s: the model has no input named '%s'",
                            m->name, in[k].name ? in[k].name : "(null)");
        vn_status st = check_tensor(m, where, "input", &in[k], &m->values[m->inputs[i]].desc);
        if (st != VN_OK) return st;
        c->ptr[m->inputs[i]] = in[k].tensor.data ? in[k].tensor.data : c->arena;
    }
    for (int32_t i = 0; i < m->num_inputs; i++)
        if (!c->ptr[m->inputs[i]])
            return vn_error(VN_ERR_INVALID_ARG, where, "%s: input '%s' is not given", m->name,
                            m->values[m->inputs[i]].name);
    return VN_OK;
}

/* Values the memory plan put in output buffers point at this run's ones. */
static void point_outputs(const vn_model *m, vn_model_ctx *c)
{
    for (int32_t i = 0; i < m->num_outputs; i++) {
        const vn_cvalue *v = &m->values[m->outputs[i]];
        if (v->mem == VN_MEM_OUTPUT && v->io_index == i) c->ptr[m->outputs[i]] = c->out_dst[i];
    }
}

static vn_status bind_outputs(const vn_model *m, vn_model_ctx *c, vn_named_tensor *out, int32_t no,
                              const char *where)
{
    for (int32_t i = 0; i < m->num_outputs; i++) c->out_dst[i] = c->own_out[i];
    for (int32_t k = 0; k < no; k++) {
        int32_t i = find_io(m, out[k].name, true);
        if (i < 0)
            return vn_error(VN_ERR_INVALID_ARG, where, "%s: the model has no output named '%s'",
                            m->name, out[k].name ? out[k].name : "(null)");
        const vn_cvalue *v = &m->values[m->outputs[i]];
        c->out_want[i] = out[k].tensor.desc; /* a dynamic output is checked after the run */
        vn_status st = v->dynamic ? VN_OK : check_tensor(m, where, "output", &out[k], &v->desc);
        if (st != VN_OK) return st;
        if (out[k].tensor.data) c->out_dst[i] = out[k].tensor.data;
    }
    point_outputs(m, c);
    return VN_OK;
}

vn_status vn_exec_bind(const vn_model *m, vn_model_ctx *c, const vn_named_tensor *inputs,
                       int32_t ni, vn_named_tensor *outputs, int32_t no, const char *where)
{
    if (!m || !c) return vn_error(VN_ERR_INVALID_ARG, where, "model or ctx is NULL");
    if (c->model != m)
        return vn_error(VN_ERR_INVALID_ARG, where, "%s: the context belongs to another model",
                        m->name);
    if (ni < 0 || no < 0 || (ni > 0 && !inputs) || (no > 0 && !outputs))
        return vn_error(VN_ERR_INVALID_ARG, where, "%s: %d inputs at %p, %d outputs at %p", m->name,
                        (int)ni, (const void *)inputs, (int)no, (void *)outputs);
    vn_status st = bind_inputs(m, c, inputs, ni, where);
    return st == VN_OK ? bind_outputs(m, c, outputs, no, where) : st;
}

/* ---- running ------------------------------------------------------------------------- */

/* Node i's operator on this run's tensors, with lane `lane` of the tensor
 * scratch (nodes that run at once use one lane each). Returns the operator's
 * status, its message in vn_last_error(). */
static vn_status run_op(const vn_model *m, vn_model_ctx *c, int32_t i, int32_t lane)
{
    const vn_cnode *n = &m->nodes[i];
    size_t nio = (size_t)m->max_io + 1;
    vn_tensor *in_t = c->in_t + (size_t)lane * nio, *out_t = c->out_t + (size_t)lane * nio;
    bool any = false; /* empty outputs: nothing to compute (as vn_op_run) */
    for (int32_t k = 0; k < n->num_inputs; k++) in_t[k] = vn_exec_value(m, c, n->inputs[k]);
    for (int32_t k = 0; k < n->num_outputs; k++) {
        int32_t v = n->outputs[k];
        out_t[k] = (vn_tensor){m->values[v].desc, c->ptr[v]};
        any |= vn_desc_numel(&m->values[v].desc) > 0;
    }
    if (!any) return VN_OK;
    vn_op_run_ctx rc = {n->def,
                        m->device,
                        n->plan_data,
                        in_t,
                        n->num_inputs,
                        out_t,
                        n->run_outputs ? n->run_outputs : n->num_outputs,
                        (char *)c->workspace + n->ws_offset,
                        NULL};
    /* Profiling (src/profile): off, one pointer test; on, time and count the node. */
    vn_prof_hook *prof = vn_prof_hook_get();
    vn_kernel_counters kc = {0};
    int64_t t0 = prof ? (rc.counters = &kc, prof->node_begin(prof, m, i)) : 0;
    vn_status st = n->def->run(&rc);
    if (prof) prof->node_end(prof, m, i, t0, &kc);
    return st;
}

/* The run's error for node i's operator failing with `why`. */
static vn_status node_failed(const vn_model *m, int32_t i, vn_status st, const char *why)
{
    char label[256];
    return vn_error(st, "vn_model_run", "%s: %s: %s", m->name,
                    vn_cg_label(m, i, label, sizeof label), why);
}

static vn_status run_node(const vn_model *m, vn_model_ctx *c, int32_t i)
{
    const vn_cnode *n = &m->nodes[i];
    if (n->cf) { /* If / Loop / Scan: their bodies' models (whose nodes the profiler skips) */
        vn_prof_hook *prof = vn_prof_hook_get();
        vn_kernel_counters kc = {0};
        int64_t t0 = prof ? prof->node_begin(prof, m, i) : 0;
        vn_status st = vn_cf_run(m, c, i);
        if (prof) prof->node_end(prof, m, i, t0, &kc);
        return st;
    }
    vn_status st = run_op(m, c, i, 0);
    if (st == VN_OK) return VN_OK;
    char why[700];
    snprintf(why, sizeof why, "%s", vn_last_error());
    return node_failed(m, i, st, why);
}

/* ---- nodes that run at once (compile_groups.c) ---- */

typedef struct group_run {
    const vn_model *m;
    vn_model_ctx *c;
    int32_t first;
    vn_status st[VN_GROUP_MAX];
    char why[VN_GROUP_MAX][700]; /* each member's message, from the thread it ran on */
} group_run;

static void run_member(void *arg, int32_t worker, int32_t member)
{
    (void)worker;
    group_run *g = arg;
    g->st[member] = run_op(g->m, g->c, g->first + member, member);
    if (g->st[member] != VN_OK)
        snprintf(g->why[member], sizeof g->why[member], "%s", vn_last_error());
}

/* The group of `size` nodes from `first`: at once on the device's threads;
 * alone, in order, while a profiler times nodes one by one. The error is the
 * first failing member's, as if they had run in order. */
static vn_status run_group(const vn_model *m, vn_model_ctx *c, int32_t first, int32_t size)
{
    if (vn_prof_hook_get()) {
        vn_status st = VN_OK;
        for (int32_t k = first; k < first + size && st == VN_OK; k++) st = run_node(m, c, k);
        return st;
    }
    group_run g = {.m = m, .c = c, .first = first};
    vn_status st = vn_device_run_hosted(m->device, size, run_member, &g);
    for (int32_t k = 0; k < size && st == VN_OK; k++)
        if (g.st[k] != VN_OK) st = node_failed(m, first + k, g.st[k], g.why[k]);
    return st;
}

static vn_status copy_dynamic_outputs(const vn_model *m, vn_model_ctx *c);

vn_status vn_exec_nodes(const vn_model *m, vn_model_ctx *c)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        if (n->alias == VN_ALIAS_VIEW) { /* its input's memory: no copy (compile_views.c) */
            c->ptr[n->outputs[0]] = c->ptr[n->inputs[0]];
            continue;
        }
        if (n->alias == VN_ALIAS_CONCAT) continue; /* built by its inputs' producers */
        int32_t size = n->concurrent > 1 ? n->concurrent : 1;
        vn_status st = size > 1 ? run_group(m, c, i, size) : run_node(m, c, i);
        if (st != VN_OK) return st;
        i += size - 1;
    }
    for (int32_t k = 0; k < m->num_copies; k++) {
        const vn_out_copy *cp = &m->copies[k];
        const vn_cvalue *v = &m->values[cp->value];
        size_t bytes = vn_cg_desc_bytes(&v->desc);
        if (bytes && c->out_dst[cp->output] != c->ptr[cp->value])
            memcpy(c->out_dst[cp->output], c->ptr[cp->value], bytes);
    }
    return copy_dynamic_outputs(m, c);
}

/* Dynamic outputs the caller gave a tensor for: copied when this run's shape
 * is the tensor's. */
static vn_status copy_dynamic_outputs(const vn_model *m, vn_model_ctx *c)
{
    for (int32_t i = 0; i < m->num_outputs; i++) {
        if (!m->values[m->outputs[i]].dynamic || c->out_dst[i] == c->own_out[i]) continue;
        vn_tensor t = vn_exec_value(m, c, m->outputs[i]);
        char a[160], b[160];
        if (!same_desc(&t.desc, &c->out_want[i]))
            return vn_error(VN_ERR_SHAPE, "vn_model_run",
                            "%s: output '%s' is %s in this run; the tensor given is %s (read it "
                            "with vn_model_ctx_output)",
                            m->name, m->values[m->outputs[i]].name,
                            vn_desc_format(&t.desc, a, sizeof a),
                            vn_desc_format(&c->out_want[i], b, sizeof b));
        if (vn_cg_desc_bytes(&t.desc)) memcpy(c->out_dst[i], t.data, vn_cg_desc_bytes(&t.desc));
    }
    return VN_OK;
}

/* ---- values whose shape is known only at run time, positional runs (cf.h) ---- */

vn_tensor vn_exec_value(const vn_model *m, const vn_model_ctx *c, int32_t v)
{
    if (v < 0) return (vn_tensor){{VN_F32, -1, {0}}, NULL};
    if (m->values[v].dynamic) return (vn_tensor){c->dyn_desc[v], c->dyn_buf[v]};
    return (vn_tensor){m->values[v].desc, c->ptr[v]};
}

vn_status vn_exec_output(const vn_model *m, vn_model_ctx *c, int32_t v, const vn_tensor_desc *d,
                         void **out)
{
    const vn_cvalue *val = &m->values[v];
    char a[160], b[160];
    if (!val->dynamic) {
        *out = c->ptr[v];
        if (same_desc(d, &val->desc)) return VN_OK;
        return vn_error(VN_ERR_SHAPE, "vn_model_run", "%s: '%s' is %s in this run, compiled as %s",
                        m->name, val->name, vn_desc_format(d, a, sizeof a),
                        vn_desc_format(&val->desc, b, sizeof b));
    }
    size_t bytes = vn_cg_desc_bytes(d);
    if (bytes > c->dyn_cap[v] || !c->dyn_buf[v]) {
        void *p = vn_aligned_alloc(bytes ? bytes : 64, 64);
        if (!p)
            return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_run", "%s: no memory for '%s' (%s)",
                            m->name, val->name, vn_desc_format(d, a, sizeof a));
        vn_aligned_free(c->dyn_buf[v]);
        c->dyn_buf[v] = p;
        c->dyn_cap[v] = bytes ? bytes : 64;
    }
    c->dyn_desc[v] = *d;
    *out = c->dyn_buf[v];
    return VN_OK;
}

vn_status vn_exec_run_positional(const vn_model *m, vn_model_ctx *c, const vn_tensor *in,
                                 void *const *dst)
{
    char a[160], b[160];
    for (int32_t i = 0; i < m->num_inputs; i++) {
        const vn_cvalue *v = &m->values[m->inputs[i]];
        if (!same_desc(&in[i].desc, &v->desc))
            return vn_error(VN_ERR_INTERNAL, "vn_model_run", "%s: input '%s' is %s, compiled as %s",
                            m->name, v->name, vn_desc_format(&in[i].desc, a, sizeof a),
                            vn_desc_format(&v->desc, b, sizeof b));
        c->ptr[m->inputs[i]] = in[i].data ? in[i].data : c->arena;
    }
    for (int32_t i = 0; i < m->num_outputs; i++) {
        bool fixed = !m->values[m->outputs[i]].dynamic && dst && dst[i];
        c->out_dst[i] = fixed ? dst[i] : c->own_out[i];
    }
    point_outputs(m, c);
    return vn_exec_nodes(m, c);
}

vn_tensor vn_exec_result(const vn_model *m, const vn_model_ctx *c, int32_t i)
{
    const vn_cvalue *v = &m->values[m->outputs[i]];
    return v->dynamic ? vn_exec_value(m, c, m->outputs[i]) : (vn_tensor){v->desc, c->out_dst[i]};
}

vn_status vn_model_run(const vn_model *m, vn_model_ctx *c, const vn_named_tensor *inputs,
                       int32_t ni, vn_named_tensor *outputs, int32_t no)
{
    if (c && atomic_load(&c->busy))
        return vn_error(VN_ERR_STATE, "vn_model_run",
                        "the context has an asynchronous run pending: synchronize its stream");
    vn_status st = vn_exec_bind(m, c, inputs, ni, outputs, no, "vn_model_run");
    return st == VN_OK ? vn_exec_nodes(m, c) : st;
}
