/*
 * test_convtranspose.c — ConvTranspose (1-D and 2-D, NCHW f32) against a
 * double-precision scatter reference: random sweeps over strides 1-3,
 * dilations 1-3, asymmetric pads, output_padding, group (1, 2, 3 and
 * depthwise), bias; every auto_pad mode; output_shape (pads derived, also
 * an output larger than the natural one); and the error paths.
 *
 * Bound: |y - ref| <= 1e-5 * (1 + sum of |terms|), the f32 accumulation of
 * the GEMM over Cg and the col2im sum over the kernel taps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"

typedef struct tcase {
    int nsp;
    int64_t n, group, cg, mg, in[2], k[2], s[2], d[2], pads[4], op[2];
    bool bias;
    const char *auto_pad;
    bool has_oshape;
    int64_t oshape[2];
} tcase;

/* Output size and begin pad of axis i (the opset-11 text; / rounds down). */
static int64_t ref_out(const tcase *c, int i, int64_t *pb)
{
    int64_t natural = c->s[i] * (c->in[i] - 1) + c->op[i] + (c->k[i] - 1) * c->d[i] + 1;
    const char *ap = c->auto_pad ? c->auto_pad : "NOTSET";
    bool upper = strcmp(ap, "SAME_UPPER") == 0;
    int64_t out;
    if (c->has_oshape || strncmp(ap, "SAME", 4) == 0) {
        out = c->has_oshape ? c->oshape[i] : c->in[i] * c->s[i];
        int64_t total = natural - out, half = (int64_t)floor((double)total / 2);
        *pb = upper ? half : total - half;
        return out;
    }
    if (strcmp(ap, "VALID") == 0) {
        *pb = 0;
        return natural;
    }
    *pb = c->pads[i];
    return natural - c->pads[i] - c->pads[c->nsp + i];
}

static void build_attrs(const tcase *c, vn_attr *items, vn_attrs *attrs)
{
    int n = 0, sp = c->nsp;
    items[n++] = (vn_attr){.name = "strides", .type = VN_ATTR_INTS, .ints = c->s, .count = sp};
    items[n++] = (vn_attr){.name = "dilations", .type = VN_ATTR_INTS, .ints = c->d, .count = sp};
    items[n++] = (vn_attr){.name = "group", .type = VN_ATTR_INT, .i = c->group};
    items[n++] = (vn_attr){.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = c->k, .count = sp};
    items[n++] =
        (vn_attr){.name = "output_padding", .type = VN_ATTR_INTS, .ints = c->op, .count = sp};
    if (!c->auto_pad)
        items[n++] =
            (vn_attr){.name = "pads", .type = VN_ATTR_INTS, .ints = c->pads, .count = 2 * sp};
    else
        items[n++] = (vn_attr){.name = "auto_pad", .type = VN_ATTR_STRING, .s = c->auto_pad};
    if (c->has_oshape)
        items[n++] =
            (vn_attr){.name = "output_shape", .type = VN_ATTR_INTS, .ints = c->oshape, .count = sp};
    attrs->items = items;
    attrs->count = n;
}

typedef struct tdata {
    int64_t C, M, nx, nw, ny, out[2], pb[2], H, W, OH, OW, kH, kW;
    float *x, *w, *b, *y;
    double *ref, *mag;
} tdata;

static void reference(const tcase *c, tdata *t)
{
    int64_t sh = c->nsp == 2 ? c->s[0] : 1, sw = c->s[c->nsp - 1];
    int64_t dh = c->nsp == 2 ? c->d[0] : 1, dw = c->d[c->nsp - 1];
    int64_t ph = c->nsp == 2 ? t->pb[0] : 0, pw = t->pb[c->nsp - 1];
    for (int64_t e = 0; e < t->ny; e++) t->ref[e] = t->mag[e] = 0;
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t ch = 0; ch < t->C; ch++)
            for (int64_t ih = 0; ih < t->H; ih++)
                for (int64_t iw = 0; iw < t->W; iw++) {
                    double xv = t->x[((n * t->C + ch) * t->H + ih) * t->W + iw];
                    int64_t g = ch / c->cg;
                    for (int64_t m = 0; m < c->mg; m++)
                        for (int64_t kh = 0; kh < t->kH; kh++)
                            for (int64_t kw = 0; kw < t->kW; kw++) {
                                int64_t oh = ih * sh - ph + kh * dh, ow = iw * sw - pw + kw * dw;
                                if (oh < 0 || oh >= t->OH || ow < 0 || ow >= t->OW) continue;
                                double wv = t->w[((ch * c->mg + m) * t->kH + kh) * t->kW + kw];
                                int64_t e = ((n * t->M + g * c->mg + m) * t->OH + oh) * t->OW + ow;
                                t->ref[e] += xv * wv;
                                t->mag[e] += fabs(xv * wv);
                            }
                }
    for (int64_t e = 0; e < t->ny && c->bias; e++) {
        int64_t m = (e / (t->OH * t->OW)) % t->M;
        t->ref[e] += t->b[m];
        t->mag[e] += fabs(t->b[m]);
    }
}

