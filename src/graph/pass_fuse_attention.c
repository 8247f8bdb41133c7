/*
 * pass_fuse_attention.c — "fuse_attention" (O3, first of the transformer
 * fusions): multi-head attention as exporters write it from torch
 *
 *   q3 -> Reshape [B,S,H,D]  -> Transpose (0,2,1,3) ---\
 *   k3 -> Reshape [B,T,H,D]  -> Transpose (0,2,3,1) -> MatMul [-> Div|Mul by a constant
 *         scalar] [-> Add mask] -> Softmax (last axis) -> MatMul with
 *   v3 -> Reshape [B,T,H,Dv] -> Transpose (0,2,1,3)
 *         -> Transpose (0,2,1,3) -> Reshape [B,S,H*Dv]
 *
 * becomes one vinci::FusedAttention(q3, k3, v3[, mask]) with num_heads H and
 * the scale, so no head-split copy, score matrix or probability matrix is
 * written to memory (attention_fused.c). Every condition is checked — f32,
 * the perms, the reshapes' shapes, the softmax axis, a constant scalar scale,
 * a mask broadcastable to [B,H,S,T], and that each intermediate has exactly one
 * reader and is not a graph output — and the graph is left alone otherwise.
 * It runs before fuse_softmax_scale, which would otherwise take the score
 * MatMul into a FusedMatMul.
 */
#include <string.h>

#include "graph/pass_fuse.h"

enum { MAX_MEMBERS = 13 };

typedef struct att_match {
    int32_t members[MAX_MEMBERS], count;
    int32_t q, k, v, mask; /* fused inputs (mask -1 when absent) */
    int64_t heads;
    double scale;
} att_match;

static const vn_tensor_desc *desc_of(const vn_model *m, int32_t v)
{
    return v >= 0 && m->values[v].known ? &m->values[v].desc : NULL;
}

static int32_t producer_of(const vn_model *m, int32_t v)
{
    return v >= 0 ? m->values[v].producer : -1;
}

static void add_member(att_match *am, int32_t node)
{
    if (am->count < MAX_MEMBERS) am->members[am->count++] = node;
}

/* Node n is a Transpose whose perm is exactly `perm` (rank 4). */
static bool transpose_with(const vn_cnode *n, const int64_t perm[4])
{
    if (!vn_fuse_is_op(n, "Transpose") || n->num_inputs != 1) return false;
    for (int32_t i = 0; i < n->num_attrs; i++) {
        const vn_attr *a = &n->attrs[i];
        if (strcmp(a->name, "perm") || a->type != VN_ATTR_INTS || a->count != 4) continue;
        return !memcmp(a->ints, perm, 4 * sizeof *perm);
    }
    return false;
}

/* v = Transpose(perm)(Reshape(x3)) where x3 is f32 [B, L, H*E] and the Reshape
 * makes [B, L, H, E], each intermediate read once: x3, and L / E in *len / *e. */
static int32_t heads_of(const vn_model *m, int32_t v, int32_t reader, const int64_t perm[4],
                        int64_t B, int64_t H, int64_t *len, int64_t *e, att_match *am)
{
    int32_t t = producer_of(m, v);
    if (t < 0 || vn_fuse_sole_reader(m, v) != reader || !transpose_with(&m->nodes[t], perm))
        return -1;
    int32_t r4 = m->nodes[t].inputs[0], r = producer_of(m, r4);
    if (r < 0 || vn_fuse_sole_reader(m, r4) != t || !vn_fuse_is_op(&m->nodes[r], "Reshape"))
        return -1;
    int32_t x3 = m->nodes[r].inputs[0];
    const vn_tensor_desc *in = desc_of(m, x3), *out = desc_of(m, r4);
    if (!in || !out || in->dtype != VN_F32 || in->rank != 3 || out->rank != 4) return -1;
    if (out->dims[0] != B || out->dims[2] != H || in->dims[0] != B || in->dims[1] != out->dims[1] ||
        in->dims[2] != H * out->dims[3])
        return -1;
    *len = out->dims[1], *e = out->dims[3];
    add_member(am, r);
    add_member(am, t);
    return x3;
}

/* The mask of Add node a (the input that is not the scores s), if it broadcasts
 * to [B, H, S, T] the way FusedAttention reads it; else -1. */
static int32_t mask_of(const vn_model *m, int32_t a, int32_t s, const int64_t full[4])
{
    const vn_cnode *n = &m->nodes[a];
    if (!vn_fuse_is_op(n, "Add") || n->num_inputs != 2 || n->inputs[0] == n->inputs[1]) return -1;
    int32_t mk = n->inputs[0] == s ? n->inputs[1] : n->inputs[0];
    const vn_tensor_desc *d = desc_of(m, mk);
    if (!d || d->dtype != VN_F32 || d->rank < 1 || d->rank > 4) return -1;
    for (int32_t i = 0; i < d->rank; i++) {
        int64_t want = full[4 - d->rank + i];
        if (d->dims[i] != 1 && d->dims[i] != want) return -1;
    }
    return mk;
}

