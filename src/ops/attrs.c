/*
 * attrs.c — operator attributes: lookup by name with a default, and a type
 * check so that a float given where an int is expected is an error, not a
 * silent conversion.
 */
#include <stdio.h>
#include <string.h>

#include "ops/ops_internal.h"

static const char *const type_names[] = {"int", "float", "ints", "floats", "string"};

static const char *type_name(vn_attr_type t)
{
    return (unsigned)t < sizeof type_names / sizeof type_names[0] ? type_names[t] : "invalid";
}

const vn_attr *vn_attrs_find(const vn_attrs *attrs, const char *name)
{
    if (!attrs || !attrs->items || !name) return NULL;
    for (int32_t i = 0; i < attrs->count; i++)
        if (attrs->items[i].name && strcmp(attrs->items[i].name, name) == 0)
            return &attrs->items[i];
    return NULL;
}

static vn_status wrong_type(const vn_attr *a, vn_attr_type want)
{
    return vn_error(VN_ERR_INVALID_ARG, "vn_attrs", "attribute '%s' is %s, expected %s", a->name,
                    type_name(a->type), type_name(want));
}

vn_status vn_attrs_int(const vn_attrs *attrs, const char *name, int64_t fallback, int64_t *out)
{
    const vn_attr *a = vn_attrs_find(attrs, name);
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_attrs_int", "out is NULL");
    *out = fallback;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_INT) return wrong_type(a, VN_ATTR_INT);
    *out = a->i;
    return VN_OK;
}

vn_status vn_attrs_float(const vn_attrs *attrs, const char *name, double fallback, double *out)
{
    const vn_attr *a = vn_attrs_find(attrs, name);
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_attrs_float", "out is NULL");
    *out = fallback;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_FLOAT) return wrong_type(a, VN_ATTR_FLOAT);
    *out = a->f;
    return VN_OK;
}

vn_status vn_ops_attr_choice(const char *where, const vn_attrs *attrs, const char *name,
                             const char *const *choices, int32_t n, int32_t *out)
{
    const vn_attr *a = vn_attrs_find(attrs, name);
    *out = -1;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_STRING || !a->s)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' must be a string", name);
    for (int32_t i = 0; i < n; i++)
        if (strcmp(a->s, choices[i]) == 0) {
            *out = i;
            return VN_OK;
        }
    char list[256] = "";
    for (int32_t i = 0; i < n; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s",
                 i == 0       ? ""
                 : i == n - 1 ? " or "
                              : ", ",
                 choices[i]);
    }
    return vn_error(VN_ERR_INVALID_ARG, where, "%s '%s' is not %s", name, a->s, list);
}

vn_status vn_ops_auto_pad(const char *where, const vn_attrs *attrs, vn_auto_pad *out)
{
    static const char *const names[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
    int32_t i = -1;
    vn_status st = vn_ops_attr_choice(where, attrs, "auto_pad", names, 4, &i);
    *out = i < 0 ? VN_AUTO_PAD_NOTSET : (vn_auto_pad)i;
    return st;
}

vn_status vn_ops_compute_bf16(const char *where, const vn_attrs *attrs, bool *bf16)
{
    static const char *const names[] = {"f32", "bf16"};
    int32_t i = -1;
    vn_status st = vn_ops_attr_choice(where, attrs, "compute", names, 2, &i);
    *bf16 = i == 1;
    return st;
}
