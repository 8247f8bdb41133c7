/*
 * misc_einsum.c — Einsum over any equation of the ONNX grammar: terms of
 * letters with at most one "..." each, "->" and an explicit output, or the
 * implicit output (ellipsis dims, then the letters seen once, sorted).
 *
 * Every distinct label gets a size; each input gets a stride per label (the
 * sum of its strides where a label repeats inside a term: a diagonal; 0
 * where it broadcasts). An output element is the sum, over every value of
 * the labels not in the output, of the product of the inputs, in double.
 * This is exact ONNX semantics for every form (matmul-like, transpose,
 * trace, reductions, outer products), not a fast GEMM path.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/misc.h"

#define MAX_IN     8
#define MAX_LABELS 64 /* 52 letters + up to 8 ellipsis dims */
#define ELL        52 /* label of ellipsis dim e: ELL + e (right-aligned) */
#define TILE       1024

typedef struct einsum_plan {
    int32_t ni, nl, nout, nred;
    int32_t out[VN_MAX_RANK], red[MAX_LABELS];
    int64_t size[MAX_LABELS];
    int64_t str[MAX_IN][MAX_LABELS];
    vn_dtype dt;
    int64_t numel, R, tiles;
    int32_t block_dim;
} einsum_plan;

typedef struct term {
    int32_t n, lab[VN_MAX_RANK + 1];
} term;

static int32_t letter(char c)
{
    return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + c - 'A' : -1;
}

/* Parse one term (up to ',' or '-' or end) for a tensor of `rank` dims
 * (rank < 0: the output, whose ellipsis has `ell` dims). */
static const char *parse_term(const char *s, int32_t rank, int32_t *ell, term *t, bool *ok)
{
    int32_t nlet = 0;
    bool has_ell = false;
    const char *q = s;
    for (; *q && *q != ',' && *q != '-'; q++) {
        if (*q == '.') {
            *ok &= !has_ell && strncmp(q, "...", 3) == 0;
            has_ell = true;
            q += 2;
        } else if (*q != ' ') {
            *ok &= letter(*q) >= 0;
            nlet++;
        }
    }
    int32_t e = rank >= 0 ? rank - nlet : (has_ell ? *ell : 0);
    *ok &= e >= 0 && (has_ell || e == 0) && nlet + e <= VN_MAX_RANK;
    if (!*ok) return q;
    if (rank >= 0 && e > *ell) *ell = e;
    t->n = 0;
    for (const char *c = s; c < q; c++) {
        if (*c == '.') {
            for (int32_t k = 0; k < e; k++) t->lab[t->n++] = -1 - k; /* resolved later */
            c += 2;
        } else if (*c != ' ') {
            t->lab[t->n++] = letter(*c);
        }
    }
    for (int32_t k = 0; k < t->n; k++) /* ellipsis dim k of e maps right-aligned */
        if (t->lab[k] < 0) t->lab[k] = ELL + (-1 - t->lab[k]) + (MAX_IN - e);
    return q;
}

static vn_status parse(const vn_op_ctx *ctx, const char *where, term *in, term *out)
{
    const vn_attr *a = vn_attrs_find(ctx->attrs, "equation");
    if (!a || a->type != VN_ATTR_STRING || !a->s)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'equation' (a string) is required");
    const char *s = a->s;
    bool ok = true;
    int32_t ell = 0, k = 0;
    for (; ok; k++) {
        if (k >= ctx->num_inputs) {
            ok = false;
            break;
        }
        s = parse_term(s, ctx->inputs[k].rank, &ell, &in[k], &ok);
        if (*s != ',') break;
        s++;
    }
    ok &= k + 1 == ctx->num_inputs;
    if (ok && strncmp(s, "->", 2) == 0) {
        s = parse_term(s + 2, -1, &ell, out, &ok);
        ok &= *s == '\0';
    } else if (ok) { /* implicit: ellipsis dims, then letters used once, sorted */
        ok &= *s == '\0';
        int32_t seen[MAX_LABELS] = {0};
        out->n = 0;
        for (int32_t e = 0; e < ell; e++) out->lab[out->n++] = ELL + MAX_IN - ell + e;
        for (int32_t i = 0; i < ctx->num_inputs; i++)
            for (int32_t d = 0; d < in[i].n; d++) seen[in[i].lab[d]]++;
        for (int32_t l = 0; l < ELL && out->n <= VN_MAX_RANK; l++)
            if (seen[l] == 1) out->lab[out->n++] = l;
        ok &= out->n <= VN_MAX_RANK;
    }
    if (!ok)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "equation \"%s\" does not fit %d inputs of these ranks", a->s,
                        (int)ctx->num_inputs);
    return VN_OK;
}

