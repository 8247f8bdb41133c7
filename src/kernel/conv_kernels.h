/*
 * conv_kernels.h — the register-blocked convolution micro-kernels, one table
 * per ISA (conv_scalar.c, conv_avx2.c, conv_avx512.c compile the same
 * conv_kernel.inc with different vector macros).
 *
 * Layout (the 5HD / NC1HWC0 of the Ascend model): a feature map of C channels
 * is [C1 = ceil(C/16)][H][W][C0 = 16] per image, f32; the lanes of the last
 * block past C are zero. C0 is 16 on every ISA path (one zmm; two ymm on AVX2;
 * sixteen floats on the scalar path), so data and packed weights never depend
 * on the ISA.
 *
 * Packed direct-convolution weights: [out block ob][in block ib][KH][KW][16 ci][16 co],
 * i.e. for every (tap, input channel) one C0 vector of 16 output channels;
 * channels past the real counts are zero. Depthwise weights: [C1][KH][KW][16].
 */
#ifndef VINCI_KERNEL_CONV_KERNELS_H
#define VINCI_KERNEL_CONV_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "vinci/base.h"

#define VN_C0 16

/* Activations of the fused store step (ONNX definitions). */
typedef enum vn_conv_act {
    VN_CONV_ACT_NONE = 0,
    VN_CONV_ACT_RELU,
    VN_CONV_ACT_CLIP,         /* min(max(v, p0), p1); Relu6 = Clip(0, 6) */
    VN_CONV_ACT_LEAKY_RELU,   /* v >= 0 ? v : p0 * v */
    VN_CONV_ACT_HARD_SIGMOID, /* max(0, min(1, p0 * v + p1)) */
    VN_CONV_ACT_HARD_SWISH,   /* v * max(0, min(1, v / 6 + 1 / 2)) */
    VN_CONV_ACT_SIGMOID,
    VN_CONV_ACT_SILU, /* v * sigmoid(v) */
    VN_CONV_ACT_COUNT
} vn_conv_act;

typedef struct vn_conv_epi {
    vn_conv_act act;
    float p0, p1; /* activation parameters (see vn_conv_act) */
} vn_conv_epi;

/* One output row of a direct convolution on NC1HWC0: for output row `oh` of
 * one image, output blocks ob .. ob+ncb-1, all OW columns:
 *   y[b][ow][co] = act(bias[b*16+co] + res[b][ow][co]
 *                      + sum_{ib, kh, kw, ci} x[ib][ih0+kh*dh][ow*sw-pl+kw*dw][ci] *
 * w[b][ib][kh][kw][ci][co]) Taps outside the input are skipped (zero padding). */
/* The most (kw, ci) taps of one kernel row a plain input may have (KW * C). */
#define VN_CONV_PLAIN_TAPS (16 * VN_C0)

typedef struct vn_conv_row_args {
    const float *x;     /* first input block of the group: [cin_blocks][IH][IW][16] */
    int64_t x_bstride;  /* elements between input blocks (IH*IW*16) */
    int64_t cin_blocks; /* input blocks reduced over */
    int32_t ci_last;    /* real channels of the last input block (1..16) */
    /* Real channels of the call's last output block (1..16; 0 means 16).
     * Where a C0 block is two vectors (AVX2) and they all lie in the first,
     * a 1x1 call computes only that half (MobileNetV2's 24-channel
     * projections: 3 of 4 vectors) and leaves the other to the caller's
     * padding clear (vn_conv_clear_tail). */
    int32_t co_last;
    const float *w;    /* packed weights of block ob: [cin_blocks][KH][KW][16][16]
                          (x_plain: [KH][KW][C][16], dense; see x_taps) */
    int64_t w_bstride; /* elements between the weights of consecutive output blocks */
    int32_t ncb;       /* output blocks done together, 1..vn_conv_table.max_ncb (2: a half pair) */
    int64_t IH, IW, OW, KH, KW, sw, dw, pl, dh;
    int64_t ih0; /* oh*sh - pt: input row of tap kh is ih0 + kh*dh */
    /* Addressing (pixels, i.e. units of 16 floats): tap kh's row starts at
     * x + (x_row0 + kh*x_rstride)*16 and column c of it at + (c - pl)*16
     * ((ih0*IW, dh*IW) for a plain input; a padded copy uses its own).
     * IH, ih0 and dh only decide which taps are inside; IW, pl which
     * columns are (pl = 0 and IW = the copy's width when padded). */
    int64_t x_row0, x_rstride;
    /* x_plain: x is one NCHW image of cin_blocks = 1 block of ci_last channels
     * (a stem on the model's input): a pixel is one float, channel ci lies
     * x_cstride (IH*IW) floats after channel 0, and the addressing above
     * counts pixels of 1 float instead of 16. */
    bool x_plain;
    int64_t x_cstride;
    /* x_plain: set by the row driver, not the caller: taps[kw * C + ci] is
     * the offset of (kw, ci) from a row's column (kw * dw + ci * x_cstride).
     * A plain input's packed weights are dense: [KH][KW][C][16] per output
     * block (vn_conv_pack_plain), so u = kw * C + ci walks both in step. */
    const int64_t *x_taps;
    /* direct_row_bf16 reads these instead of x and w: the input as bf16 in
     * x's layout and addressing (element strides), the weights packed as
     * [ob][ib][KH][KW][8 channel pairs][16 co][2] (vn_conv_pack_direct_bf16). */
    const uint16_t *x16, *w16;
    float *y;          /* output block ob at row oh, column 0 */
    int64_t y_bstride; /* elements between output blocks (OH*OW*16) */
    const float *bias; /* 16*ncb values (zero padded) or NULL */
    const float *res;  /* residual laid out like y, or NULL */
    int64_t res_bstride;
    vn_conv_epi epi;
    /* The weights are not in cache yet (their first use in this block):
     * the kernels prefetch them a few KiB ahead of their FMAs. A cold
     * slab is a fresh stream per output block, split at every 4 KiB page,
     * which the hardware prefetchers restart at: in a model (weights come
     * from DRAM) a Winograd or 7 x 7 layer took about twice its warm time. */
    bool w_cold;
    /* The weights (laid out like w) that the next row call reads first, or
     * NULL: the row's first block that finds its own weights in cache
     * requests them, one tap's lines per tap, so that the next call's cold
     * stream is already in L2 instead of limiting its first block to the
     * DRAM bandwidth. */
    const float *w_next;
    /* rows == 2: the call computes output rows oh and oh + 1 (0 or 1: oh
     * only). Row oh + 1's taps start x_rstep pixels after row oh's (its
     * first input row ih_step rows further), its outputs and residual lie
     * y_rstride elements after row oh's. On a table with max_ow2 >= OW, a
     * row with every column interior and both rows reaching the same taps
     * run as one block of 2 x OW pixels, so each weight loaded feeds twice
     * the outputs (a 7-wide map otherwise reads all of its weights per 7
     * outputs); otherwise the rows run one after the other. */
    int32_t rows;
    int64_t x_rstep, ih_step, y_rstride;
} vn_conv_row_args;

