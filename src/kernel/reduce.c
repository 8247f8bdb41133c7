/*
 * reduce.c — reductions: whole tensor (ReduceSum/Max/Min), per 32-byte block
 * (BlockReduce) and per repeat (WholeReduce).
 *
 * Floating dtypes accumulate in f32 (f16/bf16 converted first); the whole
 * tensor sum uses the ISA table's multi-accumulator pairwise sum per chunk
 * and adds chunk results in double, so large n stays accurate. Max/min
 * propagate NaN. i32 sums wrap (two's complement), as the element-wise add.
 * An empty reduction stores the identity (0, -inf / INT32_MIN, +inf / INT32_MAX).
 */
#include <math.h>
#include <string.h>

#include "kernel/isa.h"
#include "kernel/vector_internal.h"

static bool vn_reduce_dtype_ok(vn_dtype d)
{
    return d == VN_F32 || d == VN_F16 || d == VN_BF16 || d == VN_I32;
}

static double vn_reduce_identity(vn_reduce kind)
{
    return kind == VN_REDUCE_SUM ? 0.0 : (kind == VN_REDUCE_MAX ? -INFINITY : INFINITY);
}

/* Combines two partial results; NaN wins for max/min. */
static double vn_combine(vn_reduce kind, double acc, double x)
{
    if (kind == VN_REDUCE_SUM) return acc + x;
    if (x != x || acc != acc) return x != x ? x : acc;
    return kind == VN_REDUCE_MAX ? (x > acc ? x : acc) : (x < acc ? x : acc);
}

static void vn_store_result(vn_dtype dtype, void *p, vn_reduce kind, double v, bool integer_sum)
{
    if (dtype == VN_I32) {
        if (v == INFINITY) v = INT32_MAX;
        if (v == -INFINITY) v = INT32_MIN;
        if (integer_sum) v = (double)(int32_t)(uint32_t)(uint64_t)(int64_t)v; /* wrap */
    }
    vn_scalar_store(dtype, p, v);
}

/* ---- whole tensor ---------------------------------------------------------- */

static double vn_reduce_i32(vn_reduce kind, const int32_t *a, int64_t n)
{
    if (kind == VN_REDUCE_SUM) {
        uint32_t s = 0;
        for (int64_t i = 0; i < n; i++) s += (uint32_t)a[i];
        return (int32_t)s;
    }
    int32_t m = kind == VN_REDUCE_MAX ? INT32_MIN : INT32_MAX;
    for (int64_t i = 0; i < n; i++) m = (kind == VN_REDUCE_MAX) == (a[i] > m) ? a[i] : m;
    return m;
}

static double vn_reduce_float(vn_reduce kind, vn_dtype dtype, const void *src, int64_t n)
{
    const vn_isa_table *t = vn_isa_table_get();
    double acc = vn_reduce_identity(kind);
    if (dtype == VN_F32) {
        /* chunks keep the f32 partial sums short; their total is in double */
        for (int64_t i = 0; i < n; i += 1 << 16) {
            int64_t m = n - i < (1 << 16) ? n - i : (1 << 16);
            acc = vn_combine(kind, acc, t->reduce[kind]((const float *)src + i, m));
        }
        return acc;
    }
    float buf[VN_VEC_CHUNK];
    const uint16_t *h = src;
    for (int64_t i = 0; i < n; i += VN_VEC_CHUNK) {
        size_t m = (size_t)(n - i < VN_VEC_CHUNK ? n - i : VN_VEC_CHUNK);
        if (dtype == VN_F16)
            vn_f16_to_f32_array(h + i, buf, m);
        else
            vn_bf16_to_f32_array(h + i, buf, m);
        acc = vn_combine(kind, acc, t->reduce[kind](buf, (int64_t)m));
    }
    return acc;
}

static void vn_reduce_check_dtypes(vn_core *core, vn_local dst, vn_local src, const char *call,
                                   vn_site site)
{
    vn_check_local(core, src, call, site);
    vn_vec_check_operand(core, dst, src.dtype, "dst", call, site);
}

static void vn_reduce_check_kind(vn_core *core, vn_reduce kind, vn_dtype dtype, const char *call,
                                 vn_site site)
{
    if ((unsigned)kind > VN_REDUCE_MIN || !vn_reduce_dtype_ok(dtype))
        vn_core_fail(core, site, call, "no reduction %d on %s", (int)kind, vn_dtype_name(dtype));
}

