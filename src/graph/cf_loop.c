/*
 * cf_loop.c — Loop at run time (opset 11 / 13 / 16 semantics, tensors):
 *
 *     for (i = 0; (M omitted || i < M) && cond; i++)
 *         cond', v..., s... = body(i, cond, v...)
 *         cond = cond' unless the node's cond is omitted (a plain for loop)
 *
 * Loop-carried values live in two buffers per value (this iteration's input,
 * the next one's) that swap; each scan output is stacked along a new first
 * axis, every iteration's element of the same shape. The body's model is the
 * one compiled for this iteration's input shapes (cf_cache.c), so carried
 * values may change shape between iterations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/cf.h"
#include "graph/exec.h"

#define W "vn_model_run"

typedef struct loop {
    const vn_model *m;
    vn_model_ctx *c;
    int32_t node, N, K;
    vn_cf_buf *cur, *next, *scan;
    int64_t trips;
    vn_tensor *formal;
} loop;

/* Element r of scan output k goes to position l->trips. */
static vn_status stack(loop *l, int32_t k, const vn_tensor *r)
{
    vn_cf_buf *s = &l->scan[k];
    char a[160], b[160], label[400];
    if (r->desc.rank >= VN_MAX_RANK)
        return vn_error(VN_ERR_UNSUPPORTED, W, "%s: scan output %d has rank %d",
                        vn_cf_label(l->m, l->node, label, sizeof label), (int)k, (int)r->desc.rank);
    vn_tensor_desc whole = vn_cf_add_dim(&r->desc, 0, l->trips + 1);
    if (l->trips > 0 &&
        !(s->t.desc.rank == whole.rank && s->t.desc.dtype == whole.dtype &&
          !memcmp(s->t.desc.dims + 1, whole.dims + 1, (size_t)r->desc.rank * sizeof *whole.dims)))
        return vn_error(VN_ERR_SHAPE, W, "%s: scan output %d is %s in iteration %lld, %s before",
                        vn_cf_label(l->m, l->node, label, sizeof label), (int)k,
                        vn_desc_format(&r->desc, a, sizeof a), (long long)l->trips,
                        vn_desc_format(&s->t.desc, b, sizeof b));
    size_t elem = vn_cg_desc_bytes(&r->desc);
    vn_status st = vn_cf_buf_reserve(s, elem * (size_t)(l->trips + 1));
    if (st != VN_OK) return st;
    s->t.desc = whole;
    if (elem) memcpy((char *)s->t.data + elem * (size_t)l->trips, r->data, elem);
    return VN_OK;
}

/* One iteration; *cond the body's condition output. */
static vn_status iterate(loop *l, int64_t *cond)
{
    const vn_model *sub;
    vn_model_ctx *sctx;
    for (int32_t j = 0; j < l->N; j++) l->formal[2 + j] = l->cur[j].t;
    vn_status st = vn_cf_run_body(l->m, l->c, l->node, 0, l->formal, NULL, &sub, &sctx);
    if (st != VN_OK) return st;
    vn_tensor r = vn_exec_result(sub, sctx, 0);
    st = vn_cf_scalar(l->m, l->node, "body output 0 (the condition)", &r, VN_BOOL, cond);
    for (int32_t j = 0; j < l->N && st == VN_OK; j++) {
        r = vn_exec_result(sub, sctx, 1 + j);
        st = vn_cf_buf_put(&l->next[j], &r);
    }
    for (int32_t k = 0; k < l->K && st == VN_OK; k++) {
        r = vn_exec_result(sub, sctx, 1 + l->N + k);
        st = stack(l, k, &r);
    }
    vn_cf_buf *t = l->cur;
    l->cur = l->next;
    l->next = t;
    return st;
}

/* Scan outputs of a loop that ran no iteration: [0, element shape], the
 * element's shape from the body compiled for the initial inputs. */
static vn_status empty_scans(loop *l)
{
    const vn_model *sub = NULL;
    for (int32_t j = 0; j < l->N; j++) l->formal[2 + j] = l->cur[j].t;
    vn_status st = l->K ? vn_cf_body_for(l->m, l->c, l->node, 0, l->formal, &sub) : VN_OK;
    for (int32_t k = 0; k < l->K && st == VN_OK; k++) {
        vn_tensor_desc e = sub->values[sub->outputs[1 + l->N + k]].desc;
        char label[400];
        if (e.rank < 0 || e.rank >= VN_MAX_RANK)
            return vn_error(VN_ERR_UNSUPPORTED, W,
                            "%s: the loop ran no iteration and scan output %d has no fixed shape",
                            vn_cf_label(l->m, l->node, label, sizeof label), (int)k);
        l->scan[k].t.desc = vn_cf_add_dim(&e, 0, 0);
    }
    return st;
}

static vn_status run(loop *l)
{
    const vn_cnode *n = &l->m->nodes[l->node];
    vn_tensor tm = vn_exec_value(l->m, l->c, n->inputs[0]);
    vn_tensor tc = vn_exec_value(l->m, l->c, n->inputs[1]);
    int64_t M = 0, cond = 1, i = 0;
    vn_status st = VN_OK;
    if (n->inputs[0] >= 0) st = vn_cf_scalar(l->m, l->node, "the trip count M", &tm, VN_I64, &M);
    if (st == VN_OK && n->inputs[1] >= 0)
        st = vn_cf_scalar(l->m, l->node, "the condition", &tc, VN_BOOL, &cond);
    for (int32_t j = 0; j < l->N && st == VN_OK; j++) {
        vn_tensor v = vn_exec_value(l->m, l->c, n->inputs[2 + j]);
        st = vn_cf_buf_put(&l->cur[j], &v);
    }
    uint8_t cond_in = 1;
    l->formal[0] = (vn_tensor){{VN_I64, 0, {0}}, &i};
    l->formal[1] = (vn_tensor){{VN_BOOL, 0, {0}}, &cond_in};
    for (; st == VN_OK && (n->inputs[0] < 0 || i < M) && cond; i++) {
        int64_t body_cond;
        cond_in = (uint8_t)cond;
        st = iterate(l, &body_cond);
        l->trips++;
        if (n->inputs[1] >= 0) cond = body_cond; /* without cond: a for loop */
    }
    if (st == VN_OK && l->trips == 0) st = empty_scans(l);
    for (int32_t j = 0; j < l->N && st == VN_OK; j++)
        st = vn_cf_deliver(l->m, l->c, l->node, j, &l->cur[j].t);
    for (int32_t k = 0; k < l->K && st == VN_OK; k++)
        st = vn_cf_deliver(l->m, l->c, l->node, l->N + k, &l->scan[k].t);
    return st;
}

vn_status vn_cf_loop_run(const vn_model *m, vn_model_ctx *c, int32_t node)
{
    const vn_cnode *n = &m->nodes[node];
    loop l = {m, c, node, n->cf->num_explicit - 2, 0, NULL, NULL, NULL, 0, NULL};
    l.K = n->num_outputs - l.N;
    size_t bufs = (size_t)(2 * l.N + l.K) + 1;
    vn_cf_buf *all = calloc(bufs, sizeof *all);
    l.formal = calloc((size_t)l.N + 3, sizeof *l.formal);
    vn_status st =
        all && l.formal ? VN_OK : vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", m->name);
    if (st == VN_OK) {
        l.cur = all;
        l.next = all + l.N;
        l.scan = all + 2 * l.N;
        st = run(&l);
    }
    for (size_t b = 0; all && b < bufs; b++) vn_cf_buf_free(&all[b]);
    free(all);
    free(l.formal);
    return st;
}
