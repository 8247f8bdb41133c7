/*
 * cf_cache.c — a subgraph's compiled models, one per set of input
 * descriptors, compiled on first use like the top-level compile cache
 * (compile_cache.c). Constant outer values are part of no key: they are the
 * outer model's, fixed for its life, and a model compiled with one as an
 * input is still right when it arrives as a constant.
 *
 * A body that does not compile without knowing some input's values (a Slice
 * whose starts come from the iteration number: VN_ERR_UNSUPPORTED) is
 * specialised from then on: its small integer / scalar inputs
 * (vn_cg_specialisable) become constants and their bytes join the key, so
 * such a loop compiles once per iteration value (VN_CF_MAX_MODELS at most).
 *
 * Invariant: entries are only appended and freed with the node's vn_cf, so a
 * returned model stays valid while the outer model lives; `lock` serialises
 * lookups and compiles (runs of one model on several threads share it).
 */
#include <stdlib.h>
#include <string.h>

#include "graph/cf.h"

static bool same_desc(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank && d < VN_MAX_RANK; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Input k is specialised on: a varying input whose values are small and known. */
static bool special(const vn_cf_body *cb, const vn_tensor *in, const bool *fixed, int32_t k)
{
    return cb->specialise && !fixed[k] && in[k].data && vn_cg_specialisable(&in[k]);
}

/* The bytes of the specialised inputs, concatenated (malloc'd; *n their count). */
static void *key_values(const vn_cf_body *cb, const vn_tensor *in, const bool *fixed, int32_t count,
                        size_t *n)
{
    *n = 0;
    for (int32_t k = 0; k < count; k++)
        if (special(cb, in, fixed, k)) *n += vn_cg_desc_bytes(&in[k].desc);
    char *v = malloc(*n + 1), *p = v;
    for (int32_t k = 0; v && k < count; k++)
        if (special(cb, in, fixed, k)) {
            memcpy(p, in[k].data, vn_cg_desc_bytes(&in[k].desc));
            p += vn_cg_desc_bytes(&in[k].desc);
        }
    return v;
}

static bool matches(const vn_cf_entry *e, const vn_tensor *in, int32_t count, const void *values,
                    size_t num_bytes)
{
    for (int32_t k = 0; k < count; k++)
        if (!same_desc(&e->key[k], &in[k].desc)) return false;
    return e->num_bytes == num_bytes && (!num_bytes || !memcmp(e->values, values, num_bytes));
}

static vn_status add(vn_cf_body *cb, const vn_tensor *in, int32_t n, void *values, size_t bytes,
                     vn_model *m)
{
    if (cb->num_entries == cb->cap_entries) {
        int32_t cap = cb->cap_entries ? cb->cap_entries * 2 : 4;
        vn_cf_entry *e = realloc(cb->entries, (size_t)cap * sizeof *e);
        if (!e) return VN_ERR_OUT_OF_MEMORY;
        cb->entries = e;
        cb->cap_entries = cap;
    }
    vn_tensor_desc *key = malloc(((size_t)n + 1) * sizeof *key);
    if (!key) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t k = 0; k < n; k++) key[k] = in[k].desc;
    cb->entries[cb->num_entries++] = (vn_cf_entry){key, values, bytes, m};
    return VN_OK;
}

static vn_status compile(const vn_cf *cf, vn_cf_body *cb, const vn_tensor *in, const bool *fixed,
                         vn_model **out)
{
    int32_t n = cb->num_inputs + cb->num_outer;
    vn_tensor_desc *d = malloc(((size_t)n + 1) * sizeof *d);
    const void **data = malloc(((size_t)n + 1) * sizeof *data);
    vn_status st = d && data ? VN_OK : VN_ERR_OUT_OF_MEMORY;
    for (int32_t k = 0; st == VN_OK && k < n; k++) {
        d[k] = in[k].desc;
        data[k] = fixed[k] || special(cb, in, fixed, k) ? in[k].data : NULL;
    }
    vn_compile_options opt = {
        .opt_level = cf->opt_level, .device = cf->device, .precision = cf->precision};
    if (st == VN_OK) st = vn_cg_build_body(cf->graph, cb->body, &opt, cb->name, d, data, n, out);
    if (st == VN_OK && (st = vn_cg_compile_built(*out, cf->opt_level)) != VN_OK) {
        vn_model_destroy(*out);
        *out = NULL;
    }
    free(d);
    free(data);
    return st;
}

/* Whether knowing values could help: some varying input is specialisable. */
static bool could_specialise(vn_cf_body *cb, const vn_tensor *in, const bool *fixed, int32_t n)
{
    bool was = cb->specialise, any = false;
    cb->specialise = true;
    for (int32_t k = 0; k < n; k++) any |= special(cb, in, fixed, k);
    cb->specialise = was;
    return any;
}

static vn_status get_locked(const vn_cf *cf, vn_cf_body *cb, const vn_tensor *in, const bool *fixed,
                            const vn_model **out)
{
    int32_t n = cb->num_inputs + cb->num_outer;
    size_t bytes;
    void *values = key_values(cb, in, fixed, n, &bytes);
    if (!values) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_run", "%s: no memory", cb->name);
    for (int32_t e = 0; e < cb->num_entries; e++)
        if (matches(&cb->entries[e], in, n, values, bytes)) {
            free(values);
            *out = cb->entries[e].model;
            return VN_OK;
        }
    vn_status st = VN_OK;
    vn_model *m = NULL;
    if (cb->num_entries >= VN_CF_MAX_MODELS)
        st = vn_error(VN_ERR_UNSUPPORTED, "vn_model_run",
                      "%s: more than %d compiled input sets (a loop-carried value that changes "
                      "shape, or a specialised body, every iteration?)",
                      cb->name, VN_CF_MAX_MODELS);
    if (st == VN_OK) st = compile(cf, cb, in, fixed, &m);
    if (st == VN_ERR_UNSUPPORTED && !cb->specialise && could_specialise(cb, in, fixed, n)) {
        cb->specialise = true; /* from now on, for every shape set */
        free(values);
        return get_locked(cf, cb, in, fixed, out);
    }
    if (st == VN_OK && add(cb, in, n, values, bytes, m) != VN_OK) {
        vn_model_destroy(m);
        st = vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_run", "%s: no memory", cb->name);
    }
    if (st != VN_OK) free(values);
    if (st == VN_OK) *out = m;
    return st;
}

vn_status vn_cf_body_model(const vn_cf *cf, vn_cf_body *cb, const vn_tensor *in, const bool *fixed,
                           const vn_model **out, bool *specialised)
{
    pthread_mutex_lock(&cb->lock);
    vn_status st = get_locked(cf, cb, in, fixed, out);
    if (specialised) *specialised = cb->specialise;
    pthread_mutex_unlock(&cb->lock);
    return st;
}
