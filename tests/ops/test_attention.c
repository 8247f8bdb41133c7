/*
 * test_attention.c — ONNX Attention against a direct double reference on
 * small cases: 4-D and 3-D layouts, grouped kv heads, causal masking with a
 * past, bool masks, and the present_key / qk_matmul outputs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"

/* Y[b,h,i,:] = softmax_j(Q.K^T * scale + bias) V for 4-D f32 inputs, kv heads
 * shared by Hq / Hkv query heads; causal drops keys j > P + i. */
static void reference(const float *q, const float *k, const float *v, int B, int Hq, int Hkv,
                      int Sq, int T, int D, int P, bool causal, const unsigned char *mask, float *y)
{
    for (int b = 0; b < B; b++)
        for (int h = 0; h < Hq; h++)
            for (int i = 0; i < Sq; i++) {
                double s[16], mx = -INFINITY, sum = 0;
                int kh = h / (Hq / Hkv);
                for (int j = 0; j < T; j++) {
                    double dot = 0;
                    for (int d = 0; d < D; d++)
                        dot += q[((b * Hq + h) * Sq + i) * D + d] *
                               k[((b * Hkv + kh) * T + j) * D + d];
                    s[j] = dot / sqrt(D);
                    if ((causal && j > P + i) || (mask && !mask[i * T + j])) s[j] = -INFINITY;
                    mx = fmax(mx, s[j]);
                }
                for (int j = 0; j < T; j++) sum += (s[j] = exp(s[j] - mx));
                for (int d = 0; d < D; d++) {
                    double acc = 0;
                    for (int j = 0; j < T; j++)
                        acc += s[j] / sum * v[((b * Hkv + kh) * T + j) * D + d];
                    y[((b * Hq + h) * Sq + i) * D + d] = (float)acc;
                }
            }
}

static void fill(float *x, int n, int seed)
{
    for (int i = 0; i < n; i++) x[i] = (float)(((i * 37 + seed * 11) % 23) - 11) / 8.0f;
}

/* B 1, Hq 4, Hkv 2, Sq 3, Skv 2 plus P past, D 4; causal or a bool mask. */
static void check_4d(int P, bool causal, bool use_mask)
{
    enum { B = 1, HQ = 4, HKV = 2, SQ = 3, SKV = 2, D = 4 };
    int T = P + SKV;
    float q[B * HQ * SQ * D], k[B * HKV * SKV * D], v[B * HKV * SKV * D];
    float pk[B * HKV * 4 * D], pv[B * HKV * 4 * D], kall[B * HKV * 8 * D], vall[B * HKV * 8 * D];
    float y[B * HQ * SQ * D], want[B * HQ * SQ * D], present[B * HKV * 8 * D];
    unsigned char mask[SQ * 8];
    fill(q, (int)(sizeof q / sizeof *q), 1), fill(k, (int)(sizeof k / sizeof *k), 2);
    fill(v, (int)(sizeof v / sizeof *v), 3), fill(pk, (int)(sizeof pk / sizeof *pk), 4);
    fill(pv, (int)(sizeof pv / sizeof *pv), 5);
    for (int i = 0; i < SQ * T; i++) mask[i] = (unsigned char)(i % 3 != 1);
    for (int h = 0; h < HKV; h++)
        for (int t = 0; t < T; t++)
            for (int d = 0; d < D; d++) {
                int o = (h * T + t) * D + d;
                kall[o] = t < P ? pk[(h * P + t) * D + d] : k[(h * SKV + t - P) * D + d];
                vall[o] = t < P ? pv[(h * P + t) * D + d] : v[(h * SKV + t - P) * D + d];
            }
    reference(q, kall, vall, B, HQ, HKV, SQ, T, D, P, causal, use_mask ? mask : NULL, want);
    vn_tensor_desc in[6] = {{VN_F32, 4, {B, HQ, SQ, D}},   {VN_F32, 4, {B, HKV, SKV, D}},
                            {VN_F32, 4, {B, HKV, SKV, D}}, {VN_BOOL, 2, {SQ, T}},
                            {VN_F32, 4, {B, HKV, P, D}},   {VN_F32, 4, {B, HKV, P, D}}};
    if (!use_mask) in[3].rank = -1;
    int32_t nin = P ? 6 : 4;
    vn_attr causal_attr = {.name = "is_causal", .type = VN_ATTR_INT, .i = causal};
    vn_attrs attrs = {&causal_attr, 1};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "Attention", in, nin, &attrs, &plan));
    if (!plan) return;
    vn_tensor ti[6] = {{in[0], q}, {in[1], k}, {in[2], v}, {in[3], mask}, {in[4], pk}, {in[5], pv}};
    float pres_v[B * HKV * 8 * D], qk[B * HQ * SQ * 8];
    vn_tensor to[4] = {{*vn_op_plan_output(plan, 0), y},
                       {*vn_op_plan_output(plan, 1), present},
                       {*vn_op_plan_output(plan, 2), pres_v},
                       {*vn_op_plan_output(plan, 3), qk}};
    size_t ws = vn_op_plan_workspace(plan);
    void *w = malloc(ws ? ws : 1);
    VT_OK(vn_op_run(plan, ti, nin, to, 4, w));
    free(w);
    vn_op_plan_destroy(plan);
    for (int i = 0; i < (int)(sizeof y / sizeof *y); i++)
        VT_CHECK(fabsf(y[i] - want[i]) < 1e-5f, "P %d causal %d mask %d: y[%d] %g, want %g", P,
                 causal, use_mask, i, y[i], want[i]);
    for (int i = 0; i < HKV * T * D; i++) VT_CHECK(present[i] == kall[i], "present_key[%d]", i);
}

static void test_attention_4d(void)
{
    check_4d(0, false, false);
    check_4d(0, true, false);
    check_4d(2, true, false);
    check_4d(2, false, true);
}

static void test_attention_errors(void)
{
    vn_tensor_desc in[3] = {{VN_F32, 3, {1, 2, 8}}, {VN_F32, 3, {1, 2, 8}}, {VN_F32, 3, {1, 2, 8}}};
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "Attention", in, 3, NULL, &plan) == VN_ERR_INVALID_ARG,
             "3-D inputs need head counts");
    VT_CONTAINS(vn_last_error(), "q_num_heads");
}

int main(void)
{
    VT_RUN(test_attention_4d);
    VT_RUN(test_attention_errors);
    return vt_summary();
}
