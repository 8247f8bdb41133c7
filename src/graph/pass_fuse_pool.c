/*
 * pass_fuse_pool.c — "fuse_conv_pool" (O3, after layout propagation): a stem
 * vinci::(Fused)ConvNC1HWC0 that reads the plain image (x_layout = "NCHW")
 * followed by its MaxPoolNC1HWC0 becomes one FusedConvNC1HWC0 with the
 * pool's attributes prefixed "pool_" (ops/conv_plan.c): the stem's output,
 * the largest map of a ResNet or SqueezeNet (3.2 MB), is then pooled from
 * an L1 scratch and never written or read back (conv_direct.c).
 *
 * Conditions: the conv has no residual and no pool yet; the pool is the
 * conv output's sole reader, its Indices output unread, every attribute
 * one MaxPool has (a name not in `renamed` leaves the pair alone); the
 * fused operator's own plan decides the rest (vn_fuse_apply).
 */
#include <string.h>

#include "graph/pass_fuse.h"

#define MAX_ATTRS 32

/* MaxPool's attributes and their names on the fused conv. */
static const char *const renamed[][2] = {
    {"kernel_shape", "pool_kernel_shape"},
    {"strides", "pool_strides"},
    {"pads", "pool_pads"},
    {"dilations", "pool_dilations"},
    {"ceil_mode", "pool_ceil_mode"},
    {"auto_pad", "pool_auto_pad"},
    {"storage_order", "pool_storage_order"},
};

static bool is_vinci_op(const vn_cnode *n, const char *op)
{
    return !n->dead && n->domain && strcmp(n->domain, "vinci") == 0 && strcmp(n->op_type, op) == 0;
}

static const char *pool_name(const char *name)
{
    for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++)
        if (strcmp(renamed[i][0], name) == 0) return renamed[i][1];
    return NULL;
}

/* A stem conv (fused or not): plain input, no residual, not pooled already. */
static bool stem_conv(const vn_cnode *n)
{
    bool fused = is_vinci_op(n, "FusedConvNC1HWC0");
    if ((!fused && !is_vinci_op(n, "ConvNC1HWC0")) || (n->num_inputs > 3 && n->inputs[3] >= 0))
        return false;
    if (strcmp(vn_fuse_attr_str(n, "x_layout", ""), "NCHW") != 0) return false;
    for (int32_t a = 0; a < n->num_attrs; a++)
        if (strncmp(n->attrs[a].name, "pool_", 5) == 0) return false;
    return true;
}

static bool indices_unread(const vn_model *m, const vn_cnode *pool)
{
    for (int32_t k = 1; k < pool->num_outputs; k++)
        if (pool->outputs[k] >= 0 &&
            (vn_cg_num_uses(m, pool->outputs[k]) || vn_fuse_is_output(m, pool->outputs[k])))
            return false;
    return true;
}

static vn_status fuse(vn_model *m, int32_t ci, int32_t pi, vn_pass_report *r)
{
    const vn_cnode *conv = &m->nodes[ci], *pool = &m->nodes[pi];
    if (conv->num_attrs + pool->num_attrs > MAX_ATTRS) return VN_OK;
    vn_attr attrs[MAX_ATTRS];
    int32_t na = conv->num_attrs;
    memcpy(attrs, conv->attrs, (size_t)na * sizeof *attrs);
    for (int32_t a = 0; a < pool->num_attrs; a++) {
        const char *name = pool_name(pool->attrs[a].name);
        if (!name) return VN_OK; /* an attribute the fused pool would not honour */
        attrs[na] = pool->attrs[a];
        attrs[na++].name = name;
    }
    int32_t ins[3] = {conv->inputs[0], conv->inputs[1],
                      conv->num_inputs > 2 ? conv->inputs[2] : -1};
    int32_t members[2] = {ci, pi};
    vn_fuse_rewrite rw = {"FusedConvNC1HWC0", "vinci", conv->name, ins, 3, attrs, na, false};
    bool done;
    return vn_fuse_apply(m, pi, &rw, members, 2, r, &done);
}

vn_status vn_pass_fuse_pool(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        if (!stem_conv(&m->nodes[i])) continue;
        int32_t p = vn_fuse_sole_reader(m, m->nodes[i].outputs[0]);
        if (p < 0 || !is_vinci_op(&m->nodes[p], "MaxPoolNC1HWC0") ||
            !indices_unread(m, &m->nodes[p]))
            continue;
        vn_status st = fuse(m, i, p, r);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
