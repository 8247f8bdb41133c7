/*
 * shape_ops.h — what the ONNX data-movement operators share: reading
 * attributes and constant inputs (shapes, axes, starts, ...), axis
 * normalisation, and the view copy engine.
 *
 * The view engine copies a source tensor into a contiguous destination whose
 * element at multi-index (i0, ..., ik) comes from source offset
 *     base + sum_d off_d(i_d),
 * with off_d affine (i * stride) or a table (Tile's modulo, Pad's reflect /
 * edge / constant; a table entry of -1 marks padding, which writes the pad
 * value). Transpose, Slice (negative steps too), Expand, Tile, Pad and
 * DepthToSpace / SpaceToDepth are all such views.
 */
#ifndef VINCI_OPS_SHAPE_OPS_H
#define VINCI_OPS_SHAPE_OPS_H

#include "ops/cast.h"

/* ---- attributes and constant inputs ---------------------------------------- */

static inline bool vn_so_present(const vn_op_ctx *ctx, int32_t i)
{
    return i < ctx->num_inputs && ctx->inputs[i].rank >= 0;
}

/* Constant data of input i, NULL when not known at plan time. */
static inline const void *vn_so_const(const vn_op_ctx *ctx, int32_t i)
{
    return ctx->input_data && i < ctx->num_inputs ? ctx->input_data[i] : NULL;
}

/* The values of integer input `i` (i32 or i64, rank 0 or 1, at most `max`):
 * VN_ERR_UNSUPPORTED naming `name` when the input is not a constant. */
vn_status vn_so_const_ints(const vn_op_ctx *ctx, const char *where, int32_t i, const char *name,
                           int64_t *vals, int32_t max, int32_t *count);
/* A constant scalar (or one-element) input of any dtype, as a double. */
vn_status vn_so_const_scalar(const vn_op_ctx *ctx, const char *where, int32_t i, const char *name,
                             double *out);
/* INTS attribute `name` into vals (at most max); *present false when absent. */
vn_status vn_so_attr_ints(const vn_op_ctx *ctx, const char *where, const char *name, int64_t *vals,
                          int32_t max, int32_t *count, bool *present);
/* INT attribute with a default, the error naming the attribute. */
vn_status vn_so_attr_int(const vn_op_ctx *ctx, const char *where, const char *name,
                         int64_t fallback, int64_t *out);
/* STRING attribute with a default. */
vn_status vn_so_attr_string(const vn_op_ctx *ctx, const char *where, const char *name,
                            const char *fallback, const char **out);
/* Axis `a` of a tensor of `rank` in [-rank, rank) normalised to [0, rank). */
vn_status vn_so_axis(const char *where, const char *what, int64_t a, int32_t rank, int32_t *out);
/* Axes normalised, each at most once (VN_ERR_INVALID_ARG on a repeat). */
vn_status vn_so_axes(const char *where, const char *what, const int64_t *axes, int32_t n,
                     int32_t rank, bool *mask);

/* Descriptor helpers. */
vn_tensor_desc vn_so_desc(vn_dtype dtype, int32_t rank, const int64_t *dims);
/* Shape [n] i64 vector descriptor. */
static inline vn_tensor_desc vn_so_vec(vn_dtype dtype, int64_t n)
{
    return vn_so_desc(dtype, 1, &n);
}
/* Checks that input `i` has an integer dtype (i32 / i64) and rank <= 1. */
vn_status vn_so_check_int_vector(const vn_op_ctx *ctx, const char *where, int32_t i,
                                 const char *name);

/* ---- the view engine ------------------------------------------------------- */

#define VN_VIEW_MAX_RANK 16

typedef struct vn_view_dim {
    int64_t size;
    int64_t stride; /* source elements per index step, when table == NULL */
    int64_t *table; /* else: source offset per index (-1 = padding); owned */
} vn_view_dim;

typedef struct vn_view {
    int32_t rank;
    vn_view_dim d[VN_VIEW_MAX_RANK];
    int64_t base;   /* source offset of index (0, ..., 0) */
    int32_t esize;  /* bytes per element */
    uint8_t pad[8]; /* the padding element's bytes */
    /* set by vn_view_finish */
    int64_t numel, rows, L, tiles, tile_rows;
    bool transpose; /* the last two dims are a 2-D transpose (blocked kernel) */
    int32_t block_dim;
} vn_view;

/* A view plan of `rank` dims; every dim affine with stride 0 until set. */
vn_view *vn_view_new(const char *where, int32_t rank, vn_dtype dtype);
/* Give dim d an explicit offset table (allocated here, to be filled). */
int64_t *vn_view_table(const char *where, vn_view *v, int32_t d);
/* Collapse adjacent affine dims, materialise tables, choose tiling. */
vn_status vn_view_finish(const char *where, vn_device *device, vn_view *v);
void vn_view_free(void *view);
vn_status vn_view_execute(vn_device *device, const vn_view *v, const void *src, void *dst,
                          vn_kernel_counters *counters);
/* Row-major strides of a shape (elements). */
void vn_so_strides(const vn_tensor_desc *d, int64_t *strides);

/* Plain copy of `bytes` (Identity, Reshape, ...), multi-block when large. */
vn_status vn_so_copy(vn_device *device, const void *src, void *dst, int64_t bytes,
                     vn_kernel_counters *counters);

/* Shared run / plan_free of the operators whose plan is a vn_view. */
vn_status vn_view_run(const vn_op_run_ctx *ctx);

/* The family's operators, one array per file, gathered by shape_ops_table.c. */
#define VN_SO_FAMILY(name)                                                                         \
    extern const vn_op_def vn_so_##name##_defs[];                                                  \
    extern const int32_t vn_so_##name##_count;
VN_SO_FAMILY(reshape)
VN_SO_FAMILY(transpose)
VN_SO_FAMILY(slice)
VN_SO_FAMILY(expand)
VN_SO_FAMILY(pad)
VN_SO_FAMILY(concat)
VN_SO_FAMILY(info)

#endif /* VINCI_OPS_SHAPE_OPS_H */
