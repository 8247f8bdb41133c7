/*
 * copy.c — moving data between global memory and scratch (Ascend DataCopy
 * and DataCopyPad), with the hardware's 32-byte block rules:
 *
 *   contiguous  count * size rounded DOWN to 32 bytes (the silent truncation;
 *               checked mode reports it instead);
 *   strided     block_count blocks of block_len 32-byte units, gaps in units;
 *   padded      rows of any byte length; in scratch each row starts on a block
 *               and is padded up to whole blocks; the global gap is in bytes,
 *               the scratch gap in blocks; copy-out writes only the real bytes.
 *
 * On a CPU a copy is a memcpy by the worker itself (no copy engine to overlap).
 * In checked mode every copy validates both sides and keeps the shadow map:
 * copy-in marks the scratch bytes written, copy-out requires them written.
 */
#include <string.h>

#include "kernel/core_internal.h"
#include "kernel/isa.h"

#define BLOCK VN_BLOCK_BYTES

/* The prefetch queue of vn_prefetch (copy_stream.c); vn_prefetch_issue is in isa.h. */
void vn_prefetch_queue(const void *src, size_t bytes);
void vn_prefetch_drop(void);

static int64_t round_up_block(int64_t bytes)
{
    return (bytes + BLOCK - 1) / BLOCK * BLOCK;
}

void vn_check_gm(vn_core *core, vn_gm g, int64_t off, int64_t bytes, const char *what,
                 const char *call, vn_site site)
{
    int64_t size = (int64_t)vn_dtype_size(g.dtype);
    if (!g.data || size == 0 || g.len < 0)
        vn_core_fail(core, site, call, "global tensor is not valid (data %p, len %lld, dtype %d)",
                     g.data, (long long)g.len, (int)g.dtype);
    if (off < 0 || bytes < 0 || off + bytes > g.len * size)
        vn_core_fail(core, site, call,
                     "%s bytes [%lld, %lld) of a global tensor of %lld bytes (%lld x %s): out of "
                     "bounds",
                     what, (long long)off, (long long)(off + bytes), (long long)(g.len * size),
                     (long long)g.len, vn_dtype_name(g.dtype));
}

/* Checked mode: the local side is scratch (not a window) of g's element size. */
static void check_dtypes(vn_core *core, vn_gm g, vn_local t, const char *call, vn_site site)
{
    vn_check_scratch(core, t, call, site);
    if (vn_dtype_size(g.dtype) != vn_dtype_size(t.dtype) || vn_dtype_size(g.dtype) == 0)
        vn_core_fail(core, site, call, "global tensor is %s but the local tensor is %s",
                     vn_dtype_name(g.dtype), vn_dtype_name(t.dtype));
}

/* Checked mode: a contiguous count that the 32-byte rule would truncate. */
static void check_contiguous(vn_core *core, vn_gm g, int64_t count, const char *call,
                             const char *pad_form, vn_site site)
{
    int64_t bytes = count * (int64_t)vn_dtype_size(g.dtype);
    if (count < 0) vn_core_fail(core, site, call, "count %lld < 0", (long long)count);
    if (bytes % BLOCK != 0)
        vn_core_fail(core, site, call,
                     "count %lld x %s = %lld bytes is not a multiple of 32 bytes: the copy would "
                     "silently drop the last %lld bytes (use %s for a tail)",
                     (long long)count, vn_dtype_name(g.dtype), (long long)bytes,
                     (long long)(bytes % BLOCK), pad_form);
}

/* ---- contiguous ------------------------------------------------------------ */

void vn_copy_in_(vn_core *core, vn_local dst, vn_gm src, int64_t src_off, int64_t count,
                 vn_site site)
{
    int64_t size = (int64_t)vn_dtype_size(src.dtype);
    int64_t bytes = count * size / BLOCK * BLOCK;
    if (core->checked) {
        check_dtypes(core, src, dst, "vn_copy_in", site);
        check_contiguous(core, src, count, "vn_copy_in", "vn_copy_in_pad", site);
        vn_check_gm(core, src, src_off * size, count * size, "reads", "vn_copy_in", site);
        vn_check_write(core, dst, 0, bytes, "vn_copy_in", site);
    }
    if (bytes <= 0) return;
    const uint8_t *from = (const uint8_t *)src.data + src_off * size;
    core->counters.bytes_in += bytes;
    if (vn_xfer_deferrable(core, dst, VN_VECIN)) {
        vn_xfer_push(core, dst.data, from, bytes, false);
        return;
    }
    vn_xfer_sync(core);
    vn_prefetch_drop(); /* what is still queued, this copy or the next fetches anyway */
    memcpy(dst.data, from, (size_t)bytes);
}

