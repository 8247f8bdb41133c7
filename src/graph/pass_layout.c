/*
 * pass_layout.c — O3 layout propagation: keep activations in NC1HWC0 (5HD,
 * ops/layout.h) across chains of convolutions, pools, element-wise operators
 * and channel Concats, with reorders only where the chain meets a plain
 * operator, a graph input or a graph output.
 *
 * One forward walk in execution order decides each node:
 *   - a 2-D f32 Conv / FusedConv whose NC1HWC0 kernels apply (direct,
 *     depthwise, Winograd) runs on its blocked twin (its NCHW form would
 *     reorder through its workspace anyway), so a chain starts there; one
 *     left to an NCHW GEMM (grouped, C/G or K/G not multiples of 16) stays;
 *   - a pool, an element-wise operator or a Concat along channels follows:
 *     it runs blocked when one of its activation inputs already is, and the
 *     operator is safe on 5HD (below);
 *   - anything else is plain.
 * A plain value a blocked node reads gets one shared vinci::ToNC1HWC0 (but
 * a conv of at most 4 input channels, a network's stem, reads a plain X
 * that has no blocked form yet as it is: x_layout = "NCHW", read in place
 * by its direct kernel, conv_kernel.inc); a
 * blocked value a plain node (or the graph's outputs) reads is restored by
 * one vinci::FromNC1HWC0 into the original value, so names, graph outputs
 * and plain readers keep their value indices. Blocked values are new values
 * whose desc is the padded 5-D shape, so the memory plan sizes them as is.
 *
 * Safe on 5HD: the padding lanes (c >= C) of a blocked tensor must stay zero
 * (ops/layout.h), so an element-wise operator qualifies only when f(0, ..) = 0;
 * its non-scalar operands must carry the channels (full shape, or broadcast
 * over batch / spatial dims like a per-channel [C, 1, 1] constant, which is
 * reordered once at compile time). Concat along
 * axis 1 works on whole C1 blocks, so only when every input's C is a multiple
 * of C0.
 *
 * Invariants kept (compile.h): the node array is rebuilt in execution order
 * (a reorder is placed right before its first reader), every value keeps at
 * most one producer, and every rewritten or new node is inferred again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/pass_layout.h"
#include "graph/pass_fuse.h"
#include "ops/conv.h"

typedef enum rule_kind { RULE_CONV, RULE_POOL, RULE_ELTWISE, RULE_CONCAT } rule_kind;

typedef struct rule {
    const char *op, *domain;   /* the plain operator */
    const char *twin, *twin_d; /* its NC1HWC0 form (same operator when layout-agnostic) */
    rule_kind kind;
} rule;

static const rule rules[] = {
    {"Conv", "", "ConvNC1HWC0", "vinci", RULE_CONV},
    {"FusedConv", "vinci", "FusedConvNC1HWC0", "vinci", RULE_CONV},
    {"MaxPool", "", "MaxPoolNC1HWC0", "vinci", RULE_POOL},
    {"AveragePool", "", "AveragePoolNC1HWC0", "vinci", RULE_POOL},
    {"GlobalAveragePool", "", "GlobalAveragePoolNC1HWC0", "vinci", RULE_POOL},
    {"GlobalMaxPool", "", "GlobalMaxPoolNC1HWC0", "vinci", RULE_POOL},
    {"Add", "", "Add", "", RULE_ELTWISE},
    {"Sub", "", "Sub", "", RULE_ELTWISE},
    {"Mul", "", "Mul", "", RULE_ELTWISE},
    {"Max", "", "Max", "", RULE_ELTWISE},
    {"Min", "", "Min", "", RULE_ELTWISE},
    {"Sum", "", "Sum", "", RULE_ELTWISE},
    {"Relu", "", "Relu", "", RULE_ELTWISE},
    {"LeakyRelu", "", "LeakyRelu", "", RULE_ELTWISE},
    {"Neg", "", "Neg", "", RULE_ELTWISE},
    {"Abs", "", "Abs", "", RULE_ELTWISE},
    {"Clip", "", "Clip", "", RULE_ELTWISE},
    {"Concat", "", "Concat", "", RULE_CONCAT},
};
#define NRULES ((int32_t)(sizeof rules / sizeof rules[0]))

