/*
 * pass_fuse_matmul.c — "fuse_matmul_epilogue": MatMul or Gemm, then an Add of
 * a constant [N] bias, an activation and a residual Add, become one
 * vinci::FusedMatMul whose GEMM epilogue does them all:
 *
 *   MatMul|Gemm [+ Add(bias [N])] [+ act] [+ Add(residual)]    (residual after act)
 *   MatMul|Gemm [+ Add(bias [N])] [+ Add(residual)] [+ act]    (residual_before_activation)
 *
 * act: Relu, Sigmoid, Clip (constant min / max), Gelu (approximate "none" ->
 * "Gelu", "tanh" -> "GeluTanh"). Gemm only with transA 0 and alpha 1; its C
 * must be a constant bias of N elements (scaled by beta into a new constant).
 * At least one epilogue step is needed. Each intermediate value must have
 * exactly one reader and not be a graph output (vn_fuse_sole_reader); the
 * residual must have the product's shape and dtype.
 */
#include <math.h>
#include <string.h>

#include "graph/pass_fuse.h"

typedef struct mm_match {
    int32_t members[4], count;
    int32_t a, b, bias, residual;
    int64_t n; /* output columns */
    bool trans_b, res_first;
    const char *act; /* "" none */
    double lo, hi;   /* Clip */
} mm_match;

static const vn_tensor_desc *desc_of(const vn_model *m, int32_t v)
{
    return &m->values[v].desc;
}

static bool float_mm(const vn_model *m, int32_t a, int32_t b)
{
    const vn_tensor_desc *da = desc_of(m, a), *db = desc_of(m, b);
    return m->values[a].known && m->values[b].known && da->rank >= 2 && db->rank >= 2 &&
           (da->dtype == VN_F32 || da->dtype == VN_BF16) && db->dtype == da->dtype;
}

/* Constant of N elements along the last axis, all other dims 1, rank <= the
 * output's: returned as a [N] constant scaled by `scale` (a new one when the
 * shape or values change), or -1. */
static int32_t as_bias(vn_model *m, int32_t v, const mm_match *mt, double scale)
{
    const vn_tensor_desc *out = desc_of(m, m->nodes[mt->members[0]].outputs[0]);
    if (v < 0 || !vn_fuse_is_const(m, v, out->dtype)) return -1;
    const vn_tensor_desc *d = desc_of(m, v);
    if (d->rank < 1 || d->rank > out->rank || d->dims[d->rank - 1] != mt->n ||
        vn_desc_numel(d) != mt->n)
        return -1;
    if (d->rank == 1 && scale == 1.0) return v;
    if (out->dtype != VN_F32) return -1; /* bf16: no rescaling or reshaping */
    vn_tensor_desc nd = {VN_F32, 1, {mt->n}};
    int32_t nv = vn_fuse_new_const(m, &nd, m->values[v].data);
    float *w = nv >= 0 ? (float *)m->values[nv].data : NULL;
    for (int64_t i = 0; w && i < mt->n; i++) w[i] = (float)(w[i] * scale);
    return nv;
}

static bool head_gemm(vn_model *m, const vn_cnode *n, mm_match *mt)
{
    if (vn_fuse_attr_int(n, "transA", 0) != 0 || vn_fuse_attr_float(n, "alpha", 1.0) != 1.0)
        return false;
    mt->trans_b = vn_fuse_attr_int(n, "transB", 0) != 0;
    if (n->num_inputs < 3 || n->inputs[2] < 0) return true;
    mt->bias = as_bias(m, n->inputs[2], mt, vn_fuse_attr_float(n, "beta", 1.0));
    return mt->bias >= 0;
}

static bool head(vn_model *m, int32_t i, mm_match *mt)
{
    const vn_cnode *n = &m->nodes[i];
    bool gemm = vn_fuse_is_op(n, "Gemm");
    if (!(gemm || vn_fuse_is_op(n, "MatMul")) || n->num_inputs < 2 || n->outputs[0] < 0 ||
        !m->values[n->outputs[0]].known)
        return false;
    memset(mt, 0, sizeof *mt);
    mt->members[mt->count++] = i;
    mt->a = n->inputs[0], mt->b = n->inputs[1];
    mt->bias = mt->residual = -1;
    mt->act = "";
    const vn_tensor_desc *y = desc_of(m, n->outputs[0]);
    mt->n = y->rank > 0 ? y->dims[y->rank - 1] : -1;
    if (mt->a < 0 || mt->b < 0 || !float_mm(m, mt->a, mt->b)) return false;
    return gemm ? head_gemm(m, n, mt) : true;
}

/* The value the group produces so far. */
static int32_t tail(const vn_model *m, const mm_match *mt)
{
    return m->nodes[mt->members[mt->count - 1]].outputs[0];
}

