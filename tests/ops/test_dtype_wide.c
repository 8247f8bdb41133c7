/*
 * test_dtype_wide.c — the dtypes f64, i16, u16, u32 and u64 through the
 * operators: Cast against references computed here (a brute-force nearest-
 * even search over every f16 / bf16 pattern, C's own integer and double
 * conversions), f64 arithmetic that must not round through f32, u64
 * arithmetic and ordering at the boundaries where int64 or double would be
 * wrong, and comparisons / reductions / CumSum on the narrow integers.
 */
#include "test_shape_ops_harness.h"

#define TWO63 9223372036854775808.0

static vn_tensor make_raw(vn_dtype dt, int64_t n, const void *data)
{
    vn_tensor t = th_make(dt, 1, &n);
    memcpy(t.data, data, (size_t)n * vn_dtype_size(dt));
    return t;
}

static vn_status cast(vn_tensor *x, int64_t onnx_to, vn_tensor *out)
{
    vn_attr a[] = {TH_INT("to", onnx_to)};
    vn_attrs at = {a, 1};
    return th_op("Cast", x, 1, false, &at, out, 1);
}

/* ---- reference: nearest-even 16-bit float by search over all patterns ---- */

typedef struct ref16 {
    double v[32768]; /* the value of each non-negative pattern (NaN skipped by the search) */
    int32_t finite;  /* patterns 0..finite-1 are finite; `finite` is +Inf */
} ref16;

static void ref16_init(ref16 *r, float (*to_f32)(uint16_t))
{
    r->finite = 0;
    for (int32_t b = 0; b < 32768; b++) {
        r->v[b] = to_f32((uint16_t)b);
        if (isfinite(r->v[b])) r->finite = b + 1;
    }
}

/* The pattern nearest |x| (ties to the even pattern), overflow to Inf by
 * the IEEE rule: beyond max + half an ulp (a tie there goes to Inf). */
