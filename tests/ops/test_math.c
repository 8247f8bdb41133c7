/*
 * test_math.c — the math operators of math.c (Pow, Floor, Ceil, Round,
 * Sign, Erf, the activations, trigonometric functions, PRelu, Clip, Mean,
 * Mod) on f32 / f16 / bf16 and the integer dtypes they take, broadcasting,
 * attribute defaults and errors, against double references written here.
 * Tolerance: |y - ref| <= 1e-6 |ref| + 1e-7 for f32 (one rounding of a
 * double result), one ulp of the format for f16 / bf16.
 */
#include "ops/math.h"
#include "test_shape_ops_harness.h"

typedef double (*ufn)(double x);
static double r_floor(double x)
{
    return floor(x);
}
static double r_ceil(double x)
{
    return ceil(x);
}
static double r_round(double x)
{
    double f = floor(x), d = x - f; /* ties to even, written out */
    if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0)) f += 1;
    return f;
}
static double r_sign(double x)
{
    return x > 0 ? 1 : x < 0 ? -1 : 0;
}
static double r_erf(double x)
{
    return erf(x);
}
static double r_elu(double x)
{
    return x < 0 ? 1.0 * (exp(x) - 1) : x;
}
static double r_selu(double x)
{
    return 1.0507009873554804934193349852946 *
           (x > 0 ? x : 1.6732632423543772848170429916717 * (exp(x) - 1));
}
static double r_softplus(double x)
{
    return log(1 + exp(x));
}
static double r_softsign(double x)
{
    return x / (1 + fabs(x));
}
static double r_hsig(double x)
{
    return fmax(0, fmin(1, 0.2 * x + 0.5));
}
static double r_hswish(double x)
{
    return x * fmax(0, fmin(6, x + 3)) / 6;
}
static double r_sin(double x)
{
    return sin(x);
}
static double r_atan(double x)
{
    return atan(x);
}
static double r_cosh(double x)
{
    return cosh(x);
}
static double r_mish(double x)
{
    return x * tanh(log(1 + exp(x)));
}

static bool close_to(vn_dtype dt, double y, double ref)
{
    double tol = dt == VN_F32 ? 1e-6 : dt == VN_F16 ? 1.0 / 1024 : 1.0 / 128;
    if (isnan(ref)) return isnan(y);
    if (y == ref) return true; /* infinities */
    return fabs(y - ref) <= tol * fabs(ref) + (dt == VN_F32 ? 1e-7 : 1e-4);
}

static void check_unary(const char *op, ufn f, vn_dtype dt)
{
    int64_t d[2] = {37, 29};
    vn_tensor x = th_make(dt, 2, d), out[1];
    vt_rng r = {99};
    for (int64_t i = 0; i < 37 * 29; i++) th_set(&x, i, vt_uniform(&r, -4, 4));
    th_set(&x, 0, 0.5);
    th_set(&x, 1, 2.5);
    th_set(&x, 2, -1.5);
    vn_status st = th_op(op, &x, 1, false, NULL, out, 1);
    VT_CHECK(st == VN_OK, "%s: %s", op, vn_last_error());
    if (st == VN_OK) {
        bool ok = true;
        int64_t bad = -1;
        for (int64_t i = 0; i < 37 * 29; i++)
            if (!close_to(dt, th_at(&out[0], i), f(th_at(&x, i))) && bad < 0) bad = i, ok = false;
        VT_CHECK(ok, "%s %s at %lld: %g vs %g", op, vn_dtype_name(dt), (long long)bad,
                 bad >= 0 ? th_at(&out[0], bad) : 0, bad >= 0 ? f(th_at(&x, bad)) : 0);
        th_free(out, 1);
    }
    th_free(&x, 1);
}

