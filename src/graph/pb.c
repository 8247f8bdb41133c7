/*
 * pb.c — the protobuf wire format: varints, fixed 32/64-bit values,
 * length-delimited payloads; every length checked against the message that
 * holds it before anything is read.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph/pb.h"

static const char *const wire_names[8] = {"varint",    "64-bit", "length-delimited", "group start",
                                          "group end", "32-bit", "invalid 6",        "invalid 7"};

vn_pb_msg vn_pb_root(const vn_pb *pb)
{
    return (vn_pb_msg){0, pb->size};
}

const char *vn_pb_path(const vn_pb *pb, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < pb->depth && used < size; i++) {
        const vn_pb_frame *fr = &pb->path[i];
        int n = fr->index >= 0 ? snprintf(buf + used, size - used, "%s%s[%lld]", i ? "." : "",
                                          fr->field, (long long)fr->index)
                               : snprintf(buf + used, size - used, "%s%s", i ? "." : "", fr->field);
        if (n < 0) break;
        used += (size_t)n;
    }
    if (!buf[0]) snprintf(buf, size, "model");
    return buf;
}

vn_status vn_pb_fail(vn_pb *pb, size_t offset, const char *fmt, ...)
{
    char path[384], what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return vn_error(VN_ERR_FORMAT, pb->file, "byte %zu: %s: %s", offset,
                    vn_pb_path(pb, path, sizeof path), what);
}

vn_status vn_pb_push(vn_pb *pb, size_t offset, const char *field, int64_t index)
{
    if (pb->depth >= VN_PB_MAX_DEPTH)
        return vn_pb_fail(pb, offset, "messages nested deeper than %d levels", VN_PB_MAX_DEPTH);
    pb->path[pb->depth++] = (vn_pb_frame){field, index};
    return VN_OK;
}

/* A varint at msg->pos, at most 10 bytes, the 10th holding only bit 63. */
static vn_status read_varint(vn_pb *pb, vn_pb_msg *msg, const char *what, uint64_t *out)
{
    size_t start = msg->pos;
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (msg->pos >= msg->end)
            return vn_pb_fail(pb, start, "%s: varint runs past the end of its message (byte %zu)",
                              what, msg->end);
        uint8_t b = pb->buf[msg->pos++];
        if (i == 9 && (b & 0x80))
            return vn_pb_fail(pb, start, "%s: varint longer than 10 bytes", what);
        if (i == 9 && b > 1) return vn_pb_fail(pb, start, "%s: varint overflows 64 bits", what);
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return VN_OK;
        }
    }
    return vn_pb_fail(pb, start, "%s: varint longer than 10 bytes", what);
}

static vn_status read_fixed(vn_pb *pb, vn_pb_msg *msg, size_t bytes, uint64_t *out)
{
    if (msg->end - msg->pos < bytes)
        return vn_pb_fail(pb, msg->pos,
                          "%zu-byte value runs past the end of its message (byte %zu)", bytes,
                          msg->end);
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++) v |= (uint64_t)pb->buf[msg->pos + i] << (8 * i);
    msg->pos += bytes;
    *out = v;
    return VN_OK;
}

static vn_status read_payload(vn_pb *pb, vn_pb_msg *msg, vn_pb_field *f)
{
    size_t at = msg->pos;
    uint64_t len;
    vn_status st = read_varint(pb, msg, "length", &len);
    if (st != VN_OK) return st;
    if (len > msg->end - msg->pos)
        return vn_pb_fail(pb, at,
                          "field %u: length %llu runs past the end (%zu bytes left in the message, "
                          "file has %zu bytes)",
                          f->number, (unsigned long long)len, msg->end - msg->pos, pb->size);
    f->data = msg->pos;
    f->len = (size_t)len;
    msg->pos += (size_t)len;
    return VN_OK;
}

vn_status vn_pb_next(vn_pb *pb, vn_pb_msg *msg, vn_pb_field *f, bool *has)
{
    *has = false;
    if (msg->pos >= msg->end) return VN_OK;
    memset(f, 0, sizeof *f);
    f->offset = msg->pos;
    uint64_t tag;
    vn_status st = read_varint(pb, msg, "tag", &tag);
    if (st != VN_OK) return st;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (uint32_t)(tag & 7);
    if (f->number == 0 || tag >> 3 > 0x1fffffff)
        return vn_pb_fail(pb, f->offset, "invalid field number %llu",
                          (unsigned long long)(tag >> 3));
    switch (f->wire) {
    case VN_PB_VARINT:
        st = read_varint(pb, msg, "value", &f->u);
        break;
    case VN_PB_I64:
        st = read_fixed(pb, msg, 8, &f->u);
        break;
    case VN_PB_I32:
        st = read_fixed(pb, msg, 4, &f->u);
        break;
    case VN_PB_LEN:
        st = read_payload(pb, msg, f);
        break;
    default:
        /* Groups were never used by ONNX; refusing them keeps skipping simple. */
        return vn_pb_fail(pb, f->offset, "field %u has wire type %u (%s), not used by ONNX",
                          f->number, f->wire, wire_names[f->wire & 7]);
    }
    if (st == VN_OK) *has = true;
    return st;
}

