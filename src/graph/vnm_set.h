/*
 * vnm_set.h — a set of loaded offline models, one per input-shape set
 * (vinci/graph.h vn_model_set; the file format is in vnm.h). vnm_set.c
 * picks and checks, vnm_set_write.c writes, vnm_set_load.c loads.
 */
#ifndef VINCI_GRAPH_VNM_SET_H
#define VINCI_GRAPH_VNM_SET_H

#include "graph/vnm.h"

struct vn_model_set {
    void *map; /* the file mapping every model's bytes live in */
    size_t map_size;
    int32_t count;
    vn_model **models;
};

/* The models agree on input and output names, dtypes and ranks, and no two
 * have the same input shapes; otherwise `fail` (VN_ERR_INVALID_ARG for a
 * writer, VN_ERR_FORMAT for a loaded file) from `where` naming `path`. */
vn_status vn_vnm_set_check(const vn_model *const *models, int32_t count, vn_status fail,
                           const char *where, const char *path);

#endif /* VINCI_GRAPH_VNM_SET_H */
