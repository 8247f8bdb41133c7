/*
 * pb.h — a protobuf wire-format reader for untrusted bytes. No schema and no
 * code generator: the ONNX decoders walk fields with vn_pb_next and read each
 * one with the typed accessors, which check the wire type.
 *
 * Invariants: every position is an offset into buf; a message region
 * [pos, end) always lies within [0, size); no accessor reads past `end` of the
 * region it was given. Every error is VN_ERR_FORMAT and reads
 * "<file>: byte <offset>: <field path>: <what>".
 */
#ifndef VINCI_GRAPH_PB_H
#define VINCI_GRAPH_PB_H

#include <stdint.h>

#include "graph/gmem.h"
#include "vinci/base.h"

#define VN_PB_MAX_DEPTH 48 /* nested messages, subgraphs included */

enum { VN_PB_VARINT = 0, VN_PB_I64 = 1, VN_PB_LEN = 2, VN_PB_I32 = 5 };

typedef struct vn_pb_frame {
    const char *field;
    int64_t index; /* -1 for a field that is not repeated */
} vn_pb_frame;

typedef struct vn_pb {
    const uint8_t *buf;
    size_t size;
    const char *file; /* for messages */
    vn_pb_frame path[VN_PB_MAX_DEPTH];
    int32_t depth;
} vn_pb;

/* A message: the bytes [pos, end) of buf; pos advances as fields are read. */
typedef struct vn_pb_msg {
    size_t pos, end;
} vn_pb_msg;

typedef struct vn_pb_field {
    uint32_t number, wire;
    size_t offset;    /* of the tag */
    uint64_t u;       /* VARINT, I64 and I32 values (raw bits) */
    size_t data, len; /* LEN: the payload */
} vn_pb_field;

/* The whole buffer as the top-level message. */
vn_pb_msg vn_pb_root(const vn_pb *pb);

/* Read the next field; *has = false at the end of the message. Unknown
 * fields are the caller's to skip (it simply ignores them: the payload has
 * already been stepped over). */
vn_status vn_pb_next(vn_pb *pb, vn_pb_msg *msg, vn_pb_field *f, bool *has);

/* Format an error at `offset` under the current path. */
vn_status vn_pb_fail(vn_pb *pb, size_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The current path as text, e.g. "graph.node[5].attribute[2]". */
const char *vn_pb_path(const vn_pb *pb, char *buf, size_t size);

/* Enter / leave a field; entering past VN_PB_MAX_DEPTH is an error. */
vn_status vn_pb_push(vn_pb *pb, size_t offset, const char *field, int64_t index);
static inline void vn_pb_pop(vn_pb *pb)
{
    pb->depth--;
}

/* Typed reads of one field (the wire type is checked; `name` is the field's
 * name for messages). */
vn_status vn_pb_int(vn_pb *pb, const vn_pb_field *f, const char *name, int64_t *out);
vn_status vn_pb_int32(vn_pb *pb, const vn_pb_field *f, const char *name, int32_t *out);
vn_status vn_pb_float(vn_pb *pb, const vn_pb_field *f, const char *name, float *out);
vn_status vn_pb_sub(vn_pb *pb, const vn_pb_field *f, const char *name, vn_pb_msg *out);
vn_status vn_pb_string(vn_pb *pb, const vn_pb_field *f, const char *name, vn_gmem *m,
                       const char **out);

/* A repeated scalar field, packed or not: elements appended as raw 64-bit
 * values (varints as read, floats / doubles as their bits). */
typedef enum vn_pb_scalar { VN_PB_S_VARINT, VN_PB_S_FIXED32, VN_PB_S_FIXED64 } vn_pb_scalar;
typedef struct vn_pb_list {
    uint64_t *items;
    int32_t count, cap;
} vn_pb_list;
#define VN_PB_MAX_ELEMS (INT32_MAX / 2)
vn_status vn_pb_repeated(vn_pb *pb, const vn_pb_field *f, vn_pb_scalar kind, const char *name,
                         vn_gmem *m, vn_pb_list *list);

#endif /* VINCI_GRAPH_PB_H */
