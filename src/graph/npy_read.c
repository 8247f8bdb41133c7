/*
 * npy_read.c — .npy files (NumPy's format 1.0 / 2.0 / 3.0): a magic string, a
 * header length, a Python dict literal with descr, fortran_order and shape,
 * then the data. The bytes are untrusted: every field is checked and the data
 * size must equal what the shape needs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/npy.h"

#define W "vn_npy"

typedef struct npy_header {
    char descr[16];
    bool fortran;
    vn_tensor_desc desc;
} npy_header;

static const char *after_key(const char *h, const char *key, const char *name)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "'%s'", key);
    const char *p = strstr(h, quoted);
    if (!p) {
        snprintf(quoted, sizeof quoted, "\"%s\"", key);
        if (!(p = strstr(h, quoted))) return NULL;
    }
    p += strlen(quoted);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    for (p++; *p == ' ';) p++;
    (void)name;
    return p;
}

static vn_status parse_descr(const char *h, const char *name, npy_header *out)
{
    const char *p = after_key(h, "descr", name);
    if (!p || (*p != '\'' && *p != '"'))
        return vn_error(VN_ERR_FORMAT, W, "%s: header has no 'descr' string", name);
    char q = *p++;
    size_t n = strcspn(p, "'\"");
    if (p[n] != q || n == 0 || n >= sizeof out->descr)
        return vn_error(VN_ERR_FORMAT, W, "%s: bad 'descr' in the header", name);
    memcpy(out->descr, p, n);
    out->descr[n] = '\0';
    return VN_OK;
}

static vn_status parse_fortran(const char *h, const char *name, npy_header *out)
{
    const char *p = after_key(h, "fortran_order", name);
    if (p && !strncmp(p, "False", 5)) return VN_OK;
    if (p && !strncmp(p, "True", 4)) {
        out->fortran = true;
        return VN_OK;
    }
    return vn_error(VN_ERR_FORMAT, W, "%s: header has no 'fortran_order' True/False", name);
}

static vn_status parse_shape(const char *h, const char *name, npy_header *out)
{
    const char *p = after_key(h, "shape", name);
    if (!p || *p != '(') return vn_error(VN_ERR_FORMAT, W, "%s: header has no 'shape' tuple", name);
    p++;
    out->desc.rank = 0;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') return VN_OK;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0)
            return vn_error(VN_ERR_FORMAT, W, "%s: bad dim in 'shape' at \"%.20s\"", name, p);
        if (out->desc.rank >= VN_MAX_RANK)
            return vn_error(VN_ERR_UNSUPPORTED, W, "%s: rank above vinci's limit of %d", name,
                            VN_MAX_RANK);
        out->desc.dims[out->desc.rank++] = v;
        p = end;
        if (*p == 'L') p++; /* Python 2 longs */
    }
}

static vn_status descr_dtype(const char *name, npy_header *h)
{
    static const struct {
        const char *descr;
        vn_dtype dtype;
    } map[] = {{"<f4", VN_F32},  {"<f2", VN_F16},  {"|i1", VN_I8},   {"<i1", VN_I8},
               {"|u1", VN_U8},   {"<u1", VN_U8},   {"<i4", VN_I32},  {"<i8", VN_I64},
               {"|b1", VN_BOOL}, {"<b1", VN_BOOL}, {"<V2", VN_BF16}, {"|V2", VN_BF16},
               {"<f8", VN_F64},  {"<i2", VN_I16},  {"<u2", VN_U16},  {"<u4", VN_U32},
               {"<u8", VN_U64}};
    char d[16];
    snprintf(d, sizeof d, "%s", h->descr);
    if (d[0] == '=') d[0] = '<'; /* native = little on every CPU vinci runs on */
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(d, map[i].descr)) continue;
        h->desc.dtype = map[i].dtype;
        return VN_OK;
    }
    if (d[0] == '>' && strcmp(d + 1, "i1") && strcmp(d + 1, "u1") && strcmp(d + 1, "b1"))
        return vn_error(VN_ERR_UNSUPPORTED, W,
                        "%s: dtype '%s' is big-endian; save it little-endian (astype('<...'))",
                        name, h->descr);
    if (d[0] == '>') {
        d[0] = '|';
        snprintf(h->descr, sizeof h->descr, "%s", d);
        return descr_dtype(name, h);
    }
    return vn_error(
        VN_ERR_UNSUPPORTED, W,
        "%s: dtype '%s' is not supported (f4 f2 f8 i1 u1 i2 u2 i4 u4 i8 u8 b1, V2 as bf16)", name,
        h->descr);
}

