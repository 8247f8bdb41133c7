/*
 * test_registry.c — the operator registry (built-ins, lookup, user operators,
 * thread-safe first use), descriptors and attributes, and the error paths of
 * the two-phase API: each asserts the status and that vn_last_error() names
 * the operator and the problem.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

/* ---- first use from several threads ------------------------------------------------ */

static void *count_ops(void *p)
{
    int32_t n = 0;
    while (vn_op_at(n)) n++;
    *(int32_t *)p = n;
    return NULL;
}

static void test_concurrent_first_use(void)
{
    pthread_t th[4];
    int32_t counts[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, count_ops, &counts[i]);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++)
        VT_CHECK(counts[i] == counts[0] && counts[0] >= 20, "thread %d saw %d ops (%d)", i,
                 (int)counts[i], (int)counts[0]);
}

static void test_builtins(void)
{
    static const char *const onnx[] = {
        "Add",     "Sub",        "Mul",     "Div",  "Max",  "Min",
        "Relu",    "LeakyRelu",  "Abs",     "Neg",  "Exp",  "Log",
        "Sqrt",    "Reciprocal", "Sigmoid", "Tanh", "Gelu", "LayerNormalization",
        "Softmax", "LogSoftmax"};
    for (size_t i = 0; i < sizeof onnx / sizeof onnx[0]; i++) {
        const vn_op_def *d = vn_op_find(onnx[i], "");
        VT_CHECK(d && strcmp(d->name, onnx[i]) == 0, "%s is registered", onnx[i]);
        VT_CHECK(vn_op_find(onnx[i], NULL) == d, "NULL domain is the default one");
    }
    VT_CHECK(vn_op_find("RMSNormalization", "vinci") != NULL, "vinci::RMSNormalization");
    VT_CHECK(vn_op_find("FusedElementwise", "vinci") != NULL, "vinci::FusedElementwise");
    VT_CHECK(vn_op_find("FusedElementwise", "") == NULL, "not in the default domain");
    VT_CHECK(vn_op_find("NoSuchOp", "") == NULL, "unknown");
    /* no duplicates */
    int dup = 0;
    for (int32_t i = 0; vn_op_at(i); i++)
        for (int32_t j = i + 1; vn_op_at(j); j++) {
            const vn_op_def *a = vn_op_at(i), *b = vn_op_at(j);
            dup += strcmp(a->name, b->name) == 0 && strcmp(a->domain, b->domain) == 0;
        }
    VT_CHECK(dup == 0, "%d duplicate entries", dup);
    VT_CHECK(vn_op_at(-1) == NULL, "negative index");
}

/* ---- a user operator: y = x * x, written in the tile model --------------------------- */

typedef struct square_args {
    vn_gm x, y;
} square_args;

static void square_kernel(vn_core *c, const void *p)
{
    const square_args *a = p;
    int64_t n = a->x.len; /* a multiple of 8 in this test */
    vn_local t = vn_buf_new(c, VN_VECCALC, n, VN_F32);
    vn_copy_in(c, t, a->x, 0, n);
    vn_mul(c, t, t, t, n);
    vn_copy_out(c, a->y, 0, t, n);
}

static vn_status square_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    if (vn_desc_numel(&ctx->inputs[0]) % 8 != 0)
        return vn_error(VN_ERR_UNSUPPORTED, "Square", "numel must be a multiple of 8");
    out[0] = ctx->inputs[0];
    return VN_OK;
}

static vn_status square_run(const vn_op_run_ctx *ctx)
{
    int64_t n = vn_desc_numel(&ctx->inputs[0].desc);
    square_args a = {vn_gm_make(ctx->inputs[0].data, VN_F32, n),
                     vn_gm_make(ctx->outputs[0].data, VN_F32, n)};
    return VN_LAUNCH(ctx->device, square_kernel, 1, &a, ctx->counters);
}

static const vn_op_def square_def = {
    "Square", "custom", 1, 1, 1, VN_DTYPE_BIT(VN_F32), square_infer, NULL, NULL, square_run};

