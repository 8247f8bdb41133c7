/*
 * ml_tree_ensemble.c — ai.onnx.ml TreeEnsemble (opset 5): X [N, F] (f32,
 * f64, f16) through a forest; Y [N, n_targets] in X's dtype.
 *
 * The attributes describe interior nodes (nodes_*: mode, feature, split,
 * true / false child and whether each child is a leaf, optional
 * missing_value_tracks_true) and leaves (leaf_weights, leaf_targetids). At
 * plan time every tree is unrolled from its root, depth first with the true
 * branch first, into one node array; BRANCH_MEMBER nodes take the next
 * NaN-terminated run of membership_values in that visiting order (the ONNX
 * reference's rule). A root whose two children are the same leaf is that
 * leaf (the degenerate one-leaf tree). Compare modes: 0 <=, 1 <, 2 >=, 3 >,
 * 4 ==, 5 !=, 6 member; a NaN feature goes true when missing_value_tracks_true
 * is set. Each tree adds its leaf weight to its target, combined by
 * aggregate_function (0 average, 1 sum, 2 min, 3 max) in double; a target
 * no tree reaches is 0, or for min / max the dtype's largest / lowest finite
 * value (the reference's np.finfo). Only post_transform 0 (none) is
 * implemented.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

#define TE_MAX_DEPTH 4096

typedef struct te_node {
    int32_t mode;
    bool nan_true;
    int64_t feature, set_begin, set_end; /* the member set: members[set_begin, set_end) */
    double split;
    int64_t child[2]; /* true, false: a node index, or -(leaf + 1) */
} te_node;

typedef struct te_plan {
    int64_t n_targets, ntrees, nnodes, cap, nleaves, next_member, nmembers;
    int32_t aggregate;
    int64_t *roots, *leaf_target; /* roots: encoded like te_node.child */
    double *leaf_weight, *members;
    te_node *nodes;
} te_plan;

/* The raw attributes, read through the registry's view. */
typedef struct te_attrs {
    const vn_attr *modes, *splits, *members, *weights;
    const vn_attr *feat, *tid, *fid, *tleaf, *fleaf, *targets, *roots, *nan_true;
} te_attrs;

static void te_free(void *data)
{
    te_plan *p = data;
    if (!p) return;
    free(p->roots), free(p->leaf_target), free(p->leaf_weight), free(p->members), free(p->nodes);
    free(p);
}

static double tensor_at(const vn_attr *a, int64_t i)
{
    return vn_cast_load_f64(a->t->desc.dtype, a->t->data, i);
}

static int64_t tensor_len(const vn_attr *a)
{
    return a && a->t ? vn_desc_numel(&a->t->desc) : 0;
}

static vn_status find_attrs(const char *where, const vn_attrs *attrs, te_attrs *a, int64_t *n)
{
    struct {
        const vn_attr **slot;
        const char *name;
        vn_attr_type type;
        bool required;
    } want[] = {
        {&a->modes, "nodes_modes", VN_ATTR_TENSOR, true},
        {&a->splits, "nodes_splits", VN_ATTR_TENSOR, true},
        {&a->members, "membership_values", VN_ATTR_TENSOR, false},
        {&a->weights, "leaf_weights", VN_ATTR_TENSOR, true},
        {&a->feat, "nodes_featureids", VN_ATTR_INTS, true},
        {&a->tid, "nodes_truenodeids", VN_ATTR_INTS, true},
        {&a->fid, "nodes_falsenodeids", VN_ATTR_INTS, true},
        {&a->tleaf, "nodes_trueleafs", VN_ATTR_INTS, true},
        {&a->fleaf, "nodes_falseleafs", VN_ATTR_INTS, true},
        {&a->targets, "leaf_targetids", VN_ATTR_INTS, true},
        {&a->roots, "tree_roots", VN_ATTR_INTS, true},
        {&a->nan_true, "nodes_missing_value_tracks_true", VN_ATTR_INTS, false},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const vn_attr *x = vn_attrs_find(attrs, want[i].name);
        if (!x && !want[i].required) {
            *want[i].slot = NULL;
            continue;
        }
        if (!x || x->type != want[i].type || (x->type == VN_ATTR_TENSOR && !x->t) ||
            (x->type == VN_ATTR_INTS && x->count > 0 && !x->ints))
            return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' is %s", want[i].name,
                            x ? "of the wrong type" : "required");
        *want[i].slot = x;
    }
    *n = a->feat->count;
    int64_t len[] = {tensor_len(a->modes),
                     tensor_len(a->splits),
                     a->tid->count,
                     a->fid->count,
                     a->tleaf->count,
                     a->fleaf->count,
                     a->nan_true ? a->nan_true->count : *n};
    for (size_t i = 0; i < sizeof len / sizeof len[0]; i++)
        if (len[i] != *n)
            return vn_error(VN_ERR_INVALID_ARG, where,
                            "the nodes_* attributes must have one length (%lld and %lld)",
                            (long long)*n, (long long)len[i]);
    if (tensor_len(a->weights) != a->targets->count)
        return vn_error(VN_ERR_INVALID_ARG, where, "leaf_weights and leaf_targetids differ");
    return VN_OK;
}

