/*
 * test_elementwise.c — every registered element-wise operator, every dtype it
 * accepts, sizes around block and tile edges, and the broadcasting shapes,
 * against double-precision references computed here.
 *
 * Tolerances (|y - ref| <= atol + rtol * |ref|, ref in double from the same
 * rounded inputs): f32 exact ops (add, mul, max, ...) rtol 1e-6 (a few ulp);
 * f32 transcendental ops rtol 1e-5, atol 1e-6; f16 rtol 2^-10 (one f16 ulp)
 * plus the f32 error; bf16 rtol 2^-7 (one bf16 ulp); i32 exact.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

/* ---- typed buffers ------------------------------------------------------------------ */

/* A tensor of random values in [lo, hi) (integers for i32). */
static vn_tensor make(vt_rng *r, vn_tensor_desc d, double lo, double hi)
{
    int64_t n = vn_desc_numel(&d);
    vn_tensor t = {d, malloc((size_t)(n > 0 ? n : 1) * vn_dtype_size(d.dtype))};
    for (int64_t i = 0; i < n; i++) {
        double v = vt_uniform(r, lo, hi);
        vt_put(d.dtype, t.data, i, d.dtype == VN_I32 ? floor(v) : v);
    }
    return t;
}

/* ---- references ------------------------------------------------------------------------ */

typedef double (*ref_fn)(double a, double b, double s);
static double r_add(double a, double b, double s)
{
    return a + b;
}
static double r_sub(double a, double b, double s)
{
    return a - b;
}
static double r_mul(double a, double b, double s)
{
    return a * b;
}
static double r_div(double a, double b, double s)
{
    return a / b;
}
static double r_max(double a, double b, double s)
{
    return a > b ? a : b;
}
static double r_min(double a, double b, double s)
{
    return a < b ? a : b;
}
static double r_relu(double a, double b, double s)
{
    return a > 0 ? a : 0;
}
static double r_leaky(double a, double b, double s)
{
    return a >= 0 ? a : s * a;
}
static double r_abs(double a, double b, double s)
{
    return fabs(a);
}
static double r_neg(double a, double b, double s)
{
    return -a;
}
static double r_exp(double a, double b, double s)
{
    return exp(a);
}
static double r_log(double a, double b, double s)
{
    return log(a);
}
static double r_sqrt(double a, double b, double s)
{
    return sqrt(a);
}
static double r_recip(double a, double b, double s)
{
    return 1.0 / a;
}
static double r_sigmoid(double a, double b, double s)
{
    return 1.0 / (1.0 + exp(-a));
}
static double r_tanh(double a, double b, double s)
{
    return tanh(a);
}
static double r_gelu(double a, double b, double s)
{
    return 0.5 * a * (1.0 + erf(a / sqrt(2.0)));
}
static double r_gelu_tanh(double a, double b, double s)
{
    return 0.5 * a * (1.0 + tanh(sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a)));
}

typedef struct op_case {
    const char *name;
    int arity;
    ref_fn ref;
    double lo, hi; /* input range */
    bool ints;     /* accepts i32 */
    bool exact;    /* f32 result is one rounding of the exact value */
} op_case;

static const op_case cases[] = {
    {"Add", 2, r_add, -10, 10, true, true},
    {"Sub", 2, r_sub, -10, 10, true, true},
    {"Mul", 2, r_mul, -10, 10, true, true},
    {"Div", 2, r_div, 0.5, 10, false, false},
    {"Max", 2, r_max, -10, 10, true, true},
    {"Min", 2, r_min, -10, 10, true, true},
    {"Relu", 1, r_relu, -10, 10, true, true},
    {"LeakyRelu", 1, r_leaky, -10, 10, false, true},
    {"Abs", 1, r_abs, -10, 10, true, true},
    {"Neg", 1, r_neg, -10, 10, true, true},
    {"Exp", 1, r_exp, -10, 10, false, false},
    {"Log", 1, r_log, 0.01, 100, false, false},
    {"Sqrt", 1, r_sqrt, 0, 100, false, false},
    {"Reciprocal", 1, r_recip, 0.1, 10, false, false},
    {"Sigmoid", 1, r_sigmoid, -10, 10, false, false},
    {"Tanh", 1, r_tanh, -5, 5, false, false},
    {"Gelu", 1, r_gelu, -6, 6, false, false},
};
#define NUM_CASES ((int)(sizeof cases / sizeof cases[0]))

