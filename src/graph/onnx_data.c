/*
 * onnx_data.c — a TensorProto's data in vinci's dtype. The element count
 * from dims must match the data exactly (raw bytes, typed elements or
 * external length) before anything is allocated, so a file cannot make vinci
 * allocate more than it holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/onnx.h"

#define MAX_NUMEL (INT64_C(1) << 40)

static vn_status tensor_fail(vn_pb *pb, const vn_onnx_tensor *t, vn_status status, const char *what)
{
    if (status == VN_ERR_FORMAT) return vn_pb_fail(pb, t->offset, "tensor '%s': %s", t->name, what);
    char path[384];
    return vn_error(status, pb->file, "byte %zu: %s: tensor '%s': %s", t->offset,
                    vn_pb_path(pb, path, sizeof path), t->name, what);
}

static vn_status make_desc(vn_pb *pb, const vn_onnx_tensor *t, vn_dtype dtype, vn_tensor_desc *d,
                           int64_t *numel)
{
    char msg[160];
    if (t->dims.count > VN_MAX_RANK) {
        snprintf(msg, sizeof msg, "rank %d is above vinci's limit of %d", (int)t->dims.count,
                 VN_MAX_RANK);
        return tensor_fail(pb, t, VN_ERR_UNSUPPORTED, msg);
    }
    d->dtype = dtype;
    d->rank = t->dims.count;
    *numel = 1;
    for (int32_t i = 0; i < d->rank; i++) {
        int64_t v = (int64_t)t->dims.items[i];
        if (v < 0 || (v > 0 && *numel > MAX_NUMEL / v)) {
            snprintf(msg, sizeof msg, "dim %d is %lld (negative or too large)", (int)i,
                     (long long)v);
            return tensor_fail(pb, t, VN_ERR_FORMAT, msg);
        }
        d->dims[i] = v;
        *numel *= v;
    }
    return VN_OK;
}

/* Element i of the stored data as float, integer or 16-bit pattern. */
typedef struct elem {
    double f;
    int64_t i;
    uint16_t bits;
} elem;

static elem raw_elem(int32_t dt, const uint8_t *p)
{
    elem e = {0, 0, 0};
    switch (dt) {
    case VN_ONNX_FLOAT: {
        float v;
        memcpy(&v, p, 4);
        e.f = v;
        break;
    }
    case VN_ONNX_DOUBLE:
        memcpy(&e.f, p, 8);
        break;
    case VN_ONNX_FLOAT16:
    case VN_ONNX_BFLOAT16:
        memcpy(&e.bits, p, 2);
        break;
    case VN_ONNX_INT8:
        e.i = (int8_t)p[0];
        break;
    case VN_ONNX_UINT8:
    case VN_ONNX_BOOL:
        e.i = p[0];
        break;
    case VN_ONNX_INT16: {
        int16_t v;
        memcpy(&v, p, 2);
        e.i = v;
        break;
    }
    case VN_ONNX_UINT16: {
        uint16_t v;
        memcpy(&v, p, 2);
        e.i = v;
        break;
    }
    case VN_ONNX_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        e.i = v;
        break;
    }
    case VN_ONNX_UINT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        e.i = v;
        break;
    }
    default:
        memcpy(&e.i, p, 8);
        break; /* int64, uint64 */
    }
    return e;
}

static elem typed_elem(int32_t dt, uint64_t raw)
{
    elem e = {0, (int64_t)raw, (uint16_t)raw};
    if (dt == VN_ONNX_FLOAT) {
        uint32_t b = (uint32_t)raw;
        float v;
        memcpy(&v, &b, 4);
        e.f = v;
    } else if (dt == VN_ONNX_DOUBLE) {
        memcpy(&e.f, &raw, 8);
    } else if (dt != VN_ONNX_INT64 && dt != VN_ONNX_UINT64 && dt != VN_ONNX_UINT32) {
        e.i = (int32_t)raw; /* int32_data holds int32 (sign-extended varints) */
    }
    return e;
}

static void store(vn_dtype dt, void *dst, int64_t i, elem e)
{
    switch (dt) {
    case VN_F32:
        ((float *)dst)[i] = (float)e.f;
        break;
    case VN_F64:
        ((double *)dst)[i] = e.f;
        break;
    case VN_F16:
    case VN_BF16:
        ((uint16_t *)dst)[i] = e.bits;
        break;
    case VN_I8:
    case VN_U8:
        ((uint8_t *)dst)[i] = (uint8_t)e.i;
        break;
    case VN_BOOL:
        ((uint8_t *)dst)[i] = e.i != 0;
        break;
    case VN_I16:
    case VN_U16:
        ((uint16_t *)dst)[i] = (uint16_t)e.i;
        break;
    case VN_I32:
    case VN_U32:
        ((uint32_t *)dst)[i] = (uint32_t)e.i;
        break;
    default: /* i64, u64 (its bits) */
        ((int64_t *)dst)[i] = e.i;
        break;
    }
}

