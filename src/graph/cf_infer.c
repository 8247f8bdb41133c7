/*
 * cf_infer.c — compile-time output descriptors of If, Loop and Scan.
 *
 * The bodies are compiled (through the node's cache, so the run reuses the
 * models) for the descriptors the outer model has here. An output's shape
 * is fixed when the bodies fix it:
 *   If    a constant condition picks one branch (the other is not compiled:
 *         it may not even infer for these shapes, as in affine_grid's 2-D /
 *         3-D branches); otherwise both are compiled, must agree in dtype,
 *         and an output is dynamic where their shapes differ.
 *   Loop  carried values whose body output has their input's shape keep it;
 *         scan outputs are [T, ...] when the trip count T is known here: M
 *         constant and the condition omitted, constant false, or constant
 *         true with the body passing it through (or making it constant
 *         true). Otherwise dynamic.
 *   Scan  T is the scan inputs' extent; states must keep their shapes.
 * A node whose inputs are themselves dynamic cannot compile its bodies yet:
 * its outputs are dynamic with the dtypes the subgraph declares.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/cf.h"
#include "graph/onnx.h"

#define W "vn_model_compile"

typedef struct infer {
    vn_model *m;
    int32_t node;
    vn_cnode *n;
    vn_cf *cf;
    char label[400];
} infer;

static vn_status fail(const infer *x, vn_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static vn_status fail(const infer *x, vn_status st, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return vn_error(st, W, "%s: %s", x->label, what);
}

static bool same_desc(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank && d < VN_MAX_RANK; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static bool is_dynamic(const vn_tensor_desc *d)
{
    if (d->rank < 0) return true;
    for (int32_t i = 0; i < d->rank && i < VN_MAX_RANK; i++)
        if (d->dims[i] < 0) return true;
    return false;
}

static vn_cvalue *out_value(const infer *x, int32_t k)
{
    return &x->m->values[x->n->outputs[k]];
}

static void set_out(const infer *x, int32_t k, const vn_tensor_desc *d)
{
    vn_cvalue *v = out_value(x, k);
    v->desc = *d;
    v->known = true;
    v->dynamic = is_dynamic(d);
}

/* Output k dynamic: its dtype, dims -1 (rank -1 when not even that is known). */
static void set_dynamic(const infer *x, int32_t k, vn_dtype dt, int32_t rank)
{
    vn_tensor_desc d = {dt, rank, {0}};
    for (int32_t i = 0; i < VN_MAX_RANK; i++) d.dims[i] = -1;
    set_out(x, k, &d);
    out_value(x, k)->dynamic = true;
}

/* Unnamed outputs become anonymous values (the model reads every output). */
static vn_status name_outputs(infer *x)
{
    for (int32_t k = 0; k < x->n->num_outputs; k++) {
        if (x->n->outputs[k] >= 0) continue;
        int32_t v = vn_cg_add_value(x->m, "", VN_CV_ACT);
        if (v < 0) return VN_ERR_OUT_OF_MEMORY;
        x->m->values[v].producer = x->node;
        x->n = &x->m->nodes[x->node];
        x->n->outputs[k] = v;
    }
    return VN_OK;
}

/* Compile body b for the formal inputs (data where known: Loop probes its
 * first iteration) and the outer values' current descriptors. *sub NULL
 * (and VN_OK) when an input is dynamic; *special: compiled for values. */
