/*
 * rowio.c — moving tiles of rows between global memory and scratch, the one
 * copy discipline every kernel of the ops layer follows.
 *
 * Invariant of the scratch layout: row j of a tile of `ncols` columns starts
 * at element j * vn_ops_row_width(ncols, dtype), i.e. on a 32-byte block, and
 * every element of the padded rows has been written (vn_copy_in_pad fills the
 * padding), so vector instructions may run over nrows * width elements.
 */
#include "ops/ops_internal.h"

/* At most this many rows per vn_copy_*_pad call (block_count is 16-bit). */
#define ROWS_PER_COPY 4095

/* Pad value 1: harmless under every element-wise op (no log(0), no 0/0). */
static const vn_pad pad_one = {false, 0, 0, 1.0};

static bool contiguous_run(int64_t nrows, int64_t ncols, int64_t pitch, vn_dtype dtype)
{
    return nrows == 1 || (pitch == ncols && vn_ops_row_width(ncols, dtype) == ncols);
}

void vn_ops_load_rows(vn_core *core, vn_local dst, vn_gm src, int64_t off, int64_t nrows,
                      int64_t ncols, int64_t pitch)
{
    int64_t size = (int64_t)vn_dtype_size(src.dtype);
    if (nrows <= 0 || ncols <= 0) return;
    if (contiguous_run(nrows, ncols, pitch, src.dtype)) {
        int64_t total = nrows * ncols, bulk = total - total % vn_ops_epb(src.dtype);
        if (bulk > 0) vn_copy_in(core, dst, src, off, bulk);
        if (total > bulk) {
            vn_copy_pad_params p = {1, (uint32_t)((total - bulk) * size), 0, 0};
            vn_copy_in_pad(core, vn_local_at(core, dst, bulk), src, off + bulk, p, pad_one);
        }
        return;
    }
    int64_t width = vn_ops_row_width(ncols, src.dtype);
    for (int64_t r = 0; r < nrows; r += ROWS_PER_COPY) {
        int64_t n = vn_ops_min(ROWS_PER_COPY, nrows - r);
        vn_copy_pad_params p = {(uint16_t)n, (uint32_t)(ncols * size), (pitch - ncols) * size, 0};
        vn_copy_in_pad(core, vn_local_at(core, dst, r * width), src, off + r * pitch, p, pad_one);
    }
}

void vn_ops_store_rows(vn_core *core, vn_gm dst, int64_t off, vn_local src, int64_t nrows,
                       int64_t ncols, int64_t pitch)
{
    int64_t size = (int64_t)vn_dtype_size(dst.dtype);
    if (nrows <= 0 || ncols <= 0) return;
    if (contiguous_run(nrows, ncols, pitch, dst.dtype)) {
        int64_t total = nrows * ncols, bulk = total - total % vn_ops_epb(dst.dtype);
        if (bulk > 0) vn_copy_out(core, dst, off, src, bulk);
        if (total > bulk) {
            vn_copy_pad_params p = {1, (uint32_t)((total - bulk) * size), 0, 0};
            vn_copy_out_pad(core, dst, off + bulk, vn_local_at(core, src, bulk), p);
        }
        return;
    }
    int64_t width = vn_ops_row_width(ncols, dst.dtype);
    for (int64_t r = 0; r < nrows; r += ROWS_PER_COPY) {
        int64_t n = vn_ops_min(ROWS_PER_COPY, nrows - r);
        vn_copy_pad_params p = {(uint16_t)n, (uint32_t)(ncols * size), (pitch - ncols) * size, 0};
        vn_copy_out_pad(core, dst, off + r * pitch, vn_local_at(core, src, r * width), p);
    }
}

double vn_ops_local_value(vn_local t, int64_t index)
{
    switch (t.dtype) {
    case VN_F32:
        return vn_ptr(const float, t)[index];
    case VN_F16:
        return vn_f16_to_f32(vn_ptr(const uint16_t, t)[index]);
    case VN_BF16:
        return vn_bf16_to_f32(vn_ptr(const uint16_t, t)[index]);
    case VN_I32:
        return vn_ptr(const int32_t, t)[index];
    default:
        return 0.0;
    }
}

void vn_ops_load_f32(vn_core *core, vn_queue *q, vn_local dst, vn_gm src, int64_t off,
                     int64_t nrows, int64_t ncols, int64_t pitch)
{
    if (src.dtype == VN_F32) {
        vn_ops_load_rows(core, dst, src, off, nrows, ncols, pitch);
        return;
    }
    vn_local t = vn_alloc(core, q);
    vn_ops_load_rows(core, t, src, off, nrows, ncols, pitch);
    vn_enque(core, q, t);
    t = vn_deque(core, q);
    vn_cast(core, dst, t, VN_ROUND_NONE, nrows * vn_ops_row_width(ncols, src.dtype));
    vn_free(core, q, t);
}

void vn_ops_store_f32(vn_core *core, vn_queue *q, vn_gm dst, int64_t off, vn_local src,
                      int64_t nrows, int64_t ncols, int64_t pitch)
{
    if (dst.dtype == VN_F32) {
        vn_ops_store_rows(core, dst, off, src, nrows, ncols, pitch);
        return;
    }
    vn_local t = vn_alloc(core, q);
    vn_cast(core, t, src, VN_ROUND_RINT, nrows * vn_ops_row_width(ncols, dst.dtype));
    vn_enque(core, q, t);
    t = vn_deque(core, q);
    vn_ops_store_rows(core, dst, off, t, nrows, ncols, pitch);
    vn_free(core, q, t);
}