static uint16_t ref16_round(const ref16 *r, double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (isnan(x)) return 0xffff; /* any NaN: compared by isnan */
    int32_t lo = 0, hi = r->finite - 1;
    double max = r->v[hi], ulp = max - r->v[hi - 1];
    if (a >= max + ulp / 2) return sign | (uint16_t)r->finite;
    if (a >= max) return sign | (uint16_t)hi;
    while (hi - lo > 1) { /* r->v[lo] <= a < r->v[hi] */
        int32_t mid = (lo + hi) / 2;
        if (r->v[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    double dl = a - r->v[lo], dh = r->v[hi] - a;
    int32_t pick = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
    return sign | (uint16_t)pick;
}

static float f16_f32(uint16_t h)
{
    return vn_f16_to_f32(h);
}
static float bf16_f32(uint16_t h)
{
    return vn_bf16_to_f32(h);
}

/* Doubles that trip a double rounding through f32: values just off a
 * 16-bit midpoint by less than f32 can hold, plus random ones and specials. */
static int64_t tricky_doubles(const ref16 *r, double *out, int64_t cap)
{
    vt_rng rng = {11};
    int64_t n = 0;
    for (int32_t b = 1; b + 1 < r->finite && n + 4 <= cap; b += 97) {
        double mid = (r->v[b] + r->v[b + 1]) / 2, e = fabs(mid) * 0x1p-40;
        out[n++] = mid;
        out[n++] = mid + e;
        out[n++] = -(mid - e);
        out[n++] = r->v[b] + (r->v[b + 1] - r->v[b]) * vt_uniform(&rng, 0, 1);
    }
    const double special[] = {0.0,     -0.0,    INFINITY,     -INFINITY, NAN,     1e300,   -1e-300,
                              65504.0, 65520.0, 65519.999999, 3.4e38,    5.96e-8, 2.98e-8, 1e-45};
    for (size_t i = 0; i < sizeof special / sizeof special[0] && n < cap; i++)
        out[n++] = special[i];
    return n;
}

static void check_f64_to_16(vn_dtype to, int64_t onnx_to, float (*to_f32)(uint16_t))
{
    static ref16 r;
    static double v[2048];
    ref16_init(&r, to_f32);
    int64_t n = tricky_doubles(&r, v, 2048);
    vn_tensor x = make_raw(VN_F64, n, v), out[1];
    VT_OK(cast(&x, onnx_to, out));
    int64_t bad = 0;
    for (int64_t i = 0; i < n && out[0].data; i++) {
        uint16_t got = ((uint16_t *)out[0].data)[i], want = ref16_round(&r, v[i]);
        bool ok = isnan(v[i]) ? isnan(to_f32(got)) : got == want;
        if (!ok && bad++ < 3)
            printf("  %s: %.17g -> 0x%04x, expected 0x%04x\n", vn_dtype_name(to), v[i], got, want);
    }
    VT_CHECK(bad == 0, "f64 -> %s: %lld of %lld wrong", vn_dtype_name(to), (long long)bad,
             (long long)n);
    th_free(out, 1);
    th_free(&x, 1);
}

static void test_cast_f64_narrow(void)
{
    check_f64_to_16(VN_F16, 10, f16_f32);
    check_f64_to_16(VN_BF16, 16, bf16_f32);
    /* f64 -> f32 is C's conversion (one rounding) */
    double v[4] = {1.0 + 0x1p-30, 0.1, -3e38, 1e-40};
    vn_tensor x = make_raw(VN_F64, 4, v), out[1];
    VT_OK(cast(&x, 1, out));
    bool ok = true;
    for (int i = 0; i < 4; i++) ok &= ((float *)out[0].data)[i] == (float)v[i];
    VT_CHECK(ok, "f64 -> f32");
    th_free(out, 1);
    th_free(&x, 1);
}

static void test_cast_to_f64_exact(void)
{
    /* every f16 and bf16 pattern widens exactly; so do i64 values below 2^53 */
    int64_t n = 65536;
    vn_tensor h = th_make(VN_F16, 1, &n), b = th_make(VN_BF16, 1, &n), o1[1], o2[1];
    for (int64_t i = 0; i < n; i++) ((uint16_t *)h.data)[i] = ((uint16_t *)b.data)[i] = (uint16_t)i;
    VT_OK(cast(&h, 11, o1));
    VT_OK(cast(&b, 11, o2));
    int64_t bad = 0;
    for (int64_t i = 0; i < n && o1[0].data && o2[0].data; i++) {
        double a = ((double *)o1[0].data)[i], c = ((double *)o2[0].data)[i];
        double wa = vn_f16_to_f32((uint16_t)i), wc = vn_bf16_to_f32((uint16_t)i);
        bad += !(a == wa || (isnan(a) && isnan(wa))) || !(c == wc || (isnan(c) && isnan(wc)));
    }
    VT_CHECK(bad == 0, "16-bit floats -> f64: %lld wrong", (long long)bad);
    th_free(o1, 1);
    th_free(o2, 1);
    th_free(&h, 1);
    th_free(&b, 1);
}

static void test_cast_u64(void)
{
    const uint64_t u[] = {0,
                          1,
                          (UINT64_C(1) << 53) + 1,
                          INT64_MAX,
                          UINT64_C(1) << 63,
                          UINT64_MAX,
                          (UINT64_C(1) << 63) + (UINT64_C(1) << 40) + 1};
    int64_t n = 7;
    vn_tensor x = make_raw(VN_U64, n, u), out[1];
    VT_OK(cast(&x, 11, out)); /* -> f64: C rounds once */
    bool ok = true;
    for (int64_t i = 0; i < n; i++) ok &= ((double *)out[0].data)[i] == (double)u[i];
    VT_CHECK(ok, "u64 -> f64");
    th_free(out, 1);
    VT_OK(cast(&x, 1, out)); /* -> f32 */
    ok = true;
    for (int64_t i = 0; i < n; i++) ok &= ((float *)out[0].data)[i] == (float)u[i];
    VT_CHECK(ok, "u64 -> f32");
    th_free(out, 1);
    VT_OK(cast(&x, 7, out)); /* -> i64 wraps */
    ok = true;
    for (int64_t i = 0; i < n; i++) ok &= ((uint64_t *)out[0].data)[i] == u[i];
    VT_CHECK(ok && ((int64_t *)out[0].data)[5] == -1, "u64 -> i64 bits");
    th_free(out, 1);
    VT_OK(cast(&x, 12, out)); /* -> u32 wraps */
    ok = true;
    for (int64_t i = 0; i < n; i++) ok &= ((uint32_t *)out[0].data)[i] == (uint32_t)u[i];
    VT_CHECK(ok, "u64 -> u32");
    th_free(out, 1);
    VT_OK(cast(&x, 16, out)); /* -> bf16 (no value here is near a bf16 midpoint) */
    static ref16 r;
    ref16_init(&r, bf16_f32);
    ok = true;
    for (int64_t i = 0; i < n; i++)
        ok &= ((uint16_t *)out[0].data)[i] == ref16_round(&r, (double)u[i]);
    VT_CHECK(ok, "u64 -> bf16");
    th_free(out, 1);
    th_free(&x, 1);
    /* f64 -> u64: exact above 2^63, saturating past 2^64, NaN 0, -1 wraps */
    double d[] = {TWO63, 1.5 * TWO63, 4 * TWO63, NAN, -1.0, 12345.9};
    const uint64_t want[] = {
        UINT64_C(1) << 63, UINT64_C(3) << 62, UINT64_MAX, 0, UINT64_MAX, 12345};
    vn_tensor y = make_raw(VN_F64, 6, d);
    VT_OK(cast(&y, 13, out));
    ok = true;
    for (int64_t i = 0; i < 6; i++) ok &= ((uint64_t *)out[0].data)[i] == want[i];
    VT_CHECK(ok, "f64 -> u64");
    th_free(out, 1);
    th_free(&y, 1);
    /* i64 -> bf16 rounds once: 2^60 + 2^52 + 1 is just above a bf16 midpoint */
    int64_t iv[1] = {(INT64_C(1) << 60) + (INT64_C(1) << 52) + 1};
    vn_tensor z = make_raw(VN_I64, 1, iv);
    VT_OK(cast(&z, 16, out));
    VT_CHECK(vn_bf16_to_f32(((uint16_t *)out[0].data)[0]) == 0x1.02p60f, "i64 -> bf16 once");
    th_free(out, 1);
    th_free(&z, 1);
}

/* Binary op on two 1-D raw arrays of dtype dt; the output in out. */
static vn_status binop(const char *op, vn_dtype dt, int64_t n, const void *a, const void *b,
                       vn_tensor *out)
{
    vn_tensor in[2] = {make_raw(dt, n, a), make_raw(dt, n, b)};
    vn_status st = th_op(op, in, 2, false, NULL, out, 1);
    th_free(in, 2);
    return st;
}

static void test_u64_arith(void)
{
    const uint64_t a[] = {UINT64_MAX, 0, UINT64_C(1) << 63, 7, UINT64_MAX - 1, 5};
    const uint64_t b[] = {2, 1, 3, UINT64_MAX, UINT64_C(1) << 63, 0};
    int64_t n = 6;
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
    for (int k = 0; k < 6; k++) {
        vn_tensor out[1];
        VT_OK(binop(ops[k], VN_U64, n, a, b, out));
        bool ok = out[0].desc.dtype == VN_U64;
        for (int64_t i = 0; i < n && out[0].data; i++) {
            uint64_t x = a[i], y = b[i];
            uint64_t w = k == 0   ? x + y
                         : k == 1 ? x - y
                         : k == 2 ? x * y
                         : k == 3 ? (y ? x / y : 0)
                         : k == 4 ? (x > y ? x : y)
                                  : (x < y ? x : y);
            ok &= ((uint64_t *)out[0].data)[i] == w;
        }
        VT_CHECK(ok, "u64 %s", ops[k]);
        th_free(out, 1);
    }
    vn_tensor out[1];
    vn_tensor in[2] = {make_raw(VN_U64, n, a), make_raw(VN_U64, n, b)};
    vn_attr fm[] = {TH_INT("fmod", 0)};
    vn_attrs at = {fm, 1};
    VT_OK(th_op("Mod", in, 2, false, &at, out, 1));
    bool ok = true;
    for (int64_t i = 0; i < n && out[0].data; i++)
        ok &= ((uint64_t *)out[0].data)[i] == (b[i] ? a[i] % b[i] : 0);
    VT_CHECK(ok, "u64 Mod");
    th_free(out, 1);
    const char *cmp[] = {"Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"};
    for (int k = 0; k < 5; k++) {
        VT_OK(th_op(cmp[k], in, 2, false, NULL, out, 1));
        ok = out[0].desc.dtype == VN_BOOL;
        for (int64_t i = 0; i < n && out[0].data; i++) {
            uint64_t x = a[i], y = b[i];
            bool w = k == 0 ? x < y : k == 1 ? x <= y : k == 2 ? x > y : k == 3 ? x >= y : x == y;
            ok &= ((uint8_t *)out[0].data)[i] == w;
        }
        VT_CHECK(ok, "u64 %s", cmp[k]);
        th_free(out, 1);
    }
    th_free(in, 2);
    /* Abs and Relu of a u64 >= 2^63 are the value */
    vn_tensor x = make_raw(VN_U64, n, a);
    VT_OK(th_op("Abs", &x, 1, false, NULL, out, 1));
    VT_CHECK(!memcmp(out[0].data, a, sizeof a), "u64 Abs");
    th_free(out, 1);
    th_free(&x, 1);
}

static void test_f64_arith(void)
{
    /* results f32 cannot hold: computed in double, rounded once */
    const double a[] = {1.0, 1.0 / 3, 1e300, -2.5, 0.1, NAN};
    const double b[] = {0x1p-40, 3.0, 1e10, 0.0, 0.2, 1.0};
    int64_t n = 6;
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
    for (int k = 0; k < 7; k++) {
        vn_tensor out[1];
        VT_OK(binop(ops[k], VN_F64, n, a, b, out));
        bool ok = out[0].desc.dtype == VN_F64;
        for (int64_t i = 0; i < n && out[0].data; i++) {
            double x = a[i], y = b[i];
            double w = k == 0   ? x + y
                       : k == 1 ? x - y
                       : k == 2 ? x * y
                       : k == 3 ? x / y
                       : k == 4 ? (isnan(x) || isnan(y) ? NAN : fmax(x, y))
                       : k == 5 ? (isnan(x) || isnan(y) ? NAN : fmin(x, y))
                                : pow(x, y);
            double g = ((double *)out[0].data)[i];
            ok &= g == w || (isnan(g) && isnan(w));
        }
        VT_CHECK(ok, "f64 %s", ops[k]);
        th_free(out, 1);
    }
    const char *un[] = {"Exp", "Log", "Sqrt", "Neg", "Abs", "Floor"};
    double v[] = {0.5, 2.0, 1e-5, 700.0};
    vn_tensor x = make_raw(VN_F64, 4, v), out[1];
    for (int k = 0; k < 6; k++) {
        VT_OK(th_op(un[k], &x, 1, false, NULL, out, 1));
        bool ok = out[0].desc.dtype == VN_F64;
        for (int64_t i = 0; i < 4 && out[0].data; i++) {
            double w = k == 0   ? exp(v[i])
                       : k == 1 ? log(v[i])
                       : k == 2 ? sqrt(v[i])
                       : k == 3 ? -v[i]
                       : k == 4 ? fabs(v[i])
                                : floor(v[i]);
            ok &= ((double *)out[0].data)[i] == w;
        }
        VT_CHECK(ok, "f64 %s", un[k]);
        th_free(out, 1);
    }
    th_free(&x, 1);
    /* CumSum and ReduceSum keep double: 1 + 2^-40 steps */
    double c[4] = {1.0, 0x1p-40, 0x1p-40, 0x1p-40};
    int64_t axis = 0;
    vn_tensor cx[2] = {make_raw(VN_F64, 4, c), th_ints(1, &axis)};
    cx[1].desc.rank = 0;
    VT_OK(th_op("CumSum", cx, 2, true, NULL, out, 1));
    VT_CHECK(out[0].data && ((double *)out[0].data)[3] == 1.0 + 3 * 0x1p-40, "f64 CumSum");
    th_free(out, 1);
    VT_OK(th_op("ReduceSum", cx, 1, true, NULL, out, 1));
    VT_CHECK(out[0].data && ((double *)out[0].data)[0] == 1.0 + 3 * 0x1p-40, "f64 ReduceSum");
    th_free(out, 1);
    th_free(cx, 2);
}

static void test_narrow_ints(void)
{
    const int16_t a16[] = {-32768, -1, 0, 32767, 100};
    const int16_t b16[] = {1, 1, 0, -32768, -7};
    vn_tensor out[1];
    VT_OK(binop("Less", VN_I16, 5, a16, b16, out));
    bool ok = true;
    for (int i = 0; i < 5; i++) ok &= ((uint8_t *)out[0].data)[i] == (a16[i] < b16[i]);
    VT_CHECK(ok, "i16 Less");
    th_free(out, 1);
    VT_OK(binop("Add", VN_I16, 5, a16, b16, out)); /* wraps in 16 bits */
    ok = out[0].desc.dtype == VN_I16;
    for (int i = 0; i < 5; i++) ok &= ((int16_t *)out[0].data)[i] == (int16_t)(a16[i] + b16[i]);
    VT_CHECK(ok, "i16 Add");
    th_free(out, 1);
    const uint32_t a32[] = {4000000000u, 1, UINT32_MAX, 7};
    const uint32_t b32[] = {3, 4000000000u, 2, 0};
    VT_OK(binop("Div", VN_U32, 4, a32, b32, out));
    ok = out[0].desc.dtype == VN_U32;
    for (int i = 0; i < 4; i++)
        ok &= ((uint32_t *)out[0].data)[i] == (b32[i] ? a32[i] / b32[i] : 0);
    VT_CHECK(ok, "u32 Div");
    th_free(out, 1);
    VT_OK(binop("Greater", VN_U32, 4, a32, b32, out));
    ok = true;
    for (int i = 0; i < 4; i++) ok &= ((uint8_t *)out[0].data)[i] == (a32[i] > b32[i]);
    VT_CHECK(ok, "u32 Greater");
    th_free(out, 1);
    const uint16_t u16[] = {65535, 3, 40000, 0};
    vn_tensor x = make_raw(VN_U16, 4, u16);
    VT_OK(th_op("ReduceMax", &x, 1, true, NULL, out, 1));
    VT_CHECK(out[0].desc.dtype == VN_U16 && ((uint16_t *)out[0].data)[0] == 65535, "u16 ReduceMax");
    th_free(out, 1);
    VT_OK(th_op("BitwiseNot", &x, 1, false, NULL, out, 1));
    ok = true;
    for (int i = 0; i < 4; i++) {
        uint16_t want = (uint16_t)(0xffffu ^ u16[i]);
        ok &= ((uint16_t *)out[0].data)[i] == want;
    }
    VT_CHECK(ok, "u16 BitwiseNot");
    th_free(out, 1);
    th_free(&x, 1);
}

static void test_refused(void)
{
    /* operators without a u64 / f64 path say so */
    uint64_t u[2] = {1, 2};
    int64_t k = 1;
    vn_tensor tk[2] = {make_raw(VN_U64, 2, u), th_ints(1, &k)}, out[2];
    VT_CHECK(th_op("TopK", tk, 2, true, NULL, out, 2) == VN_ERR_DTYPE, "TopK u64 refused");
    vn_tensor x = tk[0];
    VT_CHECK(th_op("Floor", &x, 1, false, NULL, out, 1) == VN_ERR_DTYPE, "Floor u64 refused");
    th_free(tk, 2);
    double d[2] = {1, 2};
    vn_tensor y = make_raw(VN_F64, 2, d);
    VT_CHECK(th_op("Softmax", &y, 1, false, NULL, out, 1) == VN_ERR_DTYPE, "Softmax f64 refused");
    th_free(&y, 1);
}

int main(void)
{
    /* exact references need IEEE subnormals (the default device flushes them) */
    vn_device_options o;
    memset(&o, 0, sizeof o);
    o.keep_denormals = true;
    if (vn_device_create(&o, &th_device) != VN_OK) return 1;
    VT_RUN(test_cast_f64_narrow);
    VT_RUN(test_cast_to_f64_exact);
    VT_RUN(test_cast_u64);
    VT_RUN(test_u64_arith);
    VT_RUN(test_f64_arith);
    VT_RUN(test_narrow_ints);
    VT_RUN(test_refused);
    vn_device_destroy(th_device);
    return vt_summary();
}
