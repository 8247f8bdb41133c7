/*
 * reduce_kernel.c — the reduction kernel (see reduce.h).
 */
#include <math.h>
#include <stdlib.h>

#include "kernel/core_internal.h"
#include "ops/reduce.h"

#define TILE_ELEMS 16384

/* Append dim (size, stride) to a list, merging with the previous one when
 * the two walk memory contiguously. */
static void push(int32_t *n, int64_t *dims, int64_t *str, int64_t size, int64_t stride)
{
    if (size == 1) return;
    if (*n > 0 && str[*n - 1] == stride * size) {
        dims[*n - 1] *= size;
        str[*n - 1] = stride;
        return;
    }
    dims[*n] = size;
    str[(*n)++] = stride;
}

vn_reduce_plan *vn_reduce_plan_make(const char *where, vn_device *device, vn_reduce_kind kind,
                                    const vn_tensor_desc *x, const bool *mask, vn_dtype out_dt)
{
    vn_reduce_plan *p = calloc(1, sizeof *p);
    if (!p) {
        vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
        return NULL;
    }
    int64_t strides[VN_MAX_RANK];
    vn_so_strides(x, strides);
    p->kind = kind;
    p->in_dt = x->dtype;
    p->out_dt = out_dt;
    p->nout = p->R = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        if (mask[d]) {
            push(&p->nr, p->rdims, p->rstr, x->dims[d], strides[d]);
            p->R *= x->dims[d];
        } else {
            push(&p->nk, p->kdims, p->kstr, x->dims[d], strides[d]);
            p->nout *= x->dims[d];
        }
    }
    /* a size-0 reduced dim dropped by push as "size 1" cannot happen: 0 != 1 */
    p->per_tile = vn_ops_max(1, TILE_ELEMS / vn_ops_max(1, p->R));
    p->tiles = vn_ops_div_up(p->nout, p->per_tile);
    p->block_dim = vn_ops_block_dim(device, p->tiles, p->per_tile * vn_ops_max(1, p->R));
    return p;
}

typedef struct acc {
    double a, m; /* accumulator; running max (LogSumExp) */
    int64_t arg, pos;
} acc;

static void acc_init(const vn_reduce_plan *p, acc *s)
{
    static const double init[] = {0, 0, -INFINITY, INFINITY, 1, 0, 0, 0, 0, 0, 0, 0};
    s->a = init[p->kind];
    s->m = -INFINITY;
    s->arg = 0;
    s->pos = 0;
    if (p->kind == VN_RK_ARGMAX) s->a = -INFINITY;
    if (p->kind == VN_RK_ARGMIN) s->a = INFINITY;
}

/* Arg: a NaN wins (the first one); ties go to the first or the last index. */
static void arg_step(const vn_reduce_plan *p, acc *s, double v, bool max)
{
    bool better = max ? v > s->a : v < s->a;
    bool tie = v == s->a && p->last_index;
    bool nan = v != v && s->a == s->a;
    if (s->pos == 0 || better || tie || nan) {
        s->a = v;
        s->arg = s->pos;
    }
    s->pos++;
}

static void acc_step(const vn_reduce_plan *p, acc *s, double v)
{
    switch (p->kind) {
    case VN_RK_SUM:
    case VN_RK_MEAN:
    case VN_RK_LOGSUM:
        s->a += v;
        break;
    case VN_RK_MAX:
        s->a = (v > s->a || v != v) && s->a == s->a ? v : s->a;
        break;
    case VN_RK_MIN:
        s->a = (v < s->a || v != v) && s->a == s->a ? v : s->a;
        break;
    case VN_RK_PROD:
        s->a *= v;
        break;
    case VN_RK_L1:
        s->a += fabs(v);
        break;
    case VN_RK_L2:
    case VN_RK_SUMSQUARE:
        s->a += v * v;
        break;
    case VN_RK_LOGSUMEXP: /* running max, the sum rescaled when it grows */
        if (v > s->m) {
            s->a = s->a * exp(s->m - v) + 1.0;
            s->m = v;
        } else {
            s->a += exp(v - s->m);
        }
        break;
    case VN_RK_ARGMAX:
        arg_step(p, s, v, true);
        break;
    case VN_RK_ARGMIN:
        arg_step(p, s, v, false);
        break;
    }
}

