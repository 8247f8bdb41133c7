/*
 * pass_fuse_norm.c — "fuse_norm" (O3): the LayerNorm and RMSNorm chains
 * exporters write element by element become one LayerNormalization or
 * RMSNormalization over the last axis (the fused row kernels of layernorm.c):
 *
 *   LayerNorm: mu = ReduceMean(x); d = x - mu; v = ReduceMean(d^2)
 *   RMSNorm:   d = x;              v = ReduceMean(x^2)
 *   then       n = d / Sqrt(v + eps)    (or d * Reciprocal(Sqrt(v + eps)))
 *              [n * gamma] [+ beta]     (beta only after gamma)
 *
 * Squares: Pow(., 2) or Mul(a, a). ReduceMean: over the last axis only
 * (attribute or constant input), keepdims 1. eps: a constant f32 scalar;
 * gamma / beta: f32 constants of C elements along the last axis. d is read
 * by exactly the square and the division; every other intermediate has the
 * next member as its sole reader. x may have other readers. f32 only.
 */
#include <string.h>

#include "graph/pass_fuse.h"

typedef struct norm_match {
    int32_t members[12], count;
    int32_t x, d, gamma, beta;
    double eps;
    int64_t c; /* normalised size (last dim) */
    bool rms;
} norm_match;

static int32_t out_of(const vn_model *m, int32_t node)
{
    return m->nodes[node].outputs[0];
}

static int32_t producer(const vn_model *m, int32_t v)
{
    return v >= 0 ? m->values[v].producer : -1;
}

static bool binary(const vn_cnode *n, const char *op)
{
    return vn_fuse_is_op(n, op) && n->num_inputs == 2 && n->inputs[0] >= 0 && n->inputs[1] >= 0;
}

static void add(norm_match *g, int32_t node)
{
    g->members[g->count++] = node;
}

/* The single axis ReduceMean node n reduces in *axis; false if not exactly one. */
static bool reduce_axis(const vn_model *m, const vn_cnode *n, int64_t *axis)
{
    if (n->num_inputs >= 2 && n->inputs[1] >= 0) {
        int32_t a = n->inputs[1];
        if (!vn_fuse_is_const(m, a, VN_I64) || vn_desc_numel(&m->values[a].desc) != 1) return false;
        *axis = *(const int64_t *)m->values[a].data;
        return true;
    }
    for (int32_t i = 0; i < n->num_attrs; i++)
        if (!strcmp(n->attrs[i].name, "axes") && n->attrs[i].type == VN_ATTR_INTS &&
            n->attrs[i].count == 1) {
            *axis = n->attrs[i].ints[0];
            return true;
        }
    return false; /* no axes: every axis */
}

/* Node `node` is ReduceMean of v over its last axis, keeping dims. */
static bool mean_last(const vn_model *m, int32_t node, int32_t v)
{
    const vn_cnode *n = &m->nodes[node];
    if (!vn_fuse_is_op(n, "ReduceMean") || n->num_inputs < 1 || n->inputs[0] != v ||
        vn_fuse_attr_int(n, "keepdims", 1) != 1 || !m->values[v].known)
        return false;
    int64_t rank = m->values[v].desc.rank, axis;
    return rank >= 1 && reduce_axis(m, n, &axis) && (axis == -1 || axis == rank - 1);
}

/* Live nodes reading v (each once, up to 2 in r[]), their count. */
static int32_t readers(const vn_model *m, int32_t v, int32_t r[2])
{
    int32_t count = 0;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        bool reads = false;
        for (int32_t k = 0; !n->dead && k < n->num_inputs; k++) reads |= n->inputs[k] == v;
        if (reads && count++ < 2) r[count - 1] = i;
    }
    return count;
}

/* Node `node` squares v (Pow(v, 2) or Mul(v, v)). */
static bool squares(const vn_model *m, int32_t node, int32_t v)
{
    const vn_cnode *n = &m->nodes[node];
    double e;
    if (binary(n, "Mul")) return n->inputs[0] == v && n->inputs[1] == v;
    return binary(n, "Pow") && n->inputs[0] == v && vn_fuse_const_scalar(m, n->inputs[1], &e) &&
           e == 2.0;
}

/* Constant of C elements on the last axis, as a [C] f32 constant, or -1. */
static int32_t per_channel(vn_model *m, int32_t v, int64_t c)
{
    if (!vn_fuse_is_const(m, v, VN_F32)) return -1;
    const vn_tensor_desc *d = &m->values[v].desc;
    if (d->rank < 1 || d->dims[d->rank - 1] != c || vn_desc_numel(d) != c) return -1;
    if (d->rank == 1) return v;
    vn_tensor_desc nd = {VN_F32, 1, {c}};
    return vn_fuse_new_const(m, &nd, m->values[v].data);
}

/* The other operand of binary node r reading v, or -1. */
static int32_t other_of(const vn_model *m, int32_t r, int32_t v)
{
    const vn_cnode *n = &m->nodes[r];
    if (n->inputs[0] == v) return n->inputs[1] != v ? n->inputs[1] : -1;
    return n->inputs[1] == v ? n->inputs[0] : -1;
}

/* From the square's node `sq` (reading d): mean, + eps, Sqrt, divide d. The
 * normalised value, or -1. */
