/*
 * gmem.c — a chunked bump allocator. Small requests share 64 KiB chunks;
 * large ones (constants) get a chunk of their own so no space is wasted.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/gmem.h"
#include "vinci/base.h"

#define CHUNK_BYTES (64 * 1024)
#define ALIGN       64

struct vn_gmem_chunk {
    vn_gmem_chunk *next;
    size_t used, size; /* bytes of data[] */
    _Alignas(ALIGN) unsigned char data[];
};

static vn_gmem_chunk *chunk_new(size_t size)
{
    if (size > SIZE_MAX - sizeof(vn_gmem_chunk) - ALIGN) return NULL;
    vn_gmem_chunk *c = vn_aligned_alloc(sizeof *c + size, ALIGN);
    if (!c) return NULL;
    c->next = NULL;
    c->used = 0;
    c->size = size;
    return c;
}

void *vn_gmem_alloc(vn_gmem *m, size_t bytes)
{
    size_t need = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    if (need < bytes) goto oom;
    vn_gmem_chunk *c = m->chunks;
    if (!c || c->size - c->used < need) {
        bool own = need > CHUNK_BYTES / 4;
        vn_gmem_chunk *n = chunk_new(own ? need : CHUNK_BYTES);
        if (!n) goto oom;
        m->total += n->size;
        if (own && c) { /* keep the partly used small chunk first */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            m->chunks = n;
        }
        c = n;
    }
    void *p = c->data + c->used;
    c->used += need;
    memset(p, 0, bytes);
    return p;
oom:
    vn_error(VN_ERR_OUT_OF_MEMORY, "vn_graph", "no memory for %zu bytes (graph holds %zu)", bytes,
             m->total);
    return NULL;
}

char *vn_gmem_strndup(vn_gmem *m, const char *s, size_t len)
{
    char *d = vn_gmem_alloc(m, len + 1);
    if (d && len) memcpy(d, s, len);
    return d;
}

int vn_gmem_grow(vn_gmem *m, void **array, int32_t *cap, int32_t need, size_t elem)
{
    if (need <= *cap) return 0;
    int64_t n = *cap ? (int64_t)*cap * 2 : 8;
    while (n < need) n *= 2;
    if (n > INT32_MAX) n = INT32_MAX;
    void *a = vn_gmem_alloc(m, (size_t)n * elem);
    if (!a) return -1;
    if (*cap) memcpy(a, *array, (size_t)*cap * elem);
    *array = a;
    *cap = (int32_t)n;
    return 0;
}

void vn_gmem_free(vn_gmem *m)
{
    vn_gmem_chunk *c = m->chunks;
    while (c) {
        vn_gmem_chunk *n = c->next;
        vn_aligned_free(c);
        c = n;
    }
    m->chunks = NULL;
    m->total = 0;
}
