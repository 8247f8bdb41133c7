/*
 * nms.c — NonMaxSuppression (ONNX 10, 11). Per batch and class: the boxes
 * scoring above score_threshold (all when it is absent), highest score
 * first (ties: lower box index first), each kept unless its IoU with a box
 * already kept exceeds iou_threshold, at most max_output_boxes_per_class
 * kept. Output [selected, 3] i64 rows (batch, class, box).
 *
 * The number of selected boxes is the output's shape, so like NonZero every
 * input must be a constant known at plan time: the plan does the selection
 * and the run copies it. Box arithmetic in f32, as the reference computes it
 * on f32 data, so threshold ties resolve the same way.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

typedef struct nms_plan {
    int64_t count;
    int64_t *rows; /* [count, 3] */
} nms_plan;

typedef struct nms_in {
    const vn_tensor_desc *boxes, *scores;
    const void *bdata, *sdata;
    int64_t max_out;
    bool has_score_th, center;
    float iou_th, score_th;
} nms_in;

/* [lo, hi] of the box along one coordinate pair (corners or centre form). */
static void extent(const float *b, bool center, int32_t axis, float *lo, float *hi)
{
    if (center) { /* [x_c, y_c, w, h]: axis 0 is y, axis 1 is x */
        float c = b[1 - axis], half = b[3 - axis] / 2.0f;
        *lo = c - half, *hi = c + half;
        return;
    }
    float a = b[axis], z = b[axis + 2]; /* [y1, x1, y2, x2], any diagonal */
    *lo = a < z ? a : z, *hi = a < z ? z : a;
}

static bool suppress(const float *b1, const float *b2, bool center, float th)
{
    float lo1[2], hi1[2], lo2[2], hi2[2], inter = 1.0f;
    for (int32_t ax = 0; ax < 2; ax++) {
        extent(b1, center, ax, &lo1[ax], &hi1[ax]);
        extent(b2, center, ax, &lo2[ax], &hi2[ax]);
        float lo = lo1[ax] > lo2[ax] ? lo1[ax] : lo2[ax];
        float hi = hi1[ax] < hi2[ax] ? hi1[ax] : hi2[ax];
        if (hi <= lo) return false;
        inter *= hi - lo;
    }
    float a1 = (hi1[0] - lo1[0]) * (hi1[1] - lo1[1]), a2 = (hi2[0] - lo2[0]) * (hi2[1] - lo2[1]);
    float uni = a1 + a2 - inter;
    if (inter <= 0 || a1 <= 0 || a2 <= 0 || uni <= 0) return false;
    return inter / uni > th;
}

typedef struct cand {
    float score;
    int64_t idx;
} cand;