static vn_status wrong_wire(vn_pb *pb, const vn_pb_field *f, const char *name, uint32_t want)
{
    return vn_pb_fail(pb, f->offset, "field '%s' (%u) is %s, expected %s", name, f->number,
                      wire_names[f->wire & 7], wire_names[want & 7]);
}

vn_status vn_pb_int(vn_pb *pb, const vn_pb_field *f, const char *name, int64_t *out)
{
    if (f->wire != VN_PB_VARINT) return wrong_wire(pb, f, name, VN_PB_VARINT);
    *out = (int64_t)f->u;
    return VN_OK;
}

vn_status vn_pb_int32(vn_pb *pb, const vn_pb_field *f, const char *name, int32_t *out)
{
    int64_t v;
    vn_status st = vn_pb_int(pb, f, name, &v);
    if (st != VN_OK) return st;
    if (v < INT32_MIN || v > INT32_MAX)
        return vn_pb_fail(pb, f->offset, "field '%s': %lld does not fit 32 bits", name,
                          (long long)v);
    *out = (int32_t)v;
    return VN_OK;
}

vn_status vn_pb_float(vn_pb *pb, const vn_pb_field *f, const char *name, float *out)
{
    if (f->wire != VN_PB_I32) return wrong_wire(pb, f, name, VN_PB_I32);
    uint32_t bits = (uint32_t)f->u;
    memcpy(out, &bits, sizeof bits);
    return VN_OK;
}

vn_status vn_pb_sub(vn_pb *pb, const vn_pb_field *f, const char *name, vn_pb_msg *out)
{
    if (f->wire != VN_PB_LEN) return wrong_wire(pb, f, name, VN_PB_LEN);
    *out = (vn_pb_msg){f->data, f->data + f->len};
    return VN_OK;
}

vn_status vn_pb_string(vn_pb *pb, const vn_pb_field *f, const char *name, vn_gmem *m,
                       const char **out)
{
    if (f->wire != VN_PB_LEN) return wrong_wire(pb, f, name, VN_PB_LEN);
    if (memchr(pb->buf + f->data, 0, f->len))
        return vn_pb_fail(pb, f->data, "field '%s': string holds a NUL byte", name);
    char *s = vn_gmem_strndup(m, (const char *)pb->buf + f->data, f->len);
    if (!s) return VN_ERR_OUT_OF_MEMORY;
    *out = s;
    return VN_OK;
}

static vn_status list_reserve(vn_pb *pb, const vn_pb_field *f, const char *name, vn_gmem *m,
                              vn_pb_list *list, uint64_t more)
{
    if (more > (uint64_t)(VN_PB_MAX_ELEMS - list->count))
        return vn_pb_fail(pb, f->offset, "field '%s': more than %d elements", name,
                          VN_PB_MAX_ELEMS);
    void *items = list->items;
    if (vn_gmem_grow(m, &items, &list->cap, list->count + (int32_t)more, sizeof(uint64_t)))
        return VN_ERR_OUT_OF_MEMORY;
    list->items = items;
    return VN_OK;
}

static vn_status read_packed(vn_pb *pb, const vn_pb_field *f, vn_pb_scalar kind, const char *name,
                             vn_gmem *m, vn_pb_list *list)
{
    size_t width = kind == VN_PB_S_FIXED32 ? 4 : kind == VN_PB_S_FIXED64 ? 8 : 0;
    if (width && f->len % width)
        return vn_pb_fail(pb, f->offset, "field '%s': packed length %zu is not a multiple of %zu",
                          name, f->len, width);
    /* For varints the element count is at most the byte count. */
    uint64_t most = width ? f->len / width : f->len;
    vn_status st = list_reserve(pb, f, name, m, list, most);
    if (st != VN_OK) return st;
    vn_pb_msg body = {f->data, f->data + f->len};
    while (body.pos < body.end && st == VN_OK) {
        uint64_t v;
        st = width ? read_fixed(pb, &body, width, &v) : read_varint(pb, &body, name, &v);
        if (st == VN_OK) list->items[list->count++] = v;
    }
    return st;
}

vn_status vn_pb_repeated(vn_pb *pb, const vn_pb_field *f, vn_pb_scalar kind, const char *name,
                         vn_gmem *m, vn_pb_list *list)
{
    uint32_t want = kind == VN_PB_S_FIXED32   ? VN_PB_I32
                    : kind == VN_PB_S_FIXED64 ? VN_PB_I64
                                              : VN_PB_VARINT;
    if (f->wire == VN_PB_LEN) return read_packed(pb, f, kind, name, m, list);
    if (f->wire != want) return wrong_wire(pb, f, name, want);
    vn_status st = list_reserve(pb, f, name, m, list, 1);
    if (st == VN_OK) list->items[list->count++] = f->u;
    return st;
}
