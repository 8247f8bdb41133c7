/*
 * compare.c — Compare (element-wise comparison to a bit mask) and Select
 * (element-wise choice by a bit mask).
 *
 * Bit mask layout: bit i of the mask is bit (i % 8) of byte i / 8 (little
 * endian), as the hardware's Compare writes and Select reads it. Comparisons
 * are IEEE: every ordered comparison with NaN is false, NE is true.
 */
#include <string.h>

#include "kernel/vector_internal.h"

typedef bool (*vn_cmp_fn)(double a, double b);
static bool cmp_lt(double a, double b)
{
    return a < b;
}
static bool cmp_gt(double a, double b)
{
    return a > b;
}
static bool cmp_ge(double a, double b)
{
    return a >= b;
}
static bool cmp_le(double a, double b)
{
    return a <= b;
}
static bool cmp_eq(double a, double b)
{
    return a == b;
}
static bool cmp_ne(double a, double b)
{
    return a != b;
}
static const vn_cmp_fn vn_cmp_fns[] = {
    [VN_CMP_LT] = cmp_lt, [VN_CMP_GT] = cmp_gt, [VN_CMP_GE] = cmp_ge,
    [VN_CMP_LE] = cmp_le, [VN_CMP_EQ] = cmp_eq, [VN_CMP_NE] = cmp_ne};
#define VN_CMP_COUNT ((int)(sizeof vn_cmp_fns / sizeof vn_cmp_fns[0]))

/* Element i as double: exact for every dtype compared here. */
typedef double (*vn_cmp_load)(const void *p, int64_t i);
static double ld_f32(const void *p, int64_t i)
{
    return ((const float *)p)[i];
}
static double ld_f16(const void *p, int64_t i)
{
    return vn_f16_to_f32(((const uint16_t *)p)[i]);
}
static double ld_bf16(const void *p, int64_t i)
{
    return vn_bf16_to_f32(((const uint16_t *)p)[i]);
}
static double ld_i32(const void *p, int64_t i)
{
    return ((const int32_t *)p)[i];
}
static const vn_cmp_load vn_cmp_loads[VN_DTYPE_COUNT] = {
    [VN_F32] = ld_f32, [VN_F16] = ld_f16, [VN_BF16] = ld_bf16, [VN_I32] = ld_i32};

static void vn_compare_checks(vn_core *core, vn_local dst, vn_local a, const vn_local *b, int64_t n,
                              const char *call, vn_site site)
{
    int64_t bytes = n * (int64_t)vn_dtype_size(a.dtype);
    if (n < 0 || bytes % VN_REPEAT_BYTES != 0)
        vn_core_fail(core, site, call,
                     "count %lld of %s is %lld bytes, not a multiple of %d (the hardware rule)",
                     (long long)n, vn_dtype_name(a.dtype), (long long)bytes, VN_REPEAT_BYTES);
    vn_check_local(core, a, call, site);
    if (b) vn_vec_check_operand(core, *b, a.dtype, "operand b", call, site);
    vn_check_local(core, dst, call, site);
    if (vn_dtype_size(dst.dtype) != 1)
        vn_core_fail(core, site, call, "dst has dtype %s, the bit mask needs u8",
                     vn_dtype_name(dst.dtype));
    vn_vec_check_read_n(core, a, n, call, site);
    if (b) vn_vec_check_read_n(core, *b, n, call, site);
    if (n > 0) vn_check_write(core, dst, 0, (n + 7) / 8, call, site);
}

/* b == NULL: compare with the scalar s. Bits past n in the last byte are 0. */
static void vn_compare_run(vn_core *core, vn_local dst, vn_local a, const vn_local *b, double s,
                           vn_cmp cmp, int64_t n, const char *call, vn_site site)
{
    vn_cmp_load ld = vn_dtype_valid(a.dtype) ? vn_cmp_loads[a.dtype] : NULL;
    if (!ld || (unsigned)cmp >= (unsigned)VN_CMP_COUNT)
        vn_core_fail(core, site, call, "no compare mode %d on %s", (int)cmp,
                     vn_dtype_name(a.dtype));
    if (core->checked) vn_compare_checks(core, dst, a, b, n, call, site);
    vn_cmp_fn f = vn_cmp_fns[cmp];
    uint8_t *out = dst.data;
    for (int64_t i = 0; i < n; i += 8) {
        uint8_t byte = 0;
        for (int64_t k = 0; k < 8 && i + k < n; k++) {
            double y = b ? ld(b->data, i + k) : s;
            byte |= (uint8_t)(f(ld(a.data, i + k), y) << k);
        }
        out[i / 8] = byte;
    }
    if (n > 0) core->counters.vector_elem_ops += n;
}