void vn_copy_out_(vn_core *core, vn_gm dst, int64_t dst_off, vn_local src, int64_t count,
                  vn_site site)
{
    int64_t size = (int64_t)vn_dtype_size(dst.dtype);
    int64_t bytes = count * size / BLOCK * BLOCK;
    if (core->checked) {
        check_dtypes(core, dst, src, "vn_copy_out", site);
        check_contiguous(core, dst, count, "vn_copy_out", "vn_copy_out_pad", site);
        vn_check_gm(core, dst, dst_off * size, count * size, "writes", "vn_copy_out", site);
        vn_check_read(core, src, 0, bytes, "vn_copy_out", site);
    }
    if (bytes <= 0) return;
    uint8_t *to = (uint8_t *)dst.data + dst_off * size;
    core->counters.bytes_out += bytes;
    if (vn_xfer_deferrable(core, src, VN_VECOUT)) {
        vn_xfer_push(core, to, src.data, bytes, dst.hint == VN_CACHE_STREAM);
        return;
    }
    vn_xfer_sync(core);
    if (dst.hint != VN_CACHE_STREAM) vn_prefetch_issue(bytes / 64 * 2);
    vn_gm_store(dst, to, src.data, (size_t)bytes);
}

/* ---- prefetch ------------------------------------------------------------------ */

void vn_prefetch_(vn_core *core, vn_gm src, int64_t src_off, int64_t count, vn_site site)
{
    int64_t size = (int64_t)vn_dtype_size(src.dtype);
    if (core->checked) {
        if (count < 0) vn_core_fail(core, site, "vn_prefetch", "count %lld < 0", (long long)count);
        vn_check_gm(core, src, src_off * size, count * size, "prefetches", "vn_prefetch", site);
    }
    if (count > 0)
        vn_prefetch_queue((const char *)src.data + src_off * size, (size_t)(count * size));
}

/* ---- strided ------------------------------------------------------------------- */

static void check_params(vn_core *core, vn_copy_params p, const char *call, vn_site site)
{
    if (p.block_count > 4095)
        vn_core_fail(core, site, call, "block_count %u > 4095", (unsigned)p.block_count);
}

void vn_copy_in_strided_(vn_core *core, vn_local dst, vn_gm src, int64_t src_off, vn_copy_params p,
                         vn_site site)
{
    const char *call = "vn_copy_in_strided";
    int64_t size = (int64_t)vn_dtype_size(src.dtype);
    int64_t len = (int64_t)p.block_len * BLOCK;
    int64_t gm_step = len + (int64_t)p.src_gap * BLOCK,
            local_step = len + (int64_t)p.dst_gap * BLOCK;
    if (p.block_count == 0 || len == 0) return; /* the hardware's no-op */
    if (core->checked) {
        check_params(core, p, call, site);
        check_dtypes(core, src, dst, call, site);
        vn_check_gm(core, src, src_off * size, (p.block_count - 1) * gm_step + len, "reads", call,
                    site);
        for (int64_t i = 0; i < p.block_count; i++)
            vn_check_write(core, dst, i * local_step, len, call, site);
    }
    vn_xfer_sync(core); /* immediate copies keep program order */
    const uint8_t *g = (const uint8_t *)src.data + src_off * size;
    uint8_t *l = dst.data;
    for (int64_t i = 0; i < p.block_count; i++)
        memcpy(l + i * local_step, g + i * gm_step, (size_t)len);
    core->counters.bytes_in += p.block_count * len;
}

void vn_copy_out_strided_(vn_core *core, vn_gm dst, int64_t dst_off, vn_local src, vn_copy_params p,
                          vn_site site)
{
    const char *call = "vn_copy_out_strided";
    int64_t size = (int64_t)vn_dtype_size(dst.dtype);
    int64_t len = (int64_t)p.block_len * BLOCK;
    int64_t local_step = len + (int64_t)p.src_gap * BLOCK,
            gm_step = len + (int64_t)p.dst_gap * BLOCK;
    if (p.block_count == 0 || len == 0) return;
    if (core->checked) {
        check_params(core, p, call, site);
        check_dtypes(core, dst, src, call, site);
        vn_check_gm(core, dst, dst_off * size, (p.block_count - 1) * gm_step + len, "writes", call,
                    site);
        for (int64_t i = 0; i < p.block_count; i++)
            vn_check_read(core, src, i * local_step, len, call, site);
    }
    vn_xfer_sync(core); /* immediate copies keep program order */
    uint8_t *g = (uint8_t *)dst.data + dst_off * size;
    const uint8_t *l = src.data;
    for (int64_t i = 0; i < p.block_count; i++)
        memcpy(g + i * gm_step, l + i * local_step, (size_t)len);
    core->counters.bytes_out += p.block_count * len;
}

/* ---- padded ---------------------------------------------------------------------- */