static double acc_final(const vn_reduce_plan *p, const acc *s)
{
    switch (p->kind) {
    case VN_RK_MEAN:
        return s->a / (double)p->R;
    case VN_RK_L2:
        return sqrt(s->a);
    case VN_RK_LOGSUM:
        return log(s->a);
    case VN_RK_LOGSUMEXP:
        return s->m == -INFINITY ? s->m : s->m + log(s->a);
    case VN_RK_ARGMAX:
    case VN_RK_ARGMIN:
        return (double)s->arg;
    default:
        return s->a;
    }
}

/* Reduce the sub-space at `base`: an odometer over rdims[0..nr-1), the last
 * reduced dim a plain strided loop. */
static double reduce_one(const vn_reduce_plan *p, const void *x, int64_t base)
{
    acc s;
    acc_init(p, &s);
    if (p->R > 0 && p->nr == 0) acc_step(p, &s, vn_cast_load_f64(p->in_dt, x, base));
    if (p->R > 0 && p->nr > 0) {
        int64_t idx[VN_MAX_RANK] = {0}, n = p->rdims[p->nr - 1], st = p->rstr[p->nr - 1];
        for (int64_t outer = 0; outer < p->R / n; outer++) {
            int64_t off = base;
            for (int32_t d = 0; d < p->nr - 1; d++) off += idx[d] * p->rstr[d];
            for (int64_t i = 0; i < n; i++)
                acc_step(p, &s, vn_cast_load_f64(p->in_dt, x, off + i * st));
            for (int32_t d = p->nr - 2; d >= 0 && ++idx[d] == p->rdims[d]; d--) idx[d] = 0;
        }
    }
    return acc_final(p, &s);
}

/* An infinite result (Max / Min of nothing) in an integer dtype is the
 * type's lowest / highest value, as the ONNX reference gives. */
static void store(vn_dtype dt, void *y, int64_t o, double v)
{
    static const double lo[VN_DTYPE_COUNT] = {
        [VN_I8] = -128, [VN_I16] = -32768, [VN_I32] = -2147483648.0};
    static const double hi[VN_DTYPE_COUNT] = {
        [VN_I8] = 127,           [VN_U8] = 255,           [VN_I16] = 32767, [VN_U16] = 65535,
        [VN_I32] = 2147483647.0, [VN_U32] = 4294967295.0, [VN_BOOL] = 1};
    if (isinf(v) && !vn_cast_is_float(dt)) {
        if (dt == VN_I64) {
            vn_cast_store_i64(dt, y, o, v < 0 ? INT64_MIN : INT64_MAX);
            return;
        }
        v = v < 0 ? lo[dt] : hi[dt];
    }
    vn_cast_store_f64(dt, y, o, v);
}

typedef struct reduce_args {
    const vn_reduce_plan *p;
    const void *x;
    void *y;
} reduce_args;

static void reduce_kernel(vn_core *core, const void *args)
{
    const reduce_args *a = args;
    const vn_reduce_plan *p = a->p;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t o1 = vn_ops_min(p->nout, (t + 1) * p->per_tile);
        for (int64_t o = t * p->per_tile; o < o1; o++) {
            int64_t base = 0, r = o;
            for (int32_t d = p->nk - 1; d >= 0; d--) {
                base += r % p->kdims[d] * p->kstr[d];
                r /= p->kdims[d];
            }
            store(p->out_dt, a->y, o, reduce_one(p, a->x, base));
        }
        core->counters.bytes_in += (o1 - t * p->per_tile) * p->R * (int64_t)vn_dtype_size(p->in_dt);
        core->counters.vector_elem_ops += (o1 - t * p->per_tile) * p->R;
    }
}

vn_status vn_reduce_execute(vn_device *device, const vn_reduce_plan *p, const void *x, void *y,
                            vn_kernel_counters *counters)
{
    if (p->tiles == 0) return VN_OK;
    reduce_args a = {p, x, y};
    vn_launch_desc d = {reduce_kernel, "vn_reduce", p->block_dim, &a, -1, p->tiles};
    return vn_launch(device, &d, counters);
}