typedef struct walk {
    vn_model *m;
    int32_t n0;     /* values before the pass (the arrays below cover them) */
    int32_t *blk;   /* original value -> its blocked twin, or -1 */
    int32_t *to;    /* plain value -> its ToNC1HWC0 output, or -1 */
    bool *restored; /* blocked original value already rewritten back by a From */
    int64_t *chans; /* original value -> its channel count C */
    vn_cnode *out;  /* the new node array */
    bool *touched;  /* per new node: infer again */
    int32_t count, cap;
    vn_pass_report *r;
} walk;

static const rule *find_rule(const vn_cnode *n)
{
    const char *dom = n->domain ? n->domain : "";
    for (int32_t i = 0; i < NRULES; i++)
        if (!strcmp(rules[i].op, n->op_type) && !strcmp(rules[i].domain, dom)) return &rules[i];
    return NULL;
}

/* A known rank-4 f32 tensor (NCHW of a 2-D operator). */
static bool is_nchw(const vn_model *m, int32_t v)
{
    return v >= 0 && m->values[v].known && m->values[v].desc.rank == 4 &&
           m->values[v].desc.dtype == VN_F32;
}

static bool is_scalar(const vn_model *m, int32_t v)
{
    return v >= 0 && m->values[v].known && vn_desc_numel(&m->values[v].desc) == 1;
}

/* Can operand v of an element-wise node with output y be read blocked? It
 * must have y's channels, every other dim y's or 1 (the 5-D tensors then
 * broadcast exactly as the 4-D ones did), and be rank 4, or a constant
 * [C, h, w] (rank 3, read as [1, C, h, w]). An operand broadcast over the
 * channels ([N, 1, H, W]) cannot: its lanes would have to be repeated. */
static bool channel_operand(const vn_model *m, int32_t v, const vn_tensor_desc *y)
{
    const vn_cvalue *x = &m->values[v];
    const vn_tensor_desc *d = &x->desc;
    bool constant = x->kind == VN_CV_CONST && x->data;
    if (!x->known || d->dtype != VN_F32 || !(d->rank == 4 || (d->rank == 3 && constant)))
        return false;
    int32_t off = 4 - d->rank;
    for (int32_t k = 0; k < d->rank; k++)
        if (d->dims[k] != y->dims[k + off] && (d->dims[k] != 1 || k + off == 1)) return false;
    return true;
}

/* Clip keeps zero padding only when min <= 0 <= max (absent bounds are open). */
static bool clip_keeps_zero(const vn_model *m, const vn_cnode *n)
{
    double lo = vn_fuse_attr_float(n, "min", -1), hi = vn_fuse_attr_float(n, "max", 1);
    if (n->num_inputs > 1 && n->inputs[1] >= 0 && !vn_fuse_const_scalar(m, n->inputs[1], &lo))
        return false;
    if (n->num_inputs > 2 && n->inputs[2] >= 0 && !vn_fuse_const_scalar(m, n->inputs[2], &hi))
        return false;
    return lo <= 0 && hi >= 0;
}

/* Is input k of n one the blocked twin reads in 5HD? (Weights, bias and
 * scalar operands stay as they are.) */
static bool blocked_slot(const walk *w, const vn_cnode *n, const rule *ru, int32_t k)
{
    int32_t v = n->inputs[k];
    if (v < 0) return false;
    switch (ru->kind) {
    case RULE_CONV:
        return k == 0 || k == 3; /* X and the residual Z */
    case RULE_POOL:
        return k == 0;
    case RULE_ELTWISE:
        return !(strcmp(ru->op, "Clip") == 0 && k > 0) && !is_scalar(w->m, v);
    case RULE_CONCAT:
        return true;
    }
    return false;
}

static bool outputs_single(const vn_model *m, const vn_cnode *n)
{
    return vn_fuse_extra_outputs_unread(m, n) && n->num_outputs >= 1 && is_nchw(m, n->outputs[0]);
}

/* The conv's geometry as its NCHW form sees it (false: not ours to report,
 * the plain node keeps its own checks). */
static bool conv_geometry(const vn_model *m, int32_t node, vn_conv_geom *g)
{
    vn_tensor_desc in[64];
    const void *data[64];
    vn_attrs attrs;
    vn_op_ctx ctx;
    if (m->nodes[node].num_inputs > 64) return false;
    vn_cg_op_ctx(m, node, in, data, &attrs, &ctx);
    if (vn_conv_geom_parse(&ctx, "pass_layout", VN_CONV_NCHW, false, g) != VN_OK) {
        vn_clear_error();
        return false;
    }
    return true;
}

