/*
 * cf_scan.c — Scan at run time.
 *
 * Opset 9+: inputs are N initial states then M scan inputs; step t feeds the
 * states and slice t of each scan input along its scan_input_axes entry
 * (from the end when its scan_input_directions entry is 1) to the body,
 * whose outputs are the next states and one element per scan output, placed
 * at index t (or T-1-t, scan_output_directions) along scan_output_axes.
 * Opset 8: the same per batch entry (axis 0 of every input and output),
 * after an optional sequence_lens input; vinci takes only full-length
 * sequences (sequence_lens absent or all equal to the scan extent).
 *
 * Slicing copies: a slice of an axis is `outer` blocks of `inner` bytes, one
 * block per index of the dims before the axis.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/cf.h"
#include "graph/exec.h"

#define W "vn_model_run"

vn_tensor_desc vn_cf_drop_dim(const vn_tensor_desc *d, int64_t axis)
{
    vn_tensor_desc r = {d->dtype, d->rank - 1, {0}};
    for (int32_t i = 0, o = 0; i < d->rank; i++)
        if (i != axis) r.dims[o++] = d->dims[i];
    return r;
}

vn_tensor_desc vn_cf_add_dim(const vn_tensor_desc *d, int64_t axis, int64_t n)
{
    vn_tensor_desc r = {d->dtype, d->rank + 1, {0}};
    for (int32_t i = 0, s = 0; i < r.rank; i++) r.dims[i] = i == axis ? n : d->dims[s++];
    return r;
}

void vn_cf_slice_copy(void *whole, void *slice, size_t outer, size_t inner, int64_t count,
                      int64_t index, bool to_whole)
{
    if (!inner) return;
    for (size_t o = 0; o < outer; o++) {
        char *w = (char *)whole + (o * (size_t)count + (size_t)index) * inner;
        char *s = (char *)slice + o * inner;
        memcpy(to_whole ? w : s, to_whole ? s : w, inner);
    }
}

/* outer / inner bytes of `d` cut at `axis`. */
static void cut(const vn_tensor_desc *d, int64_t axis, size_t *outer, size_t *inner)
{
    *outer = 1;
    *inner = vn_dtype_size(d->dtype);
    for (int32_t i = 0; i < d->rank; i++) {
        if (i < axis) *outer *= (size_t)d->dims[i];
        if (i > axis) *inner *= (size_t)d->dims[i];
    }
}

typedef struct scan {
    const vn_model *m;
    vn_model_ctx *c;
    int32_t node, N, M, K;
    const vn_cf *cf;
    vn_cf_buf *cur, *next, *slice;
    vn_tensor *formal;
} scan;

/* Step t: the body's outputs into the next states and the scan outputs. */
static vn_status step(scan *s, int64_t t, int64_t T, const vn_tensor *in, vn_tensor *out)
{
    size_t outer, inner;
    for (int32_t j = 0; j < s->M; j++) {
        const vn_tensor *x = &in[s->N + j];
        int64_t axis = s->cf->in_axes[j], at = s->cf->in_dirs[j] ? T - 1 - t : t;
        cut(&x->desc, axis, &outer, &inner);
        vn_cf_slice_copy(x->data, s->slice[j].t.data, outer, inner, T, at, false);
        s->formal[s->N + j] = s->slice[j].t;
    }
    for (int32_t j = 0; j < s->N; j++) s->formal[j] = s->cur[j].t;
    const vn_model *sub;
    vn_model_ctx *sctx;
    vn_status st = vn_cf_run_body(s->m, s->c, s->node, 0, s->formal, NULL, &sub, &sctx);
    for (int32_t j = 0; j < s->N && st == VN_OK; j++) {
        vn_tensor r = vn_exec_result(sub, sctx, j);
        st = vn_cf_buf_put(&s->next[j], &r);
    }
    for (int32_t k = 0; k < s->K && st == VN_OK; k++) {
        vn_tensor r = vn_exec_result(sub, sctx, s->N + k);
        int64_t axis = s->cf->out_axes[k], at = s->cf->out_dirs[k] ? T - 1 - t : t;
        vn_tensor_desc e = vn_cf_drop_dim(&out[s->N + k].desc, axis);
        if (vn_cg_desc_bytes(&r.desc) != vn_cg_desc_bytes(&e) || r.desc.dtype != e.dtype) {
            char label[400];
            return vn_error(VN_ERR_SHAPE, W, "%s: scan output %d changes shape at step %lld",
                            vn_cf_label(s->m, s->node, label, sizeof label), (int)k, (long long)t);
        }
        cut(&out[s->N + k].desc, axis, &outer, &inner);
        vn_cf_slice_copy(out[s->N + k].data, r.data, outer, inner, T, at, true);
    }
    vn_cf_buf *x = s->cur;
    s->cur = s->next;
    s->next = x;
    return st;
}

/* The whole scan over `in` (N states, M scan inputs) into `out` (N final
 * states, K stacked outputs, memory of their final shapes). */
