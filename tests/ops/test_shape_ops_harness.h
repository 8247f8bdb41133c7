/*
 * test_shape_ops_harness.h — running one operator with constant inputs.
 *
 * The public two-phase API plans without constant input data, so operators
 * whose output shape depends on input values (Reshape, Slice, ...) are
 * driven here the way the graph engine drives them: infer, plan and run of
 * the registry entry with vn_op_ctx.input_data set. The same checks as
 * vn_op_plan_create (input counts, input 0's dtype) come first.
 */
#ifndef VINCI_TEST_SHAPE_OPS_HARNESS_H
#define VINCI_TEST_SHAPE_OPS_HARNESS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cast.h"
#include "vinci/ops.h"
#include "vt.h"

#define TH_MAX_OUT 64

#define TH_INT(n, v)                                                                               \
    {                                                                                              \
        .name = n, .type = VN_ATTR_INT, .i = v                                                     \
    }
#define TH_FLOAT(n, v)                                                                             \
    {                                                                                              \
        .name = n, .type = VN_ATTR_FLOAT, .f = v                                                   \
    }
#define TH_STR(n, v)                                                                               \
    {                                                                                              \
        .name = n, .type = VN_ATTR_STRING, .s = v                                                  \
    }
#define TH_INTS(n, arr, cnt)                                                                       \
    {                                                                                              \
        .name = n, .type = VN_ATTR_INTS, .ints = arr, .count = cnt                                 \
    }

static inline vn_tensor_desc th_desc(vn_dtype dt, int32_t rank, const int64_t *dims)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dt;
    d.rank = rank;
    for (int32_t i = 0; i < rank; i++) d.dims[i] = dims[i];
    return d;
}

static inline vn_tensor th_make(vn_dtype dt, int32_t rank, const int64_t *dims)
{
    vn_tensor t = {th_desc(dt, rank, dims), NULL};
    int64_t n = vn_desc_numel(&t.desc);
    t.data = calloc((size_t)(n > 0 ? n : 1), vn_dtype_size(dt) ? vn_dtype_size(dt) : 1);
    return t;
}

static inline double th_at(const vn_tensor *t, int64_t i)
{
    return vn_cast_load_f64(t->desc.dtype, t->data, i);
}

static inline void th_set(vn_tensor *t, int64_t i, double v)
{
    vn_cast_store_f64(t->desc.dtype, t->data, i, v);
}

/* Values given in a list. */
static inline vn_tensor th_from(vn_dtype dt, int32_t rank, const int64_t *dims, const double *v)
{
    vn_tensor t = th_make(dt, rank, dims);
    for (int64_t i = 0; i < vn_desc_numel(&t.desc); i++) th_set(&t, i, v[i]);
    return t;
}

/* Distinct values (i % 97 - 40 for narrow ints, i * 0.5 - 3 for floats). */
static inline vn_tensor th_iota(vn_dtype dt, int32_t rank, const int64_t *dims)
{
    vn_tensor t = th_make(dt, rank, dims);
    for (int64_t i = 0; i < vn_desc_numel(&t.desc); i++) {
        double v = dt == VN_BOOL                  ? (double)(i % 3 == 0)
                   : dt == VN_I8 || dt == VN_U8   ? (double)(i % 97 + (dt == VN_U8 ? 0 : -40))
                   : dt == VN_I32 || dt == VN_I64 ? (double)i - 7.0
                   : dt == VN_F32                 ? (double)i * 0.5 - 3.0
                                                  : (double)(i % 200) * 0.5 - 30.0;
        th_set(&t, i, v);
    }
    return t;
}

/* A 1-D i64 tensor. */
static inline vn_tensor th_ints(int64_t n, const int64_t *v)
{
    vn_tensor t = th_make(VN_I64, 1, &n);
    if (n > 0) memcpy(t.data, v, (size_t)n * sizeof(int64_t));
    return t;
}

static inline void th_free(vn_tensor *t, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        free(t[i].data);
        t[i].data = NULL;
    }
}

