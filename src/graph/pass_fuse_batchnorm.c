/*
 * pass_fuse_batchnorm.c — "fold_batchnorm": Conv (constant f32 W, optional
 * constant B) whose output only an inference BatchNormalization reads becomes
 * one plain ONNX Conv with folded constants (ops/conv_fold.h):
 *   W'[k] = W[k] * f,  B'[k] = (B[k] - mean[k]) * f + beta[k],
 *   f = gamma[k] / sqrt(var[k] + eps).
 * Only constants are needed, so it runs before inference; the new Conv sits
 * at the BatchNormalization's place and keeps its output.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/pass_fuse.h"
#include "ops/conv_fold.h"

/* Constant f32 vector of exactly k elements. */
static const float *vec(const vn_model *m, int32_t v, int64_t k)
{
    if (!vn_fuse_is_const(m, v, VN_F32) || vn_desc_numel(&m->values[v].desc) != k) return NULL;
    return m->values[v].data;
}

static bool unread_extra_outputs(const vn_model *m, const vn_cnode *bn)
{
    for (int32_t k = 1; k < bn->num_outputs; k++) {
        int32_t v = bn->outputs[k];
        if (v >= 0 && (vn_cg_num_uses(m, v) > 0 || vn_fuse_is_output(m, v))) return false;
    }
    return true;
}

/* The BatchNormalization that alone reads Conv `c`'s output, or -1. */
static int32_t bn_after(const vn_model *m, int32_t c, int64_t *k)
{
    const vn_cnode *conv = &m->nodes[c];
    if (!vn_fuse_is_op(conv, "Conv") || conv->num_inputs < 2 || conv->num_outputs < 1 ||
        !vn_fuse_is_const(m, conv->inputs[1], VN_F32) || m->values[conv->inputs[1]].desc.rank < 3)
        return -1;
    *k = m->values[conv->inputs[1]].desc.dims[0];
    if (conv->num_inputs > 2 && conv->inputs[2] >= 0 && !vec(m, conv->inputs[2], *k)) return -1;
    int32_t b = vn_fuse_sole_reader(m, conv->outputs[0]);
    if (b < 0) return -1;
    const vn_cnode *bn = &m->nodes[b];
    if (!vn_fuse_is_op(bn, "BatchNormalization") || bn->num_inputs != 5 ||
        bn->inputs[0] != conv->outputs[0] || vn_fuse_attr_int(bn, "training_mode", 0) != 0 ||
        !unread_extra_outputs(m, bn))
        return -1;
    for (int32_t i = 1; i < 5; i++)
        if (!vec(m, bn->inputs[i], *k)) return -1;
    return b;
}

/* New W' and B' constants; false on a refusal (message cleared) or no memory. */
static bool fold_values(vn_model *m, int32_t c, int32_t b, int64_t k, int32_t *w2, int32_t *b2)
{
    const vn_cnode *conv = &m->nodes[c], *bn = &m->nodes[b];
    const vn_cvalue *w = &m->values[conv->inputs[1]];
    vn_tensor_desc bd = {VN_F32, 1, {k}};
    *w2 = vn_fuse_new_const(m, &w->desc, m->values[conv->inputs[1]].data);
    bool has_b = conv->num_inputs > 2 && conv->inputs[2] >= 0;
    *b2 = vn_fuse_new_const(m, &bd, has_b ? m->values[conv->inputs[2]].data : NULL);
    if (*w2 < 0 || *b2 < 0) return false;
    float *wd = (float *)m->values[*w2].data, *bdat = (float *)m->values[*b2].data;
    int64_t per = k > 0 ? vn_desc_numel(&m->values[*w2].desc) / k : 0;
    float eps = (float)vn_fuse_attr_float(bn, "epsilon", 1e-5);
    const float *v[5];
    for (int32_t i = 1; i < 5; i++) v[i] = m->values[bn->inputs[i]].data;
    if (vn_conv_fold_bn(k, per, wd, bdat, v[1], v[2], v[3], v[4], eps) != VN_OK) {
        vn_clear_error(); /* e.g. a non-finite factor: keep the BatchNormalization */
        return false;
    }
    return true;
}

vn_status vn_pass_fold_batchnorm(vn_model *m, vn_pass_report *r)
{
    for (int32_t c = 0; c < m->num_nodes; c++) {
        int64_t k = 0;
        int32_t b = m->nodes[c].dead ? -1 : bn_after(m, c, &k), w2, b2;
        if (b < 0 || k <= 0 || !fold_values(m, c, b, k, &w2, &b2)) continue;
        const vn_cnode *conv = &m->nodes[c];
        int32_t ins[3] = {conv->inputs[0], w2, b2}, members[2] = {c, b};
        vn_fuse_rewrite rw = {"Conv", "", conv->name, ins, 3, conv->attrs, conv->num_attrs, true};
        bool done;
        vn_status st = vn_fuse_apply(m, b, &rw, members, 2, r, &done);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
