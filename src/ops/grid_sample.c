/*
 * grid_sample.c — GridSample (ONNX 16 / 20 / 22), following the ONNX
 * reference: X [N, C, D1..Dk] sampled at grid [N, O1..Ok, k] (normalised
 * coordinates in [-1, 1], the last dim first), mode nearest / linear / cubic
 * (bilinear / bicubic before opset 20), padding_mode zeros / border /
 * reflection, align_corners. Output [N, C, O1..Ok].
 *
 * A tensor-product of per-dim taps (1, 2 or 4), each tap's index mapped by
 * the padding mode; coordinates in float as the reference computes them, so
 * rounding and flooring agree at the edges. Scalar: spatial transformers
 * are rare and small next to the convolutions around them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cast.h"
#include "ops/ops_internal.h"

#define GS_MAX_DIMS 3

enum { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

typedef struct gs_plan {
    vn_dtype dt, gdt;
    int32_t k, mode, pad;
    bool align;
    int64_t N, C, in[GS_MAX_DIMS], out[GS_MAX_DIMS], in_sp, out_sp;
} gs_plan;

static int32_t pick(const char *s, const char *const *names, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

static vn_status parse(const vn_op_ctx *ctx, const char *where, gs_plan *p)
{
    static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear", "bicubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    const vn_attr *m = vn_attrs_find(ctx->attrs, "mode");
    const vn_attr *pm = vn_attrs_find(ctx->attrs, "padding_mode");
    int32_t mode = m && m->s ? pick(m->s, modes, 5) : GS_LINEAR;
    p->pad = pm && pm->s ? pick(pm->s, pads, 3) : GS_ZEROS;
    if (mode < 0 || p->pad < 0)
        return vn_error(VN_ERR_INVALID_ARG, where, "unknown mode or padding_mode");
    p->mode = mode == 3 ? GS_LINEAR : mode == 4 ? GS_CUBIC : mode;
    int64_t align;
    vn_attrs_int(ctx->attrs, "align_corners", 0, &align);
    p->align = align != 0;
    const vn_tensor_desc *x = &ctx->inputs[0], *g = &ctx->inputs[1];
    p->k = x->rank - 2;
    if (p->k < 1 || p->k > GS_MAX_DIMS || g->rank != x->rank || g->dims[g->rank - 1] != p->k ||
        g->dims[0] != x->dims[0])
        return vn_error(VN_ERR_SHAPE, where,
                        "grid must be [N, O1..Ok, k] for X [N, C, D1..Dk], k 1..3");
    p->dt = x->dtype, p->gdt = g->dtype;
    p->N = x->dims[0], p->C = x->dims[1], p->in_sp = p->out_sp = 1;
    for (int32_t d = 0; d < p->k; d++) {
        p->in[d] = x->dims[d + 2], p->out[d] = g->dims[d + 1];
        p->in_sp *= p->in[d], p->out_sp *= p->out[d];
    }
    return VN_OK;
}

static vn_status gs_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    gs_plan p;
    vn_status st = parse(ctx, where, &p);
    if (st != VN_OK) return st;
    out[0] = ctx->inputs[0];
    for (int32_t d = 0; d < p.k; d++) out[0].dims[d + 2] = p.out[d];
    return VN_OK;
}

static vn_status gs_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                            size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    gs_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = parse(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *data = p;
    *workspace = 0;
    return VN_OK;
}

static float reflect(float x, float lo, float hi)
{
    float rng = hi - lo;
    if (x < lo) {
        float dx = lo - x;
        int64_t n = (int64_t)(dx / rng);
        float r = dx - (float)n * rng;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        float dx = x - hi;
        int64_t n = (int64_t)(dx / rng);
        float r = dx - (float)n * rng;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

static void borders(const gs_plan *p, int32_t d, float *lo, float *hi)
{
    *lo = p->align ? 0.0f : -0.5f;
    *hi = p->align ? (float)p->in[d] - 1.0f : (float)p->in[d] - 0.5f;
}

/* Index i of dim d under the padding mode; -1 for a zero. */
static int64_t map_index(const gs_plan *p, int32_t d, int64_t i)
{
    if (i >= 0 && i < p->in[d]) return i;
    if (p->pad == GS_ZEROS) return -1;
    if (p->pad == GS_BORDER) return i < 0 ? 0 : p->in[d] - 1;
    float lo, hi;
    borders(p, d, &lo, &hi);
    return (int64_t)reflect((float)i, lo, hi);
}

