/*
 * signal_mel.c — MelWeightMatrix (opset 17): the [dft_length/2 + 1,
 * num_mel_bins] matrix of triangular filters, equally spaced on the mel
 * scale (2595 log10(1 + f/700)) between lower_edge_hertz and
 * upper_edge_hertz, each edge rounded down to a DFT bin as ONNX specifies.
 * All inputs are constants (they decide the output shape); the plan computes
 * the matrix and the run copies it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/signal.h"

typedef struct mel_plan {
    int64_t bins, mels;
    float *w;
} mel_plan;

typedef struct mel_in {
    double mels, dft, rate, lo, hi;
} mel_in;

static vn_status mel_inputs(const vn_op_ctx *ctx, const char *where, mel_in *m)
{
    static const char *const names[5] = {"num_mel_bins", "dft_length", "sample_rate",
                                         "lower_edge_hertz", "upper_edge_hertz"};
    double *v[5] = {&m->mels, &m->dft, &m->rate, &m->lo, &m->hi};
    int64_t odt = 1;
    for (int32_t i = 0; i < 5; i++) {
        vn_status st = vn_so_const_scalar(ctx, where, i, names[i], v[i]);
        if (st != VN_OK) return st;
    }
    vn_status st = vn_so_attr_int(ctx, where, "output_datatype", 1, &odt);
    if (st == VN_OK && odt != 1)
        st = vn_error(VN_ERR_UNSUPPORTED, where,
                      "output_datatype %lld: only 1 (float) is supported", (long long)odt);
    if (st == VN_OK && (m->mels < 1 || m->dft < 1 || m->rate <= 0 || m->lo < 0 || m->hi <= m->lo))
        st = vn_error(VN_ERR_INVALID_ARG, where,
                      "num_mel_bins %g, dft_length %g, sample_rate %g, edges [%g, %g] are invalid",
                      m->mels, m->dft, m->rate, m->lo, m->hi);
    return st;
}

static double hz_to_mel(double f)
{
    return 2595.0 * log10(1.0 + f / 700.0);
}

/* Fill w [bins, mels]; the edges of filter i are points i, i+1, i+2. */
static void mel_fill(const mel_in *m, int64_t bins, int64_t mels, float *w, int64_t *pt)
{
    double lo = hz_to_mel(m->lo), step = (hz_to_mel(m->hi) - lo) / (double)(mels + 2);
    for (int64_t i = 0; i < mels + 2; i++) {
        double hz = 700.0 * (pow(10.0, (lo + (double)i * step) / 2595.0) - 1.0);
        pt[i] = (int64_t)floor((m->dft + 1) * hz / m->rate);
        pt[i] = vn_ops_min(vn_ops_max(pt[i], 0), bins - 1);
    }
    memset(w, 0, (size_t)(bins * mels) * sizeof(float));
    for (int64_t i = 0; i < mels; i++) {
        int64_t l = pt[i], c = pt[i + 1], r = pt[i + 2];
        if (c == l) w[c * mels + i] = 1;
        for (int64_t j = l; c > l && j <= c; j++)
            w[j * mels + i] = (float)((double)(j - l) / (double)(c - l));
        for (int64_t j = c; r > c && j < r; j++)
            w[j * mels + i] = (float)((double)(r - j) / (double)(r - c));
    }
}

static vn_status mel_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    mel_in m;
    vn_status st = mel_inputs(ctx, where, &m);
    int64_t dims[2] = {(int64_t)m.dft / 2 + 1, (int64_t)m.mels};
    if (st == VN_OK) *out = vn_so_desc(VN_F32, 2, dims);
    return st;
}

static void mel_free(void *plan)
{
    mel_plan *p = plan;
    if (p) free(p->w);
    free(p);
}

static vn_status mel_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    mel_in m;
    *workspace = 0;
    vn_status st = mel_inputs(ctx, where, &m);
    if (st != VN_OK) return st;
    mel_plan *p = calloc(1, sizeof *p);
    int64_t *pt = malloc((size_t)(outputs[0].dims[1] + 2) * sizeof(int64_t));
    if (p) {
        p->bins = outputs[0].dims[0];
        p->mels = outputs[0].dims[1];
        p->w = malloc((size_t)(p->bins * p->mels) * sizeof(float));
    }
    if (!p || !p->w || !pt) {
        free(pt);
        mel_free(p);
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    }
    mel_fill(&m, p->bins, p->mels, p->w, pt);
    free(pt);
    *plan = p;
    return VN_OK;
}

static vn_status mel_run(const vn_op_run_ctx *ctx)
{
    const mel_plan *p = ctx->plan;
    memcpy(ctx->outputs[0].data, p->w, (size_t)(p->bins * p->mels) * sizeof(float));
    return VN_OK;
}

const vn_op_def vn_signal_mel_def = {"MelWeightMatrix", "",        5,           5,        1,
                                     VN_DTYPES_INT,     mel_infer, mel_plan_fn, mel_free, mel_run};