/* The Add reading `cur` and its other operand, or -1. */
static int32_t add_other(const vn_model *m, int32_t node, int32_t cur)
{
    const vn_cnode *n = &m->nodes[node];
    if (!vn_fuse_is_op(n, "Add") || n->num_inputs != 2 || n->inputs[0] == n->inputs[1]) return -1;
    return n->inputs[0] == cur ? n->inputs[1] : n->inputs[0];
}

static bool try_bias(vn_model *m, mm_match *mt)
{
    int32_t r = vn_fuse_sole_reader(m, tail(m, mt));
    if (mt->bias >= 0 || r < 0) return false;
    int32_t bias = as_bias(m, add_other(m, r, tail(m, mt)), mt, 1.0);
    if (bias < 0) return false;
    mt->bias = bias;
    mt->members[mt->count++] = r;
    return true;
}

static bool same_shape(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static bool try_residual(vn_model *m, mm_match *mt)
{
    int32_t cur = tail(m, mt), r = vn_fuse_sole_reader(m, cur);
    int32_t o = r >= 0 ? add_other(m, r, cur) : -1;
    if (o < 0 || !m->values[o].known || !same_shape(desc_of(m, o), desc_of(m, cur)) ||
        !same_shape(desc_of(m, m->nodes[r].outputs[0]), desc_of(m, cur)))
        return false;
    mt->residual = o;
    mt->members[mt->count++] = r;
    return true;
}

/* Clip's bound from input k (constant scalar) or the opset < 11 attribute. */
static bool clip_bound(const vn_model *m, const vn_cnode *n, int32_t k, const char *attr,
                       double fallback, double *out)
{
    *out = vn_fuse_attr_float(n, attr, fallback);
    if (n->num_inputs <= k || n->inputs[k] < 0) return true;
    return vn_fuse_const_scalar(m, n->inputs[k], out);
}

static bool try_act(vn_model *m, mm_match *mt)
{
    int32_t r = vn_fuse_sole_reader(m, tail(m, mt));
    if (r < 0) return false;
    const vn_cnode *n = &m->nodes[r];
    const char *gelu = vn_fuse_is_op(n, "Gelu") ? vn_fuse_attr_str(n, "approximate", "none") : "";
    if (vn_fuse_is_op(n, "Relu") || vn_fuse_is_op(n, "Sigmoid"))
        mt->act = n->op_type;
    else if (!strcmp(gelu, "none") || !strcmp(gelu, "tanh"))
        mt->act = gelu[0] == 'n' ? "Gelu" : "GeluTanh";
    else if (vn_fuse_is_op(n, "Clip") && clip_bound(m, n, 1, "min", -INFINITY, &mt->lo) &&
             clip_bound(m, n, 2, "max", INFINITY, &mt->hi) && mt->lo <= mt->hi)
        mt->act = "Clip";
    else
        return false;
    mt->members[mt->count++] = r;
    return true;
}

static vn_status rewrite(vn_model *m, const mm_match *mt, vn_pass_report *r, bool *done)
{
    vn_attr attrs[5];
    int32_t na = 0;
    attrs[na++] = (vn_attr){.name = "activation", .type = VN_ATTR_STRING, .s = mt->act};
    if (mt->trans_b) attrs[na++] = (vn_attr){.name = "transB", .type = VN_ATTR_INT, .i = 1};
    if (mt->res_first && mt->act[0])
        attrs[na++] = (vn_attr){.name = "residual_before_activation", .type = VN_ATTR_INT, .i = 1};
    if (!strcmp(mt->act, "Clip")) {
        attrs[na++] = (vn_attr){.name = "min", .type = VN_ATTR_FLOAT, .f = mt->lo};
        attrs[na++] = (vn_attr){.name = "max", .type = VN_ATTR_FLOAT, .f = mt->hi};
    }
    int32_t ins[4] = {mt->a, mt->b, mt->bias, mt->residual};
    vn_fuse_rewrite rw = {"FusedMatMul", "vinci", m->nodes[mt->members[0]].name, ins, 4, attrs, na,
                          false};
    return vn_fuse_apply(m, mt->members[mt->count - 1], &rw, mt->members, mt->count, r, done);
}

vn_status vn_pass_fuse_matmul(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        mm_match mt;
        if (!head(m, i, &mt)) continue;
        try_bias(m, &mt);
        if (try_act(m, &mt)) {
            try_residual(m, &mt);
        } else if (try_residual(m, &mt)) {
            mt.res_first = try_act(m, &mt);
        }
        bool done = false;
        if (mt.count < 2) continue;
        vn_status st = rewrite(m, &mt, r, &done);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
