/*
 * convert.c — exact scalar f32 <-> f16 / bf16 conversions and the array forms.
 *
 * The scalar forms work on the bit patterns with integers only, so their
 * results do not depend on the floating-point environment (rounding mode,
 * FTZ/DAZ). They reproduce exactly what F16C / AVX-512 conversions do under
 * round-to-nearest-even, which is what lets the vector paths match them bit
 * for bit: NaNs keep their sign and the payload bits that fit and get the
 * quiet bit set; f16 subnormals are produced and read exactly.
 */
#include <string.h>

#include "base/convert_isa.h"
#include "vinci/base.h"

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#define F32_ABS_MASK 0x7fffffffu
#define F32_INF      0x7f800000u
#define F32_QUIET    0x00400000u
/* f32 magnitudes at and above which f16 rounds to Inf: 65520 = 65504 + half an ulp. */
#define F16_OVERFLOW 0x477ff000u
/* 2^-14, the smallest normal f16. */
#define F16_MIN_NORMAL 0x38800000u
/* 2^-25, half the smallest f16 subnormal: anything below rounds to zero. */
#define F16_UNDERFLOW 0x33000000u
/* (127 - 15) << 23: moves an f32 exponent to the f16 bias. */
#define F16_REBIAS 0x38000000u

/* Rounds an f32 magnitude below 2^-14 to an f16 subnormal (or zero, or the
 * smallest normal when it rounds up into it: the encodings are contiguous). */
static uint16_t f16_subnormal(uint32_t a)
{
    if (a < F16_UNDERFLOW) return 0;
    uint32_t exp = a >> 23;
    uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp; /* 14..24: f16 subnormal ulp is 2^-24 */
    uint32_t r = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return (uint16_t)r;
}

uint16_t vn_f32_to_f16(float x)
{
    uint32_t u = f32_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & F32_ABS_MASK;
    if (a > F32_INF) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= F16_OVERFLOW) return (uint16_t)(sign | 0x7c00u);
    if (a < F16_MIN_NORMAL) return (uint16_t)(sign | f16_subnormal(a));
    /* Round to nearest even on the 13 dropped bits; a carry into the exponent is
     * the correct next binade. */
    a += 0xfffu + ((a >> 13) & 1u);
    return (uint16_t)(sign | ((a - F16_REBIAS) >> 13));
}

float vn_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) {
        if (mant) return bits_f32(sign | F32_INF | F32_QUIET | (mant << 13));
        return bits_f32(sign | F32_INF);
    }
    if (exp == 0) {
        if (!mant) return bits_f32(sign);
        /* Subnormal: normalise so the leading one becomes the implicit bit. */
        exp = 1;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            exp--;
        }
        mant &= 0x3ffu;
    }
    return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t vn_f32_to_bf16(float x)
{
    uint32_t u = f32_bits(x);
    if ((u & F32_ABS_MASK) > F32_INF) return (uint16_t)((u >> 16) | 0x40u);
    /* Round to nearest even on the low 16 bits; overflow carries into Inf. */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float vn_bf16_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    if ((u & F32_ABS_MASK) > F32_INF) u |= F32_QUIET;
    return bits_f32(u);
}

/* ---- array forms: one table per ISA, picked by vn_isa_active() ---------- */

static void f32_to_f16_scalar(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = vn_f32_to_f16(src[i]);
}

static void f16_to_f32_scalar(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = vn_f16_to_f32(src[i]);
}

static void f32_to_bf16_scalar(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = vn_f32_to_bf16(src[i]);
}

static void bf16_to_f32_scalar(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = vn_bf16_to_f32(src[i]);
}

typedef struct convert_table {
    void (*f32_to_f16)(const float *, uint16_t *, size_t);
    void (*f16_to_f32)(const uint16_t *, float *, size_t);
    void (*f32_to_bf16)(const float *, uint16_t *, size_t);
    void (*bf16_to_f32)(const uint16_t *, float *, size_t);
} convert_table;

static const convert_table convert_tables[VN_ISA_COUNT] = {
    [VN_ISA_SCALAR] = {f32_to_f16_scalar, f16_to_f32_scalar, f32_to_bf16_scalar,
                       bf16_to_f32_scalar},
    [VN_ISA_AVX2] = {vn_f32_to_f16_array_avx2, vn_f16_to_f32_array_avx2, vn_f32_to_bf16_array_avx2,
                     vn_bf16_to_f32_array_avx2},
    [VN_ISA_AVX512] = {vn_f32_to_f16_array_avx512, vn_f16_to_f32_array_avx512,
                       vn_f32_to_bf16_array_avx512, vn_bf16_to_f32_array_avx512},
};
_Static_assert(VN_ISA_COUNT == 3, "add the new ISA to convert_tables");

/* vn_isa_active() is decided once and cached, so this is a load and an index. */
static const convert_table *active_table(void)
{
    return &convert_tables[vn_isa_active()];
}

void vn_f32_to_f16_array(const float *src, uint16_t *dst, size_t n)
{
    if (n) active_table()->f32_to_f16(src, dst, n);
}

void vn_f16_to_f32_array(const uint16_t *src, float *dst, size_t n)
{
    if (n) active_table()->f16_to_f32(src, dst, n);
}

void vn_f32_to_bf16_array(const float *src, uint16_t *dst, size_t n)
{
    if (n) active_table()->f32_to_bf16(src, dst, n);
}

void vn_bf16_to_f32_array(const uint16_t *src, float *dst, size_t n)
{
    if (n) active_table()->bf16_to_f32(src, dst, n);
}