void vn_compare_(vn_core *core, vn_local dst, vn_local a, vn_local b, vn_cmp cmp, int64_t n,
                 vn_site site)
{
    vn_xfer_sync(core);
    vn_compare_run(core, dst, a, &b, 0.0, cmp, n, "vn_compare", site);
}

/* The scalar is first stored in a's dtype, as the hardware's scalar register holds a T. */
void vn_compare_scalar_(vn_core *core, vn_local dst, vn_local a, double s, vn_cmp cmp, int64_t n,
                        vn_site site)
{
    vn_xfer_sync(core);
    uint8_t cell[8];
    vn_scalar_store(a.dtype, cell, s);
    vn_compare_run(core, dst, a, NULL, vn_scalar_load(a.dtype, cell), cmp, n, "vn_compare_scalar",
                   site);
}

/* ---- select ----------------------------------------------------------------- */

static bool vn_bit(const uint8_t *mask, int64_t i)
{
    return (mask[i >> 3] >> (i & 7)) & 1u;
}

/* b_step 0: b is one element (the scalar form). */
static void vn_select_copy(uint8_t *dst, const uint8_t *mask, const uint8_t *a, const uint8_t *b,
                           size_t size, size_t b_step, int64_t n)
{
    if (size == 4) {
        uint32_t *d = (uint32_t *)dst;
        const uint32_t *x = (const uint32_t *)a, *y = (const uint32_t *)b;
        for (int64_t i = 0; i < n; i++) d[i] = vn_bit(mask, i) ? x[i] : y[b_step ? i : 0];
        return;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(dst + i * size, vn_bit(mask, i) ? a + i * size : b + (size_t)i * b_step, size);
}

static void vn_select_checks(vn_core *core, vn_local dst, vn_local mask, vn_local a,
                             const vn_local *b, int64_t n, const char *call, vn_site site)
{
    if (n < 0) vn_core_fail(core, site, call, "negative count %lld", (long long)n);
    vn_check_local(core, dst, call, site);
    vn_check_local(core, mask, call, site);
    vn_vec_check_operand(core, a, dst.dtype, "operand a", call, site);
    if (b) vn_vec_check_operand(core, *b, dst.dtype, "operand b", call, site);
    if (n > 0) vn_check_read(core, mask, 0, (n + 7) / 8, call, site);
    vn_vec_check_read_n(core, a, n, call, site);
    if (b) vn_vec_check_read_n(core, *b, n, call, site);
    vn_vec_check_write_n(core, dst, n, call, site);
}

void vn_select_(vn_core *core, vn_local dst, vn_local mask, vn_local a, vn_local b, int64_t n,
                vn_site site)
{
    vn_xfer_sync(core);
    size_t size = vn_dtype_size(dst.dtype);
    if (size == 0) vn_core_fail(core, site, "vn_select", "invalid dtype %d", (int)dst.dtype);
    if (core->checked) vn_select_checks(core, dst, mask, a, &b, n, "vn_select", site);
    vn_select_copy(dst.data, mask.data, a.data, b.data, size, size, n);
    if (n > 0) core->counters.vector_elem_ops += n;
}

void vn_select_scalar_(vn_core *core, vn_local dst, vn_local mask, vn_local a, double s, int64_t n,
                       vn_site site)
{
    vn_xfer_sync(core);
    size_t size = vn_dtype_size(dst.dtype);
    if (size == 0) vn_core_fail(core, site, "vn_select_scalar", "invalid dtype %d", (int)dst.dtype);
    if (core->checked) vn_select_checks(core, dst, mask, a, NULL, n, "vn_select_scalar", site);
    _Alignas(8) uint8_t cell[8];
    vn_scalar_store(dst.dtype, cell, s);
    vn_select_copy(dst.data, mask.data, a.data, cell, size, 0, n);
    if (n > 0) core->counters.vector_elem_ops += n;
}
