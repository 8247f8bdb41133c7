/*
 * ops_internal.h — what the files of the ops layer share: error locations,
 * the built-in operator tables, small tiling arithmetic and the row copies
 * every kernel of this layer uses.
 */
#ifndef VINCI_OPS_INTERNAL_H
#define VINCI_OPS_INTERNAL_H

#include "vinci/ops.h"

/* ---- messages ------------------------------------------------------------ */

#define VN_OPS_WHERE_MAX 192

/* The "where" of an operator's error: "vn_op_plan_create(Add)" for the
 * two-phase API, "Add (node 'n')" inside a graph; domain-qualified outside
 * the default domain ("vn_op_plan_create(vinci::RMSNormalization)"). */
const char *vn_ops_where(const vn_op_ctx *ctx, char *buf, size_t size);

/* ---- built-in operator tables (one per operator family) ------------------ */

typedef const vn_op_def *const *(*vn_op_table_fn)(int32_t *count);
const vn_op_def *const *vn_ops_elementwise_table(int32_t *count);
const vn_op_def *const *vn_ops_fused_table(int32_t *count);
const vn_op_def *const *vn_ops_norm_table(int32_t *count);
const vn_op_def *const *vn_ops_softmax_table(int32_t *count);
const vn_op_def *const *vn_ops_conv_table(int32_t *count);
const vn_op_def *const *vn_ops_pool_table(int32_t *count);
const vn_op_def *const *vn_ops_convtranspose_table(int32_t *count);
const vn_op_def *const *vn_ops_matmul_table(int32_t *count);
const vn_op_def *const *vn_ops_batchnorm_table(int32_t *count);
const vn_op_def *const *vn_ops_shape_table(int32_t *count);
const vn_op_def *const *vn_ops_logic_table(int32_t *count);
const vn_op_def *const *vn_ops_math_table(int32_t *count);
const vn_op_def *const *vn_ops_cast_table(int32_t *count);
const vn_op_def *const *vn_ops_gather_table(int32_t *count);
const vn_op_def *const *vn_ops_reduce_table(int32_t *count);
const vn_op_def *const *vn_ops_scatter_table(int32_t *count);
const vn_op_def *const *vn_ops_misc_table(int32_t *count);
const vn_op_def *const *vn_ops_loss_table(int32_t *count);
const vn_op_def *const *vn_ops_attention_table(int32_t *count);
const vn_op_def *const *vn_ops_attention_fused_table(int32_t *count);
const vn_op_def *const *vn_ops_norm_misc_table(int32_t *count);
const vn_op_def *const *vn_ops_grid_sample_table(int32_t *count);
const vn_op_def *const *vn_ops_resize_table(int32_t *count);
const vn_op_def *const *vn_ops_extra_table(int32_t *count);
const vn_op_def *const *vn_ops_rnn_table(int32_t *count);
const vn_op_def *const *vn_ops_signal_table(int32_t *count);
const vn_op_def *const *vn_ops_quant_table(int32_t *count);

/* ---- tiling arithmetic ------------------------------------------------------ */

static inline int64_t vn_ops_round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}
static inline int64_t vn_ops_min(int64_t a, int64_t b)
{
    return a < b ? a : b;
}
static inline int64_t vn_ops_max(int64_t a, int64_t b)
{
    return a > b ? a : b;
}
static inline int64_t vn_ops_div_up(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Elements of `dtype` in one 32-byte block. */
static inline int64_t vn_ops_epb(vn_dtype dtype)
{
    return VN_BLOCK_BYTES / (int64_t)vn_dtype_size(dtype);
}

/* Scratch row stride (elements) of a row of `ncols` elements of `dtype` laid
 * out by vn_copy_in_pad: the row rounded up to whole 32-byte blocks. */
static inline int64_t vn_ops_row_width(int64_t ncols, vn_dtype dtype)
{
    return vn_ops_round_up(ncols, vn_ops_epb(dtype));
}

/* Blocks for `tiles` tiles of about `tile_elems` elements: at most one per
 * worker, and few enough that each block has work worth a thread hand-off. */
int32_t vn_ops_block_dim(vn_device *device, int64_t tiles, int64_t tile_elems);

/* ONNX auto_pad of convolution-like operators (Conv, ConvTranspose, pools). */
typedef enum vn_auto_pad {
    VN_AUTO_PAD_NOTSET = 0,
    VN_AUTO_PAD_VALID,
    VN_AUTO_PAD_SAME_UPPER,
    VN_AUTO_PAD_SAME_LOWER
} vn_auto_pad;
/* The "auto_pad" attribute (NOTSET when absent); an error naming `where` when
 * it is not a string or not one of the four names. */
vn_status vn_ops_auto_pad(const char *where, const vn_attrs *attrs, vn_auto_pad *out);
/* String attribute `name` as its index among choices[0 .. n) (*out -1 when
 * absent); an error naming `where` and the choices when it is another value
 * or not a string. */
vn_status vn_ops_attr_choice(const char *where, const vn_attrs *attrs, const char *name,
                             const char *const *choices, int32_t n, int32_t *out);
/* vinci's attribute compute ("f32" or "bf16", graph/pass_precision.c):
 * *bf16 true when it asks for bf16. */
vn_status vn_ops_compute_bf16(const char *where, const vn_attrs *attrs, bool *bf16);

/* The global tensor of an operator output, with the streaming cache hint when
 * the output is larger than the last-level cache. */
vn_gm vn_ops_output_gm(void *data, vn_dtype dtype, int64_t len);
/* Whether vn_ops_output_gm gives `len` elements of dtype the streaming hint. */
bool vn_ops_output_streamed(vn_dtype dtype, int64_t len);

/* Scratch bytes kept free of tiles for small buffers and block rounding. */
#define VN_OPS_UB_MARGIN 2048

/* ---- row copies (kernel side) --------------------------------------------------
 * A tile of `nrows` rows of `ncols` elements whose rows start `pitch` elements
 * apart in global memory sits in scratch as rows of vn_ops_row_width(ncols)
 * elements (each row padded to whole blocks, padding filled with 1). When the
 * rows are one contiguous run in both places the copy is a vn_copy_in of the
 * whole blocks plus a vn_copy_in_pad of the tail. Requires pitch >= ncols
 * when nrows > 1. */
void vn_ops_load_rows(vn_core *core, vn_local dst, vn_gm src, int64_t off, int64_t nrows,
                      int64_t ncols, int64_t pitch);
void vn_ops_store_rows(vn_core *core, vn_gm dst, int64_t off, vn_local src, int64_t nrows,
                       int64_t ncols, int64_t pitch);
/* Element `index` of a scratch tensor (f32, f16, bf16, i32) as a double. */
double vn_ops_local_value(vn_local t, int64_t index);

/* Rows into / out of an f32 scratch tensor whatever the tensor's dtype:
 * f32 directly, f16 / bf16 through the queue `q` (of that dtype, at least
 * nrows * row_width elements per buffer) and a cast (RINT on the way out). */
void vn_ops_load_f32(vn_core *core, vn_queue *q, vn_local dst, vn_gm src, int64_t off,
                     int64_t nrows, int64_t ncols, int64_t pitch);
void vn_ops_store_f32(vn_core *core, vn_queue *q, vn_gm dst, int64_t off, vn_local src,
                      int64_t nrows, int64_t ncols, int64_t pitch);

#endif /* VINCI_OPS_INTERNAL_H */
