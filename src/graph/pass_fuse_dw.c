/*
 * pass_fuse_dw.c — "fuse_pointwise_depthwise" (O3, after layout
 * propagation): a pointwise vinci::(Fused)ConvNC1HWC0 (1x1, stride 1, no
 * pads, group 1) whose output only a depthwise (Fused)ConvNC1HWC0 reads
 * becomes one FusedConvNC1HWC0: the pointwise conv's inputs and attributes,
 * then input 3 empty, input 4 the depthwise W, input 5 its B, and the
 * depthwise conv's attributes prefixed "dw_" (ops/conv_plan.c read_dw). The
 * expanded map of an inverted-residual block (MobileNetV2: 6x the block's
 * input) then goes through an L1 scratch a band of rows at a time instead
 * of to memory and back (ops/conv_dw_fused.c).
 *
 * Conditions checked here: neither conv has a residual, pool or dw_
 * attributes, or asks for bf16; the depthwise conv is the pointwise
 * output's sole reader and reads it as its X. The fused operator's own
 * plan decides the rest (vn_fuse_apply): 1x1 geometry, group = channels for
 * the depthwise conv. Every such pair fuses, small maps too: on MobileNetV2
 * (1 and 2 threads) each fused pair ran as fast as its two nodes or faster,
 * the 7 x 7 and 14 x 14 ones mostly by saving a launch.
 */
#include <string.h>

#include "graph/pass_fuse.h"

#define MAX_ATTRS 32

static bool is_conv(const vn_cnode *n)
{
    if (n->dead || !n->domain || strcmp(n->domain, "vinci") != 0) return false;
    return !strcmp(n->op_type, "ConvNC1HWC0") || !strcmp(n->op_type, "FusedConvNC1HWC0");
}

/* A conv of neither a residual, another fusion nor bf16. */
static bool plain_conv(const vn_cnode *n)
{
    if (!is_conv(n) || (n->num_inputs > 3 && n->inputs[3] >= 0)) return false;
    if (strcmp(vn_fuse_attr_str(n, "compute", "f32"), "f32") != 0) return false;
    if (strcmp(vn_fuse_attr_str(n, "x_layout", "NC1HWC0"), "NC1HWC0") != 0) return false;
    for (int32_t a = 0; a < n->num_attrs; a++)
        if (!strncmp(n->attrs[a].name, "pool_", 5) || !strncmp(n->attrs[a].name, "dw_", 3))
            return false;
    return true;
}

static vn_status fuse(vn_model *m, int32_t pi, int32_t di, vn_pass_report *r)
{
    const vn_cnode *pw = &m->nodes[pi], *dw = &m->nodes[di];
    vn_attr attrs[MAX_ATTRS];
    int32_t na;
    vn_status st =
        vn_fuse_prefixed_attrs(m, pw, dw, "dw_", attrs, MAX_ATTRS, &na, "fuse_pointwise_depthwise");
    if (st != VN_OK || na < 0) return st;
    int32_t ins[6] = {pw->inputs[0],
                      pw->inputs[1],
                      pw->num_inputs > 2 ? pw->inputs[2] : -1,
                      -1,
                      dw->inputs[1],
                      dw->num_inputs > 2 ? dw->inputs[2] : -1};
    int32_t members[2] = {pi, di};
    vn_fuse_rewrite rw = {"FusedConvNC1HWC0", "vinci", pw->name, ins, 6, attrs, na, false};
    bool done;
    return vn_fuse_apply(m, di, &rw, members, 2, r, &done);
}

vn_status vn_pass_fuse_dw(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *pw = &m->nodes[i];
        if (!plain_conv(pw)) continue;
        int32_t d = vn_fuse_sole_reader(m, pw->outputs[0]);
        if (d < 0 || !plain_conv(&m->nodes[d]) || m->nodes[d].inputs[0] != pw->outputs[0]) continue;
        vn_status st = fuse(m, i, d, r);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
