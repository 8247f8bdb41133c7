/*
 * gmem.h — the graph's memory: every string, array and constant of a graph
 * comes from one arena and is freed at once with it, so the reader never has
 * to unwind half-built structures on an error.
 */
#ifndef VINCI_GRAPH_GMEM_H
#define VINCI_GRAPH_GMEM_H

#include <stddef.h>
#include <stdint.h>

typedef struct vn_gmem_chunk vn_gmem_chunk;

typedef struct vn_gmem {
    vn_gmem_chunk *chunks; /* newest first; the first has room left */
    size_t total;          /* bytes held, for the limit */
} vn_gmem;

/* Zeroed memory aligned to 64 bytes (so constants can feed kernels directly);
 * NULL and an error message when out of memory. Invariant: every pointer
 * handed out stays valid until vn_gmem_free. */
void *vn_gmem_alloc(vn_gmem *m, size_t bytes);
/* A NUL-terminated copy of `len` bytes. */
char *vn_gmem_strndup(vn_gmem *m, const char *s, size_t len);
/* Grow an array of `*cap` elements to hold at least `need` (doubling; the old
 * block is copied, not freed). Returns 0 on success. */
int vn_gmem_grow(vn_gmem *m, void **array, int32_t *cap, int32_t need, size_t elem);
void vn_gmem_free(vn_gmem *m);

#endif /* VINCI_GRAPH_GMEM_H */
