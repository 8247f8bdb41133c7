/*
 * cf_run.c — what If, Loop and Scan share at run time: running one body's
 * model for the inputs of this iteration (its own inputs, then the outer
 * values read from the outer context), the contexts of those models (one per
 * compiled model, per outer context, made on first use), and handing results
 * to the node's outputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/cf.h"
#include "graph/exec.h"

#define W "vn_model_run"

struct vn_cf_ctx {
    const vn_model **models;
    vn_model_ctx **ctxs;
    int32_t n, cap;
};

void vn_cf_ctx_free(vn_cf_ctx *s)
{
    if (!s) return;
    for (int32_t i = 0; i < s->n; i++) vn_model_ctx_destroy(s->ctxs[i]);
    free(s->models);
    free(s->ctxs);
    free(s);
}

/* The outer context's context for body model `sub`, made on first use. */
static vn_status sub_ctx(vn_model_ctx *c, int32_t node, const vn_model *sub, vn_model_ctx **out)
{
    vn_cf_ctx *s = c->cf[node];
    if (!s && !(s = c->cf[node] = calloc(1, sizeof *s))) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < s->n; i++)
        if (s->models[i] == sub) {
            *out = s->ctxs[i];
            return VN_OK;
        }
    if (s->n == s->cap) {
        int32_t cap = s->cap ? s->cap * 2 : 4;
        const vn_model **m = realloc(s->models, (size_t)cap * sizeof *m);
        if (m) s->models = m;
        vn_model_ctx **x = m ? realloc(s->ctxs, (size_t)cap * sizeof *x) : NULL;
        if (!x) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", sub->name);
        s->ctxs = x;
        s->cap = cap;
    }
    vn_status st = vn_model_ctx_create(sub, out);
    if (st != VN_OK) return st;
    s->models[s->n] = sub;
    s->ctxs[s->n++] = *out;
    return VN_OK;
}

/* The body's inputs for this run: `formal`, then the outer values. */
typedef struct body_inputs {
    vn_tensor *t;
    bool *fixed; /* a constant of the outer model */
} body_inputs;

static vn_status assemble(const vn_model *m, const vn_model_ctx *c, const vn_cf_body *cb,
                          const vn_cnode *n, const vn_tensor *formal, body_inputs *bi)
{
    size_t count = (size_t)(cb->num_inputs + cb->num_outer) + 1;
    bi->t = malloc(count * sizeof *bi->t);
    bi->fixed = calloc(count, sizeof *bi->fixed);
    if (!bi->t || !bi->fixed) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", cb->name);
    for (int32_t j = 0; j < cb->num_inputs; j++) bi->t[j] = formal[j];
    for (int32_t j = 0; j < cb->num_outer; j++) {
        int32_t v = n->inputs[cb->outer_pos[j]], k = cb->num_inputs + j;
        bi->t[k] = vn_exec_value(m, c, v);
        bi->fixed[k] = vn_cf_fixed(&m->values[v]);
    }
    return VN_OK;
}

static void release(body_inputs *bi)
{
    free(bi->t);
    free(bi->fixed);
}

bool vn_cf_fixed(const vn_cvalue *v)
{
    return v->kind == VN_CV_CONST && !v->packed_only;
}

static vn_status body_model(const vn_model *m, const vn_model_ctx *c, int32_t node, int32_t b,
                            const vn_tensor *formal, body_inputs *bi, const vn_model **sub)
{
    const vn_cnode *n = &m->nodes[node];
    vn_cf_body *cb = &n->cf->bodies[b];
    vn_status st = assemble(m, c, cb, n, formal, bi);
    return st == VN_OK ? vn_cf_body_model(n->cf, cb, bi->t, bi->fixed, sub, NULL) : st;
}

