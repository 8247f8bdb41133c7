/*
 * pass_fuse_scale.c — "fuse_softmax_scale" (O3): the attention score chain
 *
 *   MatMul [-> Div|Mul by a constant scalar s] [-> Add(mask of the product's shape)] -> Softmax
 *
 * (at least one of the two) becomes vinci::FusedMatMul with alpha = 1/s (or s)
 * and the mask as its residual, so the scores are scaled and masked in the
 * GEMM epilogue instead of two more passes over the score matrix; the Softmax
 * stays. Only f32 plain MatMuls (it runs before fuse_matmul_epilogue, which
 * would otherwise take the MatMul with no epilogue to add). A mask that
 * broadcasts (e.g. [B, 1, 1, T]) is left as an Add between the scaled
 * product and the Softmax.
 */
#include <string.h>

#include "graph/pass_fuse.h"

typedef struct scale_match {
    int32_t members[3], count;
    int32_t mask;
    double alpha;
} scale_match;

static int32_t out_of(const vn_model *m, int32_t node)
{
    return m->nodes[node].outputs[0];
}

static bool binary(const vn_cnode *n, const char *op)
{
    return vn_fuse_is_op(n, op) && n->num_inputs == 2 && n->inputs[0] >= 0 && n->inputs[1] >= 0 &&
           n->inputs[0] != n->inputs[1];
}

/* Node r scales value v by a constant scalar: true and *alpha multiplied. */
static bool scales(const vn_model *m, int32_t r, int32_t v, double *alpha)
{
    const vn_cnode *n = &m->nodes[r];
    double s;
    if (binary(n, "Div") && n->inputs[0] == v && vn_fuse_const_scalar(m, n->inputs[1], &s) &&
        s != 0) {
        *alpha /= s;
        return true;
    }
    if (!binary(n, "Mul")) return false;
    int32_t c = n->inputs[0] == v ? n->inputs[1] : n->inputs[0];
    if (!vn_fuse_const_scalar(m, c, &s)) return false;
    *alpha *= s;
    return true;
}

static bool same_shape(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Node r adds a tensor of v's shape to v: that tensor, else -1. */
static int32_t mask_of(const vn_model *m, int32_t r, int32_t v)
{
    const vn_cnode *n = &m->nodes[r];
    if (!binary(n, "Add")) return -1;
    int32_t o = n->inputs[0] == v ? n->inputs[1] : n->inputs[0];
    return m->values[o].known && same_shape(&m->values[o].desc, &m->values[v].desc) ? o : -1;
}

static bool match(const vn_model *m, int32_t i, scale_match *sm)
{
    const vn_cnode *n = &m->nodes[i];
    if (!vn_fuse_is_op(n, "MatMul") || n->num_inputs != 2 || !m->values[out_of(m, i)].known ||
        m->values[out_of(m, i)].desc.dtype != VN_F32)
        return false;
    *sm = (scale_match){.members = {i}, .count = 1, .mask = -1, .alpha = 1.0};
    int32_t v = out_of(m, i), r = vn_fuse_sole_reader(m, v);
    if (r >= 0 && scales(m, r, v, &sm->alpha)) {
        sm->members[sm->count++] = r;
        v = out_of(m, r), r = vn_fuse_sole_reader(m, v);
    }
    if (r >= 0 && (sm->mask = mask_of(m, r, v)) >= 0) {
        sm->members[sm->count++] = r;
        v = out_of(m, r), r = vn_fuse_sole_reader(m, v);
    }
    if (r >= 0 && sm->mask < 0 && binary(&m->nodes[r], "Add")) /* a broadcast mask stays */
        r = vn_fuse_sole_reader(m, out_of(m, r));
    return sm->count > 1 && r >= 0 && vn_fuse_is_op(&m->nodes[r], "Softmax");
}

vn_status vn_pass_fuse_softmax_scale(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        scale_match sm;
        if (!match(m, i, &sm)) continue;
        const vn_cnode *mm = &m->nodes[i];
        int32_t ins[4] = {mm->inputs[0], mm->inputs[1], -1, sm.mask};
        vn_attr alpha = {.name = "alpha", .type = VN_ATTR_FLOAT, .f = sm.alpha};
        vn_fuse_rewrite rw = {"FusedMatMul", "vinci", mm->name, ins, 4, &alpha, 1, false};
        bool done;
        vn_status st =
            vn_fuse_apply(m, sm.members[sm.count - 1], &rw, sm.members, sm.count, r, &done);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
