/*
 * npy_write.c — a tensor as a .npy file: format 1.0 (a rank <= 8 header
 * always fits its 16-bit length), padded so the data starts on a 64-byte
 * boundary as NumPy does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph/npy.h"

#define W "vn_npy_write"

const char *vn_npy_descr(vn_dtype dtype)
{
    static const char *const names[VN_DTYPE_COUNT] = {
        [VN_F32] = "<f4", [VN_F16] = "<f2", [VN_BF16] = "<V2", [VN_I8] = "|i1",  [VN_U8] = "|u1",
        [VN_I32] = "<i4", [VN_I64] = "<i8", [VN_BOOL] = "|b1", [VN_F64] = "<f8", [VN_I16] = "<i2",
        [VN_U16] = "<u2", [VN_U32] = "<u4", [VN_U64] = "<u8",
    };
    return vn_dtype_valid(dtype) ? names[dtype] : NULL;
}

/* The dict, padded with spaces and ended by '\n'; returns its length. */
static size_t header_text(const vn_tensor_desc *d, char *buf, size_t size, size_t prefix)
{
    size_t n = (size_t)snprintf(buf, size, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                                vn_npy_descr(d->dtype));
    for (int32_t i = 0; i < d->rank; i++)
        n += (size_t)snprintf(buf + n, size - n, "%lld,%s", (long long)d->dims[i],
                              i + 1 < d->rank ? " " : "");
    n += (size_t)snprintf(buf + n, size - n, "), }");
    while ((prefix + n + 1) % 64) buf[n++] = ' ';
    buf[n++] = '\n';
    return n;
}

vn_status vn_npy_write(const char *path, const vn_tensor *t)
{
    if (!path || !t) return vn_error(VN_ERR_INVALID_ARG, W, "path or tensor is NULL");
    if (!vn_npy_descr(t->desc.dtype) || t->desc.rank < 0 || t->desc.rank > VN_MAX_RANK)
        return vn_error(VN_ERR_INVALID_ARG, W, "%s: invalid dtype %d or rank %d", path,
                        (int)t->desc.dtype, (int)t->desc.rank);
    int64_t numel = vn_desc_numel(&t->desc);
    if (numel > 0 && !t->data) return vn_error(VN_ERR_INVALID_ARG, W, "%s: data is NULL", path);
    char text[512];
    size_t n = header_text(&t->desc, text, sizeof text, 10);
    unsigned char pre[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
    FILE *f = fopen(path, "wb");
    if (!f) return vn_error(VN_ERR_IO, W, "%s: cannot create: %s", path, strerror(errno));
    size_t bytes = (size_t)numel * vn_dtype_size(t->desc.dtype);
    bool ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre && fwrite(text, 1, n, f) == n &&
              (bytes == 0 || fwrite(t->data, 1, bytes, f) == bytes);
    ok = fclose(f) == 0 && ok;
    return ok ? VN_OK : vn_error(VN_ERR_IO, W, "%s: write failed: %s", path, strerror(errno));
}
