/*
 * vnm_set.c — what a set of models for several input-shape sets does once
 * loaded: check that its models belong together, and pick the one compiled
 * for the shapes a run brings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "graph/vnm_set.h"
#include "vinci/ops.h"

static bool same_dims(const vn_tensor_desc *a, int32_t rank, const int64_t *dims)
{
    if (a->rank != rank) return false;
    for (int32_t d = 0; d < rank; d++)
        if (a->dims[d] != dims[d]) return false;
    return true;
}

/* Model b's inputs (outputs when `out`) have a's names, dtypes and ranks. */
static bool same_io(const vn_model *a, const vn_model *b, bool out, char *why, size_t n)
{
    int32_t (*count)(const vn_model *) = out ? vn_model_num_outputs : vn_model_num_inputs;
    vn_status (*get)(const vn_model *, int32_t, const char **, vn_tensor_desc *) =
        out ? vn_model_output : vn_model_input;
    const char *what = out ? "output" : "input";
    if (count(a) != count(b))
        return snprintf(why, n, "%d %ss, not %d", (int)count(b), what, (int)count(a)), false;
    for (int32_t i = 0; i < count(a); i++) {
        const char *na, *nb;
        vn_tensor_desc da, db;
        get(a, i, &na, &da);
        get(b, i, &nb, &db);
        if (strcmp(na, nb) || da.dtype != db.dtype || da.rank != db.rank)
            return snprintf(why, n, "%s %d is '%s' %s rank %d, not '%s' %s rank %d", what, (int)i,
                            nb, vn_dtype_name(db.dtype), (int)db.rank, na, vn_dtype_name(da.dtype),
                            (int)da.rank),
                   false;
    }
    return true;
}

static bool same_input_shapes(const vn_model *a, const vn_model *b)
{
    for (int32_t i = 0; i < vn_model_num_inputs(a); i++) {
        vn_tensor_desc da, db;
        vn_model_input(a, i, NULL, &da);
        vn_model_input(b, i, NULL, &db);
        if (!same_dims(&da, db.rank, db.dims)) return false;
    }
    return true;
}

vn_status vn_vnm_set_check(const vn_model *const *models, int32_t count, vn_status fail,
                           const char *where, const char *path)
{
    char why[256];
    for (int32_t k = 1; k < count; k++) {
        if (!same_io(models[0], models[k], false, why, sizeof why) ||
            !same_io(models[0], models[k], true, why, sizeof why))
            return vn_error(fail, where, "%s: model %d does not match model 0: %s", path, (int)k,
                            why);
        for (int32_t j = 0; j < k; j++)
            if (same_input_shapes(models[j], models[k]))
                return vn_error(fail, where, "%s: models %d and %d have the same input shapes",
                                path, (int)j, (int)k);
    }
    return VN_OK;
}

int32_t vn_model_set_count(const vn_model_set *set)
{
    return set ? set->count : 0;
}

const vn_model *vn_model_set_model(const vn_model_set *set, int32_t index)
{
    return set && index >= 0 && index < set->count ? set->models[index] : NULL;
}

/* Does model m take these shapes? -1: it has no input of shapes[k]'s name. */
static int32_t takes(const vn_model *m, const vn_input_shape *shapes, int32_t num_shapes,
                     int32_t *unknown)
{
    for (int32_t k = 0; k < num_shapes; k++) {
        int32_t i = 0, n = vn_model_num_inputs(m);
        const char *name = NULL;
        vn_tensor_desc d;
        while (i < n && (vn_model_input(m, i, &name, &d), strcmp(name, shapes[k].name))) i++;
        if (i == n) return (*unknown = k), -1;
        if (!same_dims(&d, shapes[k].rank, shapes[k].dims)) return 0;
    }
    return 1;
}

/* "x[1,3,224,224] | x[4,3,224,224]": every model's input shapes. */
static void list_sets(const vn_model_set *set, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int32_t k = 0; k < set->count && at + 1 < size; k++)
        for (int32_t i = 0; i < vn_model_num_inputs(set->models[k]) && at + 1 < size; i++) {
            const char *name;
            vn_tensor_desc d;
            char dims[160];
            vn_model_input(set->models[k], i, &name, &d);
            at += (size_t)snprintf(buf + at, size - at, "%s%s %s",
                                   i   ? ", "
                                   : k ? " | "
                                       : "",
                                   name, vn_desc_format(&d, dims, sizeof dims));
        }
}

/* "x[4,3,224,224], y[2]": what a run asked for. */
static void list_wanted(const vn_input_shape *shapes, int32_t n, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int32_t k = 0; k < n && at + 1 < size; k++) {
        at += (size_t)snprintf(buf + at, size - at, "%s%s[", k ? ", " : "", shapes[k].name);
        for (int32_t d = 0; d < shapes[k].rank && at + 1 < size; d++)
            at += (size_t)snprintf(buf + at, size - at, "%s%lld", d ? "," : "",
                                   (long long)shapes[k].dims[d]);
        if (at + 1 < size) at += (size_t)snprintf(buf + at, size - at, "]");
    }
}

vn_status vn_model_set_pick(const vn_model_set *set, const vn_input_shape *shapes,
                            int32_t num_shapes, const vn_model **out)
{
    const char *W = "vn_model_set_pick";
    if (!set || !out || (num_shapes && !shapes) || num_shapes < 0)
        return vn_error(VN_ERR_INVALID_ARG, W, "set, out or shapes is NULL");
    *out = NULL;
    int32_t unknown = -1;
    for (int32_t k = 0; k < set->count; k++) {
        int32_t t = takes(set->models[k], shapes, num_shapes, &unknown);
        if (t < 0)
            return vn_error(VN_ERR_INVALID_ARG, W, "the model has no input '%s'",
                            shapes[unknown].name);
        if (t) return (*out = set->models[k]), VN_OK;
    }
    char sets[1024], wanted[512];
    list_sets(set, sets, sizeof sets);
    list_wanted(shapes, num_shapes, wanted, sizeof wanted);
    return vn_error(VN_ERR_SHAPE, W, "no model was compiled for %s; the file has %d: %s", wanted,
                    (int)set->count, sets);
}

void vn_model_set_destroy(vn_model_set *set)
{
    if (!set) return;
    for (int32_t k = 0; set->models && k < set->count; k++) vn_model_destroy(set->models[k]);
    free(set->models);
    if (set->map) munmap(set->map, set->map_size);
    free(set);
}
