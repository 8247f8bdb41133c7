/*
 * vnm.h — the .vnm offline model file: a compiled model (compile.h) written
 * as it is, loaded by mapping the file and re-planning each node.
 *
 * Layout (all integers little-endian, every record naturally aligned):
 *
 *   offset 0   vnm_header (64 bytes): magic "VINCIVNM", version, byte-order
 *              mark, file size, section count, header hash, payload hash
 *   offset 64  vnm_section[num_sections] (24 bytes each): type, offset, size
 *   ...        sections, each at a 64-byte aligned offset, in table order,
 *              not overlapping, every type present exactly once:
 *     STRINGS   NUL-terminated strings; a string is a u32 byte offset into it
 *               (the section's last byte is NUL, so any in-range offset is
 *               terminated inside the section)
 *     META      vnm_meta: producer, its version, source model, model io lists
 *     OPTIONS   vnm_options + vnm_shape[num_shapes]: how it was compiled
 *     PLAN      vnm_plan: arena and workspace sizes, compile statistics
 *     VALUES    vnm_value[]: name, kind, dtype, shape, memory class, offset
 *     NODES     vnm_node[]: op type, domain, attribute and index ranges, and
 *               the fused_from list the profiler shows (version 3)
 *     INDICES   int32[]: node inputs then outputs; the model inputs, outputs
 *     ATTRS     vnm_attr[]: every vn_attr type (ints, floats, strings, tensor)
 *     ATTRDATA  attribute arrays (8-byte aligned) and tensor data (64-aligned)
 *     WEIGHTS   constant values' bytes, raw, each 64-byte aligned: the loader
 *               uses them in place (read-only mapping). A constant every
 *               reader of which holds it packed (BLOBS) is not stored at all.
 *               Constants with the same bytes (a view of a constant) share them.
 *     (Views: an activation whose memory is its input's, class ARENA at the
 *     same offset or class INPUT with the same io index, is a view's alias:
 *     the node stays and runs as a pointer copy; see compile_views.c. A
 *     Concat whose inputs lie at consecutive offsets of its output from the
 *     output's own is built in place and runs nothing; compile_concat.c.)
 *     BLOBS     vnm_blob[]: per node with an operator pre-pack hook
 *               (vinci/ops.h), its plan's packed constants, sorted by node
 *               then blob number, and the inputs they replace
 *     PACKED    the blobs' bytes, each 64-byte aligned, used in place: a load
 *               re-creates such a plan around them (no copy, no repack)
 *
 * header_hash: FNV-1a 64 over the header (header_hash field zeroed) and the
 * section table. payload_hash: vn_vnm_hash over [end of table, file_size)
 * (version 2: chunked, see below).
 *
 * Plans hold pointers, so they are never stored: the loader re-runs each
 * node's infer (the stored output shapes must match) and plan, or for a
 * node with blobs its operator's plan_from_blobs, which checks each blob's
 * size and layout against what the shapes need. Older versions (1: raw
 * weights only; 2: no fused_from) are refused: recompile the model.
 */
#ifndef VINCI_GRAPH_VNM_H
#define VINCI_GRAPH_VNM_H

#include "graph/compile.h"

#define VNM_MAGIC      "VINCIVNM"
#define VNM_VERSION    3u
#define VNM_BYTE_ORDER 0x01020304u
#define VNM_ALIGN      64u
#define VNM_NO_STRING  0u /* offset 0 of STRINGS is always "" */

enum {
    VNM_SEC_STRINGS = 1,
    VNM_SEC_META,
    VNM_SEC_OPTIONS,
    VNM_SEC_PLAN,
    VNM_SEC_VALUES,
    VNM_SEC_NODES,
    VNM_SEC_INDICES,
    VNM_SEC_ATTRS,
    VNM_SEC_ATTRDATA,
    VNM_SEC_WEIGHTS,
    VNM_SEC_BLOBS,
    VNM_SEC_PACKED,
    VNM_SEC_END /* one past the last type */
};
#define VNM_NUM_SECTIONS (VNM_SEC_END - 1)

typedef struct vnm_header {
    char magic[8];
    uint32_t version;
    uint32_t byte_order;
    uint64_t file_size;
    uint32_t num_sections;
    uint32_t reserved0;
    uint64_t payload_hash;
    uint64_t header_hash;
    uint8_t reserved[16];
} vnm_header;

typedef struct vnm_section {
    uint32_t type;
    uint32_t reserved;
    uint64_t offset, size;
} vnm_section;

typedef struct vnm_meta {
    uint32_t producer, producer_version, source; /* strings */
    uint32_t num_inputs, num_outputs;
    uint32_t inputs_first, outputs_first; /* into INDICES */
    uint32_t reserved;
} vnm_meta;

typedef struct vnm_options {
    int32_t opt_level;
    int32_t precision; /* vn_precision compiled with (the nodes' compute attributes carry it) */
    uint32_t num_shapes;
    uint32_t reserved;
} vnm_options;

typedef struct vnm_shape {
    uint32_t name;
    int32_t rank;
    int64_t dims[VN_MAX_RANK];
} vnm_shape;

typedef struct vnm_plan {
    uint64_t arena_bytes, workspace_bytes, activation_bytes, inplace_count, constant_bytes;
    int32_t nodes_before, nodes_after;
    double compile_ms;
} vnm_plan;