static void tolerance(vn_dtype dt, bool exact, double *atol, double *rtol)
{
    *atol = exact ? 0 : 1e-6;
    *rtol = exact ? 1e-6 : 1e-5;
    if (dt == VN_F16) *rtol += 1.0 / 1024, *atol += 1e-7;
    if (dt == VN_BF16) *rtol += 1.0 / 128, *atol += 1e-7;
    if (dt == VN_I32) *atol = *rtol = 0;
}

/* Output index -> input index of a broadcast input (right-aligned). */
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

/* Plans op over `in`, runs it and compares with the reference; returns the
 * number of mismatching elements. */
static int64_t check_op(const char *name, const vn_tensor *in, int n, const vn_attrs *attrs,
                        ref_fn ref, double s, double atol, double rtol)
{
    vn_tensor_desc d[2] = {in[0].desc, n > 1 ? in[1].desc : in[0].desc};
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(NULL, name, d, n, attrs, &plan);
    VT_CHECK(st == VN_OK, "%s plan: %s", name, vn_last_error());
    if (st != VN_OK) return 1;
    vn_tensor out = {*vn_op_plan_output(plan, 0), NULL};
    int64_t numel = vn_desc_numel(&out.desc);
    out.data = malloc((size_t)(numel > 0 ? numel : 1) * vn_dtype_size(out.desc.dtype));
    st = vn_op_run(plan, in, n, &out, 1, NULL);
    VT_CHECK(st == VN_OK, "%s run: %s", name, vn_last_error());
    int64_t bad = 0;
    vn_dtype dt = out.desc.dtype;
    for (int64_t i = 0; i < numel && st == VN_OK; i++) {
        double a = vt_get(dt, in[0].data, bcast_index(&out.desc, &in[0].desc, i));
        double b = n > 1 ? vt_get(dt, in[1].data, bcast_index(&out.desc, &in[1].desc, i)) : 0;
        double want = ref(a, b, s), got = vt_get(dt, out.data, i);
        if (dt == VN_I32) want = (double)(int32_t)want;
        if (!(fabs(got - want) <= atol + rtol * fabs(want))) {
            if (bad++ < 3)
                fprintf(stderr, "    %s %s [%lld]: a=%.9g b=%.9g got %.9g want %.9g\n", name,
                        vn_dtype_name(dt), (long long)i, a, b, got, want);
        }
    }
    free(out.data);
    vn_op_plan_destroy(plan);
    return bad;
}

static void run_case(vt_rng *r, const op_case *c, vn_dtype dt, int64_t n)
{
    int64_t dims[1] = {n};
    vn_tensor in[2];
    for (int i = 0; i < c->arity; i++) in[i] = make(r, vt_desc(dt, 1, dims), c->lo, c->hi);
    double atol, rtol;
    tolerance(dt, c->exact, &atol, &rtol);
    int64_t bad = check_op(c->name, in, c->arity, NULL, c->ref, 0.01, atol, rtol);
    VT_CHECK(bad == 0, "%s %s n=%lld: %lld mismatches", c->name, vn_dtype_name(dt), (long long)n,
             (long long)bad);
    for (int i = 0; i < c->arity; i++) free(in[i].data);
}

static void test_every_op_every_dtype(void)
{
    vt_rng r = {42};
    static const int64_t sizes[] = {1, 7, 31, 33, 4095, 70001};
    static const vn_dtype dts[] = {VN_F32, VN_F16, VN_BF16, VN_I32};
    for (int k = 0; k < NUM_CASES; k++)
        for (int t = 0; t < 4; t++) {
            if (dts[t] == VN_I32 && !cases[k].ints) continue;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                run_case(&r, &cases[k], dts[t], sizes[s]);
        }
}

static void test_large_sizes(void)
{
    vt_rng r = {7};
    for (int k = 0; k < NUM_CASES; k++) run_case(&r, &cases[k], VN_F32, 1000003);
    run_case(&r, &cases[0], VN_F16, 1000003);
    run_case(&r, &cases[0], VN_I32, 1000003);
}

