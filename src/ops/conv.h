/*
 * conv.h — the convolution family: ONNX Conv (NCHW), vinci::ConvNC1HWC0,
 * vinci::FusedConv and vinci::FusedConvNC1HWC0, shared by the files
 * conv_attrs.c (attributes, shapes), conv_plan.c (algorithm choice,
 * workspace), conv_pack.c (weight layouts, BatchNorm folding),
 * conv_direct.c (direct / depthwise launches on NC1HWC0), conv_gemm.c
 * (1x1 as GEMM, im2col + GEMM), conv_winograd.c / conv_winograd_pack.c
 * (Winograd F(4x4, 3x3) / F(2x2, 3x3) on NC1HWC0) and conv_op.c (the registry
 * entries).
 *
 * Every convolution is planned as a 2-D one: a 1-D Conv is H = KH = 1.
 *
 * Layouts: NCHW is ONNX's [N][C][H][W]; NC1HWC0 is [N][C1][H][W][16] with
 * C1 = ceil(C/16) and zero lanes past C (layout.h). Weights arrive in ONNX
 * layout [K][C/G][KH][KW] and are packed per run into the workspace for the
 * kernel that wants them, or arrive packed already (attribute packed = 1,
 * from vn_conv_pack_weights) so a graph packs its constants once.
 */
#ifndef VINCI_OPS_CONV_H
#define VINCI_OPS_CONV_H

#include "kernel/conv_kernels.h"
#include "kernel/winograd_kernels.h"
#include "ops/ops_internal.h"
#include "ops/pool.h"
#include "vinci/gemm.h"

typedef enum vn_conv_layout { VN_CONV_NCHW = 0, VN_CONV_NC1HWC0 } vn_conv_layout;

typedef enum vn_conv_algo {
    VN_CONV_ALGO_GEMM_1X1 = 0, /* NCHW 1x1 stride 1 no pad: W x X per image, no copy */
    VN_CONV_ALGO_IM2COL,       /* NCHW: columns per image + one batched GEMM over groups */
    VN_CONV_ALGO_DIRECT,       /* NC1HWC0 register-blocked direct convolution */
    VN_CONV_ALGO_DEPTHWISE,    /* NC1HWC0, group = C = K */
    VN_CONV_ALGO_WINOGRAD,     /* NC1HWC0 3x3 s1 g1: F(4x4) / F(2x2), conv_winograd*.c */
    VN_CONV_ALGO_COUNT
} vn_conv_algo;

const char *vn_conv_algo_name(vn_conv_algo algo);

/* The geometry of a (2-D) convolution. Invariants after vn_conv_geom_parse:
 * C % G == 0, K % G == 0, every extent >= 1, OH, OW >= 1. */
typedef struct vn_conv_geom {
    int32_t nsp; /* spatial dims as given: 1 or 2 */
    int64_t N, C, K, G;
    int64_t IH, IW, KH, KW, OH, OW;
    int64_t sh, sw, dh, dw;
    int64_t pt, pl, pb, pr; /* pads top, left, bottom, right (after auto_pad) */
} vn_conv_geom;

/* Parse X and W (input 0 and 1) and the ONNX attributes (kernel_shape, pads,
 * auto_pad, strides, dilations, group) for `layout`, validating everything
 * with messages that name `where` and the shapes. With `packed`, W is a
 * packed weight tensor (vn_conv_packed_desc) and the kernel shape comes from
 * the attribute kernel_shape, which is then required. */
vn_status vn_conv_geom_parse(const vn_op_ctx *ctx, const char *where, vn_conv_layout layout,
                             bool packed, vn_conv_geom *g);
/* The output descriptor of g in `layout`. */
vn_tensor_desc vn_conv_out_desc(const vn_conv_geom *g, vn_conv_layout layout);
/* The activation attributes of the Fused operators ("activation" string,
 * "activation_params" floats). */
vn_status vn_conv_epi_parse(const vn_op_ctx *ctx, const char *where, vn_conv_epi *epi);

/* ---- plan ------------------------------------------------------------------ */

