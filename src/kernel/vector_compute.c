/*
 * vector_compute.c — the dtype-generic compute step behind every vector
 * instruction: f32 through the ISA table (in chunks, issuing queued
 * prefetches between them), f16/bf16 converted to f32
 * in stack chunks and rounded back (nearest even), i32 in vector_i32.c.
 */
#include <math.h>
#include <string.h>

#include "kernel/isa.h"
#include "kernel/vector_internal.h"

typedef void (*vn_to_f32_fn)(const uint16_t *src, float *dst, size_t n);
typedef void (*vn_from_f32_fn)(const float *src, uint16_t *dst, size_t n);

/* f32 in chunks: between chunks, a few lines queued by vn_prefetch are
 * requested, so that the next tile streams in while this one is computed.
 * Element-wise, so chunking changes no result. */
#define VN_VEC_PF_CHUNK 1024
#define VN_VEC_PF_LINES 16

static void vn_f32_chunked(vn_vop op, float *dst, const float *a, const float *b, float s,
                           int64_t n)
{
    const vn_isa_table *t = vn_isa_table_get();
    vn_vop_kind kind = vn_vop_kind_of(op);
    for (int64_t i = 0; i < n; i += VN_VEC_PF_CHUNK) {
        int64_t m = n - i < VN_VEC_PF_CHUNK ? n - i : VN_VEC_PF_CHUNK;
        vn_f32_kernel(t, kind, op, dst + i, a + i, kind == VN_VOP_BINARY ? b + i : b, s, m);
        vn_prefetch_issue(VN_VEC_PF_LINES);
    }
}

/* f16 / bf16: the scalar is first rounded to the dtype, as the hardware's
 * scalar register holds a T. */
static void vn_half_compute(vn_vop op, vn_to_f32_fn to, vn_from_f32_fn from, uint16_t *dst,
                            const uint16_t *a, const uint16_t *b, float s, int64_t n)
{
    const vn_isa_table *t = vn_isa_table_get();
    vn_vop_kind kind = vn_vop_kind_of(op);
    float fa[VN_VEC_CHUNK], fb[VN_VEC_CHUNK];
    for (int64_t i = 0; i < n; i += VN_VEC_CHUNK) {
        size_t m = (size_t)(n - i < VN_VEC_CHUNK ? n - i : VN_VEC_CHUNK);
        to(a + i, fa, m);
        if (kind == VN_VOP_BINARY) to(b + i, fb, m);
        vn_f32_kernel(t, kind, op, fa, fa, fb, s, (int64_t)m);
        from(fa, dst + i, m);
    }
}

static void vn_vec_compute_cached(vn_vop op, vn_dtype dtype, void *dst, const void *a,
                                  const void *b, double s, int64_t n)
{
    switch (dtype) {
    case VN_F32:
        vn_f32_chunked(op, dst, a, b, (float)s, n);
        break;
    case VN_F16:
        vn_half_compute(op, vn_f16_to_f32_array, vn_f32_to_f16_array, dst, a, b,
                        vn_f16_to_f32(vn_f32_to_f16((float)s)), n);
        break;
    case VN_BF16:
        vn_half_compute(op, vn_bf16_to_f32_array, vn_f32_to_bf16_array, dst, a, b,
                        vn_bf16_to_f32(vn_f32_to_bf16((float)s)), n);
        break;
    case VN_I32: {
        int32_t si;
        vn_scalar_store(VN_I32, &si, s);
        vn_vec_compute_i32(op, dst, a, b, si, n);
        break;
    }
    default:
        break; /* callers checked vn_vop_supports */
    }
}

/* A streamed dst: f32 ops with a streamed kernel (isa.h *_nt) write it from
 * registers in one call; the others chunk by chunk (VN_VEC_STREAM_BYTES)
 * into a staging row that stream_store copies out. f32 calls the ISA kernel
 * directly: a chunk moves ~1.5 KB, and the generic dispatch per chunk cost
 * 12 %. */
