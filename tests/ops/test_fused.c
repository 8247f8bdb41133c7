/*
 * test_fused.c — fused element-wise programs (vinci::FusedElementwise): the
 * seeds' ReLU-Add, a longer chain with scalar and broadcast inputs, register
 * reuse corner cases, plans computed in place in global memory, a tiny UB
 * (many small tiles), the attribute form, and program errors. References interpret the program in
 * double.
 *
 * Tolerance: |y - ref| <= 1e-5 * (1 + max|ref|) for f32 (a chain of ~10
 * f32 roundings); plus one output ulp relative (2^-10 f16, 2^-7 bf16) for the
 * 16-bit types, which are computed in f32 and rounded once at the end; i32
 * exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/fused.h"
#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

static double vop_ref(vn_vop op, double a, double b, double s, bool ints)
{
    switch (op) {
    case VN_VOP_ABS:
        return fabs(a);
    case VN_VOP_EXP:
        return exp(a);
    case VN_VOP_LN:
        return log(a);
    case VN_VOP_SQRT:
        return sqrt(a);
    case VN_VOP_RSQRT:
        return 1 / sqrt(a);
    case VN_VOP_RECIPROCAL:
        return 1 / a;
    case VN_VOP_RELU:
        return a > 0 ? a : 0;
    case VN_VOP_NEG:
        return -a;
    case VN_VOP_SIGMOID:
        return 1 / (1 + exp(-a));
    case VN_VOP_TANH:
        return tanh(a);
    case VN_VOP_GELU:
        return 0.5 * a * (1 + erf(a / sqrt(2.0)));
    case VN_VOP_SILU:
        return a / (1 + exp(-a));
    case VN_VOP_ADD:
        return a + b;
    case VN_VOP_SUB:
        return a - b;
    case VN_VOP_MUL:
        return a * b;
    case VN_VOP_DIV:
        return a / b;
    case VN_VOP_MAX:
        return a > b ? a : b;
    case VN_VOP_MIN:
        return a < b ? a : b;
    case VN_VOP_ADDS:
        return a + (ints ? nearbyint(s) : s);
    case VN_VOP_MULS:
        return a * (ints ? nearbyint(s) : s);
    case VN_VOP_MAXS:
        return a > s ? a : s;
    case VN_VOP_MINS:
        return a < s ? a : s;
    case VN_VOP_LEAKY_RELU:
        return a >= 0 ? a : s * a;
    default:
        return NAN;
    }
}

static double interpret(const vn_fused_program *g, const double *in, bool ints)
{
    double r[VN_FUSED_MAX_INSTRS + 16];
    for (int i = 0; i < g->num_inputs; i++) r[i] = in[i];
    for (int k = 0; k < g->num_instrs; k++) {
        const vn_fused_instr *x = &g->instrs[k];
        double b = vn_vop_kind_of(x->op) == VN_VOP_BINARY ? r[x->src1] : 0;
        r[g->num_inputs + k] = vop_ref(x->op, r[x->src0], b, x->scalar, ints);
    }
    return r[g->num_inputs + g->num_instrs - 1];
}

static int64_t bcast_index(const vn_tensor_desc *out, const vn_tensor_desc *in, int64_t idx)
{
    int64_t off = 0, stride = 1;
    for (int32_t d = out->rank - 1; d >= 0; d--) {
        int64_t c = idx % out->dims[d];
        idx /= out->dims[d];
        int32_t k = d - (out->rank - in->rank);
        if (k < 0) continue;
        if (in->dims[k] != 1) off += c * stride;
        stride *= in->dims[k];
    }
    return off;
}

/* Runs `g` on random inputs of the given shapes with `dev`; returns mismatches. */
static int64_t check_program(vn_device *dev, const vn_fused_program *g, vn_dtype dt,
                             const vn_tensor_desc *shapes, double lo, double hi)
{
    vt_rng r = {99};
    int n = g->num_inputs;
    vn_tensor in[16];
    vn_tensor_desc d[16];
    for (int i = 0; i < n; i++) {
        d[i] = shapes[i];
        d[i].dtype = dt;
        int64_t m = vn_desc_numel(&d[i]);
        in[i] = (vn_tensor){d[i], malloc((size_t)(m ? m : 1) * 4)};
        for (int64_t e = 0; e < m; e++) {
            double v = vt_uniform(&r, lo, hi);
            vt_put(dt, in[i].data, e, dt == VN_I32 ? floor(v) : v);
        }
    }
    vn_op_plan *plan = NULL;
    vn_status st = vn_fused_plan_create(dev, g, d, n, &plan);
    VT_CHECK(st == VN_OK, "plan: %s", vn_last_error());
    if (st != VN_OK) return 1;
    vn_tensor out = {*vn_op_plan_output(plan, 0), NULL};
    int64_t numel = vn_desc_numel(&out.desc);
    out.data = malloc((size_t)(numel ? numel : 1) * 4);
    st = vn_op_run(plan, in, n, &out, 1, NULL);
    VT_CHECK(st == VN_OK, "run: %s", vn_last_error());
    double *ref = malloc((size_t)(numel ? numel : 1) * sizeof *ref), scale = 0;
    for (int64_t e = 0; e < numel; e++) {
        double v[16];
        for (int i = 0; i < n; i++) v[i] = vt_get(dt, in[i].data, bcast_index(&out.desc, &d[i], e));
        ref[e] = interpret(g, v, dt == VN_I32);
        if (fabs(ref[e]) > scale) scale = fabs(ref[e]);
    }
    double atol = dt == VN_I32 ? 0 : 1e-5 * (1 + scale);
    double rtol = dt == VN_F16 ? 1.0 / 1024 : dt == VN_BF16 ? 1.0 / 128 : 0;
    int64_t bad = 0;
    for (int64_t e = 0; e < numel && st == VN_OK; e++) {
        double got = vt_get(dt, out.data, e);
        if (!(fabs(got - ref[e]) <= atol + rtol * fabs(ref[e])) && bad++ < 3)
            fprintf(stderr, "    %s [%lld]: got %.9g want %.9g\n", vn_dtype_name(dt), (long long)e,
                    got, ref[e]);
    }
    free(ref);
    free(out.data);
    for (int i = 0; i < n; i++) free(in[i].data);
    vn_op_plan_destroy(plan);
    return bad;
}