static vn_status compile_body(const infer *x, int32_t b, const vn_tensor *formal,
                              const vn_model **sub, bool *special)
{
    vn_cf_body *cb = &x->cf->bodies[b];
    int32_t count = cb->num_inputs + cb->num_outer;
    vn_tensor *t = malloc(((size_t)count + 1) * sizeof *t);
    bool *fixed = calloc((size_t)count + 1, sizeof *fixed);
    vn_status st = t && fixed ? VN_OK : VN_ERR_OUT_OF_MEMORY;
    bool dynamic = false;
    for (int32_t j = 0; st == VN_OK && j < count; j++) {
        int32_t o = j - cb->num_inputs;
        const vn_cvalue *v = o < 0 ? NULL : &x->m->values[x->n->inputs[cb->outer_pos[o]]];
        fixed[j] = v && vn_cf_fixed(v);
        t[j] = v ? (vn_tensor){v->desc, fixed[j] ? (void *)v->data : NULL} : formal[j];
        dynamic |= (v && v->dynamic) || is_dynamic(&t[j].desc);
    }
    *sub = NULL;
    *special = false;
    if (st == VN_OK && !dynamic) st = vn_cf_body_model(x->cf, cb, t, fixed, sub, special);
    free(t);
    free(fixed);
    return st;
}

static const vn_tensor_desc *body_out(const vn_model *sub, int32_t i)
{
    return &sub->values[sub->outputs[i]].desc;
}

/* The dtype subgraph b declares for output i (VN_DTYPE_COUNT: none). */
static vn_dtype declared(const infer *x, int32_t b, int32_t i)
{
    const vn_gbody *g = x->cf->bodies[b].body;
    int32_t v = g->outputs[i];
    vn_dtype dt;
    size_t size;
    if (g->values[v].known) return g->values[v].desc.dtype;
    if (vn_onnx_dtype(g->output_infos[i].onnx_dtype, &dt, &size)) return dt;
    return VN_DTYPE_COUNT;
}

/* Outputs dynamic with the dtypes body b declares for outputs first.. */
static vn_status declared_outputs(const infer *x, int32_t b, int32_t first)
{
    for (int32_t k = 0; k < x->n->num_outputs; k++) {
        vn_dtype dt = declared(x, b, first + k);
        if (dt == VN_DTYPE_COUNT)
            return fail(x, VN_ERR_UNSUPPORTED,
                        "an input's shape is known only at run time and %s does not declare the "
                        "type of output %d",
                        x->cf->bodies[b].attr, (int)(first + k));
        set_dynamic(x, k, dt, -1);
    }
    return VN_OK;
}

/* A scalar-like input (numel 1) of dtype `want`; *value its constant value or -1. */
static vn_status scalar_input(const infer *x, int32_t k, const char *what, vn_dtype want,
                              int64_t *value)
{
    const vn_cvalue *v = &x->m->values[x->n->inputs[k]];
    char d[160];
    *value = -1;
    if (v->desc.dtype != want || (!v->dynamic && vn_desc_numel(&v->desc) != 1))
        return fail(x, VN_ERR_DTYPE, "%s '%s' is %s; it must be %s with one element", what, v->name,
                    vn_desc_format(&v->desc, d, sizeof d), vn_dtype_name(want));
    if (v->kind != VN_CV_CONST || !v->data) return VN_OK;
    if (want == VN_BOOL)
        *value = *(const uint8_t *)v->data != 0;
    else
        memcpy(value, v->data, sizeof *value);
    return VN_OK;
}

/* ---- If ------------------------------------------------------------------------ */

static vn_status infer_if(infer *x)
{
    if (x->n->inputs[0] < 0) return fail(x, VN_ERR_FORMAT, "the condition is omitted");
    int64_t cond;
    vn_status st = scalar_input(x, 0, "the condition", VN_BOOL, &cond);
    const vn_model *br[2] = {NULL, NULL};
    bool special[2] = {false, false};
    for (int32_t b = 0; b < 2 && st == VN_OK; b++)
        if (cond < 0 || cond == (b == 0)) st = compile_body(x, b, NULL, &br[b], &special[b]);
    if (st != VN_OK) return st;
    int32_t taken = cond == 0 ? 1 : 0;
    if (!br[taken] || (cond < 0 && !br[1])) return declared_outputs(x, taken, 0);
    if (special[0] || special[1]) cond = -1; /* shapes of this compile's values only */
    for (int32_t k = 0; k < x->n->num_outputs; k++) {
        const vn_tensor_desc *a = body_out(br[taken], k);
        vn_dtype other =
            br[1 - taken] ? body_out(br[1 - taken], k)->dtype : declared(x, 1 - taken, k);
        if (other != VN_DTYPE_COUNT && other != a->dtype)
            return fail(x, VN_ERR_DTYPE, "output %d is %s in %s but %s in %s", (int)k,
                        vn_dtype_name(a->dtype), x->cf->bodies[taken].attr, vn_dtype_name(other),
                        x->cf->bodies[1 - taken].attr);
        if (special[taken])
            set_dynamic(x, k, a->dtype, -1);
        else if (cond >= 0 || same_desc(a, body_out(br[1], k)))
            set_out(x, k, a);
        else
            set_dynamic(x, k, a->dtype, a->rank == body_out(br[1], k)->rank ? a->rank : -1);
    }
    return VN_OK;
}