typedef struct vn_conv_plan {
    vn_conv_geom g;
    vn_conv_layout layout;   /* of Y and the residual */
    vn_conv_layout x_layout; /* of X: the layout's, or NCHW under an NC1HWC0 operator given
                                x_layout = "NCHW" (a network's first conv, pass_layout.c) */
    bool x_plain;            /* DIRECT reads NCHW X in place (the kernels' plain variant,
                                conv_kernel.inc): no reorder pass */
    bool want_bf16;          /* compute = "bf16" asked for, and the CPU has it */
    bool bf16;               /* DIRECT in bf16 (attribute compute = "bf16", where the CPU and
                                arenas allow): weights packed bf16 (vn_conv_pack_direct_bf16),
                                inputs rounded as they are copied, f32 sums and epilogue */
    vn_conv_algo algo;
    vn_conv_epi epi;
    bool has_bias, has_res, packed;
    vn_device *device;
    vn_gemm_plan *gemm; /* GEMM_1X1 and IM2COL */
    bool post_act;      /* GEMM paths: activation the GEMM lacks, applied after */
    /* Packed at plan time when W (and B) are constants (ctx->input_data):
     * owned by the plan, used instead of the run's W / B. */
    float *const_w, *const_bias;
    bool borrowed; /* const_w / const_bias point into an offline model: not freed */
    /* workspace (bytes offsets, 64-byte aligned; size 0 when unused) */
    size_t ws_w, ws_bias, ws_x, ws_y, ws_res, ws_col, ws_total;
    size_t ws_wino; /* WINOGRAD: transformed input and products */
    size_t ws_pool; /* pooled or gap, when a tile's conv rows do not fit L1: the unpooled map */
    int64_t C1, K1; /* channel blocks of input and output */
    /* A MaxPool fused after the convolution (attributes pool_kernel_shape,
     * pool_strides, pool_pads, pool_ceil_mode, pool_dilations: MaxPool's,
     * prefixed; pass_fuse_pool.c): Y is the pooled map, and the conv's own
     * output never goes to memory (conv_direct.c). Direct f32 on a plain
     * input (a stem) only. */
    bool pooled;
    vn_pool_geom pool;
    /* A GlobalAveragePool fused after the convolution (attribute
     * pool_global = 1; pass_fuse_pool.c): Y is [N, K1, 1, 1, 16], each
     * output block's map is reduced from an L1 scratch and never goes to
     * memory (conv_direct.c). Direct f32 only (a bf16 request stays f32);
     * where one register block's maps do not fit (vn_conv_gap_fits), the
     * map goes to the workspace (ws_pool) and is pooled after. */
    bool gap;
    /* A depthwise convolution fused after this pointwise one (attributes
     * dw_*: Conv's and the activation's, prefixed; input 4 its W, input 5
     * its B; pass_fuse_dw.c): Y is the depthwise output, and the pointwise
     * map (MobileNetV2's 6x expanded one) goes through an L1 scratch a band
     * of rows at a time, never to memory (conv_dw_fused.c). An f32 direct
     * 1x1 (stride 1, unpadded, group 1) on NC1HWC0 without residual only. */
    bool dw_fused;
    vn_conv_geom dw; /* the depthwise geometry over this conv's output map */
    vn_conv_epi dw_epi;
    bool dw_has_bias;
    float *dw_const_w, *dw_const_bias; /* packed at plan time when constant */
    bool dw_borrowed;                  /* they point into an offline model: not freed */
    size_t ws_dw_w, ws_dw_bias;        /* packed per run otherwise */
    size_t ws_dw_map; /* dw_fused, when one band's rows do not fit L1: the pointwise map */
    char where[VN_OPS_WHERE_MAX];
} vn_conv_plan;

/* The descriptor of plan p's Y (pooled when p->pooled). */
vn_tensor_desc vn_conv_plan_out_desc(const vn_conv_plan *p);
/* Does one pooled row's conv rows, every output block, fit p's device's L1
 * arena (the scratch of conv_direct.c's pooled tiles)? */
bool vn_conv_pool_fits(const vn_conv_plan *p);
/* Does the scratch of a globally pooled tile (every pixel of the max_ncb
 * output blocks of a register block), beside a strided 1x1's gathered chunk,
 * fit half of p's device's L1 arena? */
bool vn_conv_gap_fits(const vn_conv_plan *p);
/* Y = the fused MaxPool (or GlobalAveragePool) of plan p over its whole conv
 * output `map` (NC1HWC0), by the pooling operators' NC1HWC0 kernels: the
 * fallback when vn_conv_pool_fits (vn_conv_gap_fits) fails. */
vn_status vn_conv_pool_map(const vn_conv_plan *p, const float *map, float *y,
                           vn_kernel_counters *counters);

/* Zero the lanes past K of `cols` consecutive pixels of the last output
 * block (activations such as Sigmoid map a padded lane's zero elsewhere). */