static void cubic_coeffs(float x, double *c)
{
    const double a = -0.75;
    double t = fabs((double)x);
    c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
    c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
    c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

/* Per dim: the source coordinate (reference rules), then taps and weights. */
static int32_t taps_of(const gs_plan *p, int32_t d, float g, int64_t *idx, double *w)
{
    float n = (float)p->in[d];
    float x = p->align ? (g + 1.0f) / 2.0f * (n - 1.0f) : ((g + 1.0f) * n - 1.0f) / 2.0f;
    if (p->mode == GS_NEAREST) x = rintf(x);
    float lo, hi;
    borders(p, d, &lo, &hi);
    if (x < lo || x > hi) {
        if (p->pad == GS_BORDER) x = x < 0 ? 0 : x > n - 1 ? n - 1 : x;
        if (p->pad == GS_REFLECTION) x = reflect(x, lo, hi);
    }
    if (p->mode == GS_NEAREST) {
        idx[0] = map_index(p, d, (int64_t)x);
        w[0] = 1.0;
        return 1;
    }
    int64_t x0 = (int64_t)floorf(x);
    float f = x - (float)x0;
    if (p->mode == GS_LINEAR) {
        idx[0] = map_index(p, d, x0), idx[1] = map_index(p, d, x0 + 1);
        w[0] = 1.0 - f, w[1] = f;
        return 2;
    }
    cubic_coeffs(f, w);
    for (int32_t t = 0; t < 4; t++) idx[t] = map_index(p, d, x0 - 1 + t);
    return 4;
}

/* Sum over the tensor product of the dims' taps (zeros where a tap is -1). */
static double sample(const gs_plan *p, const void *x, int64_t base, int64_t idx[][4], double w[][4],
                     const int32_t *nt)
{
    double acc = 0.0;
    int32_t t[GS_MAX_DIMS] = {0};
    for (;;) {
        double wt = 1.0;
        int64_t off = 0;
        bool zero = false;
        for (int32_t d = 0; d < p->k; d++) {
            wt *= w[d][t[d]];
            zero |= idx[d][t[d]] < 0;
            off = off * p->in[d] + (idx[d][t[d]] < 0 ? 0 : idx[d][t[d]]);
        }
        if (!zero && wt != 0.0) acc += wt * vn_cast_load_f64(p->dt, x, base + off);
        int32_t d = p->k - 1;
        while (d >= 0 && ++t[d] == nt[d]) t[d--] = 0;
        if (d < 0) return acc;
    }
}

static vn_status gs_run(const vn_op_run_ctx *ctx)
{
    const gs_plan *p = ctx->plan;
    const void *x = ctx->inputs[0].data, *grid = ctx->inputs[1].data;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t o = 0; o < p->out_sp; o++) {
            int64_t idx[GS_MAX_DIMS][4];
            double w[GS_MAX_DIMS][4];
            int32_t nt[GS_MAX_DIMS];
            int64_t g = (n * p->out_sp + o) * p->k;
            for (int32_t d = 0; d < p->k; d++) /* the grid lists the last dim first */
                nt[d] = taps_of(p, d, (float)vn_cast_load_f64(p->gdt, grid, g + p->k - 1 - d),
                                idx[d], w[d]);
            for (int64_t c = 0; c < p->C; c++)
                vn_cast_store_f64(p->dt, ctx->outputs[0].data, (n * p->C + c) * p->out_sp + o,
                                  sample(p, x, (n * p->C + c) * p->in_sp, idx, w, nt));
        }
    return VN_OK;
}

static const vn_op_def def = {"GridSample",    "",       2,          2,    1,
                              VN_DTYPES_FLOAT, gs_infer, gs_plan_fn, free, gs_run};

const vn_op_def *const *vn_ops_grid_sample_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&def};
    *count = 1;
    return ptrs;
}
