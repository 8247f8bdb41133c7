/*
 * vt_tensor.h — tensor helpers shared by the operator tests: descriptors and
 * element access by dtype (as doubles, through vinci's own exact f16/bf16
 * conversions, which tests/base checks exhaustively).
 */
#ifndef VINCI_TESTS_VT_TENSOR_H
#define VINCI_TESTS_VT_TENSOR_H

#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"

static inline vn_tensor_desc vt_desc(vn_dtype dt, int32_t rank, const int64_t *dims)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dt;
    d.rank = rank;
    for (int32_t i = 0; i < rank; i++) d.dims[i] = dims[i];
    return d;
}

/* Plans operator `name` on the inputs' descriptors, runs it once on ti -> to
 * (with its workspace) and destroys the plan; the first failing status. */
static inline vn_status vt_op_once(const char *name, const vn_tensor *ti, int32_t nin,
                                   const vn_attrs *attrs, vn_tensor *to, int32_t nout)
{
    vn_tensor_desc in[16];
    if (nin > 16) return VN_ERR_INVALID_ARG;
    for (int32_t k = 0; k < nin; k++) in[k] = ti[k].desc;
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(NULL, name, in, nin, attrs, &plan);
    if (st != VN_OK) return st;
    size_t ws = vn_op_plan_workspace(plan);
    void *w = ws ? malloc(ws) : NULL;
    st = ws && !w ? VN_ERR_OUT_OF_MEMORY : vn_op_run(plan, ti, nin, to, nout, w);
    free(w);
    vn_op_plan_destroy(plan);
    return st;
}

/* Element access is kept out of line: inlined into callers with small
 * buffers, gcc's -Warray-bounds reports the branches for wider dtypes. */
#define VT_OUT_OF_LINE __attribute__((noinline, unused))

/* Store v (rounded to nearest even for 16-bit floats, truncated for integers). */
VT_OUT_OF_LINE static void vt_put(vn_dtype dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case VN_F32:
        ((float *)p)[i] = (float)v;
        break;
    case VN_F16:
        ((uint16_t *)p)[i] = vn_f32_to_f16((float)v);
        break;
    case VN_BF16:
        ((uint16_t *)p)[i] = vn_f32_to_bf16((float)v);
        break;
    case VN_I8:
        ((int8_t *)p)[i] = (int8_t)v;
        break;
    case VN_U8:
        ((uint8_t *)p)[i] = (uint8_t)v;
        break;
    case VN_I32:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    case VN_I64:
        ((int64_t *)p)[i] = (int64_t)v;
        break;
    case VN_BOOL:
        ((uint8_t *)p)[i] = v != 0;
        break;
    case VN_F64:
        ((double *)p)[i] = v;
        break;
    case VN_I16:
        ((int16_t *)p)[i] = (int16_t)v;
        break;
    case VN_U16:
        ((uint16_t *)p)[i] = (uint16_t)v;
        break;
    case VN_U32:
        ((uint32_t *)p)[i] = (uint32_t)v;
        break;
    case VN_U64:
        ((uint64_t *)p)[i] = (uint64_t)v;
        break;
    default:
        break;
    }
}

VT_OUT_OF_LINE static double vt_get(vn_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case VN_F32:
        return ((const float *)p)[i];
    case VN_F16:
        return vn_f16_to_f32(((const uint16_t *)p)[i]);
    case VN_BF16:
        return vn_bf16_to_f32(((const uint16_t *)p)[i]);
    case VN_I8:
        return ((const int8_t *)p)[i];
    case VN_U8:
        return ((const uint8_t *)p)[i];
    case VN_I32:
        return ((const int32_t *)p)[i];
    case VN_I64:
        return (double)((const int64_t *)p)[i];
    case VN_BOOL:
        return ((const uint8_t *)p)[i];
    case VN_F64:
        return ((const double *)p)[i];
    case VN_I16:
        return ((const int16_t *)p)[i];
    case VN_U16:
        return ((const uint16_t *)p)[i];
    case VN_U32:
        return ((const uint32_t *)p)[i];
    case VN_U64:
        return (double)((const uint64_t *)p)[i];
    default:
        return 0;
    }
}

#endif /* VINCI_TESTS_VT_TENSOR_H */
