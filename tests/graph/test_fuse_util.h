/*
 * test_fuse_util.h — what the O2 fusion tests share: building small ONNX
 * graphs with any shapes and attributes, compiling and running them at
 * O0 / O1 / O2, checking that every level gives O0's outputs (1e-5 relative,
 * f32), and reading a pass's change report.
 */
#ifndef VINCI_TEST_FUSE_UTIL_H
#define VINCI_TEST_FUSE_UTIL_H

#include <stdlib.h>

#include "graph/compile.h"
#include "onnx_build.h"
#include "vt.h"

#define FZ_MAX_IO 16

static inline void fz_input(ob *g, const char *name, int rank, const int64_t *dims)
{
    ob_value_info(g, 11, name, OB_FLOAT, rank, dims, NULL);
}

static inline void fz_output(ob *g, const char *name)
{
    ob_value_info(g, 12, name, OB_FLOAT, -1, NULL, NULL);
}

static inline void fz_init(ob *g, const char *name, int rank, const int64_t *dims, const float *v)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    ob t = {0};
    ob_tensor_raw(&t, name, OB_FLOAT, rank, dims, v, (size_t)n * sizeof *v);
    ob_msg(g, 5, &t);
}

/* A random initializer in [lo, hi). */
static inline void fz_rand_init(ob *g, vt_rng *r, const char *name, int rank, const int64_t *dims,
                                double lo, double hi)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *v = malloc((size_t)n * sizeof *v);
    vt_fill(r, v, (size_t)n, lo, hi);
    fz_init(g, name, rank, dims, v);
    free(v);
}

static inline void fz_scalar(ob *g, const char *name, float v)
{
    fz_init(g, name, 0, NULL, &v);
}

static inline void fz_attr_float(ob *attrs, const char *name, float v)
{
    ob a = {0};
    ob_str(&a, 1, name);
    ob_int(&a, 20, 1);
    ob_float(&a, 2, v);
    ob_msg(attrs, 5, &a);
}

static inline void fz_attr_str(ob *attrs, const char *name, const char *v)
{
    ob a = {0};
    ob_str(&a, 1, name);
    ob_int(&a, 20, 3);
    ob_bytes(&a, 4, v, strlen(v));
    ob_msg(attrs, 5, &a);
}

static inline void fz_attr_ints(ob *attrs, const char *name, int n, const int64_t *v)
{
    ob a = {0};
    ob_str(&a, 1, name);
    ob_int(&a, 20, 7);
    for (int i = 0; i < n; i++) ob_int(&a, 8, v[i]);
    ob_msg(attrs, 5, &a);
}

/* A node with up to 4 inputs ("" = omitted) and one output. */
static inline void fz_node(ob *g, const char *op, const char *name, const char *in0,
                           const char *in1, const char *in2, const char *out, ob *attrs)
{
    const char *ins[4] = {in0, in1, in2, NULL}, *outs[2] = {out, NULL};
    ob_node(g, op, name, ins, outs, attrs);
}

/* Live nodes of op type `op` in a compiled model. */
static inline int fz_count_ops(const vn_model *m, const char *op)
{
    int c = 0;
    for (int32_t i = 0; i < m->num_nodes; i++)
        c += !m->nodes[i].dead && !strcmp(m->nodes[i].op_type, op);
    return c;
}

static inline vn_graph *fz_load(ob *g, int64_t opset)
{
    ob_str(g, 2, "fuse");
    ob m = ob_model(g, opset);
    vn_graph *gr = NULL;
    vn_status st = vn_graph_load_onnx_bytes(m.p, m.n, "fuse.onnx", NULL, &gr);
    VT_CHECK(st == VN_OK, "load: %s", vn_last_error());
    ob_free(&m);
    return gr;
}

/* The report of pass `name` in `s`, NULL if absent. */
static inline const vn_pass_report *fz_report(const vn_model_stats *s, const char *name)
{
    for (int32_t i = 0; i < s->num_reports; i++)
        if (!strcmp(s->reports[i].pass, name)) return &s->reports[i];
    return NULL;
}

static inline int32_t fz_changes(const vn_model_stats *s, const char *name)
{
    const vn_pass_report *r = fz_report(s, name);
    return r ? r->changes : -1;
}

/* Input shapes to compile for (NULL: the model's own) and the precision
 * (vn_precision), for fz_run / fz_levels. */
