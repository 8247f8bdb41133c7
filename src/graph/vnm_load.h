/*
 * vnm_load.h — the .vnm loader's shared state. The loader treats the file as
 * untrusted: vnm_file.c checks the header, table and hashes; vnm_read.c
 * turns the records into the model's arrays, checking every offset, size,
 * count, index and string first; vnm_blobs.c checks the packed-constant
 * records; vnm_replan.c re-infers and re-plans every node (around its blobs
 * when it has some) and checks the memory plan. Every failure is VN_ERR_FORMAT naming the
 * byte offset of the field at fault (vn_vnm_bad).
 */
#ifndef VINCI_GRAPH_VNM_LOAD_H
#define VINCI_GRAPH_VNM_LOAD_H

#include "graph/vnm.h"

/* What a loaded model keeps of its file (vn_model.release_arg). */
typedef struct vnm_file {
    void *map; /* the mapping (NULL for vn_vnm_load_bytes) */
    size_t map_size;
    vn_model_file_info info;
} vnm_file;

typedef struct vnm_loader {
    const uint8_t *base;
    uint64_t size;
    const char *name;
    const char *api;      /* the public call errors name; NULL: "vn_model_load" */
    int32_t hash_threads; /* threads for the payload hash */
    uint64_t off[VNM_SEC_END], len[VNM_SEC_END]; /* per section type */
    const vnm_meta *meta;
    const vnm_plan *plan;
    const vnm_options *options;
    const int32_t *indices;
    uint64_t num_indices;
    vn_model *m;
    vnm_file *file;
    uint8_t *produced; /* per value: written by a node already (vnm_replan.c) */
    /* per node (vnm_blobs.c): its first record in BLOBS, how many, and the
     * inputs they replace (0 when the node has none) */
    uint32_t *blob_first, *blob_count;
    uint64_t *consumed;
} vnm_loader;

/* VN_ERR_FORMAT "name: byte N: what". */
vn_status vn_vnm_bad(const vnm_loader *ld, uint64_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A string reference read from the field at byte `at`. */
vn_status vn_vnm_string(const vnm_loader *ld, uint32_t ref, uint64_t at, const char **out);

/* Map a whole file read-only (MAP_POPULATE); *map is NULL for an empty file.
 * Errors are VN_ERR_IO naming the path. (vnm_load.c) */
vn_status vn_vnm_map_file(const char *path, void **map, size_t *size);

vn_status vn_vnm_check_file(vnm_loader *ld); /* vnm_file.c */
vn_status vn_vnm_read_model(vnm_loader *ld); /* vnm_read.c */
vn_status vn_vnm_read_attrs(vnm_loader *ld, const vnm_node *r, uint64_t at,
                            vn_cnode *n);    /* vnm_attrs.c */
vn_status vn_vnm_read_blobs(vnm_loader *ld); /* vnm_blobs.c */
/* Node i's blobs as the operator sees them (at most VN_OP_MAX_BLOBS). */
int32_t vn_vnm_node_blobs(const vnm_loader *ld, int32_t i, vn_op_blob *blobs);
vn_status vn_vnm_replan(vnm_loader *ld); /* vnm_replan.c */

#endif /* VINCI_GRAPH_VNM_LOAD_H */
