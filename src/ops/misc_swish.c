/*
 * misc_swish.c — Swish (opset 24): y = x * sigmoid(alpha * x), alpha 1 by
 * default, on the scalar element-wise engine (math.h), computed in double.
 */
#include <math.h>

#include "ops/math.h"
#include "ops/misc.h"

static void swish_f(double *y, const double *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[0][i] / (1.0 + exp(-p[0] * x[0][i]));
}

static vn_status swish_params(const vn_op_ctx *ctx, const char *where, double *p)
{
    vn_status st = vn_attrs_float(ctx->attrs, "alpha", 1.0, &p[0]);
    return st == VN_OK ? VN_OK : vn_error(st, where, "'alpha' must be a float");
}

const vn_math_def vn_misc_swish_def =
    VN_MATH_DEF("Swish", 1, 1, VN_DTYPES_FLOAT | VN_DTYPES_F64, swish_f, NULL, VN_MATH_OUT_SAME, 0,
                false, swish_params);