static int by_score(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Selection of one (batch, class) appended to rows (NULL: count only). */
static int64_t select_class(const nms_in *in, int64_t b, int64_t c, cand *cs, int64_t *kept,
                            float *box, int64_t *rows, int64_t at)
{
    int64_t nb = in->boxes->dims[1], n = 0, nk = 0;
    for (int64_t i = 0; i < nb; i++) {
        float s = (float)vn_cast_load_f64(in->scores->dtype, in->sdata,
                                          (b * in->scores->dims[1] + c) * nb + i);
        if (!in->has_score_th || s > in->score_th) cs[n++] = (cand){s, i};
    }
    qsort(cs, (size_t)n, sizeof *cs, by_score);
    for (int64_t k = 0; k < n && nk < in->max_out; k++) {
        const float *bk = box + (b * nb + cs[k].idx) * 4;
        bool keep = true;
        for (int64_t j = 0; j < nk && keep; j++)
            keep = !suppress(bk, box + (b * nb + kept[j]) * 4, in->center, in->iou_th);
        if (!keep) continue;
        kept[nk++] = cs[k].idx;
        if (rows)
            rows[(at + nk - 1) * 3] = b, rows[(at + nk - 1) * 3 + 1] = c,
                                 rows[(at + nk - 1) * 3 + 2] = cs[k].idx;
    }
    return nk;
}

static vn_status scalar_in(const vn_op_ctx *ctx, const char *where, int32_t i, const char *name,
                           bool *present, double *v)
{
    *present = vn_so_present(ctx, i) && vn_desc_numel(&ctx->inputs[i]) > 0;
    return *present ? vn_so_const_scalar(ctx, where, i, name, v) : VN_OK;
}

static vn_status read_inputs(const vn_op_ctx *ctx, const char *where, nms_in *in)
{
    const vn_tensor_desc *bx = &ctx->inputs[0], *sc = &ctx->inputs[1];
    if (bx->rank != 3 || bx->dims[2] != 4 || sc->rank != 3 || sc->dims[0] != bx->dims[0] ||
        sc->dims[2] != bx->dims[1] || !vn_cast_is_float(sc->dtype))
        return vn_error(VN_ERR_SHAPE, where,
                        "boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]");
    int64_t center;
    double mo = 0, iou = 0, st_v = 0;
    bool p_mo, p_iou;
    vn_status st = vn_so_attr_int(ctx, where, "center_point_box", 0, &center);
    if (st == VN_OK) st = scalar_in(ctx, where, 2, "max_output_boxes_per_class", &p_mo, &mo);
    if (st == VN_OK) st = scalar_in(ctx, where, 3, "iou_threshold", &p_iou, &iou);
    if (st == VN_OK) st = scalar_in(ctx, where, 4, "score_threshold", &in->has_score_th, &st_v);
    if (st != VN_OK) return st;
    in->boxes = bx, in->scores = sc;
    in->bdata = vn_so_const(ctx, 0), in->sdata = vn_so_const(ctx, 1);
    if (!in->bdata || !in->sdata)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "boxes and scores must be constants known at plan time (the number of "
                        "selected boxes is the output's shape)");
    in->max_out = p_mo && mo > 0 ? (int64_t)mo : 0;
    in->iou_th = (float)iou, in->score_th = (float)st_v, in->center = center != 0;
    return VN_OK;
}

/* Runs the whole selection; rows NULL counts only. */
static vn_status run_nms(const nms_in *in, const char *where, int64_t *rows, int64_t *count)
{
    int64_t nbat = in->boxes->dims[0], ncls = in->scores->dims[1], nb = in->boxes->dims[1];
    cand *cs = malloc((size_t)vn_ops_max(1, nb) * sizeof *cs);
    int64_t *kept = malloc((size_t)vn_ops_max(1, nb) * sizeof *kept);
    float *box = malloc((size_t)vn_ops_max(1, nbat * nb * 4) * sizeof *box);
    if (!cs || !kept || !box) {
        free(cs), free(kept), free(box);
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the selection");
    }
    for (int64_t i = 0; i < nbat * nb * 4; i++)
        box[i] = (float)vn_cast_load_f64(in->boxes->dtype, in->bdata, i);
    *count = 0;
    for (int64_t b = 0; b < nbat; b++)
        for (int64_t c = 0; c < ncls; c++)
            *count += select_class(in, b, c, cs, kept, box, rows, *count);
    free(cs), free(kept), free(box);
    return VN_OK;
}

static vn_status nms_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    nms_in in;
    int64_t dims[2] = {0, 3};
    vn_status st = read_inputs(ctx, where, &in);
    if (st == VN_OK) st = run_nms(&in, where, NULL, &dims[0]);
    if (st == VN_OK) *out = vn_so_desc(VN_I64, 2, dims);
    return st;
}

static void nms_free(void *plan)
{
    nms_plan *p = plan;
    if (p) free(p->rows);
    free(p);
}

static vn_status nms_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    nms_in in;
    *workspace = 0;
    vn_status st = read_inputs(ctx, where, &in);
    if (st != VN_OK) return st;
    nms_plan *p = calloc(1, sizeof *p);
    if (p) p->rows = malloc((size_t)vn_ops_max(1, outputs[0].dims[0] * 3) * sizeof(int64_t));
    if (!p || !p->rows) {
        nms_free(p);
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    }
    st = run_nms(&in, where, p->rows, &p->count);
    if (st != VN_OK) {
        nms_free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

static vn_status nms_run(const vn_op_run_ctx *ctx)
{
    const nms_plan *p = ctx->plan;
    memcpy(ctx->outputs[0].data, p->rows, (size_t)p->count * 3 * sizeof(int64_t));
    return VN_OK;
}

const vn_op_def vn_nms_def = {"NonMaxSuppression", "",        2,           5,        1,
                              VN_DTYPES_FLOAT,     nms_infer, nms_plan_fn, nms_free, nms_run};
