/*
 * test_pool_ref.h — what the pooling tests share: a pooling case (shape and
 * attributes), its ONNX attribute list, and a double-precision reference
 * that computes output shapes and values from the ONNX definitions
 * independently of the library.
 */
#ifndef VINCI_TESTS_POOL_REF_H
#define VINCI_TESTS_POOL_REF_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "vinci/ops.h"

typedef struct pcase {
    const char *op; /* "MaxPool", "AveragePool", "LpPool" */
    int nsp;
    int64_t n, c, in[3];
    int64_t k[3], s[3], d[3], pads[6];
    const char *auto_pad; /* NULL: attribute absent */
    int ceil_mode, cip, order, p;
} pcase;

/* Attributes of a case, kept alive by the struct. */
typedef struct pattrs {
    vn_attr items[10];
    vn_attrs attrs;
} pattrs;

static inline void pcase_attrs(const pcase *c, pattrs *a)
{
    int n = 0, sp = c->nsp;
    a->items[n++] =
        (vn_attr){.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = c->k, .count = sp};
    a->items[n++] = (vn_attr){.name = "strides", .type = VN_ATTR_INTS, .ints = c->s, .count = sp};
    a->items[n++] = (vn_attr){.name = "dilations", .type = VN_ATTR_INTS, .ints = c->d, .count = sp};
    a->items[n++] =
        (vn_attr){.name = "pads", .type = VN_ATTR_INTS, .ints = c->pads, .count = 2 * sp};
    a->items[n++] = (vn_attr){.name = "ceil_mode", .type = VN_ATTR_INT, .i = c->ceil_mode};
    if (c->auto_pad)
        a->items[n++] = (vn_attr){.name = "auto_pad", .type = VN_ATTR_STRING, .s = c->auto_pad};
    if (strcmp(c->op, "AveragePool") == 0)
        a->items[n++] = (vn_attr){.name = "count_include_pad", .type = VN_ATTR_INT, .i = c->cip};
    if (strcmp(c->op, "MaxPool") == 0)
        a->items[n++] = (vn_attr){.name = "storage_order", .type = VN_ATTR_INT, .i = c->order};
    if (strcmp(c->op, "LpPool") == 0)
        a->items[n++] = (vn_attr){.name = "p", .type = VN_ATTR_INT, .i = c->p};
    a->attrs.items = a->items;
    a->attrs.count = n;
}

/* Effective pads and output size of spatial axis i (ONNX MaxPool-12 text). */
static inline int64_t ref_out(const pcase *c, int i, int64_t *pb, int64_t *pe)
{
    int64_t in = c->in[i], s = c->s[i], dk = (c->k[i] - 1) * c->d[i] + 1;
    const char *ap = c->auto_pad ? c->auto_pad : "NOTSET";
    if (strcmp(ap, "VALID") == 0) {
        *pb = *pe = 0;
        return (int64_t)ceil((double)(in - dk + 1) / (double)s);
    }
    if (strncmp(ap, "SAME", 4) == 0) {
        int64_t out = (int64_t)ceil((double)in / (double)s);
        int64_t total = (out - 1) * s + dk - in;
        if (total < 0) total = 0;
        *pb = strcmp(ap, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
        *pe = total - *pb;
        return out;
    }
    *pb = c->pads[i];
    *pe = c->pads[c->nsp + i];
    double v = (double)(in + *pb + *pe - dk) / (double)s + 1;
    int64_t out = (int64_t)(c->ceil_mode ? ceil(v) : floor(v));
    /* ceil mode: drop a last window that starts in the right padding */
    if (c->ceil_mode && (out - 1) * s >= in + *pb) out--;
    return out;
}

typedef struct pref {
    int64_t out[3], pb[3], pe[3], nout;
    bool empty;
    double *y;
    int64_t *idx;
} pref;

/* One output element of plane `pl` at output position o[]: value (and index). */
static inline double ref_window(const pcase *c, pref *r, const float *x, int64_t pl,
                                const int64_t *o, int64_t *index)
{
    int kind = c->op[0] == 'M' ? 0 : c->op[0] == 'A' ? 1 : 2;
    int64_t plane = 1;
    for (int i = 0; i < c->nsp; i++) plane *= c->in[i];
    double best = -INFINITY, sum = 0, count = 1;
    bool any = false;
    int64_t bi = -1, t[3] = {0, 0, 0}, nt[3] = {1, 1, 1};
    for (int i = 0; i < c->nsp; i++) nt[i] = c->k[i];
    for (int i = 0; i < c->nsp; i++) {
        /* the divisor taps: inside the input, or inside the padded input */
        int64_t lo = c->cip ? -r->pb[i] : 0, hi = c->cip ? c->in[i] + r->pe[i] : c->in[i], n = 0;
        for (int64_t k = 0; k < c->k[i]; k++) {
            int64_t pos = o[i] * c->s[i] - r->pb[i] + k * c->d[i];
            n += pos >= lo && pos < hi;
        }
        count *= (double)n;
    }
    for (t[0] = 0; t[0] < nt[0]; t[0]++)
        for (t[1] = 0; t[1] < nt[1]; t[1]++)
            for (t[2] = 0; t[2] < nt[2]; t[2]++) {
                int64_t pos[3] = {0, 0, 0};
                bool ok = true;
                for (int i = 0; i < c->nsp; i++) {
                    pos[i] = o[i] * c->s[i] - r->pb[i] + t[i] * c->d[i];
                    ok &= pos[i] >= 0 && pos[i] < c->in[i];
                }
                if (!ok) continue;
                any = true;
                int64_t rm = 0, cm = 0; /* row-major, column-major */
                for (int i = 0; i < c->nsp; i++) rm = rm * c->in[i] + pos[i];
                for (int i = c->nsp - 1; i >= 0; i--) cm = cm * c->in[i] + pos[i];
                double v = x[pl * plane + rm];
                if (kind == 0 && (bi < 0 || v > best)) {
                    best = v;
                    bi = pl * plane + (c->order ? cm : rm);
                }
                sum += kind == 2 ? pow(fabs(v), c->p) : v;
            }
    if (!any) r->empty = true; /* a window of padding only: callers skip the case */
    if (index) *index = bi;
    if (kind == 0) return best;
    if (kind == 1) return sum / count;
    return pow(sum, 1.0 / c->p);
}

/* Fill r (out dims, pads, values, indices); r->y / r->idx malloc'ed. */
static inline void ref_pool(const pcase *c, const float *x, pref *r)
{
    r->nout = 1;
    r->empty = false;
    for (int i = 0; i < 3; i++) r->out[i] = 1;
    for (int i = 0; i < c->nsp; i++) {
        r->out[i] = ref_out(c, i, &r->pb[i], &r->pe[i]);
        if (r->out[i] < 1) r->empty = true, r->out[i] = 0;
        r->nout *= r->out[i];
    }
    int64_t planes = c->n * c->c;
    r->y = malloc((size_t)(planes * r->nout + 1) * sizeof *r->y);
    r->idx = malloc((size_t)(planes * r->nout + 1) * sizeof *r->idx);
    int64_t e = 0, o[3];
    for (int64_t pl = 0; pl < planes; pl++)
        for (o[0] = 0; o[0] < r->out[0]; o[0]++)
            for (o[1] = 0; o[1] < r->out[1]; o[1]++)
                for (o[2] = 0; o[2] < r->out[2]; o[2]++, e++)
                    r->y[e] = ref_window(c, r, x, pl, o, &r->idx[e]);
}

#endif /* VINCI_TESTS_POOL_REF_H */