void vn_reduce_(vn_core *core, vn_reduce kind, vn_local dst, vn_local src, int64_t n, vn_site site)
{
    vn_xfer_sync(core);
    vn_reduce_check_kind(core, kind, src.dtype, "vn_reduce", site);
    if (core->checked) {
        if (n < 0) vn_core_fail(core, site, "vn_reduce", "negative count %lld", (long long)n);
        vn_reduce_check_dtypes(core, dst, src, "vn_reduce", site);
        vn_vec_check_read_n(core, src, n, "vn_reduce", site);
        vn_vec_check_write_n(core, dst, 1, "vn_reduce", site);
    }
    double r = vn_reduce_identity(kind);
    if (n > 0)
        r = src.dtype == VN_I32 ? vn_reduce_i32(kind, src.data, n)
                                : vn_reduce_float(kind, src.dtype, src.data, n);
    vn_store_result(dst.dtype, dst.data, kind, r, false);
    if (n > 0) core->counters.vector_elem_ops += n;
}

/* ---- per block / per repeat ---------------------------------------------------- */

/* Reduces the enabled lanes [from, from+count) of repeat r of src (values
 * loaded exactly as double, accumulated as the dtype requires). */
static double vn_lanes_reduce(vn_reduce kind, vn_local src, vn_mask mask, int32_t r, int32_t from,
                              int32_t count, int32_t blk, int32_t rep)
{
    size_t size = vn_dtype_size(src.dtype);
    const uint8_t *base = src.data;
    bool is_int = src.dtype == VN_I32;
    float facc = (float)vn_reduce_identity(kind);
    double dacc = vn_reduce_identity(kind);
    uint32_t iacc = 0;
    for (int32_t lane = from; lane < from + count; lane++) {
        if (!vn_mask_lane(mask, lane)) continue;
        double x = vn_scalar_load(src.dtype, base + vn_rep_offset(r, lane, blk, rep, size));
        if (is_int && kind == VN_REDUCE_SUM)
            iacc += (uint32_t)(int32_t)x;
        else if (kind == VN_REDUCE_SUM)
            facc += (float)x;
        else
            dacc = vn_combine(kind, dacc, x);
    }
    if (kind != VN_REDUCE_SUM) return dacc;
    return is_int ? (double)(int32_t)iacc : (double)facc;
}

typedef struct vn_rep_reduce {
    vn_reduce kind;
    vn_mask mask;
    int32_t repeat, blk, rep;
    bool per_block; /* BlockReduce (8 results per repeat) or WholeReduce (1) */
    const char *call;
} vn_rep_reduce;

static void vn_rep_reduce_run(vn_core *core, vn_local dst, vn_local src, vn_rep_reduce p,
                              vn_site site)
{
    vn_reduce_check_kind(core, p.kind, src.dtype, p.call, site);
    int32_t lanes = vn_rep_lanes(src.dtype);
    int32_t groups = p.per_block ? VN_REPEAT_BLOCKS : 1, width = lanes / groups;
    if (core->checked) {
        vn_rep_check_args(core, src.dtype, p.repeat, p.call, site);
        vn_reduce_check_dtypes(core, dst, src, p.call, site);
        vn_rep_check(core, src, p.mask, p.repeat, p.blk, p.rep, false, p.call, site);
        vn_vec_check_write_n(core, dst, (int64_t)p.repeat * groups, p.call, site);
    }
    size_t size = vn_dtype_size(dst.dtype);
    for (int32_t r = 0; r < p.repeat; r++)
        for (int32_t g = 0; g < groups; g++) {
            double v = vn_lanes_reduce(p.kind, src, p.mask, r, g * width, width, p.blk, p.rep);
            vn_store_result(dst.dtype, (uint8_t *)dst.data + ((size_t)r * groups + g) * size,
                            p.kind, v, false);
        }
    if (p.repeat > 0)
        core->counters.vector_elem_ops += (int64_t)p.repeat * vn_mask_count(p.mask, lanes);
}

void vn_block_reduce_(vn_core *core, vn_reduce kind, vn_local dst, vn_local src, vn_mask mask,
                      int32_t repeat, uint16_t src_blk, uint16_t src_rep, vn_site site)
{
    vn_xfer_sync(core);
    vn_rep_reduce p = {kind, mask, repeat, src_blk, src_rep, true, "vn_block_reduce"};
    vn_rep_reduce_run(core, dst, src, p, site);
}

void vn_repeat_reduce_(vn_core *core, vn_reduce kind, vn_local dst, vn_local src, vn_mask mask,
                       int32_t repeat, uint16_t src_blk, uint16_t src_rep, vn_site site)
{
    vn_xfer_sync(core);
    vn_rep_reduce p = {kind, mask, repeat, src_blk, src_rep, false, "vn_repeat_reduce"};
    vn_rep_reduce_run(core, dst, src, p, site);
}