/* The typed field ONNX uses for a data type. */
static const vn_pb_list *typed_field(const vn_onnx_tensor *t)
{
    switch (t->data_type) {
    case VN_ONNX_FLOAT:
        return &t->float_data;
    case VN_ONNX_INT64:
        return &t->int64_data;
    case VN_ONNX_DOUBLE:
        return &t->double_data;
    case VN_ONNX_UINT32:
    case VN_ONNX_UINT64:
        return &t->uint64_data;
    default:
        return &t->int32_data;
    }
}

static vn_status convert_bytes(vn_pb *pb, const vn_onnx_tensor *t, const uint8_t *src,
                               size_t elem_bytes, vn_gconst *out, int64_t numel)
{
    vn_dtype dt = out->desc.dtype;
    if (vn_dtype_size(dt) == elem_bytes && t->data_type != VN_ONNX_BOOL) {
        memcpy(out->data, src, (size_t)numel * elem_bytes); /* same layout */
        return VN_OK;
    }
    for (int64_t i = 0; i < numel; i++) {
        elem e = raw_elem(t->data_type, src + (size_t)i * elem_bytes);
        store(dt, out->data, i, e);
    }
    return VN_OK;
}

static vn_status from_typed(vn_pb *pb, const vn_onnx_tensor *t, vn_gconst *out, int64_t numel)
{
    const vn_pb_list *l = typed_field(t);
    if (l->count != numel) {
        char msg[200];
        snprintf(msg, sizeof msg, "has %d typed elements, its dims need %lld", (int)l->count,
                 (long long)numel);
        return tensor_fail(pb, t, VN_ERR_FORMAT, msg);
    }
    for (int64_t i = 0; i < numel; i++) {
        elem e = typed_elem(t->data_type, l->items[i]);
        store(out->desc.dtype, out->data, i, e);
    }
    return VN_OK;
}

static vn_status check_kind(vn_pb *pb, const vn_onnx_tensor *t, vn_dtype *dt, size_t *eb)
{
    char msg[160];
    if (t->has_segment) return tensor_fail(pb, t, VN_ERR_UNSUPPORTED, "segmented tensors");
    if (!vn_onnx_dtype(t->data_type, dt, eb)) {
        snprintf(msg, sizeof msg, "element type %s (%d) is not supported",
                 vn_onnx_dtype_name(t->data_type), (int)t->data_type);
        return tensor_fail(pb, t, t->data_type == 0 ? VN_ERR_FORMAT : VN_ERR_UNSUPPORTED, msg);
    }
    return VN_OK;
}

vn_status vn_onnx_tensor_data(vn_pb *pb, const vn_onnx_tensor *t, vn_graph *g, vn_gconst *out)
{
    vn_dtype dt;
    size_t eb = 0;
    int64_t numel = 0;
    vn_status st = check_kind(pb, t, &dt, &eb);
    if (st == VN_OK) st = make_desc(pb, t, dt, &out->desc, &numel);
    if (st != VN_OK) return st;
    out->name = t->name;
    out->onnx_dtype = t->data_type;
    size_t need = (size_t)numel * eb; /* numel <= 2^40, eb <= 8: no overflow */
    if (t->has_raw && t->raw_len != need) {
        char msg[200];
        snprintf(msg, sizeof msg, "raw_data has %zu bytes, its dims need %zu (%lld x %zu)",
                 t->raw_len, need, (long long)numel, eb);
        return tensor_fail(pb, t, VN_ERR_FORMAT, msg);
    }
    const uint8_t *src = t->has_raw ? pb->buf + t->raw_pos : NULL;
    void *ext = NULL;
    if (t->external && (st = vn_onnx_external_read(pb, t, g, need, &ext)) != VN_OK) return st;
    if (ext) src = ext;
    out->nbytes = (size_t)numel * vn_dtype_size(dt);
    out->data = numel ? vn_gmem_alloc(&g->mem, out->nbytes) : NULL;
    if (numel && !out->data)
        st = VN_ERR_OUT_OF_MEMORY;
    else if (numel && src)
        st = convert_bytes(pb, t, src, eb, out, numel);
    else if (numel)
        st = from_typed(pb, t, out, numel);
    free(ext);
    return st;
}
