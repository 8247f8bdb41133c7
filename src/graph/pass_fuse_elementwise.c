/*
 * pass_fuse_elementwise.c — "fuse_elementwise_chains": a tree of element-wise
 * nodes, each non-root member read only by the next member and not a graph
 * output, becomes one vinci::FusedElementwise node running the tree as one
 * program (one pass over memory instead of one per node).
 *
 * Members: Add, Sub, Mul, Div, Max, Min (two operands), Relu, LeakyRelu,
 * Sigmoid, Tanh, Exp, Log, Sqrt, Abs, Neg, Reciprocal, Gelu (approximate
 * "none"), on f32 / f16 / bf16 with every operand of the root's dtype. A
 * binary operand that is an f32 constant with one element, whose node's output
 * keeps the other operand's shape, becomes a scalar instruction; other
 * operands are inputs of the fused node (at most MAX_IN distinct ones).
 *
 * Groups grow from the root (nodes visited last to first) towards producers,
 * greedily: a producer whose subtree would overflow MAX_IN inputs or
 * VN_FUSED_MAX_INSTRS instructions stays outside and its value is an input.
 * Instructions are emitted in post-order, so every operand is defined first.
 */
#include <string.h>

#include "graph/pass_fuse.h"
#include "ops/fused.h"

#define MAX_IN 8

typedef struct ew_group {
    vn_dtype dtype;
    int32_t inputs[MAX_IN], num_inputs;
    /* operand refs while building: >= 0 an instruction, < 0 input -(ref + 1) */
    vn_fused_instr instrs[VN_FUSED_MAX_INSTRS];
    int32_t num_instrs;
    int32_t members[VN_FUSE_MAX_MEMBERS], count;
} ew_group;

static const struct {
    const char *op;
    vn_vop vop;
} ops[] = {{"Add", VN_VOP_ADD},
           {"Sub", VN_VOP_SUB},
           {"Mul", VN_VOP_MUL},
           {"Div", VN_VOP_DIV},
           {"Max", VN_VOP_MAX},
           {"Min", VN_VOP_MIN},
           {"Relu", VN_VOP_RELU},
           {"Sigmoid", VN_VOP_SIGMOID},
           {"Tanh", VN_VOP_TANH},
           {"Exp", VN_VOP_EXP},
           {"Log", VN_VOP_LN},
           {"Sqrt", VN_VOP_SQRT},
           {"Abs", VN_VOP_ABS},
           {"Neg", VN_VOP_NEG},
           {"Reciprocal", VN_VOP_RECIPROCAL},
           {"Gelu", VN_VOP_GELU},
           {"LeakyRelu", VN_VOP_LEAKY_RELU}};

/* The node's instruction, or VN_VOP_COUNT when it cannot be a member. */
static vn_vop vop_of(const vn_model *m, const vn_cnode *n, vn_dtype dtype)
{
    if (n->dead || (n->domain && n->domain[0]) || n->num_outputs < 1 || n->outputs[0] < 0)
        return VN_VOP_COUNT;
    const vn_cvalue *y = &m->values[n->outputs[0]];
    if (!y->known || y->desc.dtype != dtype) return VN_VOP_COUNT;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (strcmp(n->op_type, ops[i].op)) continue;
        bool binary = vn_vop_kind_of(ops[i].vop) == VN_VOP_BINARY;
        if (n->num_inputs != (binary ? 2 : 1)) return VN_VOP_COUNT;
        if (ops[i].vop == VN_VOP_GELU && strcmp(vn_fuse_attr_str(n, "approximate", "none"), "none"))
            return VN_VOP_COUNT;
        return ops[i].vop;
    }
    return VN_VOP_COUNT;
}

static bool float_dtype(vn_dtype d)
{
    return d == VN_F32 || d == VN_F16 || d == VN_BF16;
}

/* Append an instruction; returns its ref or INT32_MIN when full. */
static int32_t emit(ew_group *g, vn_vop op, int32_t a, int32_t b, double s)
{
    if (g->num_instrs >= VN_FUSED_MAX_INSTRS) return INT32_MIN;
    g->instrs[g->num_instrs] = (vn_fused_instr){op, (int16_t)a, (int16_t)b, s};
    return g->num_instrs++;
}

static int32_t input_ref(const vn_model *m, ew_group *g, int32_t v)
{
    if (v < 0 || !m->values[v].known || m->values[v].desc.dtype != g->dtype) return INT32_MIN;
    for (int32_t i = 0; i < g->num_inputs; i++)
        if (g->inputs[i] == v) return -(i + 1);
    if (g->num_inputs >= MAX_IN) return INT32_MIN;
    g->inputs[g->num_inputs++] = v;
    return -g->num_inputs;
}

static int32_t emit_node(const vn_model *m, ew_group *g, int32_t node);

/* Operand v of `reader`: its producer's subtree when it can join, else an input. */
static int32_t operand(const vn_model *m, ew_group *g, int32_t v, int32_t reader)
{
    int32_t p = v >= 0 ? m->values[v].producer : -1;
    if (p >= 0 && vn_fuse_sole_reader(m, v) == reader &&
        vop_of(m, &m->nodes[p], g->dtype) != VN_VOP_COUNT) {
        ew_group saved = *g;
        int32_t ref = emit_node(m, g, p);
        if (ref != INT32_MIN) return ref;
        *g = saved; /* too big: the value comes in as an input */
    }
    return input_ref(m, g, v);
}

