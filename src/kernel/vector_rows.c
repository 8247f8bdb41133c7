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

static void rows_check_dtypes(vn_core *core, vn_local dst, vn_local src, const char *call,
                              vn_site site)
{
    vn_dtype d = src.dtype;
    if ((d != VN_F32 && d != VN_F16 && d != VN_BF16) || dst.dtype != d)
        vn_core_fail(core, site, call, "dst %s, src %s: both must be f32, f16 or bf16 (the same)",
                     vn_dtype_name(dst.dtype), vn_dtype_name(d));
}

/* Checked mode: the shape, dst and src, and each row's bytes. */
static void rows_check_extent(vn_core *core, vn_local dst, vn_local src, int64_t rows, int64_t n,
                              int64_t pitch, const char *call, vn_site site)
{
    if (rows < 0 || n < 0 || pitch < n)
        vn_core_fail(core, site, call, "bad shape: rows %lld, n %lld, row_pitch %lld (need >= n)",
                     (long long)rows, (long long)n, (long long)pitch);
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

void vn_layernorm_rows_(vn_core *core, vn_local dst, vn_local src, vn_local gamma, vn_local beta,
                        int64_t rows, int64_t n, int64_t row_pitch, double eps, vn_norm_mode mode,
                        vn_site site)
{
    vn_xfer_sync(core);
    rows_check_dtypes(core, dst, src, call_norm, site);
    if (mode != VN_NORM_LAYER && mode != VN_NORM_RMS)
        vn_core_fail(core, site, call_norm, "invalid mode %d", (int)mode);
    if (gamma.dtype != VN_F32 || (beta.data && beta.dtype != VN_F32))
        vn_core_fail(core, site, call_norm, "gamma and beta must be f32");
    if (core->checked) {
        rows_check_extent(core, dst, src, rows, n, row_pitch, call_norm, site);
        rows_check_param(core, gamma, n, "gamma", call_norm, site);
        if (beta.data) rows_check_param(core, beta, n, "beta", call_norm, site);
    }
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

/* The rows in place in global memory: no VECIN / VECOUT copies (they cost
 * half the bandwidth of a one-stream row op on one core, docs/architecture.md);
 * the next tile's rows come from the vn_prefetch queue during the passes, and
 * a VN_CACHE_STREAM dst is written with non-temporal stores. */
void vn_layernorm_rows_gm_(vn_core *core, vn_gm dst, int64_t dst_off, vn_gm src, int64_t src_off,
                           vn_local gamma, vn_local beta, int64_t rows, int64_t n,
                           int64_t row_pitch, double eps, vn_norm_mode mode, vn_site site)
{
    const char *call = "vn_layernorm_rows_gm";
    vn_xfer_sync(core); /* pending copy-outs may write src, or read dst */
    vn_dtype d = src.dtype;
    if ((d != VN_F32 && d != VN_F16 && d != VN_BF16) || dst.dtype != d)
        vn_core_fail(core, site, call, "dst %s, src %s: both must be f32, f16 or bf16 (the same)",
                     vn_dtype_name(dst.dtype), vn_dtype_name(d));
    if (mode != VN_NORM_LAYER && mode != VN_NORM_RMS)
        vn_core_fail(core, site, call, "invalid mode %d", (int)mode);
    if (gamma.dtype != VN_F32 || (beta.data && beta.dtype != VN_F32))
        vn_core_fail(core, site, call, "gamma and beta must be f32");
    if (core->checked) {
        if (rows < 0 || n < 0 || row_pitch < n)
            vn_core_fail(core, site, call,
                         "bad shape: rows %lld, n %lld, row_pitch %lld (need >= n)",
                         (long long)rows, (long long)n, (long long)row_pitch);
        rows_check_gm(core, src, src_off, rows, n, row_pitch, "reads", call, site);
        rows_check_gm(core, dst, dst_off, rows, n, row_pitch, "writes", call, site);
        rows_check_param(core, gamma, n, "gamma", call, site);
        if (beta.data) rows_check_param(core, beta, n, "beta", call, site);
    }
    if (rows <= 0 || n <= 0) return;
    size_t size = vn_dtype_size(d);
    bool stream = dst.hint == VN_CACHE_STREAM;
    vn_rows_io io = {(char *)dst.data + (size_t)dst_off * size,
                     (const char *)src.data + (size_t)src_off * size,
                     d,
                     rows,
                     n,
                     row_pitch,
                     stream,
                     NULL};
    vn_isa_table_get()->norm_rows(&io, gamma.data, beta.data, eps, mode);
    core->xfer_streamed |= stream; /* the block end fences the non-temporal stores */
    core->counters.vector_elem_ops += rows * n * (mode == VN_NORM_LAYER ? 3 : 2);
    core->counters.bytes_in += rows * n * (int64_t)size;
    core->counters.bytes_out += rows * n * (int64_t)size;
}

/* vn_softmax_rows on rows in place in global memory (as vn_layernorm_rows_gm):
 * f32 Softmax keeps its exponentials in `scratch` (f32, n elements), so dst is
 * written once. */
void vn_softmax_rows_gm_(vn_core *core, vn_gm dst, int64_t dst_off, vn_gm src, int64_t src_off,
                         vn_local scratch, int64_t rows, int64_t n, int64_t row_pitch,
                         bool log_softmax, vn_site site)
{
    const char *call = "vn_softmax_rows_gm";
    vn_xfer_sync(core);
    vn_dtype d = src.dtype;
    if ((d != VN_F32 && d != VN_F16 && d != VN_BF16) || dst.dtype != d)
        vn_core_fail(core, site, call, "dst %s, src %s: both must be f32, f16 or bf16 (the same)",
                     vn_dtype_name(dst.dtype), vn_dtype_name(d));
    if (scratch.dtype != VN_F32)
        vn_core_fail(core, site, call, "scratch is %s, not f32", vn_dtype_name(scratch.dtype));
    if (core->checked) {
        if (rows < 0 || n < 0 || row_pitch < n)
            vn_core_fail(core, site, call,
                         "bad shape: rows %lld, n %lld, row_pitch %lld (need >= n)",
                         (long long)rows, (long long)n, (long long)row_pitch);
        rows_check_gm(core, src, src_off, rows, n, row_pitch, "reads", call, site);
        rows_check_gm(core, dst, dst_off, rows, n, row_pitch, "writes", call, site);
        vn_vec_check_operand(core, scratch, VN_F32, "scratch", call, site);
        vn_check_write(core, scratch, 0, n * 4, call, site);
    }
    if (rows <= 0 || n <= 0) return;
    size_t size = vn_dtype_size(d);
    bool stream = dst.hint == VN_CACHE_STREAM;
    vn_rows_io io = {(char *)dst.data + (size_t)dst_off * size,
                     (const char *)src.data + (size_t)src_off * size,
                     d,
                     rows,
                     n,
                     row_pitch,
                     stream,
                     scratch.data};
    vn_isa_table_get()->softmax_rows(&io, log_softmax);
    core->xfer_streamed |= stream;
    core->counters.vector_elem_ops += rows * n * 3;
    core->counters.bytes_in += rows * n * (int64_t)size;
    core->counters.bytes_out += rows * n * (int64_t)size;
}

void vn_softmax_rows_(vn_core *core, vn_local dst, vn_local src, int64_t rows, int64_t n,
                      int64_t row_pitch, bool log_softmax, vn_site site)
{
    vn_xfer_sync(core);
    rows_check_dtypes(core, dst, src, call_softmax, site);
    if (core->checked) rows_check_extent(core, dst, src, rows, n, row_pitch, call_softmax, site);
    if (rows <= 0 || n <= 0) return;
    vn_rows_io io = {dst.data, src.data, src.dtype, rows, n, row_pitch, false, NULL};
    vn_isa_table_get()->softmax_rows(&io, log_softmax);
    core->counters.vector_elem_ops += rows * n * 3;
}