#define I(op, a, b, s) ((vn_fused_instr){op, a, b, s})

static const vn_fused_program relu_add = {2, 2, {I(VN_VOP_ADD, 0, 1, 0), I(VN_VOP_RELU, 2, -1, 0)}};

/* x [A,B,N], bias [N], scale [], gate [A,1,N]: ten instructions, x read again
 * at the end (a long-lived register). */
static const vn_fused_program chain = {
    4,
    10,
    {I(VN_VOP_MUL, 0, 2, 0), I(VN_VOP_ADD, 4, 1, 0), I(VN_VOP_MULS, 5, -1, 0.5),
     I(VN_VOP_TANH, 6, -1, 0), I(VN_VOP_ADDS, 7, -1, 1), I(VN_VOP_MUL, 8, 3, 0),
     I(VN_VOP_MAXS, 9, -1, -0.25), I(VN_VOP_LEAKY_RELU, 10, -1, 0.1), I(VN_VOP_SUB, 11, 0, 0),
     I(VN_VOP_MINS, 12, -1, 3)}};

static const vn_fused_program int_chain = {3,
                                           7,
                                           {I(VN_VOP_ADD, 0, 1, 0), I(VN_VOP_MULS, 3, -1, 3),
                                            I(VN_VOP_MAXS, 4, -1, -5), I(VN_VOP_SUB, 5, 2, 0),
                                            I(VN_VOP_ABS, 6, -1, 0), I(VN_VOP_NEG, 7, -1, 0),
                                            I(VN_VOP_MINS, 8, -1, -2)}};

static void test_relu_add(void)
{
    static const int64_t sizes[] = {1, 7, 31, 33, 4095, 1000003};
    static const vn_dtype dts[] = {VN_F32, VN_F16, VN_BF16, VN_I32};
    for (int t = 0; t < 4; t++)
        for (int s = 0; s < 6; s++) {
            if (sizes[s] > 100000 && dts[t] != VN_F32) continue;
            vn_tensor_desc d[2] = {vt_desc(VN_F32, 1, &sizes[s]), vt_desc(VN_F32, 1, &sizes[s])};
            int64_t bad = check_program(NULL, &relu_add, dts[t], d, -10, 10);
            VT_CHECK(bad == 0, "ReLU-Add %s n=%lld: %lld mismatches", vn_dtype_name(dts[t]),
                     (long long)sizes[s], (long long)bad);
        }
    /* ReLU-Add with a broadcast bias row */
    vn_tensor_desc d[2] = {vt_desc(VN_F32, 2, (int64_t[]){129, 77}),
                           vt_desc(VN_F32, 1, (int64_t[]){77})};
    VT_CHECK(check_program(NULL, &relu_add, VN_F16, d, -10, 10) == 0, "ReLU-Add bias f16");
}