static void test_user_operator(void)
{
    VT_OK(vn_op_register(&square_def));
    VT_CHECK(vn_op_find("Square", "custom") == &square_def, "found");
    VT_CHECK(vn_op_register(&square_def) == VN_ERR_INVALID_ARG, "duplicate rejected");
    VT_CONTAINS(vn_last_error(), "Square");
    VT_CONTAINS(vn_last_error(), "already registered");
    vn_op_def broken = square_def;
    broken.name = "Broken";
    broken.infer = NULL;
    VT_CHECK(vn_op_register(&broken) == VN_ERR_INVALID_ARG, "no infer");
    VT_CHECK(vn_op_register(NULL) == VN_ERR_INVALID_ARG, "NULL def");
    float x[16], y[16];
    for (int i = 0; i < 16; i++) x[i] = (float)i - 8;
    vn_tensor_desc d = vt_desc(VN_F32, 2, (int64_t[]){2, 8});
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "custom::Square", &d, 1, NULL, &plan));
    vn_tensor in = {d, x}, out = {d, y};
    VT_OK(vn_op_run(plan, &in, 1, &out, 1, NULL));
    int bad = 0;
    for (int i = 0; i < 16; i++) bad += y[i] != x[i] * x[i];
    VT_CHECK(bad == 0, "%d mismatches", bad);
    vn_op_plan_destroy(plan);
}

/* The built-in in-place declarations (vn_op_in_place), and argument errors. */
static void test_in_place_table(void)
{
    VT_CHECK(vn_op_in_place(vn_op_find("Add", "")) == VN_IN_PLACE_ALL, "Add");
    VT_CHECK(vn_op_in_place(vn_op_find("Relu", "")) == VN_IN_PLACE_ALL, "Relu");
    VT_CHECK(vn_op_in_place(vn_op_find("FusedElementwise", "vinci")) == VN_IN_PLACE_ALL,
             "FusedElementwise");
    VT_CHECK(vn_op_in_place(vn_op_find("FusedConv", "vinci")) == 1u << 3, "FusedConv residual");
    VT_CHECK(vn_op_in_place(vn_op_find("FusedConvNC1HWC0", "vinci")) == 1u << 3,
             "FusedConvNC1HWC0 residual");
    VT_CHECK(vn_op_in_place(vn_op_find("Conv", "")) == 0, "Conv reads X at other positions");
    VT_CHECK(vn_op_in_place(vn_op_find("Softmax", "")) == 0, "Softmax reads whole rows");
    VT_CHECK(vn_op_in_place(NULL) == 0, "NULL def");
    VT_CHECK(vn_op_set_in_place(NULL, 1) == VN_ERR_INVALID_ARG, "NULL def accepted");
    /* run-time declarations: a later one of the same def wins; the table is
     * finite and says so (the layouts and pre-pack hooks share it) */
    static vn_op_def defs[300];
    int32_t ok = 0;
    vn_status st = VN_OK;
    while (ok < 300 && (st = vn_op_set_in_place(&defs[ok], 1u << (ok % 3))) == VN_OK) ok++;
    VT_CHECK(st == VN_ERR_OUT_OF_MEMORY && ok >= 64 && ok < 300, "table of %d: %s", (int)ok,
             vn_status_name(st));
    VT_CONTAINS(vn_last_error(), "in-place inputs");
    VT_OK(vn_op_set_in_place(&defs[0], 4));
    VT_CHECK(vn_op_in_place(&defs[0]) == 4 && vn_op_in_place(&defs[1]) == 2,
             "declared values %llx %llx", (unsigned long long)vn_op_in_place(&defs[0]),
             (unsigned long long)vn_op_in_place(&defs[1]));
}

/* ---- descriptors and attributes ------------------------------------------------------- */