/* The device th_op runs on; NULL: vn_device_default (which flushes denormals). */
static vn_device *th_device;

/* Run `op` on `in` (all inputs given as constants when `consts`); outputs are
 * allocated here (free with th_free). Returns the first failing status. */
static inline vn_status th_op(const char *op, vn_tensor *in, int32_t ni, bool consts,
                              const vn_attrs *attrs, vn_tensor *out, int32_t no)
{
    const vn_op_def *def = vn_op_find(op, "");
    vn_tensor_desc din[32], dout[TH_MAX_OUT];
    const void *data[32];
    vn_device *dev = NULL;
    if (!def) return vn_error(VN_ERR_UNSUPPORTED, "th_op", "no operator %s", op);
    if (ni < def->min_inputs || ni > def->max_inputs)
        return vn_error(VN_ERR_INVALID_ARG, "th_op", "%s: %d inputs", op, (int)ni);
    if (ni > 0 && in[0].desc.rank >= 0 && !(def->dtypes & VN_DTYPE_BIT(in[0].desc.dtype)))
        return vn_error(VN_ERR_DTYPE, "th_op", "%s: input 0 dtype", op);
    for (int32_t i = 0; i < ni; i++) {
        din[i] = in[i].desc;
        data[i] = consts ? in[i].data : NULL;
    }
    vn_status st = th_device ? VN_OK : vn_device_default(&dev);
    if (st != VN_OK) return st;
    if (th_device) dev = th_device;
    for (int32_t k = 0; k < TH_MAX_OUT; k++) dout[k].rank = -1;
    vn_op_ctx ctx = {def, dev, din, ni, attrs, "n1", data, 0};
    st = def->infer(&ctx, dout);
    void *plan = NULL;
    size_t ws = 0;
    if (st == VN_OK && def->plan) st = def->plan(&ctx, dout, &plan, &ws);
    if (st != VN_OK) return st;
    bool any = false;
    for (int32_t k = 0; k < no; k++) {
        if (dout[k].rank < 0) {
            out[k].desc = dout[k];
            out[k].data = NULL;
            continue;
        }
        out[k] = th_make(dout[k].dtype, dout[k].rank, dout[k].dims);
        any |= vn_desc_numel(&dout[k]) > 0;
    }
    void *w = ws ? malloc(ws) : NULL;
    vn_op_run_ctx rc = {def, dev, plan, in, ni, out, no, w, NULL};
    if (any) st = def->run(&rc);
    free(w);
    if (plan && def->plan_free) def->plan_free(plan);
    return st;
}

/* Unravel flat index i of dims[0..rank) into idx. */
static inline void th_unravel(int64_t i, int32_t rank, const int64_t *dims, int64_t *idx)
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        idx[d] = dims[d] ? i % dims[d] : 0;
        i = dims[d] ? i / dims[d] : 0;
    }
}

static inline int64_t th_ravel(int32_t rank, const int64_t *dims, const int64_t *idx)
{
    int64_t o = 0;
    for (int32_t d = 0; d < rank; d++) o = o * dims[d] + idx[d];
    return o;
}

/* Same dtype, shape and (bitwise-equal after conversion to double) values. */
static inline bool th_same(const vn_tensor *a, const vn_tensor *b)
{
    if (a->desc.dtype != b->desc.dtype || a->desc.rank != b->desc.rank) return false;
    for (int32_t d = 0; d < a->desc.rank; d++)
        if (a->desc.dims[d] != b->desc.dims[d]) return false;
    for (int64_t i = 0; i < vn_desc_numel(&a->desc); i++) {
        double x = th_at(a, i), y = th_at(b, i);
        if (!(x == y || (x != x && y != y))) return false;
    }
    return true;
}

static inline bool th_shape_is(const vn_tensor *t, int32_t rank, const int64_t *dims)
{
    if (t->desc.rank != rank) return false;
    for (int32_t d = 0; d < rank; d++)
        if (t->desc.dims[d] != dims[d]) return false;
    return true;
}

#endif /* VINCI_TEST_SHAPE_OPS_HARNESS_H */
