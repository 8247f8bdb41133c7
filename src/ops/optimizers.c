/*
 * optimizers.c — the training-step operators of the ai.onnx.preview.training
 * domain (opset 1): Adagrad, Momentum (standard and Nesterov) and Adam.
 *
 * Inputs: R (learning rate, float scalar), T (update count, int64 scalar),
 * then n tensors X, their n gradients G, and n tensors of each piece of
 * optimizer state (Adagrad: H; Momentum: V; Adam: V then H); outputs: the n
 * new X, then the n new tensors of each state, in the same order. n follows
 * from the input count; outputs past the last are declared absent (rank -1).
 * Each element is updated independently, in double, by the ONNX pseudo code
 * (the preview.training reference):
 *   Adagrad:  g' = norm*x + g; h' = h + g'^2;
 *             x' = x - R / (1 + T*decay) * g' / (sqrt(h') + eps)
 *   Momentum: g' = norm*x + g; v' = alpha*v + (T > 0 ? beta : 1)*g';
 *             x' = x - R*v' (standard), x - R*(g' + alpha*v') (nesterov)
 *   Adam:     g' = norm*x + g; v' = alpha*v + (1-alpha)*g';
 *             h' = beta*h + (1-beta)*g'^2;
 *             r = T > 0 ? R*sqrt(1 - beta^T) / (1 - alpha^T) : R;
 *             x' = (1 - norm_post) * (x - r*v' / (sqrt(h') + eps))
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

#define OPT_MAX_OUT 24 /* n * (1 + states) outputs at most */
#define OPT_DOMAIN  "ai.onnx.preview.training"

typedef enum opt_kind { OPT_ADAGRAD, OPT_MOMENTUM, OPT_NESTEROV, OPT_ADAM } opt_kind;

typedef struct opt_plan {
    opt_kind kind;
    int32_t n, states; /* X tensors; state tensors per X */
    double norm, norm_post, decay, eps, alpha, beta;
} opt_plan;

static vn_status get_float(const vn_op_ctx *ctx, const char *where, const char *name,
                           double fallback, bool required, double *out)
{
    if (required && !vn_attrs_find(ctx->attrs, name))
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' is required", name);
    vn_status st = vn_attrs_float(ctx->attrs, name, fallback, out);
    if (st != VN_OK) return vn_error(st, where, "attribute '%s' must be a float", name);
    return VN_OK;
}

static vn_status get_attrs(const vn_op_ctx *ctx, const char *where, opt_plan *p)
{
    const char *name = ctx->def->name, *mode = "standard";
    memset(p, 0, sizeof *p);
    p->states = 1;
    vn_status st = get_float(ctx, where, "norm_coefficient", 0.0, false, &p->norm);
    if (!strcmp(name, "Adagrad")) {
        p->kind = OPT_ADAGRAD;
        if (st == VN_OK) st = get_float(ctx, where, "decay_factor", 0.0, false, &p->decay);
        if (st == VN_OK) st = get_float(ctx, where, "epsilon", 0.0, false, &p->eps);
    } else if (!strcmp(name, "Momentum")) {
        if (st == VN_OK) st = get_float(ctx, where, "alpha", 0.0, true, &p->alpha);
        if (st == VN_OK) st = get_float(ctx, where, "beta", 0.0, true, &p->beta);
        if (st == VN_OK) st = vn_so_attr_string(ctx, where, "mode", NULL, &mode);
        if (st == VN_OK && (!mode || (strcmp(mode, "standard") && strcmp(mode, "nesterov"))))
            return vn_error(VN_ERR_INVALID_ARG, where,
                            "attribute 'mode' must be \"standard\" or \"nesterov\"");
        p->kind = mode && !strcmp(mode, "nesterov") ? OPT_NESTEROV : OPT_MOMENTUM;
    } else {
        p->kind = OPT_ADAM;
        p->states = 2;
        if (st == VN_OK) st = get_float(ctx, where, "alpha", 0.9, false, &p->alpha);
        if (st == VN_OK) st = get_float(ctx, where, "beta", 0.999, false, &p->beta);
        if (st == VN_OK) st = get_float(ctx, where, "epsilon", 0.0, false, &p->eps);
        if (st == VN_OK)
            st = get_float(ctx, where, "norm_coefficient_post", 0.0, false, &p->norm_post);
    }
    return st;
}

static bool scalar(const vn_tensor_desc *d)
{
    return d->rank >= 0 && vn_desc_numel(d) == 1;
}