static void test_attributes(void)
{
    vt_rng r = {3};
    int64_t dims[1] = {1000};
    vn_tensor x = make(&r, vt_desc(VN_F32, 1, dims), -6, 6);
    vn_attr alpha = {.name = "alpha", .type = VN_ATTR_FLOAT, .f = 0.2};
    vn_attrs a = {&alpha, 1};
    VT_CHECK(check_op("LeakyRelu", &x, 1, &a, r_leaky, 0.2, 0, 1e-6) == 0, "alpha 0.2");
    vn_attr tanh_mode = {.name = "approximate", .type = VN_ATTR_STRING, .s = "tanh"};
    vn_attrs b = {&tanh_mode, 1};
    VT_CHECK(check_op("Gelu", &x, 1, &b, r_gelu_tanh, 0, 1e-6, 1e-5) == 0, "gelu tanh");
    vn_attr bad_mode = {.name = "approximate", .type = VN_ATTR_STRING, .s = "fast"};
    vn_attrs c = {&bad_mode, 1};
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "Gelu", &x.desc, 1, &c, &plan) == VN_ERR_INVALID_ARG,
             "approximate=fast rejected");
    VT_CONTAINS(vn_last_error(), "approximate");
    vn_attr wrong_type = {.name = "alpha", .type = VN_ATTR_INT, .i = 1};
    vn_attrs w = {&wrong_type, 1};
    VT_CHECK(vn_op_plan_create(NULL, "LeakyRelu", &x.desc, 1, &w, &plan) == VN_ERR_INVALID_ARG,
             "int alpha rejected");
    VT_CONTAINS(vn_last_error(), "LeakyRelu");
    free(x.data);
}

/* ---- broadcasting ---------------------------------------------------------------------- */

static void bcast_case(vt_rng *r, const char *op, ref_fn ref, vn_dtype dt, int32_t ra,
                       const int64_t *da, int32_t rb, const int64_t *db)
{
    vn_tensor in[2] = {make(r, vt_desc(dt, ra, da), -5, 5), make(r, vt_desc(dt, rb, db), -5, 5)};
    double atol, rtol;
    tolerance(dt, true, &atol, &rtol);
    int64_t bad = check_op(op, in, 2, NULL, ref, 0, atol, rtol);
    char sa[64], sb[64];
    VT_CHECK(bad == 0, "%s %s with %s: %lld mismatches", op, vn_desc_format(&in[0].desc, sa, 64),
             vn_desc_format(&in[1].desc, sb, 64), (long long)bad);
    free(in[0].data);
    free(in[1].data);
}

static void test_broadcast_shapes(void)
{
    vt_rng r = {11};
    static const vn_dtype dts[] = {VN_F32, VN_F16, VN_I32};
    for (int t = 0; t < 3; t++) {
        vn_dtype dt = dts[t];
        /* scalar with tensor, both orders (Sub is not symmetric) */
        bcast_case(&r, "Sub", r_sub, dt, 0, NULL, 2, (int64_t[]){37, 129});
        bcast_case(&r, "Sub", r_sub, dt, 2, (int64_t[]){37, 129}, 0, NULL);
        bcast_case(&r, "Sub", r_sub, dt, 1, (int64_t[]){1}, 1, (int64_t[]){4095});
        /* row [1,N] with [M,N]; column [M,1] with [M,N] */
        bcast_case(&r, "Sub", r_sub, dt, 2, (int64_t[]){1, 33}, 2, (int64_t[]){65, 33});
        bcast_case(&r, "Sub", r_sub, dt, 2, (int64_t[]){65, 33}, 2, (int64_t[]){65, 1});
        bcast_case(&r, "Sub", r_sub, dt, 2, (int64_t[]){3, 10000}, 2, (int64_t[]){3, 1});
        bcast_case(&r, "Mul", r_mul, dt, 2, (int64_t[]){1, 9000}, 2, (int64_t[]){5, 9000});
        /* rank mismatch [N] with [A,B,N] */
        bcast_case(&r, "Sub", r_sub, dt, 1, (int64_t[]){7}, 3, (int64_t[]){4, 5, 7});
        bcast_case(&r, "Add", r_add, dt, 3, (int64_t[]){2, 300, 16}, 1, (int64_t[]){16});
        /* both-sided [A,1,C] with [1,B,1] */
        bcast_case(&r, "Sub", r_sub, dt, 3, (int64_t[]){6, 1, 9}, 3, (int64_t[]){1, 5, 1});
        bcast_case(&r, "Sub", r_sub, dt, 3, (int64_t[]){1, 50, 1}, 3, (int64_t[]){3, 1, 700});
        /* general: middle broadcast, inner contiguous */
        bcast_case(&r, "Max", r_max, dt, 3, (int64_t[]){4, 1, 31}, 3, (int64_t[]){4, 6, 31});
        bcast_case(&r, "Min", r_min, dt, 4, (int64_t[]){2, 3, 1, 5}, 3, (int64_t[]){1, 4, 5});
    }
}