static bool same_shape(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* x op s (or s op x when `swapped`) as scalar instructions. */
static int32_t emit_scalar(ew_group *g, vn_vop op, int32_t x, double s, bool swapped)
{
    switch (op) {
    case VN_VOP_ADD:
        return emit(g, VN_VOP_ADDS, x, -1, s);
    case VN_VOP_MUL:
        return emit(g, VN_VOP_MULS, x, -1, s);
    case VN_VOP_MAX:
        return emit(g, VN_VOP_MAXS, x, -1, s);
    case VN_VOP_MIN:
        return emit(g, VN_VOP_MINS, x, -1, s);
    case VN_VOP_SUB:
        if (!swapped) return emit(g, VN_VOP_ADDS, x, -1, -s);
        x = emit(g, VN_VOP_NEG, x, -1, 0);
        return x == INT32_MIN ? x : emit(g, VN_VOP_ADDS, x, -1, s);
    default: /* Div */
        if (!swapped) return emit(g, VN_VOP_MULS, x, -1, 1.0 / s);
        x = emit(g, VN_VOP_RECIPROCAL, x, -1, 0);
        return x == INT32_MIN ? x : emit(g, VN_VOP_MULS, x, -1, s);
    }
}

/* Operand k is a scalar constant the instruction can carry. */
static bool scalar_operand(const vn_model *m, const vn_cnode *n, int32_t k, double *s)
{
    const vn_tensor_desc *y = &m->values[n->outputs[0]].desc;
    int32_t other = n->inputs[1 - k];
    return other >= 0 && m->values[other].known && vn_fuse_const_scalar(m, n->inputs[k], s) &&
           same_shape(y, &m->values[other].desc);
}

static int32_t emit_binary(const vn_model *m, ew_group *g, int32_t node, vn_vop op)
{
    const vn_cnode *n = &m->nodes[node];
    double s;
    for (int32_t k = 0; k < 2; k++) {
        if (!scalar_operand(m, n, k, &s)) continue;
        int32_t x = operand(m, g, n->inputs[1 - k], node);
        return x == INT32_MIN ? x : emit_scalar(g, op, x, s, k == 0);
    }
    ew_group saved = *g;
    int32_t a = operand(m, g, n->inputs[0], node);
    int32_t b = a == INT32_MIN ? a : operand(m, g, n->inputs[1], node);
    if (b == INT32_MIN && a >= 0) {
        /* The first operand's subtree left no room for the second: take the
         * first as an input instead, so the overflow stays local. */
        *g = saved;
        a = input_ref(m, g, n->inputs[0]);
        b = a == INT32_MIN ? a : operand(m, g, n->inputs[1], node);
    }
    return b == INT32_MIN ? b : emit(g, op, a, b, 0);
}

static int32_t emit_node(const vn_model *m, ew_group *g, int32_t node)
{
    const vn_cnode *n = &m->nodes[node];
    vn_vop op = vop_of(m, n, g->dtype);
    if (op == VN_VOP_COUNT || g->count >= VN_FUSE_MAX_MEMBERS) return INT32_MIN;
    int32_t ref;
    if (vn_vop_kind_of(op) == VN_VOP_BINARY) {
        ref = emit_binary(m, g, node, op);
    } else {
        int32_t x = operand(m, g, n->inputs[0], node);
        double alpha = vn_fuse_attr_float(n, "alpha", 0.01); /* LeakyRelu only */
        ref = x == INT32_MIN ? x : emit(g, op, x, -1, op == VN_VOP_LEAKY_RELU ? alpha : 0);
    }
    if (ref != INT32_MIN) g->members[g->count++] = node;
    return ref;
}

/* Refs to registers: inputs first, then one per instruction. */
static void finish_program(const ew_group *g, vn_fused_program *p)
{
    memset(p, 0, sizeof *p);
    p->num_inputs = g->num_inputs;
    p->num_instrs = g->num_instrs;
    for (int32_t k = 0; k < g->num_instrs; k++) {
        vn_fused_instr in = g->instrs[k];
        bool binary = vn_vop_kind_of(in.op) == VN_VOP_BINARY;
        in.src0 = (int16_t)(in.src0 >= 0 ? g->num_inputs + in.src0 : -(in.src0 + 1));
        in.src1 = (int16_t)(!binary ? -1 : in.src1 >= 0 ? g->num_inputs + in.src1 : -(in.src1 + 1));
        p->instrs[k] = in;
    }
}

static vn_status fuse_root(vn_model *m, int32_t root, vn_pass_report *r)
{
    ew_group g;
    memset(&g, 0, sizeof g);
    g.dtype = m->values[m->nodes[root].outputs[0]].desc.dtype;
    if (!float_dtype(g.dtype) || emit_node(m, &g, root) == INT32_MIN || g.count < 2) return VN_OK;
    vn_fused_program prog;
    vn_fused_attr_store store;
    finish_program(&g, &prog);
    vn_fused_to_attrs(&prog, &store);
    vn_fuse_rewrite rw = {"FusedElementwise", "vinci",     NULL, g.inputs,
                          g.num_inputs,       store.items, 4,    false};
    bool done;
    return vn_fuse_apply(m, root, &rw, g.members, g.count, r, &done);
}

vn_status vn_pass_fuse_elementwise(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = m->num_nodes - 1; i >= 0; i--) {
        const vn_cnode *n = &m->nodes[i];
        if (n->dead || n->num_outputs < 1 || n->outputs[0] < 0 || !m->values[n->outputs[0]].known)
            continue;
        vn_status st = fuse_root(m, i, r);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
