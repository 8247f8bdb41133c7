/*
 * cube_pack.c — the packers behind vn_cube_load_a / vn_cube_load_b: a strided
 * block of global memory into the layouts of kernel.h, converting the element
 * type and zero-padding rows, columns and k past the block.
 *
 * A is row-major: rup(m, MR) rows of Kp elements, so a row-major source is
 * one converted copy per row (memcpy for f32), and KP consecutive k of a row
 * are together as the dot-product kernels want them.
 *
 * A panel of B is Kp x NR with KP consecutive k of one column together:
 * element (col, d) of the source goes to
 *     panel*W*Kp + (d/KP)*W*KP + (col%W)*KP + d%KP       (W = NR).
 * For every operand family W*KP elements of one k group are 4*W bytes, so a
 * panel is a (Kp/KP) x W matrix of 32-bit "units" (one f32, one bf16 pair,
 * one byte quad), unit (row, g) at g*W + row%W. The packers work on units:
 *   depth contiguous (transposed B): each source row is
 *     converted to units (bf16 rounding, byte shift) in a small buffer, then
 *     a 4 x 4 unit transpose (SSE) writes the panel;
 *   rows contiguous (row-major B): the ISA's packer (cube_pack_rows.inc);
 *   any other strides: element by element.
 * Padding units are 0 in the packed domain (after the byte shift).
 */
#include <string.h>
#ifdef __SSE__
#include <xmmintrin.h>
#endif
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kernel/cube_internal.h"

/* Source element (as f32 / bf16 bits / byte) by dtype. */
static inline float src_f32(const void *s, int64_t at)
{
    return ((const float *)s)[at];
}

static uint16_t to_bf16(vn_dtype src_dtype, const void *s, int64_t at)
{
    if (src_dtype == VN_BF16) return ((const uint16_t *)s)[at];
    return vn_f32_to_bf16(src_f32(s, at));
}

/* Bytes: i8 A shifted to u8 (+128), u8 B shifted to i8 (-128): both flip bit 7. */
static uint8_t to_byte(vn_dtype src_dtype, vn_dtype dst_dtype, const void *s, int64_t at)
{
    uint8_t v = ((const uint8_t *)s)[at];
    return src_dtype == dst_dtype ? v : (uint8_t)(v ^ 0x80u);
}

static int64_t cdiv(int64_t x, int64_t m)
{
    return (x + m - 1) / m;
}

/* out[g*W + r] = src[r*rstride + g] (32-bit units) for r < rows, g < G;
 * zero for rows <= r < W. */
static void transpose_units(uint32_t *out, int W, const uint32_t *src, int64_t rstride, int rows,
                            int64_t G)
{
    int r0 = 0;
    for (; r0 + 4 <= rows; r0 += 4) {
        const uint32_t *s0 = src + r0 * rstride, *s1 = s0 + rstride, *s2 = s1 + rstride,
                       *s3 = s2 + rstride;
        uint32_t *o = out + r0;
        int64_t g = 0;
#ifdef __SSE__
        for (; g + 4 <= G; g += 4) {
            __m128 a = _mm_loadu_ps((const float *)(s0 + g)),
                   b = _mm_loadu_ps((const float *)(s1 + g));
            __m128 c = _mm_loadu_ps((const float *)(s2 + g)),
                   d = _mm_loadu_ps((const float *)(s3 + g));
            _MM_TRANSPOSE4_PS(a, b, c, d);
            _mm_storeu_ps((float *)(o + g * W), a);
            _mm_storeu_ps((float *)(o + (g + 1) * W), b);
            _mm_storeu_ps((float *)(o + (g + 2) * W), c);
            _mm_storeu_ps((float *)(o + (g + 3) * W), d);
        }
#endif
        for (; g < G; g++) {
            o[g * W] = s0[g], o[g * W + 1] = s1[g], o[g * W + 2] = s2[g], o[g * W + 3] = s3[g];
        }
    }
    for (; r0 < rows; r0++)
        for (int64_t g = 0; g < G; g++) out[g * W + r0] = src[r0 * rstride + g];
    if (rows < W)
        for (int64_t g = 0; g < G; g++) memset(out + g * W + rows, 0, (size_t)(W - rows) * 4);
}

/* Units of n source elements of one row (depth contiguous) into u, the last
 * unit zero-padded when n is not a multiple of KP. */
static void row_units(int KP, vn_dtype dd, vn_dtype sd, const void *src, int64_t n, uint32_t *u)
{
    int64_t units = cdiv(n, KP);
    if (dd == VN_F32) {
        memcpy(u, src, (size_t)n * 4);
        return;
    }
    if (dd == VN_BF16) {
        uint16_t *h = (uint16_t *)u;
        if (sd == VN_BF16)
            memcpy(h, src, (size_t)n * 2);
        else
            vn_f32_to_bf16_array(src, h, (size_t)n);
        for (int64_t i = n; i < units * 2; i++) h[i] = 0;
        return;
    }
    uint8_t *b = (uint8_t *)u, flip = sd == dd ? 0 : 0x80;
    const uint8_t *sb = src;
    for (int64_t i = 0; i < n; i++) b[i] = (uint8_t)(sb[i] ^ flip);
    for (int64_t i = n; i < units * 4; i++) b[i] = 0;
}

