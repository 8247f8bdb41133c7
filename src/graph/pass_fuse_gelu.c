/*
 * pass_fuse_gelu.c — "fuse_gelu" (O3): the GELU chains exporters write
 * without a Gelu operator become one ONNX Gelu, which the MatMul epilogue
 * pass then folds into a FusedMatMul when a MatMul (+ bias Add) feeds it.
 *
 *   erf form:   e = 1 + Erf(x / sqrt2)            (Div by sqrt2 or Mul by 1/sqrt2)
 *   tanh form:  e = 1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3))
 *               (x^3 as Pow(x, 3) or Mul(Mul(x, x), x))
 *   then one of:  (x e) 0.5,  (0.5 x) e,  x (0.5 e)        (Mul operands in any order)
 *
 * Constants must be f32 scalars within 1e-4 relative of the values above;
 * every intermediate has the next member as its sole reader
 * (vn_fuse_sole_reader); x itself may have other readers.
 */
#include <math.h>
#include <string.h>

#include "graph/pass_fuse.h"

#define SQRT2          1.4142135623730951
#define SQRT_2_OVER_PI 0.7978845608028654

typedef struct gelu_match {
    int32_t members[10], count;
    int32_t x;
} gelu_match;

static int32_t out_of(const vn_model *m, int32_t node)
{
    return m->nodes[node].outputs[0];
}

static int32_t producer(const vn_model *m, int32_t v)
{
    return v >= 0 ? m->values[v].producer : -1;
}

static bool near(const vn_model *m, int32_t v, double want)
{
    double s;
    return vn_fuse_const_scalar(m, v, &s) && fabs(s - want) <= 1e-4 * fabs(want);
}

static bool binary(const vn_cnode *n, const char *op)
{
    return vn_fuse_is_op(n, op) && n->num_inputs == 2 && n->inputs[0] >= 0 && n->inputs[1] >= 0;
}

/* Node `node` computes x * c (Mul either way round, or Div by 1 / c): x, else -1. */
static int32_t times_const(const vn_model *m, int32_t node, double c)
{
    if (node < 0) return -1;
    const vn_cnode *n = &m->nodes[node];
    if (binary(n, "Div")) return near(m, n->inputs[1], 1.0 / c) ? n->inputs[0] : -1;
    if (!binary(n, "Mul")) return -1;
    if (near(m, n->inputs[1], c)) return n->inputs[0];
    return near(m, n->inputs[0], c) ? n->inputs[1] : -1;
}

/* The Mul / Add reading v as its sole reader, and its other operand in *other. */
static int32_t sole_binary(const vn_model *m, int32_t v, const char *op, int32_t *other)
{
    int32_t r = vn_fuse_sole_reader(m, v);
    if (r < 0 || !binary(&m->nodes[r], op) || m->nodes[r].inputs[0] == m->nodes[r].inputs[1])
        return -1;
    const vn_cnode *n = &m->nodes[r];
    *other = n->inputs[0] == v ? n->inputs[1] : n->inputs[0];
    return r;
}

static void add(gelu_match *g, int32_t node)
{
    g->members[g->count++] = node;
}

/* From the 1 + f(...) value `e` to the product with x / 2: the final node, or -1. */
static int32_t tail(const vn_model *m, gelu_match *g, int32_t e)
{
    int32_t other, r = sole_binary(m, e, "Mul", &other);
    if (r < 0) return -1;
    if (other == g->x) { /* (x e) 0.5 */
        int32_t r2 = vn_fuse_sole_reader(m, out_of(m, r));
        if (times_const(m, r2, 0.5) != out_of(m, r)) return -1;
        add(g, r), add(g, r2);
        return r2;
    }
    int32_t h = producer(m, other);
    if (h >= 0 && vn_fuse_sole_reader(m, other) == r && times_const(m, h, 0.5) == g->x) {
        add(g, h), add(g, r); /* (0.5 x) e */
        return r;
    }
    if (near(m, other, 0.5)) { /* x (0.5 e) */
        int32_t r2 = sole_binary(m, out_of(m, r), "Mul", &other);
        if (r2 < 0 || other != g->x) return -1;
        add(g, r), add(g, r2);
        return r2;
    }
    return -1;
}