/* ---- Loop ------------------------------------------------------------------------ */

/* The body's condition output is true whenever its input is: passed through
 * (directly or by an Identity copy), or a constant true. */
static bool keeps_going(const vn_model *sub)
{
    int32_t v = sub->outputs[0];
    const vn_cvalue *c = &sub->values[v];
    const vn_cnode *p = c->producer >= 0 ? &sub->nodes[c->producer] : NULL;
    if (p && !strcmp(p->op_type, "Identity") && !p->domain[0] && p->num_inputs == 1) {
        v = p->inputs[0];
        c = &sub->values[v];
    }
    if (v == sub->inputs[1]) return true;
    return c->kind == VN_CV_CONST && c->data && *(const uint8_t *)c->data;
}

/* T when known at compile time, else -1. */
static vn_status loop_trips(infer *x, const vn_model *sub, int64_t *trips)
{
    int64_t M = -1, cond = -1;
    bool has_m = x->n->inputs[0] >= 0, has_cond = x->n->inputs[1] >= 0;
    vn_status st = has_m ? scalar_input(x, 0, "the trip count M", VN_I64, &M) : VN_OK;
    if (st == VN_OK && has_cond) st = scalar_input(x, 1, "the condition", VN_BOOL, &cond);
    if (st != VN_OK) return st;
    bool forever = sub && keeps_going(sub) && (!has_cond || cond == 1);
    if (!has_m && (!has_cond || forever))
        return fail(x, VN_ERR_INVALID_ARG,
                    "the loop has no trip count and its condition never becomes false");
    *trips = -1;
    if (cond == 0)
        *trips = 0;
    else if (has_m && M >= 0 && (!has_cond || forever))
        *trips = M;
    else if (has_m && x->m->values[x->n->inputs[0]].kind == VN_CV_CONST && M < 0)
        *trips = 0;
    return VN_OK;
}