#define PACK_CHUNK 64 /* k groups converted at a time (depth-contiguous sources) */

static void pack_depth_contig(int W, int KP, vn_dtype dd, void *dst, vn_dtype sd, const void *src,
                              int64_t rs, int64_t rows, int64_t depth)
{
    int64_t G = cdiv(depth, KP), panels = cdiv(rows, W);
    size_t ses = vn_dtype_size(sd);
    uint32_t tmp[VN_CUBE_MAX_NR * PACK_CHUNK];
    for (int64_t p = 0; p < panels; p++) {
        uint32_t *d = (uint32_t *)dst + p * W * G;
        int w = (int)(rows - p * W < W ? rows - p * W : W);
        const uint8_t *s0 = (const uint8_t *)src + p * W * rs * (int64_t)ses;
        if (dd == VN_F32) {
            transpose_units(d, W, (const uint32_t *)s0, rs, w, G);
            continue;
        }
        for (int64_t g0 = 0; g0 < G; g0 += PACK_CHUNK) {
            int64_t gl = G - g0 < PACK_CHUNK ? G - g0 : PACK_CHUNK;
            int64_t d0 = g0 * KP, n = depth - d0 < gl * KP ? depth - d0 : gl * KP;
            for (int r = 0; r < w; r++)
                row_units(KP, dd, sd, s0 + (r * rs + d0) * (int64_t)ses, n, tmp + r * PACK_CHUNK);
            transpose_units(d + g0 * W, W, tmp, PACK_CHUNK, w, gl);
        }
    }
}

/* Any type into panels of width W with depth packing KP; depth padded to Kp. */
static void pack_any(int W, int KP, vn_dtype dst_dtype, void *dst, vn_dtype src_dtype,
                     const void *src, int64_t rs, int64_t ds, int64_t rows, int64_t depth)
{
    int64_t kp = (depth + KP - 1) / KP * KP;
    int64_t panels = (rows + W - 1) / W;
    size_t es = vn_dtype_size(dst_dtype);
    memset(dst, 0, (size_t)(panels * W * kp) * es);
    /* Walk the source along its unit-stride side (a row-major B is read row
     * by row, not column by column). */
    bool depth_inner = ds == 1 || (rs != 1 && (ds < 0 ? -ds : ds) < (rs < 0 ? -rs : rs));
    for (int64_t outer = 0; outer < (depth_inner ? rows : depth); outer++)
        for (int64_t inner = 0; inner < (depth_inner ? depth : rows); inner++) {
            int64_t r = depth_inner ? outer : inner, k = depth_inner ? inner : outer;
            int64_t at = (r / W) * W * kp + (k / KP) * W * KP + (r % W) * KP + k % KP;
            int64_t s = r * rs + k * ds;
            if (dst_dtype == VN_F32)
                ((float *)dst)[at] = src_f32(src, s);
            else if (dst_dtype == VN_BF16)
                ((uint16_t *)dst)[at] = to_bf16(src_dtype, src, s);
            else
                ((uint8_t *)dst)[at] = to_byte(src_dtype, dst_dtype, src, s);
        }
}

static void pack(int W, int KP, vn_dtype dd, void *dst, vn_dtype sd, const void *src, int64_t rs,
                 int64_t ds, int64_t rows, int64_t depth)
{
    if (rows <= 0 || depth <= 0) return;
    if (ds == 1)
        pack_depth_contig(W, KP, dd, dst, sd, src, rs, rows, depth);
    else if (rs == 1)
        vn_cube_table_get()->pack_b_rows(W, KP, dd, dst, sd, src, ds, rows, depth);
    else
        pack_any(W, KP, dd, dst, sd, src, rs, ds, rows, depth);
}

/* A, any strides, element by element along the source's unit-stride side. */
static void pack_a_any(vn_dtype dd, void *dst, int64_t kp, vn_dtype sd, const void *src, int64_t rs,
                       int64_t cs, int64_t m, int64_t k)
{
    bool k_inner = cs == 1 || (rs != 1 && (cs < 0 ? -cs : cs) < (rs < 0 ? -rs : rs));
    for (int64_t outer = 0; outer < (k_inner ? m : k); outer++)
        for (int64_t inner = 0; inner < (k_inner ? k : m); inner++) {
            int64_t r = k_inner ? outer : inner, c = k_inner ? inner : outer;
            int64_t at = r * kp + c, s = r * rs + c * cs;
            if (dd == VN_F32)
                ((float *)dst)[at] = src_f32(src, s);
            else if (dd == VN_BF16)
                ((uint16_t *)dst)[at] = to_bf16(sd, src, s);
            else
                ((uint8_t *)dst)[at] = to_byte(sd, dd, src, s);
        }
}