static void test_desc_and_attrs(void)
{
    char buf[64];
    vn_tensor_desc d = vt_desc(VN_F16, 3, (int64_t[]){2, 3, 4});
    VT_CHECK(strcmp(vn_desc_format(&d, buf, sizeof buf), "f16[2,3,4]") == 0, "%s", buf);
    VT_CHECK(vn_desc_numel(&d) == 24, "numel");
    vn_tensor_desc s = vt_desc(VN_F32, 0, NULL);
    VT_CHECK(strcmp(vn_desc_format(&s, buf, sizeof buf), "f32[]") == 0, "%s", buf);
    VT_CHECK(vn_desc_numel(&s) == 1, "scalar numel 1");
    vn_tensor_desc e = vt_desc(VN_F32, 2, (int64_t[]){3, 0});
    VT_CHECK(vn_desc_numel(&e) == 0, "empty numel 0");
    VT_CHECK(strcmp(vn_desc_format(&d, buf, 6), "f16[2") == 0, "truncated: %s", buf);

    vn_attr items[2] = {{.name = "axis", .type = VN_ATTR_INT, .i = 3},
                        {.name = "eps", .type = VN_ATTR_FLOAT, .f = 0.5}};
    vn_attrs a = {items, 2};
    int64_t i = 0;
    double f = 0;
    VT_OK(vn_attrs_int(&a, "axis", -1, &i));
    VT_CHECK(i == 3, "axis %lld", (long long)i);
    VT_OK(vn_attrs_int(&a, "missing", -1, &i));
    VT_CHECK(i == -1, "fallback");
    VT_OK(vn_attrs_int(NULL, "axis", 7, &i));
    VT_CHECK(i == 7, "NULL attrs: fallback");
    VT_OK(vn_attrs_float(&a, "eps", 1.0, &f));
    VT_CHECK(f == 0.5, "eps");
    VT_CHECK(vn_attrs_int(&a, "eps", 0, &i) == VN_ERR_INVALID_ARG, "float read as int");
    VT_CONTAINS(vn_last_error(), "'eps' is float, expected int");
    VT_CHECK(vn_attrs_find(&a, "axis") == &items[0], "find");
}

/* ---- error paths of the two-phase API --------------------------------------------------- */

static void test_plan_errors(void)
{
    vn_tensor_desc a34 = vt_desc(VN_F32, 2, (int64_t[]){3, 4}),
                   a24 = vt_desc(VN_F32, 2, (int64_t[]){2, 4});
    vn_op_plan *plan = (vn_op_plan *)&plan;
    VT_CHECK(vn_op_plan_create(NULL, "Frobnicate", &a34, 1, NULL, &plan) == VN_ERR_UNSUPPORTED,
             "unknown op");
    VT_CONTAINS(vn_last_error(), "Frobnicate");
    VT_CHECK(plan == NULL, "out cleared on failure");
    VT_CHECK(vn_op_plan_create(NULL, "Add", &a34, 1, NULL, &plan) == VN_ERR_INVALID_ARG, "count");
    VT_CONTAINS(vn_last_error(), "vn_op_plan_create(Add)");
    VT_CONTAINS(vn_last_error(), "takes 2 inputs, got 1");
    vn_tensor_desc i32 = vt_desc(VN_I32, 1, (int64_t[]){4});
    VT_CHECK(vn_op_plan_create(NULL, "Exp", &i32, 1, NULL, &plan) == VN_ERR_DTYPE, "dtype");
    VT_CONTAINS(vn_last_error(), "vn_op_plan_create(Exp)");
    VT_CONTAINS(vn_last_error(), "input 0");
    VT_CONTAINS(vn_last_error(), "i32");
    VT_CHECK(vn_op_plan_create(NULL, "Add", (vn_tensor_desc[]){a34, a24}, 2, NULL, &plan) ==
                 VN_ERR_SHAPE,
             "broadcast");
    VT_CHECK(strcmp(vn_last_error(), "vn_op_plan_create(Add): inputs f32[3,4] and f32[2,4] do "
                                     "not broadcast (dim 0: 3 vs 2)") == 0,
             "message: %s", vn_last_error());
    vn_tensor_desc h34 = vt_desc(VN_F16, 2, (int64_t[]){3, 4});
    VT_CHECK(vn_op_plan_create(NULL, "Mul", (vn_tensor_desc[]){a34, h34}, 2, NULL, &plan) ==
                 VN_ERR_DTYPE,
             "mixed dtypes");
    VT_CONTAINS(vn_last_error(), "input 1 has dtype f16");
    vn_tensor_desc r9 = vt_desc(VN_F32, 8, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1});
    r9.rank = 9;
    VT_CHECK(vn_op_plan_create(NULL, "Relu", &r9, 1, NULL, &plan) == VN_ERR_SHAPE, "rank 9");
    VT_CONTAINS(vn_last_error(), "rank 9");
    vn_tensor_desc neg = vt_desc(VN_F32, 2, (int64_t[]){3, -1});
    VT_CHECK(vn_op_plan_create(NULL, "Relu", &neg, 1, NULL, &plan) == VN_ERR_SHAPE, "neg dim");
    VT_CONTAINS(vn_last_error(), "negative dim 1");
    VT_CHECK(vn_op_plan_create(NULL, "Relu", &a34, 1, NULL, NULL) == VN_ERR_INVALID_ARG,
             "NULL out");
    VT_CHECK(vn_op_plan_create(NULL, NULL, &a34, 1, NULL, &plan) == VN_ERR_INVALID_ARG,
             "NULL name");
    VT_CHECK(vn_op_plan_create(NULL, "vinci::Add", &a34, 1, NULL, &plan) == VN_ERR_UNSUPPORTED,
             "Add is not in domain vinci");
    VT_CONTAINS(vn_last_error(), "vinci::Add");
}