/* R, T and n groups of same-shaped float tensors (X, G, states). */
static vn_status check_inputs(const vn_op_ctx *ctx, const char *where, opt_plan *p)
{
    int32_t per = 2 + p->states, ni = ctx->num_inputs;
    p->n = (ni - 2) / per;
    if (ni < 2 + per || (ni - 2) % per != 0 || p->n * (1 + p->states) > OPT_MAX_OUT)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "%d inputs: R, T and n groups of %d (X, G, state) are needed, n at most "
                        "%d",
                        (int)ni, (int)per, OPT_MAX_OUT / (1 + p->states));
    const vn_tensor_desc *in = ctx->inputs;
    if (!scalar(&in[0]) || !vn_cast_is_float(in[0].dtype))
        return vn_error(VN_ERR_SHAPE, where, "R must be a float scalar");
    if (!scalar(&in[1]) || in[1].dtype != VN_I64)
        return vn_error(VN_ERR_SHAPE, where, "T must be an i64 scalar");
    for (int32_t i = 0; i < p->n; i++)
        for (int32_t k = 1; k < per; k++) {
            const vn_tensor_desc *x = &in[2 + i], *o = &in[2 + k * p->n + i];
            bool same = o->rank == x->rank && o->dtype == x->dtype;
            for (int32_t d = 0; same && d < x->rank; d++) same = o->dims[d] == x->dims[d];
            if (!same || !vn_cast_is_float(x->dtype)) {
                char a[96], b[96];
                return vn_error(VN_ERR_SHAPE, where,
                                "input %d is %s, X (input %d) %s: they must be one float shape",
                                (int)(2 + k * p->n + i), vn_desc_format(o, a, sizeof a),
                                (int)(2 + i), vn_desc_format(x, b, sizeof b));
            }
        }
    return VN_OK;
}

static vn_status opt_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    opt_plan p;
    vn_status st = get_attrs(ctx, where, &p);
    if (st == VN_OK) st = check_inputs(ctx, where, &p);
    if (st != VN_OK) return st;
    for (int32_t k = 0; k < OPT_MAX_OUT; k++) out[k].rank = -1; /* no such output */
    for (int32_t k = 0; k < p.n * (1 + p.states); k++)          /* X_new, then the states */
        out[k] = ctx->inputs[2 + (k < p.n ? k : k + p.n)];
    return VN_OK;
}

static vn_status opt_plan_make(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                               size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    opt_plan *p = malloc(sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = get_attrs(ctx, where, p);
    if (st == VN_OK) st = check_inputs(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *data = p;
    *workspace = 0;
    return VN_OK;
}

/* One element: x and the states s[] in, their new values out. */
static double step(const opt_plan *p, double r, int64_t t, double x, double g, double *s)
{
    double gr = p->norm * x + g;
    switch (p->kind) {
    case OPT_ADAGRAD:
        s[0] += gr * gr;
        return x - r / (1.0 + (double)t * p->decay) * gr / (sqrt(s[0]) + p->eps);
    case OPT_MOMENTUM:
    case OPT_NESTEROV:
        s[0] = p->alpha * s[0] + (t > 0 ? p->beta : 1.0) * gr;
        return x - r * (p->kind == OPT_MOMENTUM ? s[0] : gr + p->alpha * s[0]);
    default: { /* Adam */
        s[0] = p->alpha * s[0] + (1.0 - p->alpha) * gr;
        s[1] = p->beta * s[1] + (1.0 - p->beta) * gr * gr;
        double ra =
            t > 0 ? r * sqrt(1.0 - pow(p->beta, (double)t)) / (1.0 - pow(p->alpha, (double)t)) : r;
        return (1.0 - p->norm_post) * (x - ra * (s[0] / (sqrt(s[1]) + p->eps)));
    }
    }
}

static vn_status opt_run(const vn_op_run_ctx *ctx)
{
    const opt_plan *p = ctx->plan;
    const vn_tensor *in = ctx->inputs;
    double r = vn_cast_load_f64(in[0].desc.dtype, in[0].data, 0);
    int64_t t = vn_cast_load_i64(in[1].desc.dtype, in[1].data, 0);
    for (int32_t i = 0; i < p->n; i++) {
        const vn_tensor *x = &in[2 + i], *g = &in[2 + p->n + i];
        vn_dtype dt = x->desc.dtype;
        for (int64_t e = 0, ne = vn_desc_numel(&x->desc); e < ne; e++) {
            double s[2];
            for (int32_t k = 0; k < p->states; k++)
                s[k] = vn_cast_load_f64(dt, in[2 + (2 + k) * p->n + i].data, e);
            double xv = step(p, r, t, vn_cast_load_f64(dt, x->data, e),
                             vn_cast_load_f64(dt, g->data, e), s);
            vn_cast_store_f64(dt, ctx->outputs[i].data, e, xv);
            for (int32_t k = 0; k < p->states; k++)
                vn_cast_store_f64(dt, ctx->outputs[(1 + k) * p->n + i].data, e, s[k]);
        }
    }
    return VN_OK;
}

#define OPT_DEF(name, min_in)                                                                      \
    {                                                                                              \
        name, OPT_DOMAIN, min_in, 64, OPT_MAX_OUT, VN_DTYPES_FLOAT | VN_DTYPES_F64, opt_infer,     \
            opt_plan_make, free, opt_run                                                           \
    }

const vn_op_def vn_adagrad_def = OPT_DEF("Adagrad", 5), vn_momentum_def = OPT_DEF("Momentum", 5),
                vn_adam_def = OPT_DEF("Adam", 6);
