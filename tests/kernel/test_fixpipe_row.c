/*
 * test_fixpipe_row.c — the fixpipe's f32 epilogue of one row piece
 * (vn_fixpipe_row, cube_fixpipe.c) bit for bit against the same steps done
 * one at a time in scalar C: ((acc * alpha) + bias[j]) + residual[j], then
 * the activation (ReLU, the ISA's kernel), each step rounded on its own. The one-pass path (the ISA
 * table's affine_row) must give those bits for every combination: alpha 1, 0.37 and a real 0
 * (alpha_zero), column bias or none, residual contiguous, strided or none, dst f32 contiguous
 * (written in place), f32 strided and bf16, with -0.0 and NaN among the accumulators. A beta term
 * or a row bias takes the step-by-step path, checked the same way. Runs on every ISA path (the
 * ctest variants).
 */
#include <math.h>
#include <string.h>

#include "kernel/cube_internal.h"
#include "kernel/isa.h"
#include "vt.h"

#define N 37 /* not a multiple of any vector width */

static float bf16_of(float v)
{
    uint16_t h;
    vn_f32_to_bf16_array(&v, &h, 1);
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

typedef struct row_case {
    int alpha;     /* 0: 1, 1: 0.37, 2: alpha_zero */
    bool bias;     /* column bias */
    int res;       /* 0: none, 1: contiguous, 2: columns 2 apart */
    int dst;       /* 0: f32 contiguous, 1: f32 columns 2 apart, 2: bf16 */
    bool relu;     /* activation */
    bool beta;     /* a beta * C term (the step-by-step path) */
    bool row_bias; /* a row bias instead of the column one (step-by-step path) */
} row_case;

/* The steps before the activation one at a time, in scalar C (no
 * contraction: ISO C mode); the activation is the ISA's own kernel, the
 * one both paths call. */
static float expect(const row_case *c, float acc, float bias, float res, float cin)
{
    float x = acc;
    if (c->alpha == 1) x = x * 0.37f;
    if (c->alpha == 2) x = x * 0.0f;
    if (c->beta) {
        float t = cin * 0.5f;
        x = x + t;
    }
    if (c->bias || c->row_bias) x = x + bias;
    if (c->res) x = x + res;
    return x;
}

static void check_case(const row_case *c)
{
    float acc[N], bias[N], res[2 * N], cin[N], tmp[2 * VN_FIXPIPE_CHUNK];
    float dst32[2 * N];
    uint16_t dst16[N];
    vt_rng r = {(uint64_t)(c->alpha * 97 + c->res * 13 + c->dst * 5 + c->bias + 1)};
    vt_fill(&r, acc, N, -3, 3);
    vt_fill(&r, bias, N, -1, 1);
    vt_fill(&r, res, 2 * N, -1, 1);
    vt_fill(&r, cin, N, -1, 1);
    acc[3] = -0.0f, acc[4] = NAN; /* -0 + nothing stays -0; NaN stays NaN */
    float row_bias = 0.25f;
    vn_fixpipe fp = {.act = c->relu ? VN_ACT_RELU : VN_ACT_NONE};
    fp.alpha = c->alpha == 1 ? 0.37f : 0.0f;
    fp.alpha_zero = c->alpha == 2;
    if (c->bias) fp.bias_axis = VN_BIAS_COL, fp.bias = vn_gm_make(bias, VN_F32, N);
    if (c->row_bias) fp.bias_axis = VN_BIAS_ROW, fp.bias = vn_gm_make(&row_bias, VN_F32, 1);
    if (c->res) fp.residual = vn_mat_make(vn_gm_make(res, VN_F32, 2 * N), 0, 2 * N, c->res);
    if (c->beta) fp.beta = 0.5f, fp.c_in = vn_mat_make(vn_gm_make(cin, VN_F32, N), 0, N, 1);
    memset(dst32, 0, sizeof dst32);
    vn_mat d = c->dst == 2 ? vn_mat_make(vn_gm_make(dst16, VN_BF16, N), 0, N, 1)
                           : vn_mat_make(vn_gm_make(dst32, VN_F32, 2 * N), 0, 2 * N, c->dst + 1);
    float v[N];
    memcpy(v, acc, sizeof v);
    vn_fixpipe_row(&fp, VN_F32, v, 0, 0, N, &d, tmp);
    float want_row[N];
    for (int j = 0; j < N; j++)
        want_row[j] = expect(c, acc[j], c->row_bias ? row_bias : bias[j],
                             c->res ? res[j * c->res] : 0.0f, cin[j]);
    if (c->relu) vn_isa_table_get()->unary[VN_VOP_RELU](want_row, want_row, N);
    int bad = 0;
    for (int j = 0; j < N; j++) {
        float want = c->dst == 2 ? bf16_of(want_row[j]) : want_row[j];
        float got = c->dst == 2 ? 0.0f : dst32[j * (c->dst + 1)];
        if (c->dst == 2) {
            uint32_t u = (uint32_t)dst16[j] << 16;
            memcpy(&got, &u, 4);
        }
        bad += memcmp(&got, &want, 4) != 0 && !(isnan(got) && isnan(want));
    }
    VT_CHECK(bad == 0,
             "alpha %d bias %d res %d dst %d relu %d beta %d row bias %d: %d of %d differ",
             c->alpha, (int)c->bias, c->res, c->dst, (int)c->relu, (int)c->beta, (int)c->row_bias,
             bad, N);
}

static void test_every_combination(void)
{
    for (int alpha = 0; alpha < 3; alpha++)
        for (int bias = 0; bias < 2; bias++)
            for (int res = 0; res < 3; res++)
                for (int dst = 0; dst < 3; dst++)
                    for (int relu = 0; relu < 2; relu++) {
                        row_case c = {alpha, bias, res, dst, relu, false, false};
                        check_case(&c);
                    }
}

static void test_step_path(void)
{
    for (int res = 0; res < 3; res++) {
        row_case beta = {1, true, res, 0, true, true, false};
        row_case row = {0, false, res, 1, false, false, true};
        check_case(&beta);
        check_case(&row);
    }
}

int main(void)
{
    VT_RUN(test_every_combination);
    VT_RUN(test_step_path);
    return vt_summary();
}