/* f's output plus one: the Add's output, or -1. */
static int32_t plus_one(const vn_model *m, gelu_match *g, int32_t f)
{
    int32_t other, r = sole_binary(m, out_of(m, f), "Add", &other);
    if (r < 0 || !near(m, other, 1.0)) return -1;
    add(g, r);
    return out_of(m, r);
}

/* Erf(x / sqrt2) at node i: fills g up to the Erf. */
static bool erf_head(const vn_model *m, int32_t i, gelu_match *g)
{
    const vn_cnode *n = &m->nodes[i];
    if (!vn_fuse_is_op(n, "Erf") || n->num_inputs != 1) return false;
    int32_t d = producer(m, n->inputs[0]);
    if (d < 0 || vn_fuse_sole_reader(m, n->inputs[0]) != i) return false;
    g->x = times_const(m, d, 1.0 / SQRT2);
    if (g->x < 0) return false;
    add(g, d), add(g, i);
    return true;
}

/* x^3 in value v (Pow(x, 3) or Mul(Mul(x, x), x)), read only by `reader`. */
static bool cube_of(const vn_model *m, int32_t v, int32_t reader, int32_t x, gelu_match *g)
{
    int32_t p = producer(m, v);
    if (p < 0 || vn_fuse_sole_reader(m, v) != reader) return false;
    const vn_cnode *n = &m->nodes[p];
    if (binary(n, "Pow") && n->inputs[0] == x && near(m, n->inputs[1], 3.0)) {
        add(g, p);
        return true;
    }
    if (!binary(n, "Mul")) return false;
    for (int32_t k = 0; k < 2; k++) {
        int32_t sq = n->inputs[k], q = producer(m, sq);
        if (n->inputs[1 - k] != x || q < 0 || vn_fuse_sole_reader(m, sq) != p) continue;
        const vn_cnode *qn = &m->nodes[q];
        if (!binary(qn, "Mul") || qn->inputs[0] != x || qn->inputs[1] != x) continue;
        add(g, q), add(g, p);
        return true;
    }
    return false;
}

/* Tanh(sqrt(2/pi) (x + 0.044715 x^3)) at node i: fills g up to the Tanh. */
static bool tanh_head(const vn_model *m, int32_t i, gelu_match *g)
{
    const vn_cnode *n = &m->nodes[i];
    if (!vn_fuse_is_op(n, "Tanh") || n->num_inputs != 1) return false;
    int32_t sc = producer(m, n->inputs[0]);
    if (sc < 0 || vn_fuse_sole_reader(m, n->inputs[0]) != i) return false;
    int32_t s = times_const(m, sc, SQRT_2_OVER_PI), sum = producer(m, s);
    if (sum < 0 || vn_fuse_sole_reader(m, s) != sc || !binary(&m->nodes[sum], "Add")) return false;
    const vn_cnode *a = &m->nodes[sum];
    for (int32_t k = 0; k < 2; k++) {
        int32_t c = a->inputs[1 - k], cm = producer(m, c);
        g->x = a->inputs[k];
        if (cm < 0 || vn_fuse_sole_reader(m, c) != sum) continue;
        int32_t cube = times_const(m, cm, 0.044715);
        g->count = 0;
        if (cube < 0 || !cube_of(m, cube, cm, g->x, g)) continue;
        add(g, cm), add(g, sum), add(g, sc), add(g, i);
        return true;
    }
    return false;
}

static vn_status fuse_at(vn_model *m, int32_t i, vn_pass_report *r)
{
    gelu_match g = {.count = 0};
    bool tanh_form = false;
    if (!erf_head(m, i, &g)) {
        g.count = 0;
        if (!tanh_head(m, i, &g)) return VN_OK;
        tanh_form = true;
    }
    int32_t e = plus_one(m, &g, i);
    int32_t last = e >= 0 ? tail(m, &g, e) : -1;
    if (last < 0) return VN_OK;
    vn_attr approx = {.name = "approximate", .type = VN_ATTR_STRING, .s = "tanh"};
    vn_fuse_rewrite rw = {"Gelu", "", NULL, &g.x, 1, &approx, tanh_form ? 1 : 0, false};
    bool done;
    return vn_fuse_apply(m, last, &rw, g.members, g.count, r, &done);
}

vn_status vn_pass_fuse_gelu(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        if (m->nodes[i].dead) continue;
        vn_status st = fuse_at(m, i, r);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