static void setup(const tcase *c, tdata *t, uint64_t seed)
{
    vt_rng r = {seed};
    t->C = c->group * c->cg;
    t->M = c->group * c->mg;
    t->H = c->nsp == 2 ? c->in[0] : 1;
    t->W = c->in[c->nsp - 1];
    t->kH = c->nsp == 2 ? c->k[0] : 1;
    t->kW = c->k[c->nsp - 1];
    t->out[0] = t->out[1] = 1;
    for (int i = 0; i < c->nsp; i++) t->out[i] = ref_out(c, i, &t->pb[i]);
    t->OH = c->nsp == 2 ? t->out[0] : 1;
    t->OW = t->out[c->nsp - 1];
    t->nx = c->n * t->C * t->H * t->W;
    t->nw = t->C * c->mg * t->kH * t->kW;
    t->ny = c->n * t->M * t->OH * t->OW;
    t->x = malloc((size_t)(t->nx + 1) * 4);
    t->w = malloc((size_t)(t->nw + 1) * 4);
    t->b = malloc((size_t)(t->M + 1) * 4);
    t->y = malloc((size_t)(t->ny + 1) * 4);
    t->ref = malloc((size_t)(t->ny + 1) * 8);
    t->mag = malloc((size_t)(t->ny + 1) * 8);
    vt_fill(&r, t->x, (size_t)t->nx, -1, 1);
    vt_fill(&r, t->w, (size_t)t->nw, -1, 1);
    vt_fill(&r, t->b, (size_t)t->M, -1, 1);
    for (int64_t e = 0; e < t->ny; e++) t->y[e] = NAN; /* every output must be written */
}

static void teardown(tdata *t)
{
    free(t->x), free(t->w), free(t->b), free(t->y), free(t->ref), free(t->mag);
}

static void run_case(const tcase *c, uint64_t seed)
{
    tdata t;
    setup(c, &t, seed);
    vn_tensor_desc xd = {VN_F32, c->nsp + 2, {c->n, t.C}}, wd = {VN_F32, c->nsp + 2, {t.C, c->mg}};
    vn_tensor_desc bd = {VN_F32, 1, {t.M}}, yd = {VN_F32, c->nsp + 2, {c->n, t.M}};
    for (int i = 0; i < c->nsp; i++) {
        xd.dims[2 + i] = c->in[i];
        wd.dims[2 + i] = c->k[i];
        yd.dims[2 + i] = t.out[i];
    }
    vn_attr items[8];
    vn_attrs attrs;
    build_attrs(c, items, &attrs);
    vn_op_plan *plan = NULL;
    vn_tensor_desc in[3] = {xd, wd, bd};
    VT_OK(vn_op_plan_create(NULL, "ConvTranspose", in, c->bias ? 3 : 2, &attrs, &plan));
    if (plan) {
        const vn_tensor_desc *od = vn_op_plan_output(plan, 0);
        bool same = od->rank == yd.rank;
        for (int i = 0; i < yd.rank; i++) same &= od->dims[i] == yd.dims[i];
        VT_CHECK(same, "output dims: got [%lld,%lld,%lld,%lld] want [%lld,%lld,%lld,%lld]",
                 (long long)od->dims[0], (long long)od->dims[1], (long long)od->dims[2],
                 (long long)od->dims[3], (long long)yd.dims[0], (long long)yd.dims[1],
                 (long long)yd.dims[2], (long long)yd.dims[3]);
        size_t ws = vn_op_plan_workspace(plan);
        void *wsp = ws ? malloc(ws) : NULL;
        vn_tensor ti[3] = {{xd, t.x}, {wd, t.w}, {bd, t.b}}, to = {yd, t.y};
        if (same) VT_OK(vn_op_run(plan, ti, c->bias ? 3 : 2, &to, 1, wsp));
        reference(c, &t);
        int bad = 0;
        for (int64_t e = 0; e < t.ny && same && bad < 3; e++) {
            double err = fabs(t.y[e] - t.ref[e]);
            if (err <= 1e-5 * (1 + t.mag[e])) continue;
            bad++;
            VT_CHECK(false,
                     "%dD n %lld g %lld cg %lld mg %lld in %lldx%lld k %lldx%lld s %lld,%lld "
                     "d %lld,%lld op %lld,%lld pads %lld,%lld,%lld,%lld ap %s oshape %d: "
                     "y[%lld] = %.7g want %.7g",
                     c->nsp, (long long)c->n, (long long)c->group, (long long)c->cg,
                     (long long)c->mg, (long long)c->in[0], (long long)c->in[1], (long long)c->k[0],
                     (long long)c->k[1], (long long)c->s[0], (long long)c->s[1], (long long)c->d[0],
                     (long long)c->d[1], (long long)c->op[0], (long long)c->op[1],
                     (long long)c->pads[0], (long long)c->pads[1], (long long)c->pads[2],
                     (long long)c->pads[3], c->auto_pad ? c->auto_pad : "-", (int)c->has_oshape,
                     (long long)e, (double)t.y[e], t.ref[e]);
        }
        if (!bad) VT_CHECK(true, "case passed");
        free(wsp);
        vn_op_plan_destroy(plan);
    }
    teardown(&t);
}