static vn_status run_scan(scan *s, const vn_tensor *in, vn_tensor *out)
{
    int64_t T = s->M ? in[s->N].desc.dims[s->cf->in_axes[0]] : 0;
    vn_status st = VN_OK;
    for (int32_t j = 0; j < s->N && st == VN_OK; j++) st = vn_cf_buf_put(&s->cur[j], &in[j]);
    for (int32_t j = 0; j < s->M && st == VN_OK; j++) {
        vn_tensor_desc e = vn_cf_drop_dim(&in[s->N + j].desc, s->cf->in_axes[j]);
        st = vn_cf_buf_reserve(&s->slice[j], vn_cg_desc_bytes(&e));
        s->slice[j].t.desc = e;
    }
    for (int64_t t = 0; t < T && st == VN_OK; t++) st = step(s, t, T, in, out);
    for (int32_t j = 0; j < s->N && st == VN_OK; j++)
        if (vn_cg_desc_bytes(&out[j].desc))
            memcpy(out[j].data, s->cur[j].t.data, vn_cg_desc_bytes(&out[j].desc));
    return st;
}

/* Entry b of each tensor's batch axis (Scan-8). */
static void batch_entry(const vn_tensor *whole, int32_t n, int64_t b, vn_tensor *part)
{
    for (int32_t i = 0; i < n; i++) {
        part[i].desc = vn_cf_drop_dim(&whole[i].desc, 0);
        part[i].data = (char *)whole[i].data + (size_t)b * vn_cg_desc_bytes(&part[i].desc);
    }
}

/* sequence_lens: absent, or every entry the full length T. */
static vn_status full_lengths(const scan *s, int64_t T)
{
    int32_t v = s->m->nodes[s->node].inputs[0];
    if (v < 0) return VN_OK;
    vn_tensor t = vn_exec_value(s->m, s->c, v);
    for (int64_t i = 0; i < vn_desc_numel(&t.desc); i++) {
        int64_t len =
            t.desc.dtype == VN_I32 ? ((const int32_t *)t.data)[i] : ((const int64_t *)t.data)[i];
        char label[400];
        if (len != T)
            return vn_error(VN_ERR_UNSUPPORTED, W,
                            "%s: sequence_lens[%lld] = %lld: only full-length sequences (%lld) "
                            "are supported",
                            vn_cf_label(s->m, s->node, label, sizeof label), (long long)i,
                            (long long)len, (long long)T);
    }
    return VN_OK;
}

static vn_status run(scan *s, vn_tensor *in, vn_tensor *out, vn_tensor *pin, vn_tensor *pout)
{
    const vn_cnode *n = &s->m->nodes[s->node];
    int32_t lead = s->cf->opset < 9, nin = s->N + s->M, nout = s->N + s->K;
    vn_status st = VN_OK;
    for (int32_t j = 0; j < nin; j++) in[j] = vn_exec_value(s->m, s->c, n->inputs[lead + j]);
    for (int32_t k = 0; k < nout && st == VN_OK; k++) {
        out[k].desc = s->m->values[n->outputs[k]].desc;
        st = vn_exec_output(s->m, s->c, n->outputs[k], &out[k].desc, &out[k].data);
    }
    if (st != VN_OK || !lead) return st == VN_OK ? run_scan(s, in, out) : st;
    int64_t B = in[0].desc.dims[0];
    if (s->M) st = full_lengths(s, in[s->N].desc.dims[1]);
    for (int64_t b = 0; b < B && st == VN_OK; b++) {
        batch_entry(in, nin, b, pin);
        batch_entry(out, nout, b, pout);
        st = run_scan(s, pin, pout);
    }
    return st;
}

vn_status vn_cf_scan_run(const vn_model *m, vn_model_ctx *c, int32_t node)
{
    const vn_cnode *n = &m->nodes[node];
    const vn_cf *cf = n->cf;
    scan s = {m, c, node, 0, cf->num_scan_inputs, 0, cf, NULL, NULL, NULL, NULL};
    s.N = cf->num_explicit - (cf->opset < 9) - s.M;
    s.K = n->num_outputs - s.N;
    size_t nb = (size_t)(2 * s.N + s.M) + 1, nt = (size_t)(s.N + s.M + s.K) + 1;
    vn_cf_buf *bufs = calloc(nb, sizeof *bufs);
    vn_tensor *t = calloc(5 * nt, sizeof *t);
    vn_status st = bufs && t ? VN_OK : vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", m->name);
    if (st == VN_OK) {
        s.cur = bufs;
        s.next = bufs + s.N;
        s.slice = bufs + 2 * s.N;
        s.formal = t;
        st = run(&s, t + nt, t + 2 * nt, t + 3 * nt, t + 4 * nt);
    }
    for (size_t b = 0; bufs && b < nb; b++) vn_cf_buf_free(&bufs[b]);
    free(bufs);
    free(t);
    return st;
}
