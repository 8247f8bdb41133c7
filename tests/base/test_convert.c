/*
 * test_convert.c — the f32 <-> f16 / bf16 conversions against independent
 * double-precision references, exhaustively over every 16-bit pattern, and the
 * array forms of every ISA path against the scalar forms, bit for bit.
 *
 * The references are written differently from the library on purpose: decode
 * with ldexp, encode by finding the two neighbouring representable values in a
 * sorted table and picking the nearer one (ties to the even code).
 */
#include <float.h>
#include <math.h>

#include "base/convert_isa.h"
#include "vinci/base.h"
#include "vt.h"

typedef uint16_t (*to16_fn)(float);

static uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* ---- a 16-bit float format described by its field widths ----------------- */

typedef struct fmt16 {
    const char *name;
    int mant_bits, bias; /* exponent bits are 15 - mant_bits */
    uint16_t inf;        /* code of +Inf; the largest finite code is inf - 1 */
    to16_fn encode;
    double value[0x8000]; /* value of every non-negative finite code, ascending */
} fmt16;

static fmt16 f16_fmt = {"f16", 10, 15, 0x7c00, vn_f32_to_f16, {0}};
static fmt16 bf16_fmt = {"bf16", 7, 127, 0x7f80, vn_f32_to_bf16, {0}};

/* Reference decoder for non-negative finite codes, from the definition. */
static double ref_decode(const fmt16 *f, uint16_t code)
{
    int exp = code >> f->mant_bits;
    int mant = code & ((1 << f->mant_bits) - 1);
    if (exp == 0) return ldexp(mant, 1 - f->bias - f->mant_bits);
    return ldexp(mant + (1 << f->mant_bits), exp - f->bias - f->mant_bits);
}

static void fmt_init(fmt16 *f)
{
    for (uint32_t c = 0; c < f->inf; c++) f->value[c] = ref_decode(f, (uint16_t)c);
    /* One step past the largest finite value is where Inf takes over. */
    f->value[f->inf] = ldexp(1.0, (1 << (15 - f->mant_bits)) - 1 - f->bias);
}

