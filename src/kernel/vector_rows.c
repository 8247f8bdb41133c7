/*
 * vector_rows.c — the high-level vector APIs (Ascend C lib/ LayerNorm and
 * SoftMax): fused row instructions on local tensors. The row loops are the
 * ISA table's (isa_f32.inc); this file validates and dispatches.
 *
 * Release mode checks only what must never silently misbehave (dtypes, mode);
 * checked mode validates the shape, every operand and, row by row, the bytes
 * read (written before) and written. Rows are checked in order and the first
 * row past an extent fails, so row offsets never overflow.
 */
#include "kernel/isa.h"
#include "kernel/vector_internal.h"

static const char call_norm[] = "vn_layernorm_rows";
static const char call_softmax[] = "vn_softmax_rows";

static void rows_check_dtypes(vn_core *core, vn_dtype dst, vn_dtype src, const char *call,
                              vn_site site)
{
    if ((src != VN_F32 && src != VN_F16 && src != VN_BF16) || dst != src)
        vn_core_fail(core, site, call, "dst %s, src %s: both must be f32, f16 or bf16 (the same)",
                     vn_dtype_name(dst), vn_dtype_name(src));
}

static void rows_check_shape(vn_core *core, int64_t rows, int64_t n, int64_t pitch,
                             const char *call, vn_site site)
{
    if (rows < 0 || n < 0 || pitch < n)
        vn_core_fail(core, site, call, "bad shape: rows %lld, n %lld, row_pitch %lld (need >= n)",
                     (long long)rows, (long long)n, (long long)pitch);
}

/* Checked mode: the shape, dst and src, and each row's bytes. */
static void rows_check_extent(vn_core *core, vn_local dst, vn_local src, int64_t rows, int64_t n,
                              int64_t pitch, const char *call, vn_site site)
{
    rows_check_shape(core, rows, n, pitch, call, site);
    vn_vec_check_operand(core, dst, src.dtype, "dst", call, site);
    vn_vec_check_operand(core, src, src.dtype, "src", call, site);
    if (n == 0) return;
    int64_t size = (int64_t)vn_dtype_size(src.dtype);
    for (int64_t r = 0; r < rows; r++)
        vn_check_read(core, src, r * pitch * size, n * size, call, site);
    for (int64_t r = 0; r < rows; r++)
        vn_check_write(core, dst, r * pitch * size, n * size, call, site);
}

/* Checked mode: a per-column f32 parameter of at least n elements. */
static void rows_check_param(vn_core *core, vn_local t, int64_t n, const char *what,
                             const char *call, vn_site site)
{
    vn_vec_check_operand(core, t, VN_F32, what, call, site);
    vn_vec_check_read_n(core, t, n, call, site);
}

/* The LayerNorm operands besides the rows: mode and f32 gamma / beta (every
 * mode), at least n of them (checked mode). */
static void norm_check_params(vn_core *core, vn_local gamma, vn_local beta, int64_t n,
                              vn_norm_mode mode, const char *call, vn_site site)
{
    if (mode != VN_NORM_LAYER && mode != VN_NORM_RMS)
        vn_core_fail(core, site, call, "invalid mode %d", (int)mode);
    if (gamma.dtype != VN_F32 || (beta.data && beta.dtype != VN_F32))
        vn_core_fail(core, site, call, "gamma and beta must be f32");
    if (!core->checked) return;
    rows_check_param(core, gamma, n, "gamma", call, site);
    if (beta.data) rows_check_param(core, beta, n, "beta", call, site);
}

void vn_layernorm_rows_(vn_core *core, vn_local dst, vn_local src, vn_local gamma, vn_local beta,
                        int64_t rows, int64_t n, int64_t row_pitch, double eps, vn_norm_mode mode,
                        vn_site site)
{
    vn_xfer_sync(core);
    rows_check_dtypes(core, dst.dtype, src.dtype, call_norm, site);
    if (core->checked) rows_check_extent(core, dst, src, rows, n, row_pitch, call_norm, site);
    norm_check_params(core, gamma, beta, n, mode, call_norm, site);
    if (rows <= 0 || n <= 0) return;
    vn_rows_io io = {dst.data, src.data, src.dtype, rows, n, row_pitch, false, NULL};
    vn_isa_table_get()->norm_rows(&io, gamma.data, beta.data, eps, mode);
    core->counters.vector_elem_ops += rows * n * (mode == VN_NORM_LAYER ? 3 : 2);
}

/* Checked mode: rows x n elements row_pitch apart from element off of g. */
static void rows_check_gm(vn_core *core, vn_gm g, int64_t off, int64_t rows, int64_t n,
                          int64_t pitch, const char *what, const char *call, vn_site site)
{
    int64_t size = (int64_t)vn_dtype_size(g.dtype), span = rows > 0 ? (rows - 1) * pitch + n : 0;
    vn_check_gm(core, g, off * size, span * size, what, call, site);
}

/* What both row instructions on global tensors check first: pending copies
 * land (they may write src or read dst), the dtypes, and in checked mode the
 * shape and both extents. */
