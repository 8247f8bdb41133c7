/*
 * compile.c — vn_model_compile: graph + input shapes -> compiled model.
 *
 *   check operators -> build (inputs bound, constants known) -> passes with
 *   inference (pass_manager.c) -> views of constants become constants (O1+,
 *   compile_views.c) -> drop dead nodes -> per node the operator's plan
 *   (tiling, workspace size) in execution order -> static memory plan (which
 *   aliases the other views to their inputs from O1 on) -> which nodes run at
 *   once (O3, compile_groups.c; branches were moved next to each other before
 *   planning).
 *
 * The result is immutable: runs only read it (exec.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/cf.h"
#include "graph/compile.h"

#define W     "vn_model_compile"
#define MAXIO 64

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Remove dead nodes; producers are renumbered (a dead node produces nothing
 * anyone reads: folded outputs became constants, removed ones are unread). */
static void compact(vn_model *m)
{
    int32_t live = 0;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        if (m->nodes[i].dead) continue;
        vn_cnode *n = &m->nodes[i];
        for (int32_t k = 0; k < n->num_outputs; k++)
            if (n->outputs[k] >= 0) m->values[n->outputs[k]].producer = live;
        m->nodes[live++] = *n;
    }
    for (int32_t v = 0; v < m->num_values; v++) {
        vn_cvalue *val = &m->values[v];
        if (val->producer < 0) continue;
        const vn_cnode *p = val->producer < live ? &m->nodes[val->producer] : NULL;
        bool ok = false;
        for (int32_t k = 0; p && k < p->num_outputs; k++) ok |= p->outputs[k] == v;
        if (!ok) val->producer = -1; /* its producer was removed */
    }
    m->num_nodes = live;
}

static vn_status plan_node(vn_model *m, int32_t node)
{
    vn_cnode *n = &m->nodes[node];
    if (n->num_inputs > m->max_io) m->max_io = n->num_inputs;
    if (n->num_outputs > m->max_io) m->max_io = n->num_outputs;
    n->run_outputs = vn_cg_outputs_read(m, node);
    if (!n->def->plan || n->cf) return VN_OK; /* control flow: its bodies are compiled models */
    vn_tensor_desc in[MAXIO], out[MAXIO];
    const void *data[MAXIO];
    vn_attrs attrs;
    vn_op_ctx ctx;
    char label[256];
    vn_cg_label(m, node, label, sizeof label);
    vn_cg_op_ctx(m, node, in, data, &attrs, &ctx);
    if (!ctx.node_name[0]) ctx.node_name = label;
    for (int32_t k = 0; k < n->num_outputs; k++) out[k] = m->values[n->outputs[k]].desc;
    vn_status st = n->def->plan(&ctx, out, &n->plan_data, &n->workspace);
    if (st != VN_OK) {
        char why[700];
        snprintf(why, sizeof why, "%s", vn_last_error());
        return vn_error(st, W, "%s: %s: plan failed: %s", m->name, label, why);
    }
    if (n->workspace > m->workspace_bytes) m->workspace_bytes = n->workspace;
    return VN_OK;
}

static vn_status compile(vn_model *m, int32_t level)
{
    vn_status st = vn_pass_run_all(m, level);
    if (st != VN_OK) return st;
    if (level >= 1) vn_cg_const_views(m); /* views copy nothing: see compile_views.c */
    compact(m);
    if (level >= 3) /* branches next to each other, to run at once (compile_groups.c) */
        vn_cg_report(m, "schedule_branches", vn_cg_schedule_branches(m),
                     "nodes moved next to a branch they may run beside");
    for (int32_t i = 0; i < m->num_nodes && st == VN_OK; i++) st = plan_node(m, i);
    if (st == VN_OK) st = vn_cg_plan_memory(m);
    if (st == VN_OK)
        vn_cg_report(m, "node-groups", vn_cg_plan_groups(m), "groups of nodes run at once");
    if (st == VN_OK) vn_cg_release_packed(m); /* weights held once: packed */
    m->stats.workspace_bytes = m->workspace_bytes;
    return st;
}

vn_status vn_cg_compile_built(vn_model *m, int32_t level)
{
    m->stats.opt_level = level;
    vn_status st = compile(m, level);
    m->final = st == VN_OK;
    m->stats.nodes_after = m->num_nodes;
    return st;
}