static void test_empty_tensors(void)
{
    vt_rng r = {5};
    int64_t d0[2] = {0, 4}, d1[1] = {4};
    vn_tensor in[2] = {make(&r, vt_desc(VN_F32, 2, d0), 0, 1),
                       make(&r, vt_desc(VN_F32, 1, d1), 0, 1)};
    vn_op_plan *plan = NULL;
    VT_OK(
        vn_op_plan_create(NULL, "Add", (vn_tensor_desc[]){in[0].desc, in[1].desc}, 2, NULL, &plan));
    const vn_tensor_desc *o = vn_op_plan_output(plan, 0);
    VT_CHECK(o->rank == 2 && o->dims[0] == 0 && o->dims[1] == 4, "output [0,4]");
    vn_tensor out = {*o, NULL}; /* NULL data is fine for an empty tensor */
    VT_OK(vn_op_run(plan, in, 2, &out, 1, NULL));
    vn_op_plan_destroy(plan);
    /* [1,0] with [3,1] -> [3,0] */
    vn_tensor_desc e[2] = {vt_desc(VN_F32, 2, (int64_t[]){1, 0}),
                           vt_desc(VN_F32, 2, (int64_t[]){3, 1})};
    VT_OK(vn_op_plan_create(NULL, "Mul", e, 2, NULL, &plan));
    o = vn_op_plan_output(plan, 0);
    VT_CHECK(o->dims[0] == 3 && o->dims[1] == 0, "output [3,0]");
    vn_op_plan_destroy(plan);
    VT_OK(vn_op_plan_create(NULL, "Exp", e, 1, NULL, &plan));
    vn_tensor x = {e[0], NULL}, y = {e[0], NULL};
    VT_OK(vn_op_run(plan, &x, 1, &y, 1, NULL));
    vn_op_plan_destroy(plan);
    free(in[0].data);
    free(in[1].data);
}

static void test_variadic(void)
{
    vt_rng r = {9};
    int64_t dims[2] = {17, 40};
    vn_tensor in[3];
    for (int i = 0; i < 3; i++) in[i] = make(&r, vt_desc(VN_F32, 2, dims), -3, 3);
    vn_tensor_desc d[3] = {in[0].desc, in[1].desc, in[2].desc};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "Max", d, 3, NULL, &plan));
    float *y = malloc(17 * 40 * sizeof *y);
    vn_tensor out = {in[0].desc, y};
    VT_OK(vn_op_run(plan, in, 3, &out, 1, NULL));
    int bad = 0;
    for (int i = 0; i < 17 * 40; i++) {
        float a = ((float *)in[0].data)[i], b = ((float *)in[1].data)[i],
              c = ((float *)in[2].data)[i];
        float m = a > b ? a : b;
        m = m > c ? m : c;
        bad += y[i] != m;
    }
    VT_CHECK(bad == 0, "Max of 3: %d mismatches", bad);
    vn_op_plan_destroy(plan);
    VT_OK(vn_op_plan_create(NULL, "Sum", d, 1, NULL, &plan));
    VT_OK(vn_op_run(plan, in, 1, &out, 1, NULL));
    VT_CHECK(memcmp(y, in[0].data, 17 * 40 * sizeof *y) == 0, "Sum of one input is the input");
    vn_op_plan_destroy(plan);
    free(y);
    for (int i = 0; i < 3; i++) free(in[i].data);
}

static void test_in_place(void)
{
    vt_rng r = {21};
    int64_t da[2] = {300, 1000}, db[1] = {1000};
    vn_tensor in[2] = {make(&r, vt_desc(VN_F32, 2, da), -2, 2),
                       make(&r, vt_desc(VN_F32, 1, db), -2, 2)};
    float *copy = malloc(300 * 1000 * sizeof *copy);
    memcpy(copy, in[0].data, 300 * 1000 * sizeof *copy);
    vn_op_plan *plan = NULL;
    VT_OK(
        vn_op_plan_create(NULL, "Add", (vn_tensor_desc[]){in[0].desc, in[1].desc}, 2, NULL, &plan));
    vn_tensor out = in[0]; /* y = x + b written over x */
    VT_OK(vn_op_run(plan, in, 2, &out, 1, NULL));
    const float *y = out.data, *b = in[1].data;
    int bad = 0;
    for (int i = 0; i < 300 * 1000; i++) bad += y[i] != copy[i] + b[i % 1000];
    VT_CHECK(bad == 0, "%d mismatches", bad);
    vn_op_plan_destroy(plan);
    free(copy);
    free(in[0].data);
    free(in[1].data);
}

/* ---- one plan, two threads ---------------------------------------------------------------- */

typedef struct thread_job {
    const vn_op_plan *plan;
    vn_tensor in[2], out;
    vn_status st;
} thread_job;

static void *thread_main(void *p)
{
    thread_job *j = p;
    for (int k = 0; k < 20 && j->st == VN_OK; k++)
        j->st = vn_op_run(j->plan, j->in, 2, &j->out, 1, NULL);
    return NULL;
}