typedef struct vnm_value {
    uint32_t name;
    int32_t kind; /* VN_CV_* */
    int32_t dtype;
    int32_t rank; /* -1: never known (an unread anonymous output) */
    int64_t dims[VN_MAX_RANK];
    int32_t mem;      /* VN_MEM_* */
    int32_t io_index; /* INPUT / OUTPUT: position in the io list; CONST: VNM_CONST_PACKED
                         when the raw bytes are not stored (every reader holds them
                         packed, see BLOBS), else 0 */
    uint64_t offset;  /* VN_MEM_ARENA: in the arena; VN_MEM_CONST: in WEIGHTS */
    uint64_t nbytes;  /* VN_MEM_CONST */
} vnm_value;

typedef struct vnm_node {
    uint32_t name, op_type, domain;
    uint32_t num_inputs, num_outputs, num_attrs;
    uint32_t first_index, first_attr;
    uint32_t fused_from; /* "a;b;c": the source nodes of a fused node, "" if none (v3) */
    uint32_t reserved;   /* 0 */
} vnm_node;

typedef struct vnm_attr {
    uint32_t name;
    int32_t type; /* vn_attr_type */
    int32_t count;
    uint32_t s;
    int64_t i;
    double f;
    uint64_t data; /* offset in ATTRDATA: ints, floats, u32 string refs or tensor bytes */
    int32_t dtype, rank;
    int64_t dims[VN_MAX_RANK];
    uint64_t nbytes; /* tensor data bytes */
} vnm_attr;

#define VNM_CONST_PACKED 1

typedef struct vnm_blob {
    uint32_t node;   /* node index */
    uint32_t index;  /* blob number within the node: 0, 1, ... */
    uint32_t layout; /* string: what the bytes are (vn_op_blob.layout) */
    uint32_t reserved;
    uint64_t consumed;     /* inputs the node's plan no longer reads (equal on a node's blobs) */
    uint64_t offset, size; /* in PACKED; offset 64-byte aligned */
} vnm_blob;

_Static_assert(sizeof(vnm_blob) == 40, "vnm_blob is 40 bytes");
_Static_assert(sizeof(vnm_header) == 64, "vnm_header is 64 bytes");
_Static_assert(sizeof(vnm_section) == 24, "vnm_section is 24 bytes");
_Static_assert(sizeof(vnm_value) == 104 && sizeof(vnm_node) == 40 && sizeof(vnm_attr) == 120,
               "record sizes are part of the format");
_Static_assert(sizeof(vnm_meta) == 32 && sizeof(vnm_options) == 16 && sizeof(vnm_shape) == 72 &&
                   sizeof(vnm_plan) == 56,
               "record sizes are part of the format");

/* ---- shape-set files: one compiled model per input-shape set ----
 *
 *   offset 0    vnm_set_header (64 bytes): magic "VINCISET", version, byte-order
 *               mark, file size, model count, header hash
 *   offset 64   vnm_set_entry[count] (16 bytes each): offset, size of a model
 *   ...         the models: complete .vnm images (above), each at a
 *               VNM_SET_ALIGN-aligned offset, in table order, not overlapping
 *
 * header_hash: FNV-1a 64 over the header (header_hash zeroed) and the table;
 * each image carries its own hashes. Every model has the same input and
 * output names, dtypes and ranks, and no two have the same input shapes
 * (the writer refuses it, the loader checks it). Each image holds its own
 * weights: a file with N shape sets is about N times a single one. */
#define VNM_SET_MAGIC     "VINCISET"
#define VNM_SET_VERSION   1u
#define VNM_SET_ALIGN     4096u /* a page: each image maps like a file of its own */
#define VNM_SET_MAX_COUNT 256u

typedef struct vnm_set_header {
    char magic[8];
    uint32_t version;
    uint32_t byte_order;
    uint64_t file_size;
    uint32_t count;
    uint32_t reserved0;
    uint64_t header_hash;
    uint8_t reserved[24];
} vnm_set_header;

typedef struct vnm_set_entry {
    uint64_t offset, size;
} vnm_set_entry;

_Static_assert(sizeof(vnm_set_header) == 64 && sizeof(vnm_set_entry) == 16,
               "record sizes are part of the format");

/* A model's whole .vnm image (malloc'ed), as vn_model_save writes it; `path`
 * is for messages. vn_vnm_write_file writes an image, removing a partial file
 * on failure. (vnm_write.c) */
vn_status vn_vnm_image(const vn_model *m, const char *path, uint8_t **out, size_t *size);
vn_status vn_vnm_write_file(const char *path, const uint8_t *img, size_t size);

/* The payload hash: per 1 MiB chunk four interleaved FNV-1a 64 lanes over
 * 64-bit words folded with the chunk's tail bytes (so it runs at memory
 * speed), then FNV-1a 64 over the chunk hashes and the length. _mt hashes
 * the chunks on up to `threads` threads: the same value. */
#define VNM_HASH_CHUNK ((size_t)1 << 20)
uint64_t vn_vnm_hash(const void *data, size_t size);
uint64_t vn_vnm_hash_mt(const void *data, size_t size, int threads);
/* FNV-1a 64, byte at a time (the header hash). */
uint64_t vn_vnm_fnv1a(uint64_t h, const void *data, size_t size);
#define VNM_FNV_BASIS 0xcbf29ce484222325ull

/* Recompute both hashes of a file image in place (tests corrupt a field and
 * re-seal the file so the structural checks behind the hashes are reached).
 * Does nothing to an image too small for its header and table. */
void vn_vnm_reseal(void *bytes, size_t size);

/* Load from bytes in memory, used in place: they must be 64-byte aligned and
 * outlive the model. `name` is used in messages. */
vn_status vn_vnm_load_bytes(const void *bytes, size_t size, const char *name, vn_device *device,
                            vn_model **out);

#endif /* VINCI_GRAPH_VNM_H */