static const vn_input_shape *fz_shapes;
static int32_t fz_num_shapes;
static int32_t fz_precision;

/* Compile at `level`, run, copy each output's floats (numel into n[k]). */
static inline void fz_run(vn_graph *gr, int level, const vn_named_tensor *in, int nin,
                          const char *const *outs, float **got, int64_t *n, vn_model_stats *s)
{
    vn_compile_options o = {.opt_level = level,
                            .shapes = fz_shapes,
                            .num_shapes = fz_num_shapes,
                            .precision = fz_precision};
    vn_model *m = NULL;
    vn_model_ctx *ctx = NULL;
    VT_OK(vn_model_compile(gr, &o, &m));
    if (!m) return;
    VT_OK(vn_model_ctx_create(m, &ctx));
    VT_OK(vn_model_run(m, ctx, in, nin, NULL, 0));
    for (int k = 0; outs[k]; k++) {
        vn_tensor t = {0};
        VT_OK(vn_model_ctx_output(ctx, outs[k], &t));
        n[k] = t.data ? vn_desc_numel(&t.desc) : 0;
        got[k] = malloc((size_t)(n[k] ? n[k] : 1) * sizeof(float));
        if (n[k]) memcpy(got[k], t.data, (size_t)n[k] * sizeof(float));
    }
    VT_OK(vn_model_get_stats(m, s));
    vn_model_ctx_destroy(ctx);
    vn_model_destroy(m);
}

/* Compile at O3 with --precision bf16 and run: `pass` made `want` changes,
 * and the first output has `numel` values, all finite (bf16 results are far
 * from f32's: this checks that such a model compiles and runs). */
static inline void fz_check_bf16(vn_graph *gr, const vn_named_tensor *in, int nin,
                                 const char *const *outs, const char *pass, int want, int64_t numel)
{
    float *got[FZ_MAX_IO] = {NULL};
    int64_t n[FZ_MAX_IO] = {0};
    vn_model_stats s;
    memset(&s, 0, sizeof s);
    fz_precision = VN_PRECISION_BF16;
    fz_run(gr, 3, in, nin, outs, got, n, &s);
    fz_precision = VN_PRECISION_F32;
    VT_CHECK(fz_changes(&s, pass) == want, "%s: %d changes under bf16, want %d", pass,
             fz_changes(&s, pass), want);
    bool finite = n[0] == numel;
    for (int64_t i = 0; finite && i < n[0]; i++) finite = isfinite(got[0][i]);
    VT_CHECK(finite, "bf16 output: %lld values, want %lld finite", (long long)n[0],
             (long long)numel);
    for (int k = 0; outs[k]; k++) free(got[k]);
}

/* O3's stats from the last fz_levels. */
static vn_model_stats fz_o3;

/* Run at O0 .. O3; every level must match O0 (|a - b| <= 1e-5 |b| + 1e-6).
 * Returns O2's stats in *o2 (O3's in fz_o3). */
static inline void fz_levels(vn_graph *gr, const vn_named_tensor *in, int nin,
                             const char *const *outs, vn_model_stats *o2)
{
    float *got[4][FZ_MAX_IO] = {{0}};
    int64_t n[4][FZ_MAX_IO] = {{0}};
    vn_model_stats s[4];
    memset(s, 0, sizeof s);
    for (int level = 0; level <= 3; level++)
        fz_run(gr, level, in, nin, outs, got[level], n[level], &s[level]);
    for (int level = 1; level <= 3; level++)
        for (int k = 0; outs[k]; k++) {
            int64_t bad = 0;
            VT_CHECK(n[level][k] == n[0][k] && n[0][k] > 0, "O%d output %s: %lld values, O0 %lld",
                     level, outs[k], (long long)n[level][k], (long long)n[0][k]);
            for (int64_t i = 0; n[level][k] == n[0][k] && i < n[0][k]; i++) {
                float a = got[level][k][i], b = got[0][k][i];
                bad += !(fabsf(a - b) <= 1e-5f * fabsf(b) + 1e-6f);
            }
            VT_CHECK(bad == 0, "O%d output %s: %lld of %lld values differ from O0", level, outs[k],
                     (long long)bad, (long long)n[0][k]);
        }
    for (int level = 0; level <= 3; level++)
        for (int k = 0; outs[k]; k++) free(got[level][k]);
    *o2 = s[2];
    fz_o3 = s[3];
}

#endif /* VINCI_TEST_FUSE_UTIL_H */