/* Do the conv's NC1HWC0 kernels apply (conv_plan.c's rule)? Otherwise it runs
 * an NCHW GEMM, which its twin would wrap in two workspace reorders. */
static bool conv_kernels_blocked(const vn_model *m, int32_t node)
{
    vn_conv_geom g;
    if (!conv_geometry(m, node, &g)) return false;
    return g.nsp == 2 && (vn_conv_direct_ok(&g) || vn_conv_depthwise_ok(&g));
}

/* May the blocked twin of conv `node` read its plain X as it is (x_layout
 * NCHW: the direct kernel reads it in place, conv.h), instead of through a
 * ToNC1HWC0? A stem's X of at most STEM_CHANNELS channels (its blocked form
 * would be 16/C times larger) that has no blocked form yet, when the
 * algorithm is not forced to another than direct. (A wider plain input
 * would be read a plane per channel: blocked pixels keep a cache line's 16
 * channels together.) */
#define STEM_CHANNELS 4
static bool conv_reads_plain(const walk *w, const vn_cnode *n, int32_t node)
{
    int32_t x = n->inputs[0];
    const char *algo = vn_fuse_attr_str(n, "algo", "auto");
    if (w->blk[x] >= 0 || w->to[x] >= 0 || w->m->values[x].kind == VN_CV_CONST ||
        (strcmp(algo, "auto") && strcmp(algo, "direct")))
        return false;
    vn_conv_geom g;
    return conv_geometry(w->m, node, &g) && g.C <= STEM_CHANNELS && vn_conv_plain_input_ok(&g);
}

/* Does node i run on its blocked twin? */
static bool goes_blocked(const walk *w, int32_t i, const rule *ru)
{
    const vn_model *m = w->m;
    const vn_cnode *n = &m->nodes[i];
    if (!ru || !outputs_single(m, n)) return false;
    /* A twin must say in the layout table (ops.h) that it reads NC1HWC0. */
    uint32_t layouts_in = 0;
    const vn_op_def *twin = vn_op_find(ru->twin, ru->twin_d);
    vn_op_layouts(twin, &layouts_in, NULL);
    if (!twin || (strcmp(ru->twin, ru->op) && !(layouts_in & VN_LAYOUT_NC1HWC0))) return false;
    const vn_tensor_desc *y = &m->values[n->outputs[0]].desc;
    bool any_blocked = false;
    for (int32_t k = 0; k < n->num_inputs; k++) {
        int32_t v = n->inputs[k];
        if (!blocked_slot(w, n, ru, k)) continue;
        if (ru->kind == RULE_ELTWISE ? !channel_operand(m, v, y) : !is_nchw(m, v)) return false;
        any_blocked |= w->blk[v] >= 0;
        if (ru->kind == RULE_CONCAT && m->values[v].desc.dims[1] % VN_C0) return false;
    }
    switch (ru->kind) {
    case RULE_CONV:
        return conv_kernels_blocked(m, i);
    case RULE_POOL:
        return any_blocked;
    case RULE_ELTWISE:
        return any_blocked && (strcmp(n->op_type, "Clip") || clip_keeps_zero(m, n));
    case RULE_CONCAT:
        return any_blocked && vn_fuse_attr_int(n, "axis", 0) == 1;
    }
    return false;
}

/* ---- building the new node array ------------------------------------------------------ */

static vn_cnode *emit(walk *w, const vn_cnode *n, bool touched)
{
    if (w->count == w->cap) {
        vn_error(VN_ERR_INTERNAL, "pass_layout", "node array overflow");
        return NULL;
    }
    w->touched[w->count] = touched;
    w->out[w->count] = *n;
    return &w->out[w->count++];
}