static tcase random_case(vt_rng *r, int nsp)
{
    tcase c;
    memset(&c, 0, sizeof c);
    c.nsp = nsp;
    c.n = 1 + (int64_t)vt_uniform(r, 0, 2);
    c.group = 1 + (int64_t)vt_uniform(r, 0, 3);
    c.cg = 1 + (int64_t)vt_uniform(r, 0, 4);
    c.mg = 1 + (int64_t)vt_uniform(r, 0, 4);
    c.bias = vt_uniform(r, 0, 1) < 0.5;
    for (int i = 0; i < nsp; i++) {
        c.in[i] = 1 + (int64_t)vt_uniform(r, 0, nsp == 2 ? 9 : 20);
        c.k[i] = 1 + (int64_t)vt_uniform(r, 0, 4);
        c.s[i] = 1 + (int64_t)vt_uniform(r, 0, 3);
        c.d[i] = 1 + (int64_t)vt_uniform(r, 0, 3);
        int64_t mx = c.s[i] > c.d[i] ? c.s[i] : c.d[i];
        c.op[i] = (int64_t)vt_uniform(r, 0, (double)mx);
        int64_t dk = (c.k[i] - 1) * c.d[i] + 1;
        c.pads[i] = (int64_t)vt_uniform(r, 0, (double)dk);
        c.pads[nsp + i] = (int64_t)vt_uniform(r, 0, (double)dk);
    }
    return c;
}

static bool legal(const tcase *c)
{
    int64_t pb;
    for (int i = 0; i < c->nsp; i++)
        if (ref_out(c, i, &pb) < 1) return false;
    return true;
}

static void sweep(int nsp, int cases, const char *auto_pad, bool oshape, uint64_t seed)
{
    vt_rng r = {seed};
    int ran = 0;
    for (int i = 0; i < 10 * cases && ran < cases; i++) {
        tcase c = random_case(&r, nsp);
        c.auto_pad = auto_pad;
        if (oshape) {
            c.has_oshape = true;
            for (int a = 0; a < nsp; a++) {
                c.pads[a] = c.pads[nsp + a] = 0;
                int64_t natural = c.s[a] * (c.in[a] - 1) + c.op[a] + (c.k[a] - 1) * c.d[a] + 1;
                c.oshape[a] = natural - (int64_t)vt_uniform(&r, -2, 4); /* smaller or larger */
                if (c.oshape[a] < 1) c.oshape[a] = 1;
            }
        }
        if (!legal(&c)) continue;
        run_case(&c, seed + (uint64_t)i);
        ran++;
    }
    VT_CHECK(ran == cases, "only %d of %d cases legal", ran, cases);
}