/* Bytes of a transposed A (rows 1 apart, k cs apart: an int8 im2col read as
 * its transpose, a QLinearConv's activations) into rows of kp: dst[r*kp + c]
 * = src[r + c*cs] ^ flip, by 16 x 16 SSE2 transposes where whole, else
 * element by element. Bytes past k are left for the caller. */
#ifdef __SSE2__
static void transpose_16x16(const uint8_t *s, int64_t ss, uint8_t *d, int64_t ds, __m128i flip)
{
    __m128i a[16], p[16], q[16];
    for (int i = 0; i < 16; i++)
        a[i] = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(s + i * ss)), flip);
    for (int i = 0; i < 8; i++) { /* rows 2i, 2i+1 as byte pairs: columns 0-7, 8-15 */
        p[i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
        p[i + 8] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
    }
    for (int h = 0; h < 2; h++) /* rows 4g..4g+3 as quads: 4 columns per register */
        for (int g = 0; g < 4; g++) {
            q[g * 4 + h * 2] = _mm_unpacklo_epi16(p[h * 8 + 2 * g], p[h * 8 + 2 * g + 1]);
            q[g * 4 + h * 2 + 1] = _mm_unpackhi_epi16(p[h * 8 + 2 * g], p[h * 8 + 2 * g + 1]);
        }
    for (int h = 0; h < 2; h++) /* rows 8h..8h+7 as 8 bytes: 2 columns per register */
        for (int cb = 0; cb < 4; cb++) {
            p[h * 8 + 2 * cb] = _mm_unpacklo_epi32(q[2 * h * 4 + cb], q[(2 * h + 1) * 4 + cb]);
            p[h * 8 + 2 * cb + 1] = _mm_unpackhi_epi32(q[2 * h * 4 + cb], q[(2 * h + 1) * 4 + cb]);
        }
    for (int c2 = 0; c2 < 8; c2++) { /* all 16 rows: one column per register */
        _mm_storeu_si128((__m128i *)(d + 2 * c2 * ds), _mm_unpacklo_epi64(p[c2], p[8 + c2]));
        _mm_storeu_si128((__m128i *)(d + (2 * c2 + 1) * ds), _mm_unpackhi_epi64(p[c2], p[8 + c2]));
    }
}
#endif

void vn_bytes_transpose(uint8_t *dst, int64_t kp, const uint8_t *src, int64_t cs, int64_t m,
                        int64_t k, uint8_t flip)
{
    int64_t r0 = 0, c0 = 0;
#ifdef __SSE2__
    __m128i f = _mm_set1_epi8((char)flip);
    for (; r0 + 16 <= m; r0 += 16)
        for (c0 = 0; c0 + 16 <= k; c0 += 16)
            transpose_16x16(src + r0 + c0 * cs, cs, dst + r0 * kp + c0, kp, f);
#endif
    for (int64_t r = 0; r < m; r++) /* the edges: columns past c0 of whole blocks, rows past r0 */
        for (int64_t c = r < r0 ? c0 : 0; c < k; c++)
            dst[r * kp + c] = (uint8_t)(src[r + c * cs] ^ flip);
}

void vn_cube_pack_a(vn_cube_shape s, vn_dtype dst_dtype, void *dst, vn_dtype src_dtype,
                    const void *src, int64_t rs, int64_t cs, int64_t m, int64_t k)
{
    if (m <= 0 || k <= 0) return;
    int64_t kp = cdiv(k, s.kp) * s.kp, rows = cdiv(m, s.mr) * s.mr;
    size_t des = vn_dtype_size(dst_dtype), ses = vn_dtype_size(src_dtype);
    uint8_t *d = dst;
    if (cs == 1) {
        for (int64_t r = 0; r < m; r++)
            row_units(s.kp, dst_dtype, src_dtype, (const uint8_t *)src + r * rs * (int64_t)ses, k,
                      (uint32_t *)(d + (size_t)(r * kp) * des));
    } else if (rs == 1 && dst_dtype == VN_F32) { /* a transposed f32 A: 4 x 4 transposes */
        transpose_units((uint32_t *)d, (int)kp, src, cs, (int)k, m);
    } else if (rs == 1 && des == 1) { /* a transposed int8 A: 16 x 16 transposes */
        for (int64_t r = 0; r < m; r++) memset(d + r * kp + k, 0, (size_t)(kp - k));
        vn_bytes_transpose(d, kp, (const uint8_t *)src, cs, m, k,
                           src_dtype == dst_dtype ? 0 : 0x80);
    } else {
        memset(d, 0, (size_t)(m * kp) * des);
        pack_a_any(dst_dtype, d, kp, src_dtype, src, rs, cs, m, k);
    }
    memset(d + (size_t)(m * kp) * des, 0, (size_t)((rows - m) * kp) * des);
}

/* B's "rows" of a panel are its columns: the row stride is cs, depth stride rs. */
void vn_cube_pack_b(vn_cube_shape s, vn_dtype dst_dtype, void *dst, vn_dtype src_dtype,
                    const void *src, int64_t rs, int64_t cs, int64_t k, int64_t n)
{
    pack(s.nr, s.kp, dst_dtype, dst, src_dtype, src, cs, rs, n, k);
}
