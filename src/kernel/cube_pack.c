/*
 * cube_pack.c — the packers behind vn_cube_load_a / vn_cube_load_b: a strided
 * block of global memory into the micro-panel layout of kernel.h, converting
 * the element type and zero-padding rows, columns and k past the block.
 *
 * A panel of A is Kp x MR with KP consecutive k of one row together; a panel
 * of B is Kp x NR with KP consecutive k of one column together. Both are the
 * same walk ("rows" = the MR or NR side, "depth" = k), so one generic packer
 * serves both: element (row, d) of the source goes to
 *     panel*W*Kp + (d/KP)*W*KP + (row%W)*KP + d%KP       (W = MR or NR).
 * The f32 -> f32 cases the GEMM hot loop uses have dedicated loops.
 */
#include <string.h>

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

/* f32 -> f32, panels of width W: rows of the source contiguous along depth
 * (ds == 1) or along rows (rs == 1), else element by element. */
static void pack_f32(int W, float *dst, const float *src, int64_t rs, int64_t ds, int64_t rows,
                     int64_t depth)
{
    int64_t panels = (rows + W - 1) / W;
    for (int64_t p = 0; p < panels; p++) {
        float *d = dst + p * W * depth;
        int64_t r0 = p * W, w = rows - r0 < W ? rows - r0 : W;
        if (rs == 1) {
            for (int64_t k = 0; k < depth; k++) {
                const float *s = src + r0 + k * ds;
                float *o = d + k * W;
                int64_t r = 0;
                for (; r < w; r++) o[r] = s[r];
                for (; r < W; r++) o[r] = 0.0f;
            }
            continue;
        }
        for (int64_t r = 0; r < w; r++) {
            const float *s = src + (r0 + r) * rs;
            float *o = d + r;
            if (ds == 1)
                for (int64_t k = 0; k < depth; k++) o[k * W] = s[k];
            else
                for (int64_t k = 0; k < depth; k++) o[k * W] = s[k * ds];
        }
        for (int64_t r = w; r < W; r++)
            for (int64_t k = 0; k < depth; k++) d[k * W + r] = 0.0f;
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

void vn_cube_pack_a(vn_cube_shape s, vn_dtype dst_dtype, void *dst, vn_dtype src_dtype,
                    const void *src, int64_t rs, int64_t cs, int64_t m, int64_t k)
{
    if (dst_dtype == VN_F32 && s.kp == 1)
        pack_f32(s.mr, dst, src, rs, cs, m, k);
    else
        pack_any(s.mr, s.kp, dst_dtype, dst, src_dtype, src, rs, cs, m, k);
}

/* B's "rows" of a panel are its columns: the row stride is cs, depth stride rs. */
void vn_cube_pack_b(vn_cube_shape s, vn_dtype dst_dtype, void *dst, vn_dtype src_dtype,
                    const void *src, int64_t rs, int64_t cs, int64_t k, int64_t n)
{
    if (dst_dtype == VN_F32 && s.kp == 1)
        pack_f32(s.nr, dst, src, cs, rs, n, k);
    else
        pack_any(s.nr, s.kp, dst_dtype, dst, src_dtype, src, cs, rs, n, k);
}
