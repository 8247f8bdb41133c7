/*
 * compile_cache.c — one compiled model per input-shape set, compiled on first
 * use. The shapes the caller gives determine every other input's shape (the
 * rest are declared or bound through symbols), so the given set, compared
 * by name regardless of order, is the key; with vn_model_cache_get_values
 * the specialisable inputs' values (vn_cg_specialisable) are part of it too.
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
    vn_named_tensor *values; /* specialised inputs: names and data owned */
    int32_t num_values;
    vn_model *model;
} entry;

/* The values a compile specialises on, in the caller's order. */
typedef struct key_values {
    const vn_named_tensor *v;
    int32_t n;
} key_values;

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
    c->options = options ? *options : (vn_compile_options){.opt_level = 1};
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

static bool same_value(const vn_named_tensor *a, const vn_named_tensor *b)
{
    const vn_tensor_desc *x = &a->tensor.desc, *y = &b->tensor.desc;
    if (strcmp(a->name, b->name) || x->dtype != y->dtype || x->rank != y->rank) return false;
    for (int32_t d = 0; d < x->rank && d < VN_MAX_RANK; d++)
        if (x->dims[d] != y->dims[d]) return false;
    size_t bytes = (size_t)vn_desc_numel(x) * vn_dtype_size(x->dtype);
    return !bytes || !memcmp(a->tensor.data, b->tensor.data, bytes);
}

static int32_t count_specialisable(key_values k)
{
    int32_t n = 0;
    for (int32_t i = 0; i < k.n; i++) n += k.v[i].name && vn_cg_specialisable(&k.v[i].tensor);
    return n;
}

static bool values_match(const entry *e, key_values k)
{
    if (count_specialisable(k) != e->num_values) return false;
    for (int32_t i = 0; i < k.n; i++) {
        if (!k.v[i].name || !vn_cg_specialisable(&k.v[i].tensor)) continue;
        bool found = false;
        for (int32_t j = 0; j < e->num_values && !found; j++)
            found = same_value(&e->values[j], &k.v[i]);
        if (!found) return false;
    }
    return true;
}

static bool matches(const entry *e, const vn_input_shape *s, int32_t n, key_values k)
{
    if (e->num_shapes != n || !values_match(e, k)) return false;
    for (int32_t i = 0; i < n; i++) {
        bool found = false;
        for (int32_t j = 0; j < n && !found; j++)
            found = s[i].name && same_shape(&e->shapes[j], &s[i]);
        if (!found) return false;
    }
    return true;
}

static void free_values(vn_named_tensor *v, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        free((void *)v[i].name);
        free(v[i].tensor.data);
    }
    free(v);
}

/* Owned copies of the specialisable values of k. */
static vn_status copy_values(key_values k, vn_named_tensor **out, int32_t *count)
{
    vn_named_tensor *v = calloc((size_t)count_specialisable(k) + 1, sizeof *v);
    int32_t n = 0;
    for (int32_t i = 0; v && i < k.n; i++) {
        if (!k.v[i].name || !vn_cg_specialisable(&k.v[i].tensor)) continue;
        const vn_tensor *t = &k.v[i].tensor;
        size_t bytes = (size_t)vn_desc_numel(&t->desc) * vn_dtype_size(t->desc.dtype);
        v[n] = (vn_named_tensor){strdup(k.v[i].name), {t->desc, malloc(bytes + 1)}};
        bool ok = v[n].name && v[n].tensor.data;
        n++;
        if (!ok) {
            free_values(v, n);
            return VN_ERR_OUT_OF_MEMORY;
        }
        if (bytes) memcpy(v[n - 1].tensor.data, t->data, bytes);
    }
    if (!v) return VN_ERR_OUT_OF_MEMORY;
    *out = v;
    *count = n;
    return VN_OK;
}

static vn_status add_entry(vn_model_cache *c, const vn_input_shape *s, int32_t n, key_values k,
                           vn_model *m)
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
    if (copy_values(k, &e->values, &e->num_values) != VN_OK) {
        for (int32_t j = 0; j < n; j++) free((void *)e->shapes[j].name);
        free(e->shapes);
        return VN_ERR_OUT_OF_MEMORY;
    }
    e->num_shapes = n;
    e->model = m;
    c->num_entries++;
    return VN_OK;
}

static vn_status get_locked(vn_model_cache *c, const vn_input_shape *s, int32_t n, key_values k,
                            const vn_model **out)
{
    for (int32_t i = 0; i < c->num_entries; i++)
        if (matches(&c->entries[i], s, n, k)) {
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
    vn_status st = vn_model_compile_specialised(c->graph, &o, k.v, k.n, &m);
    if (st != VN_OK) return st;
    if (add_entry(c, s, n, k, m) != VN_OK) {
        vn_model_destroy(m);
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_cache_get", "no memory");
    }
    *out = m;
    return VN_OK;
}

vn_status vn_model_cache_get(vn_model_cache *c, const vn_input_shape *shapes, int32_t n,
                             const vn_model **out)
{
    return vn_model_cache_get_values(c, shapes, n, NULL, 0, out);
}

vn_status vn_model_cache_get_values(vn_model_cache *c, const vn_input_shape *shapes, int32_t n,
                                    const vn_named_tensor *values, int32_t num_values,
                                    const vn_model **out)
{
    if (!c || !out || n < 0 || (n > 0 && !shapes) || num_values < 0 || (num_values > 0 && !values))
        return vn_error(VN_ERR_INVALID_ARG, "vn_model_cache_get", "invalid argument");
    pthread_mutex_lock(&c->lock);
    vn_status st = get_locked(c, shapes, n, (key_values){values, num_values}, out);
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
        free_values(c->entries[i].values, c->entries[i].num_values);
        vn_model_destroy(c->entries[i].model);
    }
    free(c->entries);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
