/*
 * conv_integer.h — ConvInteger and QLinearConv (ONNX 10), shared by the
 * operator itself (conv_integer.c: checks, plan, the exact scalar loops),
 * its int8 GEMM path (conv_integer_gemm.c) and its pre-pack hooks
 * (conv_integer_prepack.c).
 */
#ifndef VINCI_OPS_CONV_INTEGER_H
#define VINCI_OPS_CONV_INTEGER_H

#include "ops/conv.h"
#include "ops/quant.h"

/* Input positions of ConvInteger and QLinearConv (-1: the operator has none). */
typedef struct ci_slots {
    int32_t x, w, xzp, wzp, xs, ws, ys, yzp, b;
} ci_slots;

typedef struct ci_plan {
    vn_conv_geom g;
    ci_slots in;
    vn_dtype xdt, wdt, ydt;
    bool has_xzp, has_wzp, has_b;
    /* The GEMM path (conv_integer_gemm.c); gemm NULL: the scalar loops. */
    vn_gemm_plan *gemm;
    int32_t gemm_xzp, gemm_wzp;       /* the zero points gemm was made with */
    void *packed;                     /* W as the GEMM's packed B (every group), or NULL */
    bool packed_borrowed;             /* packed is a .vnm blob the plan does not own */
    bool in_place;                    /* 1x1, stride 1, unpadded: x is A as it lies */
    size_t ws_sums, ws_chan, ws_pack; /* workspace offsets (columns at 0) */
    size_t ws_total;
} ci_plan;

/* What one output channel k needs to finish its sums: the i32 bias and,
 * for QLinearConv, the requantisation m = x_scale * w_scale[k] / y_scale
 * (in f32, as the reference) and y's zero point. */
typedef struct ci_channel {
    int64_t b;
    bool q;
    double m, yzp;
} ci_channel;

/* Element 0, or element k of a per-channel parameter. */
int64_t vn_ci_param_i(const vn_tensor *t, int64_t k);
ci_channel vn_ci_channel_of(const ci_plan *p, const vn_tensor *in, int64_t k);
/* Output elements e .. e+n from their i32 sums `acc` (+ bias, stored as i32
 * or requantised), with the reference's rounding. */
void vn_ci_finish(const ci_plan *p, const ci_channel *c, void *y, int64_t e, const int32_t *acc,
                  int64_t n);
/* n requantised outputs (conv_integer_finish.inc) of sums acc with bias b
 * and multiplier m: one channel's (b[0], m[0]), or per element (per_elem). */
void vn_ci_requant(const int32_t *acc, const int32_t *b, const double *m, bool per_elem, double zp,
                   bool u8, void *y, int64_t n);
/* w's zero point as one value (every channel the same), or false. */
bool vn_ci_one_wzp(const ci_plan *p, const vn_tensor *in, int64_t *wzp);

/* The GEMM path: plan (GEMM plan, W packed when constant and not hidden by
 * ctx->prepacked_inputs, workspace), run, and the plan's resources. */
vn_status vn_ci_gemm_plan(const vn_op_ctx *ctx, const char *where, ci_plan *p);
vn_status vn_ci_gemm_run(const vn_op_run_ctx *ctx, int64_t xzp, int64_t wzp);
void vn_ci_plan_free(void *plan);
/* Bytes of W packed for every group (0 without a GEMM plan). */
size_t vn_ci_packed_size(const ci_plan *p);

const vn_op_prepack *vn_ci_prepack_hooks(const vn_op_def *def);

#endif /* VINCI_OPS_CONV_INTEGER_H */