vn_status vn_model_compile(vn_graph *graph, const vn_compile_options *options, vn_model **out)
{
    return vn_model_compile_specialised(graph, options, NULL, 0, out);
}

vn_status vn_model_compile_specialised(vn_graph *graph, const vn_compile_options *options,
                                       const vn_named_tensor *values, int32_t num_values,
                                       vn_model **out)
{
    if (!graph || !out) return vn_error(VN_ERR_INVALID_ARG, W, "graph or out is NULL");
    *out = NULL;
    vn_compile_options opt = options ? *options : (vn_compile_options){.opt_level = 1};
    if (opt.opt_level < 0 || opt.opt_level > 3)
        return vn_error(VN_ERR_INVALID_ARG, W, "optimisation level %d is not 0..3",
                        (int)opt.opt_level);
    if (opt.precision != VN_PRECISION_F32 && opt.precision != VN_PRECISION_BF16)
        return vn_error(VN_ERR_INVALID_ARG, W, "precision %d is not VN_PRECISION_F32 or _BF16",
                        (int)opt.precision);
    if (opt.num_shapes < 0 || (opt.num_shapes > 0 && !opt.shapes))
        return vn_error(VN_ERR_INVALID_ARG, W, "%d shapes at NULL", (int)opt.num_shapes);
    double t0 = now_ms();
    vn_status st = vn_graph_check_supported(graph);
    vn_model *m = NULL;
    if (num_values < 0 || (num_values > 0 && !values))
        return vn_error(VN_ERR_INVALID_ARG, W, "%d values at NULL", (int)num_values);
    if (st == VN_OK)
        st = vn_cg_build_specialised(graph, &opt, (vn_cg_values){values, num_values}, &m);
    if (st != VN_OK) return st;
    m->stats.nodes_before = graph->main->num_nodes;
    m->stats.opt_level = opt.opt_level;
    m->stats.precision = opt.precision;
    if ((st = compile(m, opt.opt_level)) != VN_OK) {
        vn_model_destroy(m);
        return st;
    }
    m->final = true;
    m->stats.nodes_after = m->num_nodes;
    m->stats.compile_ms = now_ms() - t0;
    *out = m;
    return VN_OK;
}

void vn_model_destroy(vn_model *m)
{
    if (!m) return;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        vn_cnode *n = &m->nodes[i];
        if (n->plan_data && n->def && n->def->plan_free) n->def->plan_free(n->plan_data);
    }
    for (int32_t i = 0; i < m->num_cfs; i++) vn_cf_free(m->cfs[i]);
    if (m->release) m->release(m->release_arg); /* plans may point into the mapping */
    vn_gmem_free(&m->mem);
    free(m);
}

/* ---- read-only view ------------------------------------------------------------------ */

vn_status vn_model_get_stats(const vn_model *m, vn_model_stats *out)
{
    if (!m || !out) return vn_error(VN_ERR_INVALID_ARG, "vn_model_get_stats", "NULL argument");
    *out = m->stats;
    return VN_OK;
}

int32_t vn_model_num_inputs(const vn_model *m)
{
    return m ? m->num_inputs : 0;
}
int32_t vn_model_num_outputs(const vn_model *m)
{
    return m ? m->num_outputs : 0;
}
int32_t vn_model_num_nodes(const vn_model *m)
{
    return m ? m->num_nodes : 0;
}

static vn_status io(const vn_model *m, int32_t i, const char **name, vn_tensor_desc *desc,
                    bool output)
{
    const char *w = output ? "vn_model_output" : "vn_model_input";
    if (!m) return vn_error(VN_ERR_INVALID_ARG, w, "model is NULL");
    int32_t n = output ? m->num_outputs : m->num_inputs;
    if (i < 0 || i >= n)
        return vn_error(VN_ERR_INVALID_ARG, w, "index %d is outside 0..%d", (int)i, (int)n - 1);
    const vn_cvalue *v = &m->values[output ? m->outputs[i] : m->inputs[i]];
    if (name) *name = v->name;
    if (desc) *desc = v->desc;
    return VN_OK;
}

vn_status vn_model_input(const vn_model *m, int32_t i, const char **name, vn_tensor_desc *desc)
{
    return io(m, i, name, desc, false);
}

vn_status vn_model_output(const vn_model *m, int32_t i, const char **name, vn_tensor_desc *desc)
{
    return io(m, i, name, desc, true);
}