/* A one-input one-output reorder node `op` from value x to value y. */
static vn_status emit_reorder(walk *w, const char *op, int32_t x, int32_t y, int64_t channels)
{
    vn_model *m = w->m;
    vn_cnode n;
    memset(&n, 0, sizeof n);
    n.name = "";
    n.op_type = op;
    n.domain = "vinci";
    n.def = vn_op_find(op, "vinci");
    int32_t *io = vn_gmem_alloc(&m->mem, 2 * sizeof *io);
    vn_attr *a = channels >= 0 ? vn_gmem_alloc(&m->mem, sizeof *a) : NULL;
    if (!io || (channels >= 0 && !a) || !n.def)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "pass_layout", "no memory for a reorder node");
    io[0] = x;
    io[1] = y;
    n.inputs = &io[0];
    n.outputs = &io[1];
    n.num_inputs = n.num_outputs = 1;
    if (a) {
        memset(a, 0, sizeof *a);
        a->name = "channels";
        a->type = VN_ATTR_INT;
        a->i = channels;
        n.attrs = a;
        n.num_attrs = 1;
    }
    if (!emit(w, &n, true)) return VN_ERR_INTERNAL;
    vn_pass_note(w->r, op);
    return VN_OK;
}

/* A constant [N, C, h, w] or [C, h, w] reordered now into a new constant
 * [N or 1, C1, h, w, 16] (zero lanes past C), instead of at every run. */
static int32_t block_const(vn_model *m, int32_t v, vn_pass_report *r)
{
    vn_tensor_desc d = m->values[v].desc, b;
    int64_t dims[4];
    for (int32_t k = 0; k < 4; k++) dims[k] = k < 4 - d.rank ? 1 : d.dims[k - (4 - d.rank)];
    int64_t N = dims[0], C = dims[1], S = dims[2] * dims[3], C1 = (C + VN_C0 - 1) / VN_C0;
    memset(&b, 0, sizeof b);
    b.dtype = VN_F32;
    b.rank = 5;
    b.dims[0] = N, b.dims[1] = C1, b.dims[2] = dims[2], b.dims[3] = dims[3], b.dims[4] = VN_C0;
    float *y = calloc((size_t)(N * C1 * S * VN_C0), sizeof *y);
    if (!y) {
        vn_error(VN_ERR_OUT_OF_MEMORY, "pass_layout", "no memory for a blocked constant");
        return -1;
    }
    const float *x = m->values[v].data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t s = 0; s < S; s++)
                y[((n * C1 + c / VN_C0) * S + s) * VN_C0 + c % VN_C0] = x[(n * C + c) * S + s];
    int32_t t = vn_fuse_new_const(m, &b, y);
    free(y);
    if (t >= 0) vn_pass_note(r, "constant -> NC1HWC0");
    return t;
}

/* The blocked form of plain value v (a shared ToNC1HWC0 before its first reader). */
static int32_t blocked_of(walk *w, int32_t v)
{
    if (w->blk[v] >= 0) return w->blk[v];
    if (w->to[v] >= 0) return w->to[v];
    if (w->m->values[v].kind == VN_CV_CONST && w->m->values[v].data)
        return w->to[v] = block_const(w->m, v, w->r);
    int32_t t = vn_cg_add_value(w->m, "", VN_CV_ACT);
    if (t < 0 || emit_reorder(w, "ToNC1HWC0", v, t, -1) != VN_OK) return -1;
    return w->to[v] = t;
}

/* Make blocked value v readable as plain again (a FromNC1HWC0 into v itself). */
static vn_status restore(walk *w, int32_t v)
{
    if (v < 0 || v >= w->n0 || w->blk[v] < 0 || w->restored[v]) return VN_OK;
    w->restored[v] = true;
    return emit_reorder(w, "FromNC1HWC0", w->blk[v], v, w->chans[v]);
}