/* The encoded node or leaf `idx` (a leaf when is_leaf), unrolled into p. */
static vn_status unroll(const char *where, const te_attrs *a, te_plan *p, int64_t idx, bool is_leaf,
                        int32_t depth, int64_t *out)
{
    int64_t limit = is_leaf ? p->nleaves : a->feat->count;
    if (idx < 0 || idx >= limit || depth > TE_MAX_DEPTH)
        return vn_error(VN_ERR_INVALID_ARG, where, "%s %lld is out of range or too deep",
                        is_leaf ? "leaf" : "node", (long long)idx);
    if (is_leaf) {
        *out = -(idx + 1);
        return VN_OK;
    }
    if (p->nnodes == p->cap) {
        int64_t cap = p->cap ? 2 * p->cap : 64;
        te_node *n = realloc(p->nodes, (size_t)cap * sizeof *n);
        if (!n) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the trees");
        p->nodes = n;
        p->cap = cap;
    }
    int64_t me = p->nnodes++;
    te_node nd = {(int32_t)tensor_at(a->modes, idx),
                  a->nan_true && a->nan_true->ints[idx] != 0,
                  a->feat->ints[idx],
                  0,
                  0,
                  tensor_at(a->splits, idx),
                  {0, 0}};
    if (nd.mode < 0 || nd.mode > 6)
        return vn_error(VN_ERR_INVALID_ARG, where, "node %lld has mode %d", (long long)idx,
                        (int)nd.mode);
    if (nd.mode == 6) { /* the next NaN-terminated run of members */
        nd.set_begin = nd.set_end = p->next_member;
        while (nd.set_end < p->nmembers && !isnan(p->members[nd.set_end])) nd.set_end++;
        p->next_member = nd.set_end + 1;
    }
    vn_status st =
        unroll(where, a, p, a->tid->ints[idx], a->tleaf->ints[idx] != 0, depth + 1, &nd.child[0]);
    if (st == VN_OK)
        st = unroll(where, a, p, a->fid->ints[idx], a->fleaf->ints[idx] != 0, depth + 1,
                    &nd.child[1]);
    p->nodes[me] = nd;
    *out = me;
    return st;
}

static vn_status copy_leaves(const char *where, const te_attrs *a, te_plan *p)
{
    p->nleaves = a->targets->count;
    p->nmembers = tensor_len(a->members);
    p->leaf_target = malloc((size_t)(p->nleaves + 1) * sizeof *p->leaf_target);
    p->leaf_weight = malloc((size_t)(p->nleaves + 1) * sizeof *p->leaf_weight);
    p->members = malloc((size_t)(p->nmembers + 1) * sizeof *p->members);
    p->roots = malloc((size_t)(a->roots->count + 1) * sizeof *p->roots);
    if (!p->leaf_target || !p->leaf_weight || !p->members || !p->roots)
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the trees");
    for (int64_t i = 0; i < p->nleaves; i++) {
        p->leaf_target[i] = a->targets->ints[i];
        p->leaf_weight[i] = tensor_at(a->weights, i);
        if (p->leaf_target[i] < 0 || p->leaf_target[i] >= p->n_targets)
            return vn_error(VN_ERR_INVALID_ARG, where, "leaf %lld has target %lld of %lld",
                            (long long)i, (long long)p->leaf_target[i], (long long)p->n_targets);
    }
    for (int64_t i = 0; i < p->nmembers; i++) p->members[i] = tensor_at(a->members, i);
    return VN_OK;
}

