/*
 * pass_fuse_conv.c — "fuse_conv_epilogue": Conv [+ Add(residual Z)] [+ act]
 * becomes one vinci::FusedConv, Y = act(conv(X, W) + B + Z) (ops/conv_op.c),
 * with at least one epilogue step. act: Relu, Sigmoid, LeakyRelu (alpha),
 * Clip (constant min / max). Z must have Y's shape and dtype; an activation
 * before the residual Add is not this operator's order and is left alone.
 * Intermediates must have one reader and not be graph outputs.
 */
#include <math.h>
#include <string.h>

#include "graph/pass_fuse.h"

#define MAX_ATTRS 32

typedef struct conv_match {
    int32_t members[3], count;
    int32_t residual;
    const char *act; /* NULL none */
    float params[2];
    int32_t num_params;
} conv_match;

static bool same_desc(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static int32_t tail(const vn_model *m, const conv_match *cm)
{
    return m->nodes[cm->members[cm->count - 1]].outputs[0];
}

/* Value v's producer, or -1. */
static int32_t producer_of(const vn_model *m, int32_t v)
{
    return v >= 0 ? m->values[v].producer : -1;
}

/* Z is the output of another Conv the Add alone reads, on a longer path than
 * this conv (its input is produced later): that conv takes the Add, and this
 * one (a ResNet downsample) stays free to run beside the block's first conv
 * (compile_groups.c), not after its last. */
static bool deeper_conv_takes(const vn_model *m, const conv_match *cm, int32_t z, int32_t add)
{
    int32_t p = producer_of(m, z);
    if (p < 0 || !vn_fuse_is_op(&m->nodes[p], "Conv") || vn_fuse_sole_reader(m, z) != add)
        return false;
    return producer_of(m, m->nodes[p].inputs[0]) >
           producer_of(m, m->nodes[cm->members[0]].inputs[0]);
}

static void try_residual(const vn_model *m, conv_match *cm)
{
    int32_t cur = tail(m, cm), r = vn_fuse_sole_reader(m, cur);
    if (r < 0) return;
    const vn_cnode *n = &m->nodes[r];
    if (!vn_fuse_is_op(n, "Add") || n->num_inputs != 2 || n->inputs[0] == n->inputs[1]) return;
    int32_t z = n->inputs[0] == cur ? n->inputs[1] : n->inputs[0];
    const vn_tensor_desc *y = &m->values[cur].desc;
    if (z < 0 || !m->values[z].known || !same_desc(&m->values[z].desc, y) ||
        !same_desc(&m->values[n->outputs[0]].desc, y) || deeper_conv_takes(m, cm, z, r))
        return;
    cm->residual = z;
    cm->members[cm->count++] = r;
}

static bool clip_params(const vn_model *m, const vn_cnode *n, float *p)
{
    double lo = vn_fuse_attr_float(n, "min", -3.402823466e38),
           hi = vn_fuse_attr_float(n, "max", 3.402823466e38);
    if (n->num_inputs > 1 && n->inputs[1] >= 0 && !vn_fuse_const_scalar(m, n->inputs[1], &lo))
        return false;
    if (n->num_inputs > 2 && n->inputs[2] >= 0 && !vn_fuse_const_scalar(m, n->inputs[2], &hi))
        return false;
    p[0] = (float)lo, p[1] = (float)hi;
    return lo <= hi;
}

static void try_act(const vn_model *m, conv_match *cm)
{
    int32_t r = vn_fuse_sole_reader(m, tail(m, cm));
    if (r < 0) return;
    const vn_cnode *n = &m->nodes[r];
    if (vn_fuse_is_op(n, "Relu") || vn_fuse_is_op(n, "Sigmoid")) {
        cm->act = n->op_type;
    } else if (vn_fuse_is_op(n, "LeakyRelu")) {
        cm->act = "LeakyRelu";
        cm->params[0] = (float)vn_fuse_attr_float(n, "alpha", 0.01);
        cm->num_params = 1;
    } else if (vn_fuse_is_op(n, "Clip") && clip_params(m, n, cm->params)) {
        cm->act = "Clip";
        cm->num_params = 2;
    } else {
        return;
    }
    cm->members[cm->count++] = r;
}

static vn_status rewrite(vn_model *m, const conv_match *cm, vn_pass_report *r)
{
    const vn_cnode *conv = &m->nodes[cm->members[0]];
    if (conv->num_attrs + 2 > MAX_ATTRS) return VN_OK;
    vn_attr attrs[MAX_ATTRS];
    int32_t na = conv->num_attrs;
    memcpy(attrs, conv->attrs, (size_t)na * sizeof *attrs);
    if (cm->act) {
        attrs[na++] = (vn_attr){.name = "activation", .type = VN_ATTR_STRING, .s = cm->act};
        if (cm->num_params)
            attrs[na++] = (vn_attr){.name = "activation_params",
                                    .type = VN_ATTR_FLOATS,
                                    .floats = cm->params,
                                    .count = cm->num_params};
    }
    int32_t ins[4] = {conv->inputs[0], conv->inputs[1], conv->num_inputs > 2 ? conv->inputs[2] : -1,
                      cm->residual};
    vn_fuse_rewrite rw = {"FusedConv", "vinci", conv->name, ins, 4, attrs, na, false};
    bool done;
    return vn_fuse_apply(m, cm->members[cm->count - 1], &rw, cm->members, cm->count, r, &done);
}

vn_status vn_pass_fuse_conv(vn_model *m, vn_pass_report *r)
{
    if (!vn_op_find("FusedConv", "vinci")) return VN_OK; /* not registered: nothing to do */
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        if (!vn_fuse_is_op(n, "Conv") || n->num_inputs < 2 || !m->values[n->outputs[0]].known)
            continue;
        conv_match cm = {{i}, 1, -1, NULL, {0, 0}, 0};
        try_residual(m, &cm);
        try_act(m, &cm);
        if (cm.count < 2) continue;
        vn_status st = rewrite(m, &cm, r);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