static void test_long_chain(void)
{
    static const vn_dtype dts[] = {VN_F32, VN_F16, VN_BF16};
    static const int64_t shapes[][3] = {{3, 5, 7}, {4, 33, 300}, {2, 2, 9001}, {1, 1, 1}};
    for (int t = 0; t < 3; t++)
        for (int s = 0; s < 4; s++) {
            const int64_t *x = shapes[s];
            vn_tensor_desc d[4] = {vt_desc(VN_F32, 3, x), vt_desc(VN_F32, 1, &x[2]),
                                   vt_desc(VN_F32, 0, NULL),
                                   vt_desc(VN_F32, 3, (int64_t[]){x[0], 1, x[2]})};
            int64_t bad = check_program(NULL, &chain, dts[t], d, -3, 3);
            VT_CHECK(bad == 0, "chain %s [%lld,%lld,%lld]: %lld mismatches", vn_dtype_name(dts[t]),
                     (long long)x[0], (long long)x[1], (long long)x[2], (long long)bad);
        }
    vn_tensor_desc di[3] = {vt_desc(VN_F32, 2, (int64_t[]){50, 70}),
                            vt_desc(VN_F32, 2, (int64_t[]){50, 1}), vt_desc(VN_F32, 0, NULL)};
    VT_CHECK(check_program(NULL, &int_chain, VN_I32, di, -100, 100) == 0, "int chain");
}

static void test_register_reuse(void)
{
    /* r1 unused; r0 read twice by one instruction; r2 read only at the end */
    vn_fused_program g = {3,
                          4,
                          {I(VN_VOP_MUL, 0, 0, 0), I(VN_VOP_EXP, 3, -1, 0), I(VN_VOP_NEG, 4, -1, 0),
                           I(VN_VOP_ADD, 5, 2, 0)}};
    vn_tensor_desc d[3] = {vt_desc(VN_F32, 1, (int64_t[]){5000}),
                           vt_desc(VN_F32, 1, (int64_t[]){5000}),
                           vt_desc(VN_F32, 1, (int64_t[]){5000})};
    VT_CHECK(check_program(NULL, &g, VN_F32, d, -1, 1) == 0, "f32");
    VT_CHECK(check_program(NULL, &g, VN_F16, d, -1, 1) == 0, "f16");
}

/* Copying through scratch, the VECOUT buffer holds the chain of values ending
 * in the result: a binary link reading a chain value and a slot, a value read
 * twice by its link, a link through src1; and the register kinds that implies.
 * Computed in place, OUT is global memory and holds the result only. */
static void test_out_chain(void)
{
    static const vn_fused_program g[3] = {
        {2, 3, {I(VN_VOP_ADD, 0, 1, 0), I(VN_VOP_EXP, 2, -1, 0), I(VN_VOP_MUL, 3, 2, 0)}},
        {2, 3, {I(VN_VOP_ADD, 0, 1, 0), I(VN_VOP_MUL, 2, 2, 0), I(VN_VOP_RELU, 3, -1, 0)}},
        {2, 3, {I(VN_VOP_SUB, 0, 1, 0), I(VN_VOP_ABS, 2, -1, 0), I(VN_VOP_ADD, 0, 3, 0)}}};
    /* per program: the slots, and which intermediates (r2, r3, r4) live in OUT */
    static const int slots[2][3] = {{1, 0, 0}, {2, 1, 1}}; /* copied, in place */
    static const bool in_out[3][3] = {{false, true, true}, {true, true, true}, {true, true, true}};
    vn_tensor_desc d[2] = {vt_desc(VN_F32, 1, (int64_t[]){3001}),
                           vt_desc(VN_F32, 1, (int64_t[]){3001})};
    for (int k = 0; k < 3; k++) {
        VT_CHECK(check_program(NULL, &g[k], VN_F32, d, -1, 1) == 0, "program %d f32", k);
        VT_CHECK(check_program(NULL, &g[k], VN_F16, d, -1, 1) == 0, "program %d f16", k);
        for (int place = 0; place < 2; place++) {
            vn_fused_plan p;
            memset(&p, 0, sizeof p);
            p.prog = g[k];
            p.io = p.cdt = VN_F32;
            p.cls[0] = p.cls[1] = VN_FUSED_FULL;
            p.in_place = place == 1;
            vn_fused_assign_registers(&p);
            VT_CHECK(p.num_slots == slots[place][k], "program %d place %d: %d slots, want %d", k,
                     place, (int)p.num_slots, slots[place][k]);
            for (int r = 0; r < 3; r++) {
                bool want = place ? r == 2 : in_out[k][r];
                VT_CHECK((p.reg_kind[2 + r] == VN_REG_OUT) == want,
                         "program %d place %d: r%d %s OUT", k, place, 2 + r,
                         want ? "not in" : "in");
            }
        }
    }
}