static void test_unary(void)
{
    static const struct {
        const char *op;
        ufn f;
    } ops[] = {{"Floor", r_floor},      {"Ceil", r_ceil},         {"Round", r_round},
               {"Sign", r_sign},        {"Erf", r_erf},           {"Elu", r_elu},
               {"Selu", r_selu},        {"Softplus", r_softplus}, {"Softsign", r_softsign},
               {"HardSigmoid", r_hsig}, {"HardSwish", r_hswish},  {"Sin", r_sin},
               {"Atan", r_atan},        {"Cosh", r_cosh},         {"Mish", r_mish}};
    static const vn_dtype dts[] = {VN_F32, VN_F16, VN_BF16};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (int32_t d = 0; d < 3; d++) check_unary(ops[k].op, ops[k].f, dts[d]);
    /* attributes */
    double v[3] = {-2, 0.5, 3};
    int64_t n = 3;
    vn_tensor x = th_from(VN_F32, 1, &n, v), out[1];
    vn_attr a[] = {TH_FLOAT("alpha", 0.5), TH_FLOAT("beta", 0.25)};
    vn_attrs at = {a, 2};
    VT_OK(th_op("HardSigmoid", &x, 1, false, &at, out, 1));
    VT_CHECK(th_at(&out[0], 0) == 0 && th_at(&out[0], 1) == 0.5 && th_at(&out[0], 2) == 1,
             "hardsigmoid attrs");
    th_free(out, 1);
    VT_OK(th_op("Elu", &x, 1, false, &at, out, 1));
    VT_CHECK(close_to(VN_F32, th_at(&out[0], 0), 0.5 * (exp(-2) - 1)), "elu alpha");
    th_free(out, 1);
    x.desc.dtype = VN_I32;
    VT_CHECK(th_op("Erf", &x, 1, false, NULL, out, 1) == VN_ERR_DTYPE, "erf on i32");
    vn_attr bad[] = {TH_INT("alpha", 1)};
    vn_attrs bat = {bad, 1};
    x.desc.dtype = VN_F32;
    VT_CHECK(th_op("Elu", &x, 1, false, &bat, out, 1) == VN_ERR_INVALID_ARG, "int alpha");
    th_free(&x, 1);
    /* Sign on ints */
    double iv[4] = {-7, 0, 3, -1};
    int64_t n4 = 4;
    vn_tensor xi = th_from(VN_I64, 1, &n4, iv);
    VT_OK(th_op("Sign", &xi, 1, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == -1 && th_at(&out[0], 1) == 0 && th_at(&out[0], 2) == 1,
             "sign i64");
    th_free(out, 1);
    th_free(&xi, 1);
}

static void test_pow_prelu(void)
{
    int64_t xd[2] = {3, 4}, ed[1] = {4};
    double ev[4] = {2, 0, -1, 3};
    vn_tensor in[2] = {th_iota(VN_F32, 2, xd), th_from(VN_I64, 1, ed, ev)}, out[1];
    VT_OK(th_op("Pow", in, 2, false, NULL, out, 1));
    bool ok = true;
    for (int64_t i = 0; i < 12; i++)
        ok &= close_to(VN_F32, th_at(&out[0], i), pow(th_at(&in[0], i), ev[i % 4]));
    VT_CHECK(ok, "pow f32 ^ i64");
    th_free(out, 1);
    th_free(in, 2);
    double b[4] = {2, -3, 5, 0}, e[4] = {10, 3, 0, 0};
    vn_tensor ii[2] = {th_from(VN_I32, 1, ed, b), th_from(VN_I32, 1, ed, e)};
    VT_OK(th_op("Pow", ii, 2, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == 1024 && th_at(&out[0], 1) == -27 && th_at(&out[0], 2) == 1 &&
                 th_at(&out[0], 3) == 1,
             "pow i32");
    th_free(out, 1);
    /* an integer base with a float exponent: computed in double, truncated */
    double fe[4] = {0.5, 2.5, 1, 1};
    vn_tensor mixed[2] = {ii[0], th_from(VN_F32, 1, ed, fe)};
    VT_OK(th_op("Pow", mixed, 2, false, NULL, out, 1));
    VT_CHECK(out[0].desc.dtype == VN_I32 && th_at(&out[0], 0) == 1 && th_at(&out[0], 1) == 0,
             "pow i32 ^ f32: %g %g", th_at(&out[0], 0), th_at(&out[0], 1));
    th_free(out, 1);
    th_free(mixed + 1, 1);
    th_free(ii, 2);
    /* PRelu: slope [C,1,1] over [N,C,H,W] */
    int64_t pd[4] = {2, 3, 4, 5}, sd[3] = {3, 1, 1};
    double sv[3] = {0.1, 0.2, 0.3};
    vn_tensor pin[2] = {th_iota(VN_F32, 4, pd), th_from(VN_F32, 3, sd, sv)};
    VT_OK(th_op("PRelu", pin, 2, false, NULL, out, 1));
    ok = true;
    for (int64_t i = 0; i < 120; i++) {
        double x = th_at(&pin[0], i), s = sv[i / 20 % 3];
        ok &= close_to(VN_F32, th_at(&out[0], i), x < 0 ? s * x : x);
    }
    VT_CHECK(ok, "prelu broadcast");
    th_free(out, 1);
    pin[1].desc.dims[0] = 2;
    VT_CHECK(th_op("PRelu", pin, 2, false, NULL, out, 1) == VN_ERR_SHAPE, "prelu slope shape");
    th_free(pin, 2);
}

static void test_clip_mean_mod(void)
{
    int64_t n = 6;
    double v[6] = {-5, -1, 0, 2, 7, NAN}, lo = -1.5, hi = 3;
    vn_tensor in[3] = {th_from(VN_F32, 1, &n, v), th_from(VN_F32, 0, NULL, &lo),
                       th_from(VN_F32, 0, NULL, &hi)};
    vn_tensor out[1];
    VT_OK(th_op("Clip", in, 3, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == -1.5 && th_at(&out[0], 1) == -1 && th_at(&out[0], 4) == 3 &&
                 isnan(th_at(&out[0], 5)),
             "clip both");
    th_free(out, 1);
    vn_tensor only_max[3] = {in[0], {{VN_F32, -1, {0}}, NULL}, in[2]};
    VT_OK(th_op("Clip", only_max, 3, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == -5 && th_at(&out[0], 4) == 3, "clip max only");
    th_free(out, 1);
    VT_OK(th_op("Clip", in, 1, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == -5 && th_at(&out[0], 4) == 7, "clip none");
    th_free(out, 1);
    vn_attr a[] = {TH_FLOAT("min", 0.0), TH_FLOAT("max", 1.0)};
    vn_attrs at = {a, 2};
    VT_OK(th_op("Clip", in, 1, false, &at, out, 1));
    VT_CHECK(th_at(&out[0], 0) == 0 && th_at(&out[0], 4) == 1, "clip opset 6 attributes");
    th_free(out, 1);
    int64_t two = 2;
    vn_tensor bad[2] = {in[0], th_make(VN_F32, 1, &two)};
    VT_CHECK(th_op("Clip", bad, 2, false, NULL, out, 1) == VN_ERR_SHAPE, "clip min not scalar");
    th_free(bad + 1, 1);
    double iv[6] = {-5, -1, 0, 2, 7, 100}, ilo = -2, ihi = 5;
    vn_tensor ii[3] = {th_from(VN_I64, 1, &n, iv), th_from(VN_I64, 0, NULL, &ilo),
                       th_from(VN_I64, 0, NULL, &ihi)};
    VT_OK(th_op("Clip", ii, 3, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == -2 && th_at(&out[0], 5) == 5, "clip i64");
    th_free(out, 1);
    th_free(ii, 3);
    /* Mean of three, broadcast */
    int64_t d1[2] = {2, 3}, d2[1] = {3};
    vn_tensor m[3] = {th_iota(VN_F32, 2, d1), th_iota(VN_F32, 1, d2), th_iota(VN_F32, 2, d1)};
    VT_OK(th_op("Mean", m, 3, false, NULL, out, 1));
    bool ok = true;
    for (int64_t i = 0; i < 6; i++)
        ok &= close_to(VN_F32, th_at(&out[0], i), (2 * th_at(&m[0], i) + th_at(&m[1], i % 3)) / 3);
    VT_CHECK(ok, "mean");
    th_free(out, 1);
    th_free(m, 3);
    /* Mod: Python sign rule (fmod 0) and C rule (fmod 1) */
    double ma[4] = {-7, 7, -7, 7}, mb[4] = {3, -3, -3, 0};
    int64_t n4 = 4;
    vn_tensor mi[2] = {th_from(VN_I32, 1, &n4, ma), th_from(VN_I32, 1, &n4, mb)};
    VT_OK(th_op("Mod", mi, 2, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == 2 && th_at(&out[0], 1) == -2 && th_at(&out[0], 2) == -1,
             "mod int");
    th_free(out, 1);
    vn_attr fa[] = {TH_INT("fmod", 1)};
    vn_attrs fat = {fa, 1};
    mi[0].desc.dtype = mi[1].desc.dtype = VN_F32;
    for (int32_t i = 0; i < 4; i++) th_set(&mi[0], i, ma[i] + 0.5), th_set(&mi[1], i, mb[i]);
    VT_OK(th_op("Mod", mi, 2, false, &fat, out, 1));
    VT_CHECK(th_at(&out[0], 0) == fmod(-6.5, 3) && th_at(&out[0], 1) == fmod(7.5, -3), "fmod");
    th_free(out, 1);
    th_free(mi, 2);
    th_free(in, 3);
}

/* The integer variants elementwise.c routes i8 / u8 / i64 to (not in the
 * registry): driven through their vn_op_def as the owner will. */
static vn_status run_variant(const char *name, vn_tensor *in, int32_t ni, vn_tensor *out)
{
    const vn_op_def *def = vn_math_integer_variant(name);
    vn_tensor_desc d[4];
    vn_device *dev = NULL;
    void *plan = NULL;
    size_t ws = 0;
    for (int32_t i = 0; i < ni; i++) d[i] = in[i].desc;
    vn_status st = def ? vn_device_default(&dev) : VN_ERR_UNSUPPORTED;
    vn_op_ctx ctx = {def, dev, d, ni, NULL, "", NULL, 0};
    vn_tensor_desc od;
    if (st == VN_OK) st = def->infer(&ctx, &od);
    if (st == VN_OK) st = def->plan(&ctx, &od, &plan, &ws);
    if (st != VN_OK) return st;
    *out = th_make(od.dtype, od.rank, od.dims);
    vn_op_run_ctx rc = {def, dev, plan, in, ni, out, 1, NULL, NULL};
    st = def->run(&rc);
    def->plan_free(plan);
    return st;
}

static void test_integer_variants(void)
{
    int64_t n = 4, one = 1;
    double a[4] = {7, -7, (double)(1LL << 40), 0}, b = -2;
    vn_tensor in[2] = {th_from(VN_I64, 1, &n, a), th_from(VN_I64, 1, &one, &b)}, out;
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
    const double want[6][4] = {
        {5, -9, (double)(1LL << 40) - 2, -2}, {9, -5, (double)(1LL << 40) + 2, 2},
        {-14, 14, -(double)(1LL << 41), 0},   {-3, 3, -(double)(1LL << 39), 0},
        {7, -2, (double)(1LL << 40), 0},      {-2, -7, -2, -2}};
    for (int32_t k = 0; k < 6; k++) {
        VT_OK(run_variant(ops[k], in, 2, &out));
        bool ok = out.desc.dtype == VN_I64;
        for (int64_t i = 0; i < 4; i++) ok &= th_at(&out, i) == want[k][i];
        VT_CHECK(ok, "i64 %s", ops[k]);
        th_free(&out, 1);
    }
    VT_OK(run_variant("Neg", in, 1, &out));
    VT_CHECK(th_at(&out, 1) == 7, "neg");
    th_free(&out, 1);
    in[1].desc.dtype = VN_F32;
    VT_CHECK(run_variant("Add", in, 2, &out) == VN_ERR_DTYPE, "mixed");
    in[0].desc.dtype = VN_F32;
    VT_CHECK(run_variant("Add", in, 2, &out) == VN_ERR_DTYPE, "floats refused");
    VT_CHECK(vn_math_integer_variant("Gelu") == NULL, "no Gelu variant");
    VT_CHECK(vn_math_integer_variant("Exp") &&
                 vn_math_integer_variant("Exp")->dtypes == VN_DTYPE_BIT(VN_F64),
             "Exp: an f64 variant only");
    th_free(in, 2);
}

int main(void)
{
    VT_RUN(test_integer_variants);
    VT_RUN(test_unary);
    VT_RUN(test_pow_prelu);
    VT_RUN(test_clip_mean_mod);
    return vt_summary();
}