/* Output rows of a depthwise convolution (group = C = K) on NC1HWC0 for
 * channel block c1: y[ow][c] = act(bias[c] + res[ow][c] + sum_{kh,kw} x[ih][iw][c] * w[kh][kw][c]).
 * The call computes `rows` (>= 1) consecutive output rows from the one
 * described: each next row's taps start ih_step input rows and x_rstep
 * pixels on, its outputs (and residual) y_rstride elements on. A band of
 * rows per call keeps the per-call set-up off a small map's short rows
 * (MobileNetV2's 960 channels at 7 x 7: 7 outputs a row). */
typedef struct vn_conv_dw_args {
    const float *x; /* block c1 of the image: [IH][IW][16] */
    const float *w; /* [KH][KW][16] of block c1 */
    int64_t IH, IW, OW, KH, KW, sw, dw, pl, dh, ih0;
    int64_t x_row0, x_rstride; /* as in vn_conv_row_args */
    float *y;                  /* [OW][16] at row oh of block c1 */
    const float *bias;         /* 16 values or NULL */
    const float *res;          /* [OW][16] or NULL */
    vn_conv_epi epi;
    int64_t rows, ih_step, x_rstep, y_rstride;
} vn_conv_dw_args;

typedef struct vn_conv_table {
    vn_isa isa;
    int32_t max_ncb;                         /* output blocks one direct row call may take */
    void (*direct_row)(vn_conv_row_args *a); /* works in *a (conv_kernel.inc): built per call */
    void (*dw_row)(const vn_conv_dw_args *a);
    /* y[i] = act(y[i]) for i < n (in place). */
    void (*act)(float *y, int64_t n, const vn_conv_epi *e);
    /* The direct row on bf16 operands (x16, w16) with f32 accumulation and
     * the same epilogue, for inputs whose padding is materialised (every
     * column interior: pl = 0); NULL where the ISA has no bf16 dot product. */
    void (*direct_row_bf16)(const vn_conv_row_args *a);
    int32_t max_ow2; /* the widest map direct_row runs two rows at a time (0: never) */
    /* > 0: direct_row also takes ncb = 2 beyond max_ncb (1) for a 1x1 row
     * of interior columns whose second, last block has 1 <= co_last <=
     * half_pair_co real channels, one vector (AVX2: both blocks' three real
     * vectors in one register block); 0: never */
    int32_t half_pair_co;
} vn_conv_table;

/* Taps [*lo, *hi) of a kernel extent k (dilation d) whose input index
 * base + t*d lies in [0, n). */
static inline void tap_range(int64_t base, int64_t k, int64_t d, int64_t n, int64_t *lo,
                             int64_t *hi)
{
    /* d == 1 (the common case) skips the divisions: this runs per row */
    *lo = base >= 0 ? 0 : d == 1 ? -base : (-base + d - 1) / d;
    *hi = base > n - 1 ? 0 : (d == 1 ? n - 1 - base : (n - 1 - base) / d) + 1;
    if (*hi > k) *hi = k;
    if (*lo > k) *lo = k;
    if (*hi < *lo) *hi = *lo;
}

extern const vn_conv_table vn_conv_table_scalar;
extern const vn_conv_table vn_conv_table_avx2;
extern const vn_conv_table vn_conv_table_avx512;

/* The bf16 direct row on AMX tiles (conv_amx.c): the active table's
 * direct_row_bf16 where vn_amx_usable(). */
void vn_conv_amx_row_bf16(const vn_conv_row_args *a);

/* The table of the active ISA (chosen once; thread-safe). */
const vn_conv_table *vn_conv_table_get(void);
/* Whether direct_row_bf16 runs here: the active table has it and the CPU
 * has AVX512_BF16. */
bool vn_conv_bf16_available(void);

/* Scalar activation, the reference the vector forms follow. */
float vn_conv_act_scalar(float v, const vn_conv_epi *e);

#endif /* VINCI_KERNEL_CONV_KERNELS_H */