/* Which plans compute in place (no casts; whole-tensor, scalar, or unpadded
 * row-constant inputs), with results against the reference, and an output
 * that is its input's buffer (as the graph's memory plan makes them). */
static void test_in_place(void)
{
    vn_device *dev = NULL;
    VT_OK(vn_device_create(NULL, &dev));
    if (!dev) return;
    static const struct {
        vn_dtype dt;
        int rank_a, rank_b;
        int64_t a[2], b[2];
        bool in_place;
    } cases[] = {
        {VN_F32, 1, 1, {1000003}, {1000003}, true}, {VN_F16, 1, 1, {5000}, {5000}, false},
        {VN_I32, 1, 1, {5000}, {5000}, true},       {VN_F32, 1, 0, {5000}, {0}, true},
        {VN_F32, 2, 1, {129, 64}, {64}, true},      {VN_F32, 2, 1, {129, 77}, {77}, false},
        {VN_F32, 2, 2, {129, 64}, {129, 1}, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        vn_tensor_desc d[2] = {vt_desc(cases[k].dt, cases[k].rank_a, cases[k].a),
                               vt_desc(cases[k].dt, cases[k].rank_b, cases[k].b)};
        vn_fused_plan *p = NULL;
        VT_OK(vn_fused_plan_build("test", dev, &relu_add, d, 2, &d[0], &p));
        if (!p) continue;
        VT_CHECK(p->in_place == cases[k].in_place, "case %zu: in_place %d", k, (int)p->in_place);
        free(p);
        VT_CHECK(check_program(dev, &relu_add, cases[k].dt, d, -10, 10) == 0, "case %zu", k);
    }
    /* an output past the caches (> 16 MiB): a program of several instructions
     * runs chunk by chunk (vn_vprogram), a single one does not need to */
    int64_t big = 5000000;
    vn_tensor_desc db[2] = {vt_desc(VN_F32, 1, &big), vt_desc(VN_F32, 1, &big)};
    const vn_fused_program add = {2, 1, {I(VN_VOP_ADD, 0, 1, 0)}};
    for (int k = 0; k < 2; k++) {
        vn_fused_plan *p = NULL;
        VT_OK(vn_fused_plan_build("test", dev, k ? &add : &relu_add, db, 2, &db[0], &p));
        if (!p) continue;
        VT_CHECK(p->in_place && p->chunked == (k == 0), "program %d: in_place %d chunked %d", k,
                 (int)p->in_place, (int)p->chunked);
        free(p);
    }
    VT_CHECK(check_program(dev, &relu_add, VN_F32, db, -10, 10) == 0, "chunked ReLU-Add");
    /* out = relu(x + y) written over x */
    int64_t n = 1000003;
    vn_tensor_desc d[2] = {vt_desc(VN_F32, 1, &n), vt_desc(VN_F32, 1, &n)};
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *want = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)(i % 97) - 48.0f, y[i] = (float)(i % 13) - 6.5f;
        want[i] = x[i] + y[i] > 0 ? x[i] + y[i] : 0.0f;
    }
    vn_op_plan *plan = NULL;
    VT_OK(vn_fused_plan_create(dev, &relu_add, d, 2, &plan));
    vn_tensor in[2] = {{d[0], x}, {d[1], y}}, out = {d[0], x};
    VT_OK(vn_op_run(plan, in, 2, &out, 1, NULL));
    VT_CHECK(memcmp(x, want, (size_t)n * 4) == 0, "output over its input differs");
    vn_op_plan_destroy(plan);
    free(x), free(y), free(want);
    vn_device_destroy(dev);
}

static void test_tiny_ub(void)
{
    vn_device *dev = NULL;
    vn_device_options o;
    memset(&o, 0, sizeof o);
    o.num_threads = 3;
    o.arena_bytes[VN_ARENA_UB] = 12 * 1024;
    VT_OK(vn_device_create(&o, &dev));
    if (!dev) return;
    static const int64_t shapes[][3] = {{3, 5, 7}, {4, 33, 300}, {2, 3, 2001}};
    for (int s = 0; s < 3; s++) {
        const int64_t *x = shapes[s];
        vn_tensor_desc d[4] = {vt_desc(VN_F32, 3, x), vt_desc(VN_F32, 1, &x[2]),
                               vt_desc(VN_F32, 0, NULL),
                               vt_desc(VN_F32, 3, (int64_t[]){x[0], 1, x[2]})};
        VT_CHECK(check_program(dev, &chain, VN_F32, d, -3, 3) == 0, "f32 shape %d", s);
        VT_CHECK(check_program(dev, &chain, VN_F16, d, -3, 3) == 0, "f16 shape %d", s);
    }
    vn_device_destroy(dev);
}

