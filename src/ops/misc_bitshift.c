/*
 * misc_bitshift.c — BitShift (unsigned integers, broadcast): x << y or
 * x >> y by the "direction" attribute, on the scalar element-wise engine
 * (math.h). Values travel as uint64 bits; a left shift wraps to the dtype's
 * width on the store, and a shift by 64 or more gives 0.
 */
#include <string.h>

#include "ops/math.h"
#include "ops/misc.h"

static void shift_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    bool left = p[0] != 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t a = (uint64_t)x[0][i], b = (uint64_t)x[1][i];
        y[i] = b >= 64 ? 0 : (int64_t)(left ? a << b : a >> b);
    }
}

static vn_status shift_params(const vn_op_ctx *ctx, const char *where, double *p)
{
    const char *dir = NULL;
    vn_status st = vn_so_attr_string(ctx, where, "direction", NULL, &dir);
    if (st != VN_OK) return st;
    if (!dir || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0))
        return vn_error(VN_ERR_INVALID_ARG, where, "'direction' must be \"LEFT\" or \"RIGHT\"");
    p[0] = strcmp(dir, "LEFT") == 0;
    return VN_OK;
}

#define UNSIGNED                                                                                   \
    (VN_DTYPE_BIT(VN_U8) | VN_DTYPE_BIT(VN_U16) | VN_DTYPE_BIT(VN_U32) | VN_DTYPE_BIT(VN_U64))

const vn_math_def vn_misc_bitshift_def = VN_MATH_DEF_U(
    "BitShift", 2, 2, UNSIGNED, NULL, shift_u, VN_MATH_OUT_SAME, 0, false, shift_params, shift_u);