void vn_conv_clear_tail(const vn_conv_plan *p, float *y_row, int64_t cols);
/* Bytes of p's device's `arena` a kernel may use (the size less a margin). */
int64_t vn_conv_arena_room(const vn_conv_plan *p, vn_arena arena);
/* dw_fused: do one depthwise output row's pointwise rows, for a group of
 * max_ncb channel blocks, fit p's device's L1 arena (conv_dw_fused.c's
 * scratch)? */
bool vn_conv_dw_fits(const vn_conv_plan *p);
/* dw_fused: Y = the depthwise conv of the pointwise conv of x, by bands
 * of rows through an L1 scratch; dw_w packed [K1][KH][KW][16], dw_bias
 * padded to K1*16 (or NULL). With `map` (vn_conv_dw_fits false): the whole
 * pointwise map goes there first, then the depthwise conv runs over it. */
vn_status vn_conv_dw_fused_run(const vn_conv_plan *p, const float *x, const float *wp,
                               const float *bias, const float *dw_w, const float *dw_bias,
                               float *map, float *y, vn_kernel_counters *counters);

vn_status vn_conv_plan_build(const vn_op_ctx *ctx, const char *where, vn_conv_layout layout,
                             bool fused, vn_conv_plan **out);
void vn_conv_plan_free(vn_conv_plan *p);
/* Pre-packed constants (vinci/ops.h): the blobs of a plan with packed W (and
 * B), and a plan built with W (and B) hidden adopting such blobs in place
 * (checked against the sizes its geometry needs; the workspace shrinks). */
int32_t vn_conv_plan_export(const vn_conv_plan *p, vn_op_blob blobs[VN_OP_MAX_BLOBS],
                            uint64_t *consumed);
vn_status vn_conv_plan_adopt(vn_conv_plan *p, const vn_op_blob *blobs, int32_t num_blobs,
                             uint64_t consumed);
vn_status vn_conv_execute(const vn_conv_plan *p, const vn_op_run_ctx *ctx);

/* ---- weights ----------------------------------------------------------------- */

/* Can the NC1HWC0 kernels run this geometry? direct: G = 1, or C/G and K/G
 * multiples of 16; depthwise: G = C = K. */
bool vn_conv_direct_ok(const vn_conv_geom *g);
bool vn_conv_depthwise_ok(const vn_conv_geom *g);
/* Can the direct kernel read this convolution's X in NCHW (x_plain)? G = 1,
 * C <= 16 (one channel block, a network's stem), 2-D, not a flat 1x1, and
 * a kernel row of at most VN_CONV_PLAIN_TAPS (kw, ci) taps. */
bool vn_conv_plain_input_ok(const vn_conv_geom *g);
/* Elements of the packed weights (conv_kernels.h layouts) for the algo. */
int64_t vn_conv_packed_elems(const vn_conv_geom *g, vn_conv_algo algo);
/* Pack ONNX weights [K][C/G][KH][KW] into the direct or depthwise layout. */
void vn_conv_pack_direct(const vn_conv_geom *g, const float *w, float *packed);
/* The direct layout of a plain (NCHW, C <= 16) input: each output block's
 * slab of the direct layout holds [KH][KW][C][16] densely (the kernels' tap
 * order, conv_kernels.h x_taps), the rest zero. */
void vn_conv_pack_plain(const vn_conv_geom *g, const float *w, float *packed);
void vn_conv_pack_depthwise(const vn_conv_geom *g, const float *w, float *packed);
/* The bias of plan p's K output channels (of its fused depthwise conv
 * alike: the same K) padded with zeros to K1 * 16 floats. */
void vn_conv_pad_bias(const vn_conv_plan *p, const float *b, float *padded);
/* The direct layout in bf16 with input channels in pairs (conv_kernels.h,
 * x16 / w16): [K1][C1][KH][KW][8 pairs][16 co][2], the same element count. */
void vn_conv_pack_direct_bf16(const vn_conv_geom *g, const float *w, uint16_t *packed);
/* Pack ONNX weights as plan p's kernel reads them (bf16 or f32 layout). */
void vn_conv_pack_for_plan(const vn_conv_plan *p, const float *w, void *packed);
/* The f32 layout of plan p's blocked algorithm (plain input or not). */
void vn_conv_pack_f32(const vn_conv_plan *p, const float *w, float *packed);
/* The algorithms whose kernels take packed (NC1HWC0-side) weights, and the
 * packing for any of them. */
bool vn_conv_algo_blocked(vn_conv_algo algo);
void vn_conv_pack_blocked(const vn_conv_geom *g, vn_conv_algo algo, const float *w, float *packed);

/* ---- Winograd F(4x4, 3x3) and F(2x2, 3x3) (conv_winograd_pack.c, conv_winograd.c) -- */