static void test_attribute_form(void)
{
    int64_t ops[2] = {VN_VOP_ADD, VN_VOP_RELU}, s0[2] = {0, 2}, s1[2] = {1, -1};
    vn_attr items[3] = {{.name = "ops", .type = VN_ATTR_INTS, .ints = ops, .count = 2},
                        {.name = "src0", .type = VN_ATTR_INTS, .ints = s0, .count = 2},
                        {.name = "src1", .type = VN_ATTR_INTS, .ints = s1, .count = 2}};
    vn_attrs attrs = {items, 3};
    float a[40], b[40], y[40];
    for (int i = 0; i < 40; i++) a[i] = (float)(i - 20), b[i] = (float)(i % 7) - 3;
    vn_tensor_desc d = vt_desc(VN_F32, 1, (int64_t[]){40});
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "vinci::FusedElementwise", (vn_tensor_desc[]){d, d}, 2, &attrs,
                            &plan));
    vn_tensor in[2] = {{d, a}, {d, b}}, out = {d, y};
    VT_OK(vn_op_run(plan, in, 2, &out, 1, NULL));
    int bad = 0;
    for (int i = 0; i < 40; i++) bad += y[i] != fmaxf(a[i] + b[i], 0.0f);
    VT_CHECK(bad == 0, "%d mismatches", bad);
    vn_op_plan_destroy(plan);
    /* a missing program */
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedElementwise", (vn_tensor_desc[]){d, d}, 2, NULL,
                               &plan) == VN_ERR_INVALID_ARG,
             "missing ops attribute");
    VT_CONTAINS(vn_last_error(), "FusedElementwise");
    VT_CONTAINS(vn_last_error(), "'ops'");
}

static void test_program_errors(void)
{
    vn_tensor_desc d[2] = {vt_desc(VN_F32, 1, (int64_t[]){8}), vt_desc(VN_F32, 1, (int64_t[]){8})};
    vn_op_plan *plan = NULL;
    vn_fused_program undefined = {2, 1, {I(VN_VOP_ADD, 0, 5, 0)}};
    VT_CHECK(vn_fused_plan_create(NULL, &undefined, d, 2, &plan) == VN_ERR_INVALID_ARG, "r5");
    VT_CONTAINS(vn_last_error(), "instruction 0");
    VT_CONTAINS(vn_last_error(), "r5");
    vn_fused_program exp_prog = {1, 1, {I(VN_VOP_EXP, 0, -1, 0)}};
    vn_tensor_desc di = vt_desc(VN_I32, 1, (int64_t[]){8});
    VT_CHECK(vn_fused_plan_create(NULL, &exp_prog, &di, 1, &plan) == VN_ERR_DTYPE, "Exp on i32");
    VT_CONTAINS(vn_last_error(), "Exp");
    VT_CONTAINS(vn_last_error(), "i32");
    vn_fused_program empty = {2, 0, {{0}}};
    VT_CHECK(vn_fused_plan_create(NULL, &empty, d, 2, &plan) == VN_ERR_INVALID_ARG, "no instrs");
    VT_CHECK(vn_fused_plan_create(NULL, &relu_add, d, 1, &plan) == VN_ERR_INVALID_ARG,
             "input count");
    VT_CONTAINS(vn_last_error(), "2 inputs");
    vn_tensor_desc bad[2] = {vt_desc(VN_F32, 1, (int64_t[]){8}),
                             vt_desc(VN_F32, 1, (int64_t[]){3})};
    VT_CHECK(vn_fused_plan_create(NULL, &relu_add, bad, 2, &plan) == VN_ERR_SHAPE, "shapes");
    VT_CONTAINS(vn_last_error(), "do not broadcast");
    VT_CHECK(plan == NULL, "no plan on failure");
}

int main(void)
{
    VT_RUN(test_relu_add);
    VT_RUN(test_long_chain);
    VT_RUN(test_register_reuse);
    VT_RUN(test_out_chain);
    VT_RUN(test_in_place);
    VT_RUN(test_tiny_ub);
    VT_RUN(test_attribute_form);
    VT_RUN(test_program_errors);
    return vt_summary();
}