static vn_status infer_loop(infer *x)
{
    int32_t N = x->cf->num_explicit - 2, K = x->n->num_outputs - N;
    vn_tensor *formal = malloc(((size_t)N + 3) * sizeof *formal);
    if (!formal) return VN_ERR_OUT_OF_MEMORY;
    static const int64_t first = 0; /* the first iteration's number and condition */
    static const uint8_t yes = 1;
    formal[0] = (vn_tensor){{VN_I64, 0, {0}}, (void *)&first};
    formal[1] = (vn_tensor){{VN_BOOL, 0, {0}}, (void *)&yes};
    for (int32_t j = 0; j < N; j++) {
        if (x->n->inputs[2 + j] < 0) {
            free(formal);
            return fail(x, VN_ERR_FORMAT, "carried value %d is omitted", (int)j);
        }
        const vn_cvalue *v = &x->m->values[x->n->inputs[2 + j]];
        formal[2 + j] = (vn_tensor){v->desc, vn_cf_fixed(v) ? (void *)v->data : NULL};
    }
    const vn_model *sub;
    bool special;
    vn_status st = compile_body(x, 0, formal, &sub, &special);
    int64_t trips = -1;
    if (st == VN_OK) st = loop_trips(x, sub, &trips);
    if (st == VN_OK && !sub) st = declared_outputs(x, 0, 1);
    if (st != VN_OK || !sub) {
        free(formal);
        return st;
    }
    const vn_tensor_desc *c = body_out(sub, 0);
    bool fixed = !special; /* a specialised body's shapes hold for its first iteration only */
    char d[160];
    if (c->dtype != VN_BOOL || (!is_dynamic(c) && vn_desc_numel(c) != 1))
        st = fail(x, VN_ERR_DTYPE,
                  "body output 0 (the condition) is %s; it must be bool with one "
                  "element",
                  vn_desc_format(c, d, sizeof d));
    for (int32_t j = 0; j < N && st == VN_OK; j++) {
        const vn_tensor_desc *o = body_out(sub, 1 + j);
        if (o->dtype != formal[2 + j].desc.dtype)
            st = fail(x, VN_ERR_DTYPE, "carried value %d enters as %s and leaves the body as %s",
                      (int)j, vn_dtype_name(formal[2 + j].desc.dtype), vn_dtype_name(o->dtype));
        else if (!special && same_desc(o, &formal[2 + j].desc))
            set_out(x, j, o);
        else {
            set_dynamic(x, j, o->dtype, -1);
            fixed = false;
        }
    }
    for (int32_t k = 0; k < K && st == VN_OK; k++) {
        vn_tensor_desc e = *body_out(sub, 1 + N + k), o = {e.dtype, e.rank + 1, {trips}};
        if (e.rank >= VN_MAX_RANK) {
            st = fail(x, VN_ERR_UNSUPPORTED, "scan output %d has rank %d", (int)k, (int)e.rank);
            break;
        }
        for (int32_t i = 0; i < e.rank; i++) o.dims[1 + i] = e.dims[i];
        if (fixed && trips >= 0 && !is_dynamic(&e))
            set_out(x, N + k, &o);
        else
            set_dynamic(x, N + k, e.dtype, fixed && e.rank >= 0 ? e.rank + 1 : -1);
    }
    x->cf->static_trips = fixed ? trips : -1;
    free(formal);
    return st;
}

/* ---- Scan ------------------------------------------------------------------------ */

static vn_status norm_axis(const infer *x, int64_t *axis, int32_t rank, const char *what, int32_t i)
{
    if (*axis < 0) *axis += rank;
    if (*axis < 0 || *axis >= rank)
        return fail(x, VN_ERR_INVALID_ARG, "%s %d is outside a rank-%d tensor", what, (int)i,
                    (int)rank);
    return VN_OK;
}

/* The formal descriptors of one step; *trips the scan extent. */
static vn_status scan_formal(infer *x, vn_tensor *formal, int64_t *trips)
{
    vn_cf *cf = x->cf;
    int32_t lead = cf->opset < 9, M = cf->num_scan_inputs, N = cf->num_explicit - lead - M;
    char d[160];
    *trips = -1;
    for (int32_t j = 0; j < N + M; j++) {
        int32_t v = x->n->inputs[lead + j];
        if (v < 0) return fail(x, VN_ERR_FORMAT, "input %d is omitted", (int)(lead + j));
        const vn_tensor_desc *in = &x->m->values[v].desc;
        if (x->m->values[v].dynamic)
            return fail(x, VN_ERR_UNSUPPORTED, "input %d has a shape known only at run time",
                        (int)(lead + j));
        if (lead && in->rank < (j < N ? 1 : 2))
            return fail(x, VN_ERR_INVALID_ARG, "input %d is %s: Scan-8 needs [batch, ...]",
                        (int)(lead + j), vn_desc_format(in, d, sizeof d));
        vn_tensor_desc per = lead ? vn_cf_drop_dim(in, 0) : *in; /* Scan-8: per batch entry */
        if (j < N) {
            formal[j] = (vn_tensor){per, NULL};
            continue;
        }
        int64_t *axis = &cf->in_axes[j - N];
        vn_status st = norm_axis(x, axis, per.rank, "scan_input_axes", j - N);
        if (st != VN_OK) return st;
        if (*trips >= 0 && per.dims[*axis] != *trips)
            return fail(x, VN_ERR_SHAPE, "scan input %d has %lld steps, input 0 has %lld",
                        (int)(j - N), (long long)per.dims[*axis], (long long)*trips);
        *trips = per.dims[*axis];
        formal[j] = (vn_tensor){vn_cf_drop_dim(&per, *axis), NULL};
    }
    if (lead && x->n->inputs[0] >= 0 && x->m->values[x->n->inputs[0]].desc.dtype != VN_I32 &&
        x->m->values[x->n->inputs[0]].desc.dtype != VN_I64)
        return fail(x, VN_ERR_DTYPE, "sequence_lens must be an integer tensor");
    return VN_OK;
}