/* 3x3, stride 1, dilation 1, group 1 (any pads). */
bool vn_conv_winograd_ok(const vn_conv_geom *g);
/* Does Winograd beat the direct kernel on this shape (measured rule)? */
bool vn_conv_winograd_wins(const vn_conv_geom *g);
/* The tile size of this geometry (from the shapes only, so packing agrees
 * with the run): F(2x2) where 4x4 tiles would be fewer than 8. */
vn_wino_variant vn_conv_winograd_variant(const vn_conv_geom *g);
int64_t vn_conv_winograd_tiles(const vn_conv_geom *g);
int64_t vn_conv_winograd_packed_elems(const vn_conv_geom *g);
int64_t vn_conv_winograd_ws_elems(const vn_conv_geom *g);
/* Whether the bf16 GEMM's converted chunk of transformed tiles fits L1. */
bool vn_conv_winograd_bf16_fits(const vn_conv_plan *p);
/* U = G w G^T, [P][K1][C1][16 ci][16 co] (P points: 36 or 16). */
void vn_conv_pack_winograd(const vn_conv_geom *g, const float *w, float *packed);
/* U in bf16, [P][K1][C1][8 pairs][16 co][2] (the bf16 GEMM's weights). */
void vn_conv_pack_winograd_bf16(const vn_conv_geom *g, const float *w, uint16_t *packed);
/* NC1HWC0 x, packed u, bias padded to K1*16 (or NULL), res like y (or NULL);
 * ws: vn_conv_winograd_ws_elems floats. */
vn_status vn_conv_winograd_run(const vn_conv_plan *p, const float *x, const float *u,
                               const float *bias, const float *res, float *y, float *ws,
                               vn_kernel_counters *counters);

/* ---- kernels --------------------------------------------------------------------- */

/* Direct or depthwise convolution on NC1HWC0 buffers: x [N][C1][IH][IW][16]
 * (or [N][C][IH][IW] when p->x_plain), packed weights, bias padded to K1*16 (or NULL), res like y
 * (or NULL), y [N][K1][OH][OW][16]. Lanes of y past K are written as zeros. */
vn_status vn_conv_nc1hwc0_run(const vn_conv_plan *p, const float *x, const float *wp,
                              const float *bias, const float *res, float *y,
                              vn_kernel_counters *counters);
/* Whether the bf16 direct kernel pays and its input copies fit the arenas:
 * an unpadded 1x1 of any stride (one chunk of every input block in L1,
 * gathered unit-stride), or a padded conv (its row copies, which f32 makes
 * too, in UB); not another unpadded strided one. */
bool vn_conv_bf16_fits(const vn_conv_plan *p);
/* Create p->gemm for the GEMM_1X1 / IM2COL algo (sets p->post_act). */
vn_status vn_conv_gemm_plan(vn_conv_plan *p);
/* The GEMM paths on NCHW buffers. `col` is the im2col workspace (IM2COL). */
vn_status vn_conv_gemm_run(const vn_conv_plan *p, const float *x, const float *w, const float *bias,
                           const float *res, float *y, float *col, vn_kernel_counters *counters);
/* y[i] = act(y[i]) over n elements, multi-threaded on the plan's device. */
vn_status vn_conv_act_run(const vn_conv_plan *p, float *y, int64_t n);
/* Row r = (c, kh, kw) of the im2col columns of one image x ([C][IH][IW],
 * elements of es bytes): that tap of every output pixel ([OH][OW]), the byte
 * `pad` filling each element whose tap falls in the padding (0 for f32 Conv,
 * x's zero point for ConvInteger / QLinearConv). */
void vn_conv_im2col_row(const vn_conv_geom *g, const void *x, size_t es, uint8_t pad, int64_t r,
                        void *dst);

/* Pack the ONNX weights `w` of the convolution operator `op_name` (Conv,
 * ConvNC1HWC0, FusedConv, FusedConvNC1HWC0) planned with these inputs and
 * attributes into the layout its kernel wants; run the operator afterwards
 * with attribute packed = 1, weight_shape = W's ONNX shape and W = `packed`
 * as a rank-1 tensor of *elems floats. packed NULL: only *elems. */
vn_status vn_conv_pack_weights(const char *op_name, const vn_tensor_desc *inputs,
                               int32_t num_inputs, const vn_attrs *attrs, const float *w,
                               float *packed, int64_t *elems);

/* The operator table (registry.c): the conv operators and the layout ones. */
const vn_op_def *const *vn_ops_conv_table(int32_t *count);

#endif /* VINCI_OPS_CONV_H */