static int32_t normalise(const vn_model *m, norm_match *g, int32_t sq)
{
    int32_t mean = vn_fuse_sole_reader(m, out_of(m, sq));
    if (mean < 0 || !mean_last(m, mean, out_of(m, sq))) return -1;
    int32_t ae = vn_fuse_sole_reader(m, out_of(m, mean));
    if (ae < 0 || !binary(&m->nodes[ae], "Add") ||
        !vn_fuse_const_scalar(m, other_of(m, ae, out_of(m, mean)), &g->eps) || !(g->eps >= 0))
        return -1;
    int32_t rt = vn_fuse_sole_reader(m, out_of(m, ae));
    if (rt < 0 || !vn_fuse_is_op(&m->nodes[rt], "Sqrt")) return -1;
    add(g, sq), add(g, mean), add(g, ae), add(g, rt);
    int32_t dv = vn_fuse_sole_reader(m, out_of(m, rt));
    if (dv < 0) return -1;
    if (binary(&m->nodes[dv], "Div") && m->nodes[dv].inputs[0] == g->d &&
        m->nodes[dv].inputs[1] == out_of(m, rt)) {
        add(g, dv);
        return out_of(m, dv);
    }
    if (!vn_fuse_is_op(&m->nodes[dv], "Reciprocal")) return -1;
    int32_t mul = vn_fuse_sole_reader(m, out_of(m, dv));
    if (mul < 0 || !binary(&m->nodes[mul], "Mul") || other_of(m, mul, out_of(m, dv)) != g->d)
        return -1;
    add(g, dv), add(g, mul);
    return out_of(m, mul);
}

/* Optional gamma then beta after the normalised value n: the last node. */
static int32_t affine(vn_model *m, norm_match *g, int32_t n)
{
    int32_t last = producer(m, n);
    int32_t r = vn_fuse_sole_reader(m, n);
    if (r < 0 || !binary(&m->nodes[r], "Mul")) return last;
    g->gamma = per_channel(m, other_of(m, r, n), g->c);
    if (g->gamma < 0) return last;
    add(g, r), last = r;
    r = vn_fuse_sole_reader(m, out_of(m, r));
    if (r < 0 || !binary(&m->nodes[r], "Add")) return last;
    g->beta = per_channel(m, other_of(m, r, out_of(m, last)), g->c);
    if (g->beta >= 0) add(g, r), last = r;
    return last;
}

/* LayerNorm from ReduceMean node i: fills g up to the Sub and returns the square's node. */
static int32_t layernorm_head(const vn_model *m, int32_t i, norm_match *g)
{
    const vn_cnode *n = &m->nodes[i];
    if (n->num_inputs < 1 || !mean_last(m, i, n->inputs[0])) return -1;
    g->x = n->inputs[0];
    int32_t sub = vn_fuse_sole_reader(m, out_of(m, i));
    if (sub < 0 || !binary(&m->nodes[sub], "Sub") || m->nodes[sub].inputs[0] != g->x ||
        m->nodes[sub].inputs[1] != out_of(m, i))
        return -1;
    g->d = out_of(m, sub);
    int32_t r[2];
    if (readers(m, g->d, r) != 2 || vn_fuse_is_output(m, g->d)) return -1;
    add(g, i), add(g, sub);
    return squares(m, r[0], g->d) ? r[0] : squares(m, r[1], g->d) ? r[1] : -1;
}

/* RMSNorm from the square node i of x (x may have other readers). */
static int32_t rms_head(const vn_model *m, int32_t i, norm_match *g)
{
    const vn_cnode *n = &m->nodes[i];
    if (n->num_inputs < 1 || !squares(m, i, n->inputs[0])) return -1;
    g->x = g->d = n->inputs[0];
    g->rms = true;
    return i;
}

static vn_status rewrite(vn_model *m, norm_match *g, int32_t last, vn_pass_report *r)
{
    if (g->gamma < 0) { /* the ops need a scale: ones */
        vn_tensor_desc d = {VN_F32, 1, {g->c}};
        int32_t ones = vn_fuse_new_const(m, &d, NULL);
        float *w = ones >= 0 ? (float *)m->values[ones].data : NULL;
        if (!w) return VN_OK;
        for (int64_t i = 0; i < g->c; i++) w[i] = 1.0f;
        g->gamma = ones;
    }
    vn_attr attrs[2] = {{.name = "axis", .type = VN_ATTR_INT, .i = -1},
                        {.name = "epsilon", .type = VN_ATTR_FLOAT, .f = g->eps}};
    int32_t ins[3] = {g->x, g->gamma, g->beta};
    vn_fuse_rewrite rw = {g->rms ? "RMSNormalization" : "LayerNormalization",
                          "",
                          NULL,
                          ins,
                          g->rms ? 2 : 3,
                          attrs,
                          2,
                          false};
    bool done;
    return vn_fuse_apply(m, last, &rw, g->members, g->count, r, &done);
}

static vn_status fuse_at(vn_model *m, int32_t i, vn_pass_report *r)
{
    const vn_cnode *n = &m->nodes[i];
    norm_match g = {.count = 0, .gamma = -1, .beta = -1};
    if (n->dead || n->num_inputs < 1 || n->inputs[0] < 0 || !m->values[n->inputs[0]].known ||
        m->values[n->inputs[0]].desc.dtype != VN_F32)
        return VN_OK;
    int32_t sq = vn_fuse_is_op(n, "ReduceMean") ? layernorm_head(m, i, &g) : rms_head(m, i, &g);
    const vn_tensor_desc *xd = &m->values[g.x >= 0 ? g.x : n->inputs[0]].desc;
    g.c = xd->rank > 0 ? xd->dims[xd->rank - 1] : 0;
    int32_t nv = sq >= 0 ? normalise(m, &g, sq) : -1;
    if (nv < 0 || g.c <= 0) return VN_OK;
    int32_t last = affine(m, &g, nv);
    return rewrite(m, &g, last, r);
}

vn_status vn_pass_fuse_norm(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        vn_status st = fuse_at(m, i, r);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
