/*
 * pass_fuse_pool.c — "fuse_conv_pool" (O3, after layout propagation): a stem
 * vinci::(Fused)ConvNC1HWC0 that reads the plain image (x_layout = "NCHW")
 * followed by its MaxPoolNC1HWC0 becomes one FusedConvNC1HWC0 with the
 * pool's attributes prefixed "pool_" (ops/conv_plan.c): the stem's output,
 * the largest map of a ResNet or SqueezeNet (3.2 MB), is then pooled from
 * an L1 scratch and never written or read back (conv_direct.c).
 *
 * Conditions: the conv has no residual and no pool yet; the pool is the
 * conv output's sole reader, its Indices output unread; the fused
 * operator's own plan decides the rest (vn_fuse_apply), among it which
 * pool_ attributes it honours (conv_plan.c read_pool: MaxPool's seven).
 *
 * Second pattern: any (Fused)ConvNC1HWC0 (residual allowed, no pool_ or dw_
 * attributes) whose sole reader is a GlobalAveragePoolNC1HWC0 (a
 * classifier's last conv: SqueezeNet's 1000 x 13 x 13, MobileNetV2's 1280 x
 * 7 x 7, a ResNet's last block) becomes one FusedConvNC1HWC0 with pool_global
 * = 1: each output block's map is averaged from L1 and never written.
 */
#include <string.h>

#include "graph/pass_fuse.h"

#define MAX_ATTRS 32

static bool is_vinci_op(const vn_cnode *n, const char *op)
{
    return !n->dead && n->domain && strcmp(n->domain, "vinci") == 0 && strcmp(n->op_type, op) == 0;
}

/* A conv (fused or not) with no fused pool or depthwise conv yet. */
static bool plain_conv(const vn_cnode *n)
{
    if (!is_vinci_op(n, "FusedConvNC1HWC0") && !is_vinci_op(n, "ConvNC1HWC0")) return false;
    for (int32_t a = 0; a < n->num_attrs; a++)
        if (strncmp(n->attrs[a].name, "pool_", 5) == 0 || strncmp(n->attrs[a].name, "dw_", 3) == 0)
            return false;
    return true;
}

/* A stem conv: plain input, no residual, not pooled already. */
static bool stem_conv(const vn_cnode *n)
{
    return plain_conv(n) && !(n->num_inputs > 3 && n->inputs[3] >= 0) &&
           strcmp(vn_fuse_attr_str(n, "x_layout", ""), "NCHW") == 0;
}

static vn_status fuse(vn_model *m, int32_t ci, int32_t pi, vn_pass_report *r)
{
    const vn_cnode *conv = &m->nodes[ci], *pool = &m->nodes[pi];
    vn_attr attrs[MAX_ATTRS];
    int32_t na;
    vn_status st =
        vn_fuse_prefixed_attrs(m, conv, pool, "pool_", attrs, MAX_ATTRS, &na, "fuse_conv_pool");
    if (st != VN_OK || na < 0) return st;
    int32_t ins[3] = {conv->inputs[0], conv->inputs[1],
                      conv->num_inputs > 2 ? conv->inputs[2] : -1};
    int32_t members[2] = {ci, pi};
    vn_fuse_rewrite rw = {"FusedConvNC1HWC0", "vinci", conv->name, ins, 3, attrs, na, false};
    bool done;
    return vn_fuse_apply(m, pi, &rw, members, 2, r, &done);
}

/* conv (every input kept) + GlobalAveragePool -> FusedConvNC1HWC0, pool_global = 1. */
static vn_status fuse_global(vn_model *m, int32_t ci, int32_t pi, vn_pass_report *r)
{
    const vn_cnode *conv = &m->nodes[ci];
    if (conv->num_attrs + 1 > MAX_ATTRS || conv->num_inputs > 4) return VN_OK;
    vn_attr attrs[MAX_ATTRS];
    memcpy(attrs, conv->attrs, (size_t)conv->num_attrs * sizeof *attrs);
    attrs[conv->num_attrs] = (vn_attr){.name = "pool_global", .type = VN_ATTR_INT, .i = 1};
    int32_t members[2] = {ci, pi};
    vn_fuse_rewrite rw = {"FusedConvNC1HWC0", "vinci", conv->name,          conv->inputs,
                          conv->num_inputs,   attrs,   conv->num_attrs + 1, false};
    bool done;
    return vn_fuse_apply(m, pi, &rw, members, 2, r, &done);
}

vn_status vn_pass_fuse_pool(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        if (!plain_conv(&m->nodes[i])) continue;
        int32_t p = vn_fuse_sole_reader(m, m->nodes[i].outputs[0]);
        if (p < 0) continue;
        vn_status st = VN_OK;
        if (is_vinci_op(&m->nodes[p], "GlobalAveragePoolNC1HWC0"))
            st = fuse_global(m, i, p, r);
        else if (stem_conv(&m->nodes[i]) && is_vinci_op(&m->nodes[p], "MaxPoolNC1HWC0") &&
                 vn_fuse_extra_outputs_unread(m, &m->nodes[p]))
            st = fuse(m, i, p, r);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
