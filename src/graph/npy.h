/*
 * npy.h — what the .npy reader and writer share: the dtype names NumPy uses.
 */
#ifndef VINCI_GRAPH_NPY_H
#define VINCI_GRAPH_NPY_H

#include "vinci/graph.h"

/* NumPy's descr for a vinci dtype ("<f4", "|b1", "<V2" for bf16). */
const char *vn_npy_descr(vn_dtype dtype);

#endif /* VINCI_GRAPH_NPY_H */