vn_status vn_cf_body_for(const vn_model *m, vn_model_ctx *c, int32_t node, int32_t b,
                         const vn_tensor *formal, const vn_model **sub)
{
    body_inputs bi = {0};
    vn_status st = body_model(m, c, node, b, formal, &bi, sub);
    release(&bi);
    return st;
}

vn_status vn_cf_run_body(const vn_model *m, vn_model_ctx *c, int32_t node, int32_t b,
                         const vn_tensor *formal, void *const *dst, const vn_model **sub,
                         vn_model_ctx **sctx)
{
    body_inputs bi = {0};
    vn_status st = body_model(m, c, node, b, formal, &bi, sub);
    if (st == VN_OK) st = sub_ctx(c, node, *sub, sctx);
    if (st == VN_OK) st = vn_exec_run_positional(*sub, *sctx, bi.t, dst);
    release(&bi);
    return st;
}

vn_status vn_cf_deliver(const vn_model *m, vn_model_ctx *c, int32_t node, int32_t k,
                        const vn_tensor *t)
{
    void *dst;
    vn_status st = vn_exec_output(m, c, m->nodes[node].outputs[k], &t->desc, &dst);
    int64_t numel = vn_desc_numel(&t->desc);
    size_t bytes = numel > 0 ? (size_t)numel * vn_dtype_size(t->desc.dtype) : 0;
    if (st == VN_OK && bytes && dst != t->data) memcpy(dst, t->data, bytes);
    return st;
}

const char *vn_cf_label(const vn_model *m, int32_t node, char *buf, size_t size)
{
    char label[256];
    snprintf(buf, size, "%s: %s", m->name, vn_cg_label(m, node, label, sizeof label));
    return buf;
}

vn_status vn_cf_scalar(const vn_model *m, int32_t node, const char *what, const vn_tensor *t,
                       vn_dtype want, int64_t *value)
{
    char label[400], d[160];
    if (t->desc.rank < 0 || t->desc.dtype != want || vn_desc_numel(&t->desc) != 1)
        return vn_error(VN_ERR_DTYPE, W, "%s: %s is %s; it must be %s with one element",
                        vn_cf_label(m, node, label, sizeof label), what,
                        vn_desc_format(&t->desc, d, sizeof d), vn_dtype_name(want));
    if (!value) return VN_OK;
    if (want == VN_BOOL)
        *value = *(const uint8_t *)t->data != 0;
    else
        memcpy(value, t->data, sizeof *value);
    return VN_OK;
}

vn_status vn_cf_buf_reserve(vn_cf_buf *b, size_t bytes)
{
    if (bytes <= b->cap && b->t.data) return VN_OK;
    size_t cap = bytes > 2 * b->cap ? bytes : 2 * b->cap;
    void *p = vn_aligned_alloc(cap ? cap : 64, 64);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "no memory for %zu bytes", cap);
    if (b->t.data && b->cap) memcpy(p, b->t.data, b->cap);
    vn_aligned_free(b->t.data);
    b->t.data = p;
    b->cap = cap ? cap : 64;
    return VN_OK;
}

vn_status vn_cf_buf_put(vn_cf_buf *b, const vn_tensor *src)
{
    size_t bytes = vn_cg_desc_bytes(&src->desc);
    vn_status st = vn_cf_buf_reserve(b, bytes);
    if (st != VN_OK) return st;
    b->t.desc = src->desc;
    if (bytes) memcpy(b->t.data, src->data, bytes);
    return VN_OK;
}

void vn_cf_buf_free(vn_cf_buf *b)
{
    vn_aligned_free(b->t.data);
    memset(b, 0, sizeof *b);
}

vn_status vn_cf_run(const vn_model *m, vn_model_ctx *c, int32_t node)
{
    switch (m->nodes[node].cf->kind) {
    case VN_CF_IF:
        return vn_cf_if_run(m, c, node);
    case VN_CF_LOOP:
        return vn_cf_loop_run(m, c, node);
    default:
        return vn_cf_scan_run(m, c, node);
    }
}
