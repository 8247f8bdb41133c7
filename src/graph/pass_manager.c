/*
 * pass_manager.c — the optimisation levels and the order passes run in.
 *
 *   O0: inference only.
 *   O1: identity-removal and dead-node-removal on the whole graph; then, node
 *       by node in topological order, inference followed by shape-folding and
 *       constant-folding (so a folded Shape -> Concat feeds the next node's
 *       inference as constant data); then dead-node-removal again for the
 *       producers only the folded nodes read.
 *   O2: O1, with BatchNorm folded into the Conv before it (constants only,
 *       so before inference), and after the O1 passes, with shapes known: the
 *       MatMul / Gemm and Conv epilogue fusions, then element-wise chains
 *       (last, so the epilogues keep their bias / activation / residual Adds).
 *   O3: O2, with the QDQ fusion (pass_fuse_qdq.c: DequantizeLinear -> Conv /
 *       MatMul -> QuantizeLinear becomes QLinearConv / QLinearMatMul) before
 *       inference, after fold_batchnorm: constant folding would otherwise turn
 *       the int8 weights' DequantizeLinear into f32 constants. After inference,
 *       the transformer pattern fusions (pass_fuse_attention.c, pass_fuse_gelu.c,
 *       pass_fuse_norm.c, pass_fuse_scale.c) run before the O2 ones, so the MatMul epilogue
 *       pass folds the Gelu they make; then layout propagation
 *       (pass_layout.c: NC1HWC0 across conv / pool / element-wise / Concat
 *       chains), last, on the fused graph, and the stem's MaxPool fused into
 *       its conv (pass_fuse_pool.c: both in NC1HWC0 only after layout).
 *
 * Any level, last: the precision pass (pass_precision.c) when the model is
 * compiled with a reduced precision.
 *
 * Each pass reports its changes in the model's stats, one report per pass name.
 */
#include <stdio.h>
#include <string.h>

#include "graph/cf.h"
#include "graph/pass_fuse.h"
#include "graph/pass_layout.h"

void vn_pass_note(vn_pass_report *r, const char *what)
{
    r->changes++;
    size_t used = strlen(r->detail);
    if (used >= 3 && !strcmp(r->detail + used - 3, "...")) return; /* full: elided once */
    if (used + 8 >= sizeof r->detail) return;
    size_t need = strlen(what) + (used ? 2 : 0);
    if (used + need + 5 < sizeof r->detail)
        snprintf(r->detail + used, sizeof r->detail - used, "%s%s", used ? ", " : "", what);
    else
        snprintf(r->detail + used, sizeof r->detail - used, "%s", used ? ", ..." : "...");
}

/* The report of pass `name`, created on first use. */
static vn_pass_report *report(vn_model *m, const char *name)
{
    vn_model_stats *s = &m->stats;
    for (int32_t i = 0; i < s->num_reports; i++)
        if (!strcmp(s->reports[i].pass, name)) return &s->reports[i];
    if (s->num_reports >= VN_MAX_PASS_REPORTS) return &s->reports[VN_MAX_PASS_REPORTS - 1];
    vn_pass_report *r = &s->reports[s->num_reports++];
    memset(r, 0, sizeof *r);
    r->pass = name;
    return r;
}

typedef struct graph_pass {
    const char *name;
    vn_graph_pass_fn fn;
} graph_pass;

typedef struct node_pass {
    const char *name;
    vn_node_pass_fn fn;
} node_pass;

static const graph_pass before[] = {{"identity-removal", vn_pass_identity},
                                    {"dead-node-removal", vn_pass_dead_nodes}};
static const node_pass per_node[] = {{"shape-folding", vn_fold_shape},
                                     {"constant-folding", vn_fold_const}};
static const graph_pass after[] = {{"dead-node-removal", vn_pass_dead_nodes}};
static const graph_pass o2_before[] = {{"fold_batchnorm", vn_pass_fold_batchnorm}};
static const graph_pass o2_after[] = {{"fuse_conv_epilogue", vn_pass_fuse_conv},
                                      {"fuse_matmul_epilogue", vn_pass_fuse_matmul},
                                      {"fuse_elementwise_chains", vn_pass_fuse_elementwise}};
static const graph_pass o3_before[] = {{"fuse_qdq", vn_pass_fuse_qdq}};
static const graph_pass o3_fuse[] = {{"fuse_attention", vn_pass_fuse_attention},
                                     {"fuse_gelu", vn_pass_fuse_gelu},
                                     {"fuse_norm", vn_pass_fuse_norm},
                                     {"fuse_softmax_scale", vn_pass_fuse_softmax_scale}};
static const graph_pass o3_layout[] = {{"layout_propagation", vn_pass_layout},
                                       {"fuse_conv_pool", vn_pass_fuse_pool},
                                       {"fuse_pointwise_depthwise", vn_pass_fuse_dw}};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static vn_status run_graph_passes(vn_model *m, const graph_pass *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        vn_status st = p[i].fn(m, report(m, p[i].name));
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

static vn_status sweep(vn_model *m, int32_t level)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        if (m->nodes[i].dead) continue;
        bool cf = m->nodes[i].cf != NULL; /* control flow: inferred from its bodies (cf.h) */
        vn_status st = cf ? vn_cf_infer(m, i) : vn_cg_infer_node(m, i);
        bool changed = false;
        if (cf && st == VN_OK && level >= 1)
            st = vn_cf_fold(m, i, report(m, "constant-folding"), &changed);
        for (size_t p = 0; !cf && level >= 1 && p < sizeof per_node / sizeof per_node[0]; p++) {
            if (st != VN_OK || changed) break;
            st = per_node[p].fn(m, i, report(m, per_node[p].name), &changed);
        }
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

vn_status vn_pass_run_all(vn_model *m, int32_t level)
{
    vn_status st = VN_OK;
    if (level >= 1) {
        /* Reports in a stable order, even for passes that change nothing. */
        for (size_t i = 0; i < sizeof before / sizeof before[0]; i++) report(m, before[i].name);
        for (size_t i = 0; i < sizeof per_node / sizeof per_node[0]; i++)
            report(m, per_node[i].name);
        for (size_t i = 0; level >= 2 && i < COUNT(o2_before); i++) report(m, o2_before[i].name);
        for (size_t i = 0; level >= 2 && i < COUNT(o2_after); i++) report(m, o2_after[i].name);
        for (size_t i = 0; level >= 3 && i < COUNT(o3_before); i++) report(m, o3_before[i].name);
        for (size_t i = 0; level >= 3 && i < COUNT(o3_fuse); i++) report(m, o3_fuse[i].name);
        st = run_graph_passes(m, before, sizeof before / sizeof before[0]);
    }
    if (st == VN_OK && level >= 2) st = run_graph_passes(m, o2_before, COUNT(o2_before));
    if (st == VN_OK && level >= 3) st = run_graph_passes(m, o3_before, COUNT(o3_before));
    if (st == VN_OK) st = sweep(m, level);
    if (st == VN_OK && level >= 1) st = run_graph_passes(m, after, sizeof after / sizeof after[0]);
    if (st == VN_OK && level >= 3) st = run_graph_passes(m, o3_fuse, COUNT(o3_fuse));
    if (st == VN_OK && level >= 2) st = run_graph_passes(m, o2_after, COUNT(o2_after));
    if (st == VN_OK && level >= 3) st = run_graph_passes(m, o3_layout, COUNT(o3_layout));
    if (st == VN_OK && m->precision != VN_PRECISION_F32)
        st = vn_pass_precision(m, report(m, "precision"));
    return st;
}
