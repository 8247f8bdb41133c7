/*
 * infer_bind.c — concrete shapes for the main graph's inputs: shapes the
 * caller gives are checked against the declared ones, symbolic dims ("batch")
 * are bound by name, and an input the caller leaves out must be fully known
 * from the model or from symbols other inputs bound.
 */
#include <string.h>

#include "graph/infer.h"
#include "graph/onnx.h"

#define MAX_SYMS 256

typedef struct syms {
    const char *name[MAX_SYMS];
    int64_t value[MAX_SYMS];
    const char *bound_by[MAX_SYMS];
    int32_t count;
} syms;

static int32_t sym_find(const syms *s, const char *name)
{
    for (int32_t i = 0; i < s->count; i++)
        if (!strcmp(s->name[i], name)) return i;
    return -1;
}

static vn_status bind_sym(vn_graph *g, syms *s, const char *input, int32_t d, const char *sym,
                          int64_t v)
{
    int32_t i = sym_find(s, sym);
    if (i >= 0 && s->value[i] != v)
        return vn_error(VN_ERR_SHAPE, "vn_graph_infer",
                        "%s: input '%s' dim %d ('%s') is %lld, but input '%s' set '%s' to %lld",
                        g->file, input, (int)d, sym, (long long)v, s->bound_by[i], sym,
                        (long long)s->value[i]);
    if (i >= 0) return VN_OK;
    if (s->count >= MAX_SYMS)
        return vn_error(VN_ERR_UNSUPPORTED, "vn_graph_infer", "%s: more than %d symbolic dims",
                        g->file, MAX_SYMS);
    s->name[s->count] = sym;
    s->value[s->count] = v;
    s->bound_by[s->count++] = input;
    return VN_OK;
}

static vn_status bind_given(vn_graph *g, syms *s, vn_gvalue *val, const vn_input_shape *sh)
{
    char want[160], got[160];
    const vn_value_info *decl = &val->info;
    vn_tensor_desc d = {decl->desc.dtype, sh->rank, {0}};
    if (sh->rank < 0 || sh->rank > VN_MAX_RANK)
        return vn_error(VN_ERR_SHAPE, "vn_graph_infer", "%s: input '%s': rank %d (max %d)", g->file,
                        val->name, (int)sh->rank, VN_MAX_RANK);
    memcpy(d.dims, sh->dims, (size_t)sh->rank * sizeof d.dims[0]);
    vn_desc_format(&d, got, sizeof got);
    vn_desc_format(&decl->desc, want, sizeof want);
    if (decl->desc.rank >= 0 && decl->desc.rank != sh->rank)
        return vn_error(VN_ERR_SHAPE, "vn_graph_infer", "%s: input '%s' is declared %s, given %s",
                        g->file, val->name, want, got);
    for (int32_t i = 0; i < sh->rank; i++) {
        int64_t declared = decl->desc.rank >= 0 ? decl->desc.dims[i] : -1;
        if (sh->dims[i] < 0 || (declared >= 0 && declared != sh->dims[i]))
            return vn_error(VN_ERR_SHAPE, "vn_graph_infer",
                            "%s: input '%s' is declared %s, given %s (dim %d)", g->file, val->name,
                            want, got, (int)i);
        vn_status st = decl->desc.rank >= 0 && decl->sym[i]
                           ? bind_sym(g, s, val->name, i, decl->sym[i], sh->dims[i])
                           : VN_OK;
        if (st != VN_OK) return st;
    }
    val->desc = d;
    val->known = true;
    return VN_OK;
}

static vn_status bind_declared(vn_graph *g, const syms *s, vn_gvalue *val)
{
    vn_tensor_desc *d = &val->desc;
    *d = val->info.desc;
    if (d->rank < 0)
        return vn_error(VN_ERR_SHAPE, "vn_graph_infer",
                        "%s: input '%s' has no declared shape: give its shape", g->file, val->name);
    for (int32_t i = 0; i < d->rank; i++) {
        if (d->dims[i] >= 0) continue;
        int32_t k = val->info.sym[i] ? sym_find(s, val->info.sym[i]) : -1;
        if (k < 0)
            return vn_error(VN_ERR_SHAPE, "vn_graph_infer",
                            "%s: input '%s' dim %d%s%s%s is not known: give the input's shape",
                            g->file, val->name, (int)i, val->info.sym[i] ? " ('" : "",
                            val->info.sym[i] ? val->info.sym[i] : "", val->info.sym[i] ? "')" : "");
        d->dims[i] = s->value[k];
    }
    val->known = true;
    return VN_OK;
}

static vn_status check_dtype(vn_graph *g, const vn_gvalue *val)
{
    int32_t t = val->info.onnx_dtype;
    if (vn_onnx_dtype(t, NULL, NULL)) return VN_OK;
    return vn_error(VN_ERR_UNSUPPORTED, "vn_graph_infer",
                    "%s: input '%s' has element type %s (%d), which vinci does not support",
                    g->file, val->name, t ? vn_onnx_dtype_name(t) : "(none: not a tensor?)",
                    (int)t);
}

static const vn_input_shape *given(const vn_input_shape *shapes, int32_t n, const char *name)
{
    for (int32_t i = 0; i < n; i++)
        if (shapes[i].name && !strcmp(shapes[i].name, name)) return &shapes[i];
    return NULL;
}

static vn_status check_names(vn_graph *g, const vn_input_shape *shapes, int32_t n)
{
    vn_gbody *b = g->main;
    for (int32_t i = 0; i < n; i++) {
        int32_t v = shapes[i].name ? vn_ir_find(b, shapes[i].name) : -1;
        if (v < 0 || b->values[v].kind != VN_GV_INPUT)
            return vn_error(VN_ERR_INVALID_ARG, "vn_graph_infer",
                            "%s: the model has no input named '%s'", g->file,
                            shapes[i].name ? shapes[i].name : "(null)");
    }
    return VN_OK;
}

vn_status vn_infer_bind_inputs(vn_graph *g, const vn_input_shape *shapes, int32_t n)
{
    syms s;
    s.count = 0;
    vn_gbody *b = g->main;
    vn_status st = check_names(g, shapes, n);
    for (int32_t i = 0; i < b->num_inputs && st == VN_OK; i++) {
        vn_gvalue *val = &b->values[b->inputs[i]];
        const vn_input_shape *sh = given(shapes, n, val->name);
        st = check_dtype(g, val);
        if (sh && st == VN_OK) st = bind_given(g, &s, val, sh);
    }
    for (int32_t i = 0; i < b->num_inputs && st == VN_OK; i++) {
        vn_gvalue *val = &b->values[b->inputs[i]];
        if (!given(shapes, n, val->name)) st = bind_declared(g, &s, val);
    }
    return st;
}