/* `value` as one element of `dtype` (little-endian bytes). */
static void encode_value(vn_dtype dtype, double value, uint8_t out[8])
{
    memset(out, 0, 8);
    switch (dtype) {
    case VN_F32: {
        float f = (float)value;
        memcpy(out, &f, 4);
    } break;
    case VN_F16: {
        uint16_t h = vn_f32_to_f16((float)value);
        memcpy(out, &h, 2);
    } break;
    case VN_BF16: {
        uint16_t h = vn_f32_to_bf16((float)value);
        memcpy(out, &h, 2);
    } break;
    case VN_I32: {
        int32_t v = (int32_t)value;
        memcpy(out, &v, 4);
    } break;
    case VN_I64: {
        int64_t v = (int64_t)value;
        memcpy(out, &v, 8);
    } break;
    case VN_I8:
        out[0] = (uint8_t)(int8_t)value;
        break;
    case VN_U8:
        out[0] = (uint8_t)value;
        break;
    case VN_BOOL:
        out[0] = value != 0.0;
        break;
    case VN_F64:
        memcpy(out, &value, 8);
        break;
    case VN_I16:
    case VN_U16: { /* the low 16 bits of the integer, as a cast would keep them */
        uint16_t v = (uint16_t)(int64_t)value;
        memcpy(out, &v, 2);
    } break;
    case VN_U32: {
        uint32_t v = (uint32_t)(int64_t)value;
        memcpy(out, &v, 4);
    } break;
    case VN_U64: {
        uint64_t v = value >= 0 ? (uint64_t)value : (uint64_t)(int64_t)value;
        memcpy(out, &v, 8);
    } break;
    default:
        break;
    }
}

static void fill(uint8_t *p, int64_t bytes, const uint8_t *elem, int64_t size)
{
    for (int64_t i = 0; i + size <= bytes; i += size) memcpy(p + i, elem, (size_t)size);
}

static void check_pad_params(vn_core *core, vn_copy_pad_params p, int64_t size, vn_pad pad,
                             const char *call, vn_site site)
{
    if (p.block_len % size != 0)
        vn_core_fail(core, site, call,
                     "block_len %u bytes is not a multiple of the %lld-byte element",
                     (unsigned)p.block_len, (long long)size);
    if (p.gm_gap < 0) vn_core_fail(core, site, call, "gm_gap %lld < 0", (long long)p.gm_gap);
    if (pad.enable && (pad.left * size > BLOCK || pad.right * size > BLOCK))
        vn_core_fail(core, site, call,
                     "padding of %u left / %u right elements exceeds 32 bytes on a side",
                     (unsigned)pad.left, (unsigned)pad.right);
}

void vn_copy_in_pad_(vn_core *core, vn_local dst, vn_gm src, int64_t src_off, vn_copy_pad_params p,
                     vn_pad pad, vn_site site)
{
    const char *call = "vn_copy_in_pad";
    int64_t size = (int64_t)vn_dtype_size(src.dtype);
    int64_t left = pad.enable ? pad.left * size : 0, right = pad.enable ? pad.right * size : 0;
    int64_t row = round_up_block(left + p.block_len + right);
    int64_t gm_step = p.block_len + p.gm_gap, local_step = row + (int64_t)p.local_gap * BLOCK;
    if (p.block_count == 0 || p.block_len == 0) return;
    if (core->checked) {
        check_dtypes(core, src, dst, call, site);
        check_pad_params(core, p, size, pad, call, site);
        vn_check_gm(core, src, src_off * size, (p.block_count - 1) * gm_step + p.block_len, "reads",
                    call, site);
        for (int64_t i = 0; i < p.block_count; i++)
            vn_check_write(core, dst, i * local_step, row, call, site);
    }
    vn_xfer_sync(core); /* immediate copies keep program order */
    uint8_t elem[8];
    encode_value(src.dtype, pad.value, elem);
    const uint8_t *g = (const uint8_t *)src.data + src_off * size;
    for (int64_t i = 0; i < p.block_count; i++) {
        uint8_t *l = (uint8_t *)dst.data + i * local_step;
        fill(l, left, elem, size);
        memcpy(l + left, g + i * gm_step, p.block_len);
        fill(l + left + p.block_len, row - left - p.block_len, elem, size);
    }
    core->counters.bytes_in += (int64_t)p.block_count * p.block_len;
}

void vn_copy_out_pad_(vn_core *core, vn_gm dst, int64_t dst_off, vn_local src, vn_copy_pad_params p,
                      vn_site site)
{
    const char *call = "vn_copy_out_pad";
    int64_t size = (int64_t)vn_dtype_size(dst.dtype);
    int64_t row = round_up_block(p.block_len);
    int64_t gm_step = p.block_len + p.gm_gap, local_step = row + (int64_t)p.local_gap * BLOCK;
    if (p.block_count == 0 || p.block_len == 0) return;
    if (core->checked) {
        vn_pad none = {0};
        check_dtypes(core, dst, src, call, site);
        check_pad_params(core, p, size, none, call, site);
        vn_check_gm(core, dst, dst_off * size, (p.block_count - 1) * gm_step + p.block_len,
                    "writes", call, site);
        for (int64_t i = 0; i < p.block_count; i++)
            vn_check_read(core, src, i * local_step, p.block_len, call, site);
    }
    vn_xfer_sync(core); /* immediate copies keep program order */
    uint8_t *g = (uint8_t *)dst.data + dst_off * size;
    for (int64_t i = 0; i < p.block_count; i++)
        vn_gm_store(dst, g + i * gm_step, (const uint8_t *)src.data + i * local_step, p.block_len);
    core->counters.bytes_out += (int64_t)p.block_count * p.block_len;
}