static vn_status te_parse(const vn_op_ctx *ctx, const char *where, te_plan *p)
{
    te_attrs a;
    int64_t n = 0, post = 0, agg = 1;
    vn_status st = find_attrs(where, ctx->attrs, &a, &n);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "n_targets", 1, &p->n_targets);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "post_transform", 0, &post);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "aggregate_function", 1, &agg);
    if (st != VN_OK) return st;
    if (post != 0)
        return vn_error(VN_ERR_UNSUPPORTED, where, "post_transform %lld (only 0, none)",
                        (long long)post);
    if (agg < 0 || agg > 3 || p->n_targets < 1)
        return vn_error(VN_ERR_INVALID_ARG, where, "aggregate_function %lld, n_targets %lld",
                        (long long)agg, (long long)p->n_targets);
    p->aggregate = (int32_t)agg;
    st = copy_leaves(where, &a, p);
    p->ntrees = a.roots->count;
    for (int64_t t = 0; t < p->ntrees && st == VN_OK; t++) {
        int64_t r = a.roots->ints[t];
        bool leaf = r >= 0 && r < n && a.tleaf->ints[r] && a.fleaf->ints[r] &&
                    a.tid->ints[r] == a.fid->ints[r];
        st = unroll(where, &a, p, r, leaf, 0, &p->roots[t]);
    }
    return st;
}

static vn_status te_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    if (x->rank != 2) return vn_error(VN_ERR_SHAPE, where, "X must be [N, F]");
    te_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = te_parse(ctx, where, p);
    int64_t dims[2] = {x->dims[0], p->n_targets};
    *out = vn_so_desc(x->dtype, 2, dims);
    for (int64_t i = 0; st == VN_OK && i < p->nnodes; i++)
        if (p->nodes[i].feature < 0 || p->nodes[i].feature >= x->dims[1])
            st = vn_error(VN_ERR_INVALID_ARG, where, "a node reads feature %lld of %lld",
                          (long long)p->nodes[i].feature, (long long)x->dims[1]);
    te_free(p);
    return st;
}

static vn_status te_plan_make(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                              size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    te_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = te_parse(ctx, where, p);
    if (st != VN_OK) {
        te_free(p);
        return st;
    }
    *data = p;
    return VN_OK;
}

static bool goes_true(const te_plan *p, const te_node *n, double v)
{
    if (isnan(v) && n->nan_true) return true;
    switch (n->mode) {
    case 0:
        return v <= n->split;
    case 1:
        return v < n->split;
    case 2:
        return v >= n->split;
    case 3:
        return v > n->split;
    case 4:
        return v == n->split;
    case 5:
        return v != n->split;
    default:
        for (int64_t i = n->set_begin; i < n->set_end; i++)
            if (p->members[i] == v) return true;
        return false;
    }
}

/* The leaf tree t sends row x to. */
static int64_t leaf_of(const te_plan *p, int64_t t, const vn_tensor *x, int64_t row)
{
    int64_t at = p->roots[t], f = x->desc.dims[1];
    while (at >= 0) {
        const te_node *n = &p->nodes[at];
        double v = vn_cast_load_f64(x->desc.dtype, x->data, row * f + n->feature);
        at = n->child[goes_true(p, n, v) ? 0 : 1];
    }
    return -at - 1;
}

/* The largest finite value of a float dtype. */
static double largest(vn_dtype dt)
{
    switch (dt) {
    case VN_F64:
        return DBL_MAX;
    case VN_F16:
        return 65504.0;
    case VN_BF16:
        return 3.3895313892515355e38;
    default:
        return FLT_MAX;
    }
}

static vn_status te_run(const vn_op_run_ctx *ctx)
{
    const te_plan *p = ctx->plan;
    const vn_tensor *x = &ctx->inputs[0];
    double *acc = malloc((size_t)p->n_targets * sizeof *acc);
    if (!acc) return vn_error(VN_ERR_OUT_OF_MEMORY, "TreeEnsemble", "no memory for a row");
    double big = largest(x->desc.dtype);
    double init = p->aggregate == 2 ? big : p->aggregate == 3 ? -big : 0.0;
    for (int64_t r = 0; r < x->desc.dims[0]; r++) {
        for (int64_t k = 0; k < p->n_targets; k++) acc[k] = init;
        for (int64_t t = 0; t < p->ntrees; t++) {
            int64_t l = leaf_of(p, t, x, r);
            double w = p->leaf_weight[l], *a = &acc[p->leaf_target[l]];
            if (p->aggregate <= 1)
                *a += p->aggregate == 0 ? w / (double)p->ntrees : w;
            else if (p->aggregate == 2)
                *a = w < *a ? w : *a;
            else
                *a = w > *a ? w : *a;
        }
        for (int64_t k = 0; k < p->n_targets; k++)
            vn_cast_store_f64(x->desc.dtype, ctx->outputs[0].data, r * p->n_targets + k, acc[k]);
    }
    free(acc);
    return VN_OK;
}

const vn_op_def vn_tree_ensemble_def = {
    "TreeEnsemble", "ai.onnx.ml", 1,       1,     1, VN_DTYPES_FLOAT | VN_DTYPES_F64,
    te_infer,       te_plan_make, te_free, te_run};
