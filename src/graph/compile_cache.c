/*
 * compile_cache.c — one compiled model per input-shape set, compiled on first
 * use. The shapes the caller gives determine every other input's shape (the
 * rest are declared or bound through symbols), so the given set, compared
 * by name regardless of order, is the key.
 *
 * Invariant: entries are only appended, and a model is never freed before
 * the cache, so a returned model stays valid. `lock` serialises compiles
 * (compiling re-binds the graph's input shapes) and the entry list.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "graph/compile.h"

typedef struct entry {
    vn_input_shape *shapes; /* names owned by the entry */
    int32_t num_shapes;
    vn_model *model;
} entry;

struct vn_model_cache {
    vn_graph *graph;
    vn_compile_options options;
    pthread_mutex_t lock;
    entry *entries;
    int32_t num_entries, cap_entries;
};

vn_status vn_model_cache_create(vn_graph *graph, const vn_compile_options *options,
                                vn_model_cache **out)
{
    if (!graph || !out)
        return vn_error(VN_ERR_INVALID_ARG, "vn_model_cache_create", "NULL argument");
    vn_model_cache *c = calloc(1, sizeof *c);
    if (!c) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_cache_create", "no memory");
    c->graph = graph;
    c->options = options ? *options : (vn_compile_options){1, NULL, NULL, 0};
    c->options.shapes = NULL;
    c->options.num_shapes = 0;
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return VN_OK;
}

static bool same_shape(const vn_input_shape *a, const vn_input_shape *b)
{
    if (a->rank != b->rank || strcmp(a->name, b->name)) return false;
    for (int32_t d = 0; d < a->rank && d < VN_MAX_RANK; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static bool matches(const entry *e, const vn_input_shape *s, int32_t n)
{
    if (e->num_shapes != n) return false;
    for (int32_t i = 0; i < n; i++) {
        bool found = false;
        for (int32_t j = 0; j < n && !found; j++)
            found = s[i].name && same_shape(&e->shapes[j], &s[i]);
        if (!found) return false;
    }
    return true;
}

static vn_status add_entry(vn_model_cache *c, const vn_input_shape *s, int32_t n, vn_model *m)
{
    if (c->num_entries == c->cap_entries) {
        int32_t cap = c->cap_entries ? c->cap_entries * 2 : 8;
        entry *e = realloc(c->entries, (size_t)cap * sizeof *e);
        if (!e) return VN_ERR_OUT_OF_MEMORY;
        c->entries = e;
        c->cap_entries = cap;
    }
    entry *e = &c->entries[c->num_entries];
    e->shapes = calloc((size_t)n + 1, sizeof *e->shapes);
    if (!e->shapes) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < n; i++) {
        e->shapes[i] = s[i];
        e->shapes[i].name = strdup(s[i].name);
        if (!e->shapes[i].name) {
            for (int32_t j = 0; j < i; j++) free((void *)e->shapes[j].name);
            free(e->shapes);
            return VN_ERR_OUT_OF_MEMORY;
        }
    }
    e->num_shapes = n;
    e->model = m;
    c->num_entries++;
    return VN_OK;
}

static vn_status get_locked(vn_model_cache *c, const vn_input_shape *s, int32_t n,
                            const vn_model **out)
{
    for (int32_t i = 0; i < c->num_entries; i++)
        if (matches(&c->entries[i], s, n)) {
            *out = c->entries[i].model;
            return VN_OK;
        }
    for (int32_t i = 0; i < n; i++)
        if (!s[i].name || s[i].rank < 0 || s[i].rank > VN_MAX_RANK)
            return vn_error(VN_ERR_INVALID_ARG, "vn_model_cache_get", "shape %d is invalid",
                            (int)i);
    vn_compile_options o = c->options;
    o.shapes = s;
    o.num_shapes = n;
    vn_model *m;
    vn_status st = vn_model_compile(c->graph, &o, &m);
    if (st != VN_OK) return st;
    if (add_entry(c, s, n, m) != VN_OK) {
        vn_model_destroy(m);
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_cache_get", "no memory");
    }
    *out = m;
    return VN_OK;
}

vn_status vn_model_cache_get(vn_model_cache *c, const vn_input_shape *shapes, int32_t n,
                             const vn_model **out)
{
    if (!c || !out || n < 0 || (n > 0 && !shapes))
        return vn_error(VN_ERR_INVALID_ARG, "vn_model_cache_get", "invalid argument");
    pthread_mutex_lock(&c->lock);
    vn_status st = get_locked(c, shapes, n, out);
    pthread_mutex_unlock(&c->lock);
    return st;
}

int32_t vn_model_cache_size(const vn_model_cache *c)
{
    return c ? c->num_entries : 0;
}

void vn_model_cache_destroy(vn_model_cache *c)
{
    if (!c) return;
    for (int32_t i = 0; i < c->num_entries; i++) {
        for (int32_t j = 0; j < c->entries[i].num_shapes; j++)
            free((void *)c->entries[i].shapes[j].name);
        free(c->entries[i].shapes);
        vn_model_destroy(c->entries[i].model);
    }
    free(c->entries);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