static void gm_rows_check(vn_core *core, vn_gm dst, int64_t dst_off, vn_gm src, int64_t src_off,
                          int64_t rows, int64_t n, int64_t pitch, const char *call, vn_site site)
{
    vn_xfer_sync(core);
    rows_check_dtypes(core, dst.dtype, src.dtype, call, site);
    if (!core->checked) return;
    rows_check_shape(core, rows, n, pitch, call, site);
    rows_check_gm(core, src, src_off, rows, n, pitch, "reads", call, site);
    rows_check_gm(core, dst, dst_off, rows, n, pitch, "writes", call, site);
}

/* The rows of such an instruction; a VN_CACHE_STREAM dst gets non-temporal stores. */
static vn_rows_io gm_rows_io(vn_gm dst, int64_t dst_off, vn_gm src, int64_t src_off, int64_t rows,
                             int64_t n, int64_t pitch, float *scratch)
{
    size_t size = vn_dtype_size(src.dtype);
    vn_rows_io io = {(char *)dst.data + (size_t)dst_off * size,
                     (const char *)src.data + (size_t)src_off * size,
                     src.dtype,
                     rows,
                     n,
                     pitch,
                     dst.hint == VN_CACHE_STREAM,
                     scratch};
    return io;
}

/* After it ran: the block end fences its non-temporal stores, and it counts
 * the bytes the copies it replaces would have. */
static void gm_rows_done(vn_core *core, const vn_rows_io *io)
{
    int64_t bytes = io->rows * io->n * (int64_t)vn_dtype_size(io->dtype);
    core->xfer_streamed |= io->stream;
    core->counters.bytes_in += bytes;
    core->counters.bytes_out += bytes;
}

/* The rows in place in global memory: no VECIN / VECOUT copies (they cost
 * half the bandwidth of a one-stream row op on one core, docs/architecture.md);
 * the next tile's rows come from the vn_prefetch queue during the passes, and
 * a VN_CACHE_STREAM dst is written with non-temporal stores. */
void vn_layernorm_rows_gm_(vn_core *core, vn_gm dst, int64_t dst_off, vn_gm src, int64_t src_off,
                           vn_local gamma, vn_local beta, int64_t rows, int64_t n,
                           int64_t row_pitch, double eps, vn_norm_mode mode, vn_site site)
{
    const char *call = "vn_layernorm_rows_gm";
    gm_rows_check(core, dst, dst_off, src, src_off, rows, n, row_pitch, call, site);
    norm_check_params(core, gamma, beta, n, mode, call, site);
    if (rows <= 0 || n <= 0) return;
    vn_rows_io io = gm_rows_io(dst, dst_off, src, src_off, rows, n, row_pitch, NULL);
    vn_isa_table_get()->norm_rows(&io, gamma.data, beta.data, eps, mode);
    gm_rows_done(core, &io);
    core->counters.vector_elem_ops += rows * n * (mode == VN_NORM_LAYER ? 3 : 2);
}

/* vn_softmax_rows on rows in place in global memory (as vn_layernorm_rows_gm):
 * f32 Softmax keeps its exponentials in `scratch` (f32, n elements), so dst is
 * written once. */
void vn_softmax_rows_gm_(vn_core *core, vn_gm dst, int64_t dst_off, vn_gm src, int64_t src_off,
                         vn_local scratch, int64_t rows, int64_t n, int64_t row_pitch,
                         bool log_softmax, vn_site site)
{
    const char *call = "vn_softmax_rows_gm";
    gm_rows_check(core, dst, dst_off, src, src_off, rows, n, row_pitch, call, site);
    if (scratch.dtype != VN_F32)
        vn_core_fail(core, site, call, "scratch is %s, not f32", vn_dtype_name(scratch.dtype));
    if (core->checked) {
        vn_vec_check_operand(core, scratch, VN_F32, "scratch", call, site);
        vn_check_write(core, scratch, 0, n * 4, call, site);
    }
    if (rows <= 0 || n <= 0) return;
    vn_rows_io io = gm_rows_io(dst, dst_off, src, src_off, rows, n, row_pitch, scratch.data);
    vn_isa_table_get()->softmax_rows(&io, log_softmax);
    gm_rows_done(core, &io);
    core->counters.vector_elem_ops += rows * n * 3;
}

void vn_softmax_rows_(vn_core *core, vn_local dst, vn_local src, int64_t rows, int64_t n,
                      int64_t row_pitch, bool log_softmax, vn_site site)
{
    vn_xfer_sync(core);
    rows_check_dtypes(core, dst.dtype, src.dtype, call_softmax, site);
    if (core->checked) rows_check_extent(core, dst, src, rows, n, row_pitch, call_softmax, site);
    if (rows <= 0 || n <= 0) return;
    vn_rows_io io = {dst.data, src.data, src.dtype, rows, n, row_pitch, false, NULL};
    vn_isa_table_get()->softmax_rows(&io, log_softmax);
    core->counters.vector_elem_ops += rows * n * 3;
}
