/*
 * attrs.c — operator attributes: lookup by name with a default, and a type
 * check so that a float given where an int is expected is an error, not a
 * silent conversion.
 */
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

vn_status vn_ops_auto_pad(const char *where, const vn_attrs *attrs, vn_auto_pad *out)
{
    static const char *const names[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
    const vn_attr *a = vn_attrs_find(attrs, "auto_pad");
    *out = VN_AUTO_PAD_NOTSET;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_STRING || !a->s)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'auto_pad' must be a string");
    for (int i = 0; i < 4; i++)
        if (strcmp(a->s, names[i]) == 0) {
            *out = (vn_auto_pad)i;
            return VN_OK;
        }
    return vn_error(VN_ERR_INVALID_ARG, where,
                    "auto_pad '%s' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER", a->s);
}