static void test_plan_from_two_threads(void)
{
    vt_rng r = {13};
    int64_t da[2] = {300, 1000}, db[1] = {1000};
    vn_tensor_desc d[2] = {vt_desc(VN_F32, 2, da), vt_desc(VN_F32, 1, db)};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "Mul", d, 2, NULL, &plan));
    thread_job jobs[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        jobs[t].plan = plan;
        jobs[t].in[0] = make(&r, d[0], -2, 2);
        jobs[t].in[1] = make(&r, d[1], -2, 2);
        jobs[t].out = (vn_tensor){d[0], malloc(300 * 1000 * sizeof(float))};
        jobs[t].st = VN_OK;
        pthread_create(&th[t], NULL, thread_main, &jobs[t]);
    }
    for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < 2; t++) {
        VT_CHECK(jobs[t].st == VN_OK, "thread %d: %s", t, vn_status_name(jobs[t].st));
        const float *a = jobs[t].in[0].data, *b = jobs[t].in[1].data, *y = jobs[t].out.data;
        int bad = 0;
        for (int i = 0; i < 300 * 1000; i++) bad += y[i] != a[i] * b[i % 1000];
        VT_CHECK(bad == 0, "thread %d: %d mismatches", t, bad);
        free(jobs[t].in[0].data);
        free(jobs[t].in[1].data);
        free(jobs[t].out.data);
    }
    vn_op_plan_destroy(plan);
}

/* Integer dtypes the fused kernel lacks (i64 shape arithmetic, i8 / u8, i32
 * Div) are routed to the integer engine: exact, wrapping, Div toward zero. */
static void test_integer_routing(void)
{
    const struct {
        const char *op;
        vn_dtype dt;
    } routes[] = {{"Add", VN_I64}, {"Sub", VN_I64}, {"Mul", VN_I64}, {"Div", VN_I64},
                  {"Max", VN_I64}, {"Div", VN_I32}, {"Add", VN_I8},  {"Min", VN_U8}};
    int64_t dims[2] = {3, 5}, row[1] = {5};
    for (size_t c = 0; c < sizeof routes / sizeof routes[0]; c++) {
        vn_dtype dt = routes[c].dt;
        vn_tensor_desc in[2] = {vt_desc(dt, 2, dims), vt_desc(dt, 1, row)};
        vn_op_plan *plan = NULL;
        VT_OK(vn_op_plan_create(NULL, routes[c].op, in, 2, NULL, &plan));
        if (!plan) continue;
        int64_t a[15], b[5], y[15];
        char abuf[15 * 8], bbuf[5 * 8], ybuf[15 * 8];
        for (int i = 0; i < 15; i++) a[i] = dt == VN_U8 ? 7 * i : 11 * i - 60;
        for (int i = 0; i < 5; i++) b[i] = dt == VN_U8 ? 3 + i : (i % 2 ? -3 - i : 4 + i);
        for (int i = 0; i < 15; i++) vt_put(dt, abuf, i, (double)a[i]);
        for (int i = 0; i < 5; i++) vt_put(dt, bbuf, i, (double)b[i]);
        vn_tensor ti[2] = {{in[0], abuf}, {in[1], bbuf}}, to = {in[0], ybuf};
        VT_OK(vn_op_run(plan, ti, 2, &to, 1, NULL));
        for (int i = 0; i < 15; i++) {
            int64_t x = a[i], z = b[i % 5];
            const char *op = routes[c].op;
            y[i] = !strcmp(op, "Add")   ? x + z
                   : !strcmp(op, "Sub") ? x - z
                   : !strcmp(op, "Mul") ? x * z
                   : !strcmp(op, "Div") ? x / z
                   : !strcmp(op, "Max") ? (x > z ? x : z)
                                        : (x < z ? x : z);
            if (dt == VN_I8) y[i] = (int8_t)y[i];
            VT_CHECK(vt_get(dt, ybuf, i) == (double)y[i], "%s %s [%d]: %g vs %lld", op,
                     vn_dtype_name(dt), i, vt_get(dt, ybuf, i), (long long)y[i]);
        }
        vn_op_plan_destroy(plan);
    }
}

int main(void)
{
    VT_RUN(test_every_op_every_dtype);
    VT_RUN(test_large_sizes);
    VT_RUN(test_attributes);
    VT_RUN(test_broadcast_shapes);
    VT_RUN(test_empty_tensors);
    VT_RUN(test_variadic);
    VT_RUN(test_in_place);
    VT_RUN(test_plan_from_two_threads);
    VT_RUN(test_integer_routing);
    return vt_summary();
}