/* Between the score MatMul's output `qk` and the Softmax: [Div|Mul by a
 * constant scalar] [Add mask]. Returns the Softmax's input, or -1. */
static int32_t scale_and_mask(const vn_model *m, int32_t qk, const int64_t full[4], att_match *am)
{
    int32_t v = qk, r = vn_fuse_sole_reader(m, v);
    double s;
    if (r < 0) return -1;
    const vn_cnode *n = &m->nodes[r];
    bool div = vn_fuse_is_op(n, "Div") && n->num_inputs == 2 && n->inputs[0] == v;
    bool mul = vn_fuse_is_op(n, "Mul") && n->num_inputs == 2 && n->inputs[0] != n->inputs[1];
    int32_t c = div ? n->inputs[1] : mul ? (n->inputs[0] == v ? n->inputs[1] : n->inputs[0]) : -1;
    if ((div || mul) && vn_fuse_const_scalar(m, c, &s) && (mul || s != 0)) {
        am->scale = div ? 1.0 / s : s;
        add_member(am, r);
        v = n->outputs[0], r = vn_fuse_sole_reader(m, v);
        if (r < 0) return -1;
    }
    if (vn_fuse_is_op(&m->nodes[r], "Add")) {
        if ((am->mask = mask_of(m, r, v, full)) < 0) return -1;
        add_member(am, r);
        v = m->nodes[r].outputs[0];
    }
    return v;
}

static bool last_axis_softmax(const vn_cnode *n)
{
    if (!vn_fuse_is_op(n, "Softmax") || n->num_inputs != 1) return false;
    int64_t axis = vn_fuse_attr_int(n, "axis", 0); /* the default differs by opset: ask */
    return axis == -1 || axis == 3;
}

static const int64_t perm_bshd[4] = {0, 2, 1, 3}, perm_bhdt[4] = {0, 2, 3, 1};

/* The score MatMul qk and what follows it, up to the output Reshape. */
static bool match(const vn_model *m, int32_t qk, att_match *am)
{
    const vn_cnode *n = &m->nodes[qk];
    const vn_tensor_desc *sd = desc_of(m, n->outputs[0]);
    if (!vn_fuse_is_op(n, "MatMul") || n->num_inputs != 2 || !sd || sd->rank != 4 ||
        sd->dtype != VN_F32)
        return false;
    *am = (att_match){.members = {qk}, .count = 1, .mask = -1, .scale = 1.0, .heads = sd->dims[1]};
    int64_t B = sd->dims[0], H = sd->dims[1], S, T, D, Dk, Tk, Dv;
    if ((am->q = heads_of(m, n->inputs[0], qk, perm_bshd, B, H, &S, &D, am)) < 0) return false;
    if ((am->k = heads_of(m, n->inputs[1], qk, perm_bhdt, B, H, &T, &Dk, am)) < 0) return false;
    const int64_t full[4] = {B, H, S, T};
    int32_t x = scale_and_mask(m, n->outputs[0], full, am);
    int32_t sm = vn_fuse_sole_reader(m, x);
    if (x < 0 || Dk != D || sm < 0 || !last_axis_softmax(&m->nodes[sm])) return false;
    add_member(am, sm);
    int32_t p = m->nodes[sm].outputs[0], av = vn_fuse_sole_reader(m, p);
    const vn_cnode *avn = av >= 0 ? &m->nodes[av] : NULL;
    if (!avn || !vn_fuse_is_op(avn, "MatMul") || avn->num_inputs != 2 || avn->inputs[0] != p)
        return false;
    if ((am->v = heads_of(m, avn->inputs[1], av, perm_bshd, B, H, &Tk, &Dv, am)) < 0 || Tk != T)
        return false;
    add_member(am, av);
    int32_t o4 = avn->outputs[0], t = vn_fuse_sole_reader(m, o4);
    if (t < 0 || !transpose_with(&m->nodes[t], perm_bshd)) return false;
    add_member(am, t);
    int32_t o = m->nodes[t].outputs[0], r = vn_fuse_sole_reader(m, o);
    if (r < 0 || !vn_fuse_is_op(&m->nodes[r], "Reshape")) return false;
    const vn_tensor_desc *y = desc_of(m, m->nodes[r].outputs[0]);
    if (!y || y->rank != 3 || y->dims[0] != B || y->dims[1] != S || y->dims[2] != H * Dv)
        return false;
    add_member(am, r); /* 13 members at most: the array holds them all */
    return true;
}

vn_status vn_pass_fuse_attention(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        att_match am;
        if (!match(m, i, &am)) continue;
        int32_t anchor = am.members[am.count - 1];
        int32_t ins[4] = {am.q, am.k, am.v, am.mask};
        vn_attr attrs[2] = {{.name = "num_heads", .type = VN_ATTR_INT, .i = am.heads},
                            {.name = "scale", .type = VN_ATTR_FLOAT, .f = am.scale}};
        vn_fuse_rewrite rw = {
            "FusedAttention", "vinci", m->nodes[anchor].name, ins, 4, attrs, 2, false};
        bool done;
        vn_status st = vn_fuse_apply(m, anchor, &rw, am.members, am.count, r, &done);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