static void test_sweep_2d(void)
{
    sweep(2, 120, NULL, false, 1);
}

static void test_sweep_1d(void)
{
    sweep(1, 60, NULL, false, 2);
}

static void test_auto_pad(void)
{
    sweep(2, 25, "VALID", false, 3);
    sweep(2, 25, "SAME_UPPER", false, 4);
    sweep(2, 25, "SAME_LOWER", false, 5);
    sweep(1, 15, "SAME_UPPER", false, 6);
}

static void test_output_shape(void)
{
    sweep(2, 40, NULL, true, 7);
    sweep(2, 20, "SAME_UPPER", true, 8);
    sweep(1, 20, NULL, true, 9);
}

static void test_depthwise_and_large(void)
{
    /* depthwise upsampling x2 (group = channels), and a decoder-sized layer */
    tcase dw = {2,      1,    32,   1,     1,     {15, 17}, {4, 4}, {2, 2}, {1, 1}, {1, 1, 1, 1},
                {0, 0}, true, NULL, false, {0, 0}};
    run_case(&dw, 11);
    tcase big = {2,      2,    1,    24,    16,    {20, 23}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1},
                 {1, 1}, true, NULL, false, {0, 0}};
    run_case(&big, 12);
}

static vn_status plan_ct(vn_tensor_desc x, vn_tensor_desc w, const vn_attr *items, int count)
{
    vn_attrs a = {items, count};
    vn_op_plan *p = NULL;
    vn_status st = vn_op_plan_create(NULL, "ConvTranspose", (vn_tensor_desc[]){x, w}, 2, &a, &p);
    vn_op_plan_destroy(p);
    return st;
}

static void test_errors(void)
{
    vn_tensor_desc x = {VN_F32, 4, {1, 3, 5, 5}}, w = {VN_F32, 4, {3, 2, 3, 3}};
    vn_attr g2 = {.name = "group", .type = VN_ATTR_INT, .i = 2};
    VT_CHECK(plan_ct(x, w, &g2, 1) == VN_ERR_SHAPE, "3 channels, group 2");
    VT_CONTAINS(vn_last_error(), "ConvTranspose");
    VT_CONTAINS(vn_last_error(), "group 2");
    int64_t op[2] = {2, 0}, s[2] = {2, 2}, ks[2] = {3, 4}, big[4] = {4, 0, 4, 0};
    vn_attr opad[2] = {{.name = "output_padding", .type = VN_ATTR_INTS, .ints = op, .count = 2},
                       {.name = "strides", .type = VN_ATTR_INTS, .ints = s, .count = 2}};
    VT_CHECK(plan_ct(x, w, opad, 2) == VN_ERR_INVALID_ARG, "output_padding 2 with stride 2");
    VT_CONTAINS(vn_last_error(), "output_padding[0] = 2 must be smaller");
    vn_attr k = {.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = ks, .count = 2};
    VT_CHECK(plan_ct(x, w, &k, 1) == VN_ERR_SHAPE, "kernel_shape vs W");
    VT_CONTAINS(vn_last_error(), "kernel_shape[1] = 4 does not match");
    vn_attr pads = {.name = "pads", .type = VN_ATTR_INTS, .ints = big, .count = 4};
    VT_CHECK(plan_ct(x, w, &pads, 1) == VN_ERR_SHAPE, "pads too big");
    VT_CONTAINS(vn_last_error(), "too big");
    vn_tensor_desc x5 = {VN_F32, 5, {1, 3, 5, 5, 5}}, w5 = {VN_F32, 5, {3, 2, 3, 3, 3}};
    VT_CHECK(plan_ct(x5, w5, NULL, 0) == VN_ERR_SHAPE, "3-D");
    VT_CONTAINS(vn_last_error(), "rank 3 or 4");
    vn_tensor_desc w3 = {VN_F32, 3, {3, 2, 3}};
    VT_CHECK(plan_ct(x, w3, NULL, 0) == VN_ERR_SHAPE, "W rank");
    VT_CONTAINS(vn_last_error(), "W f32[3,2,3]");
}

int main(void)
{
    VT_RUN(test_sweep_2d);
    VT_RUN(test_sweep_1d);
    VT_RUN(test_auto_pad);
    VT_RUN(test_output_shape);
    VT_RUN(test_depthwise_and_large);
    VT_RUN(test_errors);
    return vt_summary();
}