static vn_status infer_scan(infer *x)
{
    vn_cf *cf = x->cf;
    int32_t lead = cf->opset < 9, M = cf->num_scan_inputs, N = cf->num_explicit - lead - M;
    int32_t K = x->n->num_outputs - N;
    vn_tensor *formal = malloc(((size_t)(N + M) + 1) * sizeof *formal);
    if (!formal) return VN_ERR_OUT_OF_MEMORY;
    int64_t trips, batch = lead ? x->m->values[x->n->inputs[1]].desc.dims[0] : 0;
    const vn_model *sub = NULL;
    bool special = false;
    vn_status st = scan_formal(x, formal, &trips);
    if (st == VN_OK) st = compile_body(x, 0, formal, &sub, &special);
    if (st == VN_OK && !sub)
        st = fail(x, VN_ERR_UNSUPPORTED, "an outer value's shape is known only at run time");
    char a[160], b[160];
    for (int32_t j = 0; j < N && st == VN_OK; j++) {
        const vn_tensor_desc *o = body_out(sub, j);
        if (!same_desc(o, &formal[j].desc))
            st = fail(x, VN_ERR_SHAPE, "state %d enters as %s and leaves the body as %s", (int)j,
                      vn_desc_format(&formal[j].desc, a, sizeof a), vn_desc_format(o, b, sizeof b));
        else {
            vn_tensor_desc whole = lead ? vn_cf_add_dim(o, 0, batch) : *o;
            set_out(x, j, &whole);
        }
    }
    for (int32_t k = 0; k < K && st == VN_OK; k++) {
        const vn_tensor_desc *e = body_out(sub, N + k);
        if (is_dynamic(e) || e->rank + 1 + lead > VN_MAX_RANK) {
            st = fail(x, VN_ERR_UNSUPPORTED, "scan output %d is %s", (int)k,
                      vn_desc_format(e, a, sizeof a));
            break;
        }
        if ((st = norm_axis(x, &cf->out_axes[k], e->rank + 1, "scan_output_axes", k)) != VN_OK)
            break;
        vn_tensor_desc o = vn_cf_add_dim(e, cf->out_axes[k], trips);
        if (lead) o = vn_cf_add_dim(&o, 0, batch);
        set_out(x, N + k, &o);
    }
    free(formal);
    return st;
}

vn_status vn_cf_infer(vn_model *m, int32_t node)
{
    infer x = {m, node, &m->nodes[node], m->nodes[node].cf, ""};
    vn_cf_label(m, node, x.label, sizeof x.label);
    vn_status st = name_outputs(&x);
    for (int32_t k = 0; st == VN_OK && k < x.n->num_inputs; k++)
        if (x.n->inputs[k] >= 0 && !m->values[x.n->inputs[k]].known)
            st = fail(&x, VN_ERR_INTERNAL, "input '%s' has no shape yet",
                      m->values[x.n->inputs[k]].name);
    if (st != VN_OK) return st;
    switch (x.cf->kind) {
    case VN_CF_IF:
        return infer_if(&x);
    case VN_CF_LOOP:
        return infer_loop(&x);
    default:
        return infer_scan(&x);
    }
}