static vn_status rewrite_blocked(walk *w, int32_t node, const rule *ru)
{
    vn_model *m = w->m;
    const vn_cnode *src = &m->nodes[node];
    vn_cnode n = *src;
    int32_t *ins = vn_gmem_alloc(&m->mem, (size_t)(n.num_inputs + 1) * sizeof *ins);
    int32_t *outs = vn_gmem_alloc(&m->mem, sizeof *outs);
    if (!ins || !outs) return vn_error(VN_ERR_OUT_OF_MEMORY, "pass_layout", "no memory");
    bool plain_x = ru->kind == RULE_CONV && conv_reads_plain(w, src, node);
    if (plain_x) {
        vn_status st = vn_fuse_add_attr_str(m, &n, "x_layout", "NCHW");
        if (st != VN_OK) return st;
        vn_pass_note(w->r, "conv reads NCHW X");
    }
    for (int32_t k = 0; k < n.num_inputs; k++) {
        bool slot = blocked_slot(w, src, ru, k) && !(plain_x && k == 0);
        vn_status st = slot ? VN_OK : restore(w, n.inputs[k]); /* e.g. a blocked 1-element value */
        if (st != VN_OK) return st;
        ins[k] = slot ? blocked_of(w, n.inputs[k]) : n.inputs[k];
        if (ins[k] < 0 && slot) return VN_ERR_OUT_OF_MEMORY;
    }
    int32_t y = n.outputs[0], b = vn_cg_add_value(m, "", VN_CV_ACT);
    if (b < 0) return VN_ERR_OUT_OF_MEMORY;
    w->blk[y] = b;
    w->chans[y] = m->values[y].desc.dims[1];
    outs[0] = b;
    n.inputs = ins;
    n.outputs = outs;
    n.num_outputs = 1;
    n.op_type = ru->twin;
    n.domain = ru->twin_d;
    n.def = vn_op_find(ru->twin, ru->twin_d);
    return emit(w, &n, true) ? VN_OK : VN_ERR_INTERNAL;
}

static vn_status rewrite_plain(walk *w, const vn_cnode *src)
{
    for (int32_t k = 0; k < src->num_inputs; k++) {
        vn_status st = restore(w, src->inputs[k]);
        if (st != VN_OK) return st;
    }
    return emit(w, src, false) ? VN_OK : VN_ERR_INTERNAL;
}

static vn_status walk_nodes(walk *w)
{
    vn_model *m = w->m;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        if (n->dead) continue;
        const rule *ru = find_rule(n);
        vn_status st = goes_blocked(w, i, ru) ? rewrite_blocked(w, i, ru) : rewrite_plain(w, n);
        if (st != VN_OK) return st;
    }
    for (int32_t k = 0; k < m->num_outputs; k++) {
        vn_status st = restore(w, m->outputs[k]);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

/* Install the new array, renumber producers and infer the changed nodes. */
static vn_status install(walk *w)
{
    vn_model *m = w->m;
    m->nodes = w->out;
    m->num_nodes = m->cap_nodes = w->count;
    for (int32_t v = 0; v < m->num_values; v++)
        if (m->values[v].kind == VN_CV_ACT) m->values[v].producer = -1;
    for (int32_t i = 0; i < m->num_nodes; i++)
        for (int32_t k = 0; k < m->nodes[i].num_outputs; k++)
            if (m->nodes[i].outputs[k] >= 0) m->values[m->nodes[i].outputs[k]].producer = i;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        if (!w->touched[i]) continue;
        vn_status st = vn_cg_infer_node(m, i);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

static bool any_conv(const vn_model *m)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const rule *ru = find_rule(&m->nodes[i]);
        if (!m->nodes[i].dead && ru && ru->kind == RULE_CONV) return true;
    }
    return false;
}

vn_status vn_pass_layout(vn_model *m, vn_pass_report *r)
{
    if (!any_conv(m)) return VN_OK;
    walk w;
    memset(&w, 0, sizeof w);
    w.m = m;
    w.r = r;
    w.n0 = m->num_values;
    w.cap = m->num_nodes + 2 * w.n0 + 1; /* the nodes, and one To and one From per value at most */
    size_t nv = (size_t)w.n0;
    w.blk = vn_gmem_alloc(&m->mem, nv * sizeof *w.blk);
    w.to = vn_gmem_alloc(&m->mem, nv * sizeof *w.to);
    w.restored = vn_gmem_alloc(&m->mem, nv * sizeof *w.restored);
    w.chans = vn_gmem_alloc(&m->mem, nv * sizeof *w.chans);
    w.out = vn_gmem_alloc(&m->mem, (size_t)w.cap * sizeof *w.out);
    w.touched = vn_gmem_alloc(&m->mem, (size_t)w.cap * sizeof *w.touched);
    if (!w.blk || !w.to || !w.restored || !w.chans || !w.out || !w.touched)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "pass_layout", "%s: no memory", m->name);
    memset(w.blk, 0xff, nv * sizeof *w.blk);
    memset(w.to, 0xff, nv * sizeof *w.to);
    memset(w.restored, 0, nv * sizeof *w.restored);
    vn_status st = walk_nodes(&w);
    return st == VN_OK ? install(&w) : st;
}
