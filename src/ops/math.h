/*
 * math.h — the scalar element-wise engine of the logic and math families:
 * any number of broadcast inputs of any dtypes, one output, computed per
 * chunk in double (float dtypes, f64 included) or int64 (integer and bool
 * dtypes) by a function over arrays. u64 travels as int64 bits (cast.h):
 * an operator takes u64 only with a function `fu` that reads them as
 * uint64 (or, for wrapping add / sub / mul / bit operations, is fi itself).
 *
 * It serves the operators the vector ISA lacks (Pow, Floor, Erf, the
 * comparisons with bool outputs, Where, ...) and integer dtypes the fused
 * kernel does not cover (i8, u8, i64, bool). The fused element-wise kernel
 * (fused.h) stays the engine of the ISA's own operators.
 *
 * A tile is one row of the collapsed broadcast output (vn_bcast), or a
 * chunk of CHUNK elements of it; each input's chunk is converted into a
 * scratch buffer (VECCALC), the function runs over the buffers, the result
 * is converted to the output dtype.
 */
#ifndef VINCI_OPS_MATH_H
#define VINCI_OPS_MATH_H

#include "ops/broadcast.h"
#include "ops/cast.h"

#define VN_MATH_MAX_INPUTS 8

/* y[0..n) = f(x[0][0..n), x[1][0..n), ...) with parameters p. */
typedef void (*vn_math_f64_fn)(double *y, const double *const *x, int64_t n, const double *p);
typedef void (*vn_math_i64_fn)(int64_t *y, const int64_t *const *x, int64_t n, const double *p);

typedef enum vn_math_out {
    VN_MATH_OUT_SAME = 0, /* the dtype of the deciding input */
    VN_MATH_OUT_BOOL      /* comparisons, logic, IsNaN */
} vn_math_out;

/* A registry entry of the engine's operators: the vn_op_def first, so the
 * registry's pointer is also a pointer to this. */
typedef struct vn_math_def {
    vn_op_def def;
    vn_math_f64_fn f;  /* float dtypes (NULL: floats refused) */
    vn_math_i64_fn fi; /* integer / bool dtypes (NULL: refused) */
    vn_math_out out;
    int8_t decider; /* the input whose dtype selects f / fi and the output dtype */
    bool mixed;     /* inputs may differ in dtype from the decider (Pow's exponent) */
    /* Attributes -> p[] (NULL: none). */
    vn_status (*params)(const vn_op_ctx *ctx, const char *where, double *p);
    vn_math_i64_fn fu; /* u64 decider (NULL: u64 refused) */
} vn_math_def;

typedef struct vn_math_plan {
    vn_bcast b;
    int32_t num_inputs;
    int32_t src[VN_MATH_MAX_INPUTS]; /* op input of engine input k (omitted inputs skipped) */
    vn_dtype in_dt[VN_MATH_MAX_INPUTS], out_dt;
    bool integer;
    vn_math_f64_fn f;
    vn_math_i64_fn fi;
    double p[8];
    int64_t numel, L, rows, cpr, tiles;
    int32_t block_dim;
} vn_math_plan;

/* The shared infer / plan / run of every vn_math_def. */
vn_status vn_math_infer(const vn_op_ctx *ctx, vn_tensor_desc *out);
vn_status vn_math_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                          size_t *workspace);
vn_status vn_math_run(const vn_op_run_ctx *ctx);
void vn_math_plan_free(void *plan);

#define VN_MATH_DEF(name, lo, hi, dtypes, f, fi, out, decider, mixed, params)                      \
    VN_MATH_DEF_U(name, lo, hi, dtypes, f, fi, out, decider, mixed, params, NULL)

/* ... with a u64 function. */
#define VN_MATH_DEF_U(name, lo, hi, dtypes, f, fi, out, decider, mixed, params, fu)                \
    {                                                                                              \
        {name,       "", lo, hi, 1, dtypes, vn_math_infer, vn_math_plan_fn, vn_math_plan_free,     \
         vn_math_run},                                                                             \
            f, fi, out, decider, mixed, params, fu                                                 \
    }

/* The scalar (integer, u64 and f64) variant of Add, Sub, Mul, Div, Max, Min,
 * Sum, Abs, Neg or Relu, or the f64 one of Exp, Log, Sqrt, Reciprocal,
 * Sigmoid or Tanh, on this engine (math_int.c), for elementwise.c to
 * route the dtypes its fused kernel lacks; NULL for any other name. Not in
 * the registry: use it by setting ctx->def to it in infer / plan / run. */
const vn_op_def *vn_math_integer_variant(const char *name);

const vn_op_def *const *vn_ops_logic_table(int32_t *count);
const vn_op_def *const *vn_ops_math_table(int32_t *count);

#endif /* VINCI_OPS_MATH_H */