/* The header dict of a .npy; *data_at = offset of the data. */
static vn_status parse_header(const uint8_t *b, size_t size, const char *name, npy_header *h,
                              size_t *data_at)
{
    if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return vn_error(VN_ERR_FORMAT, W, "%s: not a .npy file (no \\x93NUMPY magic)", name);
    size_t len, start;
    if (b[6] == 1) {
        len = (size_t)b[8] | (size_t)b[9] << 8;
        start = 10;
    } else if ((b[6] == 2 || b[6] == 3) && size >= 12) {
        len = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        start = 12;
    } else {
        return vn_error(VN_ERR_FORMAT, W, "%s: .npy format version %d.%d is not supported", name,
                        b[6], b[7]);
    }
    if (len > size - start || len > (1u << 20))
        return vn_error(VN_ERR_FORMAT, W, "%s: header length %zu runs past the end (%zu bytes)",
                        name, len, size);
    char *text = malloc(len + 1);
    if (!text) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", name);
    memcpy(text, b + start, len);
    text[len] = '\0';
    memset(h, 0, sizeof *h);
    vn_status st = parse_descr(text, name, h);
    if (st == VN_OK) st = parse_fortran(text, name, h);
    if (st == VN_OK) st = parse_shape(text, name, h);
    free(text);
    if (st == VN_OK) st = descr_dtype(name, h);
    if (st == VN_OK && h->fortran)
        st = vn_error(VN_ERR_UNSUPPORTED, W,
                      "%s: Fortran order is not supported; save a C-ordered array "
                      "(np.ascontiguousarray)",
                      name);
    *data_at = start + len;
    return st;
}

static vn_status fill(const uint8_t *src, const npy_header *h, int64_t numel, void *dst)
{
    if (h->desc.dtype == VN_BOOL) {
        for (int64_t i = 0; i < numel; i++) ((uint8_t *)dst)[i] = src[i] != 0;
    } else {
        memcpy(dst, src, (size_t)numel * vn_dtype_size(h->desc.dtype));
    }
    return VN_OK;
}

vn_status vn_npy_parse(const void *bytes, size_t size, const char *name, vn_tensor *out)
{
    if (!out || (!bytes && size)) return vn_error(VN_ERR_INVALID_ARG, W, "bytes or out is NULL");
    memset(out, 0, sizeof *out);
    name = name ? name : "npy";
    npy_header h;
    size_t at = 0;
    vn_status st = parse_header(bytes, size, name, &h, &at);
    if (st != VN_OK) return st;
    size_t elem = vn_dtype_size(h.desc.dtype);
    int64_t numel = 1;
    for (int32_t i = 0; i < h.desc.rank; i++) {
        if (h.desc.dims[i] && numel > (INT64_C(1) << 40) / h.desc.dims[i])
            return vn_error(VN_ERR_FORMAT, W, "%s: shape is too large", name);
        numel *= h.desc.dims[i];
    }
    if ((uint64_t)numel * elem != size - at)
        return vn_error(VN_ERR_FORMAT, W, "%s: holds %zu bytes of data, shape needs %llu", name,
                        size - at, (unsigned long long)numel * elem);
    size_t nbytes = (size_t)numel * vn_dtype_size(h.desc.dtype);
    void *data = vn_aligned_alloc(nbytes ? nbytes : 64, 64);
    if (!data) return VN_ERR_OUT_OF_MEMORY;
    fill((const uint8_t *)bytes + at, &h, numel, data);
    out->desc = h.desc;
    out->data = data;
    return VN_OK;
}

vn_status vn_npy_read(const char *path, vn_tensor *out)
{
    if (!path || !out) return vn_error(VN_ERR_INVALID_ARG, W, "path or out is NULL");
    FILE *f = fopen(path, "rb");
    if (!f) return vn_error(VN_ERR_IO, W, "%s: cannot open: %s", path, strerror(errno));
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    void *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    bool ok = buf && fseek(f, 0, SEEK_SET) == 0 && fread(buf, 1, (size_t)len, f) == (size_t)len;
    fclose(f);
    vn_status st = ok ? vn_npy_parse(buf, (size_t)len, path, out)
                      : vn_error(VN_ERR_IO, W, "%s: cannot read the file", path);
    free(buf);
    return st;
}