/* Reference encoder: nearest of the two neighbours, ties to the even code. */
static uint16_t ref_encode(const fmt16 *f, float x)
{
    uint32_t u = bits_of(x);
    uint16_t sign = (uint16_t)(u >> 16 & 0x8000);
    if (isnan(x)) {
        uint32_t payload = (u & 0x7fffff) >> (23 - f->mant_bits);
        return (uint16_t)(sign | f->inf | (1u << (f->mant_bits - 1)) | payload);
    }
    double a = fabs((double)x);
    if (a >= f->value[f->inf]) return (uint16_t)(sign | f->inf);
    uint32_t lo = 0, hi = f->inf; /* invariant: value[lo] <= a < value[hi] */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (f->value[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    double dlo = a - f->value[lo], dhi = f->value[hi] - a; /* both exact */
    uint32_t pick = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
    return (uint16_t)(sign | pick);
}

static int mismatches;
static void check_encode(const fmt16 *f, float x)
{
    uint16_t got = f->encode(x), want = ref_encode(f, x);
    VT_CHECK(got == want, "%s(%a = 0x%08x) = 0x%04x, reference 0x%04x", f->name, (double)x,
             bits_of(x), got, want);
    mismatches += got != want;
}

/* ---- decoding: every code ------------------------------------------------ */

static void check_decode_code(const fmt16 *f, float (*decode)(uint16_t), uint16_t code)
{
    uint16_t mag = code & 0x7fff;
    float got = decode(code);
    uint32_t g = bits_of(got);
    VT_CHECK((g >> 31) == (uint32_t)(code >> 15), "%s 0x%04x: sign lost", f->name, code);
    if (mag > f->inf) {
        uint32_t payload = (uint32_t)(mag & ((1 << f->mant_bits) - 1)) << (23 - f->mant_bits);
        VT_CHECK(isnan(got) && (g & 0x400000) && (g & 0x3fffff) == (payload & 0x3fffff),
                 "%s NaN 0x%04x -> 0x%08x: not a quiet NaN keeping the payload", f->name, code, g);
        VT_CHECK(f->encode(got) == (code | (1 << (f->mant_bits - 1))), "%s NaN 0x%04x round trip",
                 f->name, code);
        return;
    }
    double want = mag == f->inf ? INFINITY : f->value[mag];
    VT_CHECK(fabs((double)got) == want, "%s 0x%04x -> %a, reference %a", f->name, code, (double)got,
             want);
    VT_CHECK(f->encode(got) == code, "%s 0x%04x round trip gives 0x%04x", f->name, code,
             f->encode(got));
}

static void test_f16_decode_all(void)
{
    for (uint32_t c = 0; c <= 0xffff; c++) check_decode_code(&f16_fmt, vn_f16_to_f32, (uint16_t)c);
}

static void test_bf16_decode_all(void)
{
    for (uint32_t c = 0; c <= 0xffff; c++)
        check_decode_code(&bf16_fmt, vn_bf16_to_f32, (uint16_t)c);
}

/* ---- encoding: values, ties, near-ties, random patterns -------------------- */

/* Every value, every midpoint, and the floats either side of each midpoint,
 * both signs. Midpoints of 16-bit formats are exact in f32. */
static void encode_grid(const fmt16 *f, void (*visit)(const fmt16 *, float))
{
    for (uint32_t c = 0; c < f->inf; c++) {
        float v = (float)f->value[c];
        float mid = (float)((f->value[c] + f->value[c + 1]) / 2);
        float near[] = {v, mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY)};
        for (int i = 0; i < 4; i++) {
            visit(f, near[i]);
            visit(f, -near[i]);
        }
    }
}

static float special_floats[] = {
    0.0f,          -0.0f,         FLT_MAX,       -FLT_MAX,      FLT_MIN,    -FLT_MIN, FLT_TRUE_MIN,
    -FLT_TRUE_MIN, INFINITY,      -INFINITY,     65504.0f,      65519.996f, 65520.0f, 65536.0f,
    5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f, 6.1035156e-5f, 1.0f,       -1.0f};
static const uint32_t special_bits[] = {0x7f800001, 0xff800001, 0x7fc00000, 0xffc00000, 0x7fffffff,
                                        0xffffffff, 0x7fa00000, 0x7f802000, 0x7f800fff, 0x7f7fffff,
                                        0x7f7f8000, 0x7f7f7fff, 0x00000001, 0x00007fff, 0x00008000,
                                        0x00018000, 0x007fffff, 0x00800000, 0x33000000, 0x33000001};

static void encode_random(const fmt16 *f, void (*visit)(const fmt16 *, float), long count)
{
    vt_rng rng = {0x9e3779b97f4a7c15ULL};
    for (size_t i = 0; i < sizeof special_floats / sizeof *special_floats; i++)
        visit(f, special_floats[i]);
    for (size_t i = 0; i < sizeof special_bits / sizeof *special_bits; i++) {
        visit(f, float_of(special_bits[i]));
        visit(f, float_of(special_bits[i] ^ 0x80000000u));
    }
    for (long i = 0; i < count; i++) {
        uint64_t r = vt_next(&rng);
        uint32_t u = (uint32_t)(r >> 32);
        /* Half the draws keep the exponent near the format's range (subnormals,
         * overflow edge), the rest are arbitrary patterns (f32 denormals, NaNs). */
        if (i & 1) {
            int lo = 127 - f->bias - f->mant_bits - 3;
            int e = lo + (int)((r & 0xffff) % (unsigned)(2 * f->bias + f->mant_bits + 6));
            if (e > 255) e = 255;
            if (e < 0) e = 0;
            u = (u & 0x807fffffu) | ((uint32_t)e << 23);
        }
        visit(f, float_of(u));
    }
}

static void test_f16_encode(void)
{
    mismatches = 0;
    encode_grid(&f16_fmt, check_encode);
    encode_random(&f16_fmt, check_encode, 3000000);
    VT_CHECK(mismatches == 0, "%d f32->f16 mismatches", mismatches);
}

static void test_bf16_encode(void)
{
    mismatches = 0;
    encode_grid(&bf16_fmt, check_encode);
    encode_random(&bf16_fmt, check_encode, 3000000);
    VT_CHECK(mismatches == 0, "%d f32->bf16 mismatches", mismatches);
}

/* ---- array forms: every ISA path equals the scalar forms ------------------ */

typedef struct array_fns {
    void (*to16)(const float *, uint16_t *, size_t);
    void (*from16)(const uint16_t *, float *, size_t);
} array_fns;

typedef struct isa_path {
    vn_isa isa;
    const char *name;
    array_fns f16, bf16;
} isa_path;

static const isa_path isa_paths[] = {
    {VN_ISA_AVX2,
     "avx2",
     {vn_f32_to_f16_array_avx2, vn_f16_to_f32_array_avx2},
     {vn_f32_to_bf16_array_avx2, vn_bf16_to_f32_array_avx2}},
    {VN_ISA_AVX512,
     "avx512",
     {vn_f32_to_f16_array_avx512, vn_f16_to_f32_array_avx512},
     {vn_f32_to_bf16_array_avx512, vn_bf16_to_f32_array_avx512}},
};

/* Inputs for the array tests: the grid and random values of both formats. */
static float *pool;
static size_t pool_len, pool_cap;
static void pool_add(const fmt16 *f, float x)
{
    (void)f;
    if (pool_len < pool_cap) pool[pool_len++] = x;
}

#define GUARD 0xa5a5u

/* Converts `n` elements starting at element `off` of a fresh buffer (so the
 * start is misaligned for every vector width when off is odd), and checks the
 * result and that nothing past the end was written. */
static void check_to16(const char *what, void (*fn)(const float *, uint16_t *, size_t),
                       to16_fn scalar, const float *src, size_t n, size_t off)
{
    uint16_t *dst = malloc((n + off + 8) * sizeof *dst);
    for (size_t i = 0; i < n + off + 8; i++) dst[i] = GUARD;
    fn(src, dst + off, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += dst[off + i] != scalar(src[i]);
    for (size_t i = 0; i < off; i++) bad += dst[i] != GUARD;
    for (size_t i = 0; i < 8; i++) bad += dst[off + n + i] != GUARD;
    VT_CHECK(bad == 0, "%s n=%zu off=%zu: %zu elements differ from scalar", what, n, off, bad);
    free(dst);
}

static void check_from16(const char *what, void (*fn)(const uint16_t *, float *, size_t),
                         float (*scalar)(uint16_t), const uint16_t *src, size_t n, size_t off)
{
    uint32_t *dst = malloc((n + off + 8) * sizeof *dst);
    for (size_t i = 0; i < n + off + 8; i++) dst[i] = GUARD;
    fn(src, (float *)(dst + off), n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += dst[off + i] != bits_of(scalar(src[i]));
    for (size_t i = 0; i < off; i++) bad += dst[i] != GUARD;
    for (size_t i = 0; i < 8; i++) bad += dst[off + n + i] != GUARD;
    VT_CHECK(bad == 0, "%s n=%zu off=%zu: %zu elements differ from scalar", what, n, off, bad);
    free(dst);
}

static const size_t lengths[] = {0, 1, 7, 15, 16, 17, 31, 33, 1000, 4097};

/* Short arrays at misaligned starts, then the whole pool / all 65536 codes. */
static void check_array_fns(const char *isa, array_fns fns, to16_fn to16, float (*from16)(uint16_t),
                            const float *src, size_t src_len, const uint16_t *codes)
{
    char what[64];
    snprintf(what, sizeof what, "%s %s", isa, to16 == vn_f32_to_f16 ? "f16" : "bf16");
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        for (size_t off = 0; off < 4; off++) {
            size_t start = (li * 977 + off * 131) % (src_len - 5000) + off;
            check_to16(what, fns.to16, to16, src + start, lengths[li], off);
            check_from16(what, fns.from16, from16, codes + start % 61000 + off, lengths[li], off);
        }
    }
    check_to16(what, fns.to16, to16, src, src_len, 0);
    check_from16(what, fns.from16, from16, codes, 65536, 0);
    check_from16(what, fns.from16, from16, codes + 1, 65535, 1);
}

static void test_arrays(void)
{
    pool_cap = 8u * 0x8000 * 2 + 400000;
    pool = malloc(pool_cap * sizeof *pool);
    pool_len = 0;
    encode_grid(&f16_fmt, pool_add);
    encode_grid(&bf16_fmt, pool_add);
    encode_random(&f16_fmt, pool_add, 100000);
    encode_random(&bf16_fmt, pool_add, 100000);
    uint16_t *codes = malloc(65536 * sizeof *codes);
    for (uint32_t c = 0; c < 65536; c++) codes[c] = (uint16_t)c;

    /* The public entry points, dispatched through the active ISA. */
    array_fns pub_f16 = {vn_f32_to_f16_array, vn_f16_to_f32_array};
    array_fns pub_bf16 = {vn_f32_to_bf16_array, vn_bf16_to_f32_array};
    const char *active = vn_isa_name(vn_isa_active());
    check_array_fns(active, pub_f16, vn_f32_to_f16, vn_f16_to_f32, pool, pool_len, codes);
    check_array_fns(active, pub_bf16, vn_f32_to_bf16, vn_bf16_to_f32, pool, pool_len, codes);

    /* Every vector path this CPU can run, whatever VINCI_ISA chose. */
    for (size_t p = 0; p < sizeof isa_paths / sizeof *isa_paths; p++) {
        const isa_path *ip = &isa_paths[p];
        if (ip->isa > vn_isa_detected()) continue;
        check_array_fns(ip->name, ip->f16, vn_f32_to_f16, vn_f16_to_f32, pool, pool_len, codes);
        check_array_fns(ip->name, ip->bf16, vn_f32_to_bf16, vn_bf16_to_f32, pool, pool_len, codes);
    }
    free(codes);
    free(pool);
}

int main(void)
{
    printf("active ISA: %s (detected %s, VINCI_ISA=%s)\n", vn_isa_name(vn_isa_active()),
           vn_isa_name(vn_isa_detected()), getenv("VINCI_ISA") ? getenv("VINCI_ISA") : "(unset)");
    fmt_init(&f16_fmt);
    fmt_init(&bf16_fmt);
    VT_RUN(test_f16_decode_all);
    VT_RUN(test_bf16_decode_all);
    VT_RUN(test_f16_encode);
    VT_RUN(test_bf16_encode);
    VT_RUN(test_arrays);
    return vt_summary();
}