static vn_status build(const vn_op_ctx *ctx, const char *where, einsum_plan *p)
{
    term in[MAX_IN], out;
    int32_t idx[MAX_LABELS];
    if (ctx->num_inputs > MAX_IN)
        return vn_error(VN_ERR_UNSUPPORTED, where, "more than %d inputs", MAX_IN);
    vn_status st = parse(ctx, where, in, &out);
    if (st != VN_OK) return st;
    memset(p, 0, sizeof *p);
    for (int32_t l = 0; l < MAX_LABELS; l++) idx[l] = -1, p->size[l] = 1;
    p->ni = ctx->num_inputs;
    p->dt = ctx->inputs[0].dtype;
    for (int32_t i = 0; i < p->ni; i++) {
        const vn_tensor_desc *x = &ctx->inputs[i];
        int64_t strides[VN_MAX_RANK];
        if (x->dtype != p->dt)
            return vn_error(VN_ERR_DTYPE, where, "input %d is %s, input 0 is %s", (int)i,
                            vn_dtype_name(x->dtype), vn_dtype_name(p->dt));
        vn_so_strides(x, strides);
        for (int32_t d = 0; d < in[i].n; d++) {
            int32_t l = in[i].lab[d];
            if (idx[l] < 0) idx[l] = p->nl++, p->size[idx[l]] = x->dims[d];
            int32_t j = idx[l];
            if (p->size[j] == 1 && x->dims[d] != 1)
                p->size[j] = x->dims[d];
            else if (x->dims[d] != p->size[j] && x->dims[d] != 1)
                return vn_error(VN_ERR_SHAPE, where,
                                "label of input %d dim %d is %lld here, %lld elsewhere", (int)i,
                                (int)d, (long long)x->dims[d], (long long)p->size[j]);
            if (x->dims[d] != 1) p->str[i][j] += strides[d];
        }
    }
    bool in_out[MAX_LABELS] = {false};
    for (int32_t d = 0; d < out.n; d++) {
        int32_t l = out.lab[d];
        if (idx[l] < 0 || in_out[idx[l]])
            return vn_error(VN_ERR_INVALID_ARG, where, "output label %d is unknown or repeated",
                            (int)d);
        in_out[idx[l]] = true;
        p->out[p->nout++] = idx[l];
    }
    p->numel = p->R = 1;
    for (int32_t d = 0; d < p->nout; d++) p->numel *= p->size[p->out[d]];
    for (int32_t j = 0; j < p->nl; j++)
        if (!in_out[j]) p->red[p->nred++] = j, p->R *= p->size[j];
    return VN_OK;
}

static vn_status einsum_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    einsum_plan *p = malloc(sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory");
    vn_status st = build(ctx, where, p);
    if (st == VN_OK) {
        *out = vn_so_desc(p->dt, p->nout, NULL);
        for (int32_t d = 0; d < p->nout; d++) out->dims[d] = p->size[p->out[d]];
    }
    free(p);
    return st;
}

static vn_status einsum_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                                size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    einsum_plan *p = malloc(sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = build(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    p->tiles = vn_ops_div_up(p->numel, TILE);
    p->block_dim = vn_ops_block_dim(ctx->device, p->tiles, TILE * vn_ops_max(1, p->R));
    *plan = p;
    return VN_OK;
}

typedef struct einsum_args {
    const einsum_plan *p;
    const void *in[MAX_IN];
    void *y;
} einsum_args;

static double one_output(const einsum_args *a, const int64_t *base)
{
    const einsum_plan *p = a->p;
    int64_t ridx[MAX_LABELS] = {0}, off[MAX_IN];
    double sum = 0;
    for (int64_t r = 0; r < p->R; r++) {
        double prod = 1;
        for (int32_t i = 0; i < p->ni; i++) {
            off[i] = base[i];
            for (int32_t k = 0; k < p->nred; k++) off[i] += ridx[k] * p->str[i][p->red[k]];
            prod *= vn_cast_load_f64(p->dt, a->in[i], off[i]);
        }
        sum += prod;
        for (int32_t k = p->nred - 1; k >= 0 && ++ridx[k] == p->size[p->red[k]]; k--) ridx[k] = 0;
    }
    return sum;
}

static void einsum_kernel(vn_core *core, const void *args)
{
    const einsum_args *a = args;
    const einsum_plan *p = a->p;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t o1 = vn_ops_min(p->numel, (t + 1) * TILE);
        for (int64_t o = t * TILE; o < o1; o++) {
            int64_t base[MAX_IN] = {0}, r = o;
            for (int32_t d = p->nout - 1; d >= 0; d--) {
                int64_t i = r % p->size[p->out[d]];
                r /= p->size[p->out[d]];
                for (int32_t k = 0; k < p->ni; k++) base[k] += i * p->str[k][p->out[d]];
            }
            vn_cast_store_f64(p->dt, a->y, o, one_output(a, base));
        }
        core->counters.vector_elem_ops += (o1 - t * TILE) * p->R * p->ni;
    }
}

static vn_status einsum_run(const vn_op_run_ctx *ctx)
{
    const einsum_plan *p = ctx->plan;
    einsum_args a;
    memset(&a, 0, sizeof a);
    a.p = p;
    for (int32_t i = 0; i < p->ni; i++) a.in[i] = ctx->inputs[i].data;
    a.y = ctx->outputs[0].data;
    vn_launch_desc d = {einsum_kernel, "vn_einsum", p->block_dim, &a, -1, p->tiles};
    return p->tiles ? vn_launch(ctx->device, &d, ctx->counters) : VN_OK;
}

/* computed in double through the cast.h loads */
#define DTYPES (VN_DTYPES_FLOAT | VN_DTYPES_F64 | VN_DTYPES_INT)

const vn_op_def vn_misc_einsum_def = {
    "Einsum", "", 1, MAX_IN, 1, DTYPES, einsum_infer, einsum_plan_fn, free, einsum_run};
