/*
 * test_nms.c — NonMaxSuppression against a reference written here from the
 * ONNX spec: repeatedly take the best remaining box (highest score, lowest
 * index), keep it, and drop every remaining box whose IoU with it exceeds
 * the threshold (vinci instead sorts once and tests each candidate against
 * the kept list). Both box formats, score threshold present or not, output
 * limits, and the error for non-constant boxes.
 */
#include "test_shape_ops_harness.h"

/* Box k as (y_lo, x_lo, y_hi, x_hi). */
static void corners(const float *b, bool center, double *c)
{
    if (center) {
        c[0] = b[1] - b[3] / 2.0, c[2] = b[1] + b[3] / 2.0;
        c[1] = b[0] - b[2] / 2.0, c[3] = b[0] + b[2] / 2.0;
        return;
    }
    c[0] = fmin(b[0], b[2]), c[2] = fmax(b[0], b[2]);
    c[1] = fmin(b[1], b[3]), c[3] = fmax(b[1], b[3]);
}

static double iou(const float *a, const float *b, bool center)
{
    double p[4], q[4];
    corners(a, center, p);
    corners(b, center, q);
    double ih = fmin(p[2], q[2]) - fmax(p[0], q[0]), iw = fmin(p[3], q[3]) - fmax(p[1], q[1]);
    if (ih <= 0 || iw <= 0) return 0;
    double inter = ih * iw, ua = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]);
    return inter / (ua - inter);
}

/* Reference rows (batch, class, box) into rows; returns the count. */
static int64_t ref_nms(const float *boxes, const float *scores, int64_t B, int64_t C, int64_t M,
                       bool center, int64_t max_out, double iou_th, bool has_st, double st,
                       int64_t *rows)
{
    int64_t n = 0;
    bool *alive = malloc((size_t)M);
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++) {
            const float *sc = scores + (b * C + c) * M;
            for (int64_t i = 0; i < M; i++) alive[i] = !has_st || sc[i] > st;
            for (int64_t kept = 0; kept < max_out;) {
                int64_t best = -1;
                for (int64_t i = 0; i < M; i++)
                    if (alive[i] && (best < 0 || sc[i] > sc[best])) best = i;
                if (best < 0) break;
                alive[best] = false;
                rows[n * 3] = b, rows[n * 3 + 1] = c, rows[n * 3 + 2] = best;
                n++, kept++;
                for (int64_t i = 0; i < M; i++)
                    if (alive[i] &&
                        iou(boxes + (b * M + best) * 4, boxes + (b * M + i) * 4, center) > iou_th)
                        alive[i] = false;
            }
        }
    free(alive);
    return n;
}

static void run_case(uint64_t seed, bool center, int64_t max_out, double iou_th, bool has_st,
                     double st)
{
    enum { B = 2, C = 3, M = 40 };
    int64_t bd[3] = {B, M, 4}, sd[3] = {B, C, M}, one = 1;
    vn_tensor in[5] = {th_make(VN_F32, 3, bd), th_make(VN_F32, 3, sd), th_make(VN_I64, 1, &one),
                       th_make(VN_F32, 1, &one), th_make(VN_F32, 1, &one)};
    vt_rng r = {seed};
    float *bx = in[0].data, *sc = in[1].data;
    for (int64_t i = 0; i < B * M; i++) {
        float y = (float)vt_uniform(&r, 0, 10), x = (float)vt_uniform(&r, 0, 10);
        float h = (float)vt_uniform(&r, 0.5, 4), w = (float)vt_uniform(&r, 0.5, 4);
        float *b = bx + i * 4;
        if (center)
            b[0] = x, b[1] = y, b[2] = w, b[3] = h;
        else if (i % 2) /* the other diagonal: corners in either order */
            b[0] = y + h, b[1] = x + w, b[2] = y, b[3] = x;
        else
            b[0] = y, b[1] = x, b[2] = y + h, b[3] = x + w;
    }
    for (int64_t i = 0; i < B * C * M; i++) sc[i] = (float)(int)vt_uniform(&r, 0, 20) / 20.0f;
    ((int64_t *)in[2].data)[0] = max_out;
    ((float *)in[3].data)[0] = (float)iou_th;
    ((float *)in[4].data)[0] = (float)st;
    vn_attr a[] = {TH_INT("center_point_box", center)};
    vn_attrs at = {a, 1};
    vn_tensor out[1];
    VT_OK(th_op("NonMaxSuppression", in, has_st ? 5 : 4, true, &at, out, 1));
    int64_t *rows = malloc(B * C * M * 3 * sizeof *rows);
    int64_t n = ref_nms(bx, sc, B, C, M, center, max_out, (float)iou_th, has_st, (float)st, rows);
    bool ok = out[0].desc.rank == 2 && out[0].desc.dims[0] == n && out[0].desc.dims[1] == 3;
    for (int64_t i = 0; ok && i < n * 3; i++) ok = ((int64_t *)out[0].data)[i] == rows[i];
    VT_CHECK(ok, "seed %llu center %d max %lld iou %g score %d: %lld rows, want %lld",
             (unsigned long long)seed, (int)center, (long long)max_out, iou_th, (int)has_st,
             (long long)out[0].desc.dims[0], (long long)n);
    free(rows);
    th_free(out, 1);
    th_free(in, 5);
}

static void test_against_reference(void)
{
    for (uint64_t s = 1; s <= 4; s++) {
        run_case(s, false, 100, 0.3, false, 0);
        run_case(s, true, 100, 0.5, true, 0.4);
        run_case(s, s % 2, 3, 0.0, true, 0.2);
        run_case(s, false, 0, 0.5, false, 0);
    }
}

static void test_not_constant(void)
{
    int64_t bd[3] = {1, 2, 4}, sd[3] = {1, 1, 2};
    vn_tensor in[2] = {th_make(VN_F32, 3, bd), th_make(VN_F32, 3, sd)}, out[1];
    VT_CHECK(th_op("NonMaxSuppression", in, 2, false, NULL, out, 1) == VN_ERR_UNSUPPORTED,
             "boxes not constant");
    in[1].desc.dims[2] = 3;
    VT_CHECK(th_op("NonMaxSuppression", in, 2, true, NULL, out, 1) == VN_ERR_SHAPE,
             "scores do not match boxes");
    th_free(in, 2);
}

int main(void)
{
    VT_RUN(test_against_reference);
    VT_RUN(test_not_constant);
    return vt_summary();
}