static void test_run_errors(void)
{
    vn_tensor_desc a34 = vt_desc(VN_F32, 2, (int64_t[]){3, 4}),
                   a4 = vt_desc(VN_F32, 1, (int64_t[]){4});
    vn_tensor_desc a24 = vt_desc(VN_F32, 2, (int64_t[]){2, 4}),
                   h4 = vt_desc(VN_F16, 1, (int64_t[]){4});
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "Add", (vn_tensor_desc[]){a34, a4}, 2, NULL, &plan));
    VT_CHECK(vn_op_plan_num_outputs(plan) == 1 && vn_op_plan_workspace(plan) == 0, "signature");
    VT_CHECK(vn_op_plan_output(plan, 1) == NULL, "one output");
    float x[12] = {0}, b[4] = {0}, y[12];
    vn_tensor in[2] = {{a34, x}, {a4, b}}, out = {a34, y};
    VT_OK(vn_op_run(plan, in, 2, &out, 1, NULL));
    in[0].desc = a24;
    VT_CHECK(vn_op_run(plan, in, 2, &out, 1, NULL) == VN_ERR_SHAPE, "shape mismatch");
    VT_CHECK(strcmp(vn_last_error(), "vn_op_run(Add): input 0 is f32[2,4], planned f32[3,4]") == 0,
             "message: %s", vn_last_error());
    in[0].desc = a34;
    in[1].desc = h4;
    VT_CHECK(vn_op_run(plan, in, 2, &out, 1, NULL) == VN_ERR_DTYPE, "dtype mismatch");
    VT_CONTAINS(vn_last_error(), "input 1 is f16[4], planned f32[4]");
    in[1].desc = a4;
    out.desc = a24;
    VT_CHECK(vn_op_run(plan, in, 2, &out, 1, NULL) == VN_ERR_SHAPE, "output mismatch");
    VT_CONTAINS(vn_last_error(), "output 0 is f32[2,4], planned f32[3,4]");
    out.desc = a34;
    VT_CHECK(vn_op_run(plan, in, 1, &out, 1, NULL) == VN_ERR_INVALID_ARG, "count");
    VT_CONTAINS(vn_last_error(), "vn_op_run(Add)");
    in[1].data = NULL;
    VT_CHECK(vn_op_run(plan, in, 2, &out, 1, NULL) == VN_ERR_INVALID_ARG, "NULL data");
    VT_CONTAINS(vn_last_error(), "input 1 f32[4] has no data");
    VT_CHECK(vn_op_run(NULL, in, 2, &out, 1, NULL) == VN_ERR_INVALID_ARG, "NULL plan");
    vn_op_plan_destroy(plan);
    vn_op_plan_destroy(NULL);
}

int main(void)
{
    VT_RUN(test_concurrent_first_use); /* must run first: the registry's first use */
    VT_RUN(test_builtins);
    VT_RUN(test_user_operator);
    VT_RUN(test_in_place_table);
    VT_RUN(test_desc_and_attrs);
    VT_RUN(test_plan_errors);
    VT_RUN(test_run_errors);
    return vt_summary();
}