static void vn_vec_compute_streamed(vn_vop op, vn_dtype dtype, uint8_t *dst, const uint8_t *a,
                                    const uint8_t *b, double s, int64_t n)
{
    _Alignas(64) uint8_t stage[VN_VEC_STREAM_BYTES];
    const vn_isa_table *t = vn_isa_table_get();
    vn_vop_kind kind = vn_vop_kind_of(op);
    int64_t size = (int64_t)vn_dtype_size(dtype);
    if (dtype == VN_F32 && vn_f32_has_nt(t, kind, op)) { /* no staging: see isa_f32.inc */
        vn_f32_kernel_nt(t, kind, op, (float *)dst, (const float *)a, (const float *)b, (float)s,
                         n);
        return;
    }
    for (int64_t i = 0, m; i < n; i += m) {
        m = vn_stream_chunk((uintptr_t)(dst + i * size), size, n - i);
        const uint8_t *ai = a + i * size, *bi = kind == VN_VOP_BINARY ? b + i * size : b;
        if (dtype == VN_F32)
            vn_f32_kernel(t, kind, op, (float *)stage, (const float *)ai, (const float *)bi,
                          (float)s, m);
        else
            vn_vec_compute_cached(op, dtype, stage, ai, bi, s, m);
        t->stream_store(dst + i * size, stage, (size_t)(m * size));
    }
}

void vn_vec_compute(vn_vop op, vn_dtype dtype, void *dst, const void *a, const void *b, double s,
                    int64_t n, bool stream)
{
    if (n <= 0) return;
    if (stream)
        vn_vec_compute_streamed(op, dtype, dst, a, b, s, n);
    else
        vn_vec_compute_cached(op, dtype, dst, a, b, s, n);
}

/* Round to nearest (ties to even, as the default rounding mode does) and
 * saturate to [lo, hi]; NaN -> 0. */
static double vn_sat_round(double v, double lo, double hi)
{
    if (v != v) return 0.0;
    v = nearbyint(v);
    return v < lo ? lo : (v > hi ? hi : v);
}

void vn_scalar_store(vn_dtype dtype, void *p, double v)
{
    switch (dtype) {
    case VN_F32:
        *(float *)p = (float)v;
        break;
    case VN_F16:
        *(uint16_t *)p = vn_f32_to_f16((float)v);
        break;
    case VN_BF16:
        *(uint16_t *)p = vn_f32_to_bf16((float)v);
        break;
    case VN_I8:
        *(int8_t *)p = (int8_t)vn_sat_round(v, INT8_MIN, INT8_MAX);
        break;
    case VN_U8:
        *(uint8_t *)p = (uint8_t)vn_sat_round(v, 0, UINT8_MAX);
        break;
    case VN_BOOL:
        *(uint8_t *)p = v != 0.0;
        break;
    case VN_I32:
        *(int32_t *)p = (int32_t)vn_sat_round(v, INT32_MIN, INT32_MAX);
        break;
    case VN_I64: {
        double r = vn_sat_round(v, -9223372036854775808.0, 9223372036854774784.0);
        *(int64_t *)p = (int64_t)r;
        break;
    }
    default:
        break;
    }
}

double vn_scalar_load(vn_dtype dtype, const void *p)
{
    switch (dtype) {
    case VN_F32:
        return *(const float *)p;
    case VN_F16:
        return vn_f16_to_f32(*(const uint16_t *)p);
    case VN_BF16:
        return vn_bf16_to_f32(*(const uint16_t *)p);
    case VN_I8:
        return *(const int8_t *)p;
    case VN_U8:
    case VN_BOOL:
        return *(const uint8_t *)p;
    case VN_I32:
        return *(const int32_t *)p;
    case VN_I64:
        return (double)*(const int64_t *)p;
    default:
        return 0.0;
    }
}

void vn_vec_check_operand(vn_core *core, vn_local t, vn_dtype want, const char *what,
                          const char *call, vn_site site)
{
    vn_check_local(core, t, call, site);
    if (t.dtype != want)
        vn_core_fail(core, site, call, "%s has dtype %s, expected %s", what, vn_dtype_name(t.dtype),
                     vn_dtype_name(want));
}

void vn_vec_check_read_n(vn_core *core, vn_local t, int64_t n, const char *call, vn_site site)
{
    if (n > 0) vn_check_read(core, t, 0, n * (int64_t)vn_dtype_size(t.dtype), call, site);
}

void vn_vec_check_write_n(vn_core *core, vn_local t, int64_t n, const char *call, vn_site site)
{
    if (n > 0) vn_check_write(core, t, 0, n * (int64_t)vn_dtype_size(t.dtype), call, site);
}
