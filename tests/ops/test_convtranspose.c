/*
 * test_convtranspose.c — ConvTranspose (1-D, 2-D and 3-D, NC[D][H]W f32)
 * against a double-precision scatter reference: random sweeps over strides 1-3,
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
    int64_t n, group, cg, mg, in[3], k[3], s[3], d[3], pads[6], op[3];
    bool bias;
    const char *auto_pad;
    bool has_oshape;
    int64_t oshape[3];
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

/* Sizes in 3 dims (D, H, W): an nsp-D case has leading dims of 1. */
typedef struct tdata {
    int64_t C, M, nx, nw, ny, pb[3], in[3], out[3], k[3], s[3], d[3];
    float *x, *w, *b, *y;
    double *ref, *mag;
} tdata;

static int64_t vol(const int64_t *v)
{
    return v[0] * v[1] * v[2];
}

/* Output offset (within one (n, m) plane) of input position i and kernel tap
 * k, or -1 when it falls outside: o = i*s - pb + k*d per dim. */
static int64_t land(const tdata *t, const int64_t *i, const int64_t *k)
{
    int64_t off = 0;
    for (int a = 0; a < 3; a++) {
        int64_t o = i[a] * t->s[a] - t->pb[a] + k[a] * t->d[a];
        if (o < 0 || o >= t->out[a]) return -1;
        off = off * t->out[a] + o;
    }
    return off;
}

static void unflatten(int64_t v, const int64_t *dims, int64_t *idx)
{
    for (int a = 2; a >= 0; a--) {
        idx[a] = v % dims[a];
        v /= dims[a];
    }
}

static void reference(const tcase *c, tdata *t)
{
    int64_t hw = vol(t->in), kk = vol(t->k), ohw = vol(t->out);
    for (int64_t e = 0; e < t->ny; e++) t->ref[e] = t->mag[e] = 0;
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t ch = 0; ch < t->C; ch++)
            for (int64_t p = 0; p < hw; p++) {
                int64_t i[3], k[3];
                unflatten(p, t->in, i);
                double xv = t->x[(n * t->C + ch) * hw + p];
                int64_t g = ch / c->cg;
                for (int64_t m = 0; m < c->mg; m++)
                    for (int64_t q = 0; q < kk; q++) {
                        unflatten(q, t->k, k);
                        int64_t o = land(t, i, k);
                        if (o < 0) continue;
                        double wv = t->w[(ch * c->mg + m) * kk + q];
                        int64_t e = (n * t->M + g * c->mg + m) * ohw + o;
                        t->ref[e] += xv * wv;
                        t->mag[e] += fabs(xv * wv);
                    }
            }
    for (int64_t e = 0; e < t->ny && c->bias; e++) {
        int64_t m = (e / ohw) % t->M;
        t->ref[e] += t->b[m];
        t->mag[e] += fabs(t->b[m]);
    }
}

static void setup(const tcase *c, tdata *t, uint64_t seed)
{
    vt_rng r = {seed};
    t->C = c->group * c->cg;
    t->M = c->group * c->mg;
    int lead = 3 - c->nsp;
    for (int a = 0; a < 3; a++) {
        bool has = a >= lead;
        t->in[a] = has ? c->in[a - lead] : 1;
        t->k[a] = has ? c->k[a - lead] : 1;
        t->s[a] = has ? c->s[a - lead] : 1;
        t->d[a] = has ? c->d[a - lead] : 1;
        t->pb[a] = 0;
        t->out[a] = has ? ref_out(c, a - lead, &t->pb[a]) : 1;
    }
    t->nx = c->n * t->C * vol(t->in);
    t->nw = t->C * c->mg * vol(t->k);
    t->ny = c->n * t->M * vol(t->out);
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
        yd.dims[2 + i] = t.out[3 - c->nsp + i];
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
        char got[128], want[128];
        VT_CHECK(same, "output dims: got %s want %s", vn_desc_format(od, got, sizeof got),
                 vn_desc_format(&yd, want, sizeof want));
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
                     "%dD n %lld g %lld cg %lld mg %lld in %lld,%lld,%lld k %lld,%lld,%lld "
                     "s %lld,%lld,%lld d %lld,%lld,%lld op %lld,%lld,%lld pads %lld,%lld,%lld,"
                     "%lld,%lld,%lld ap %s oshape %d: y[%lld] = %.7g want %.7g",
                     c->nsp, (long long)c->n, (long long)c->group, (long long)c->cg,
                     (long long)c->mg, (long long)c->in[0], (long long)c->in[1],
                     (long long)c->in[2], (long long)c->k[0], (long long)c->k[1],
                     (long long)c->k[2], (long long)c->s[0], (long long)c->s[1], (long long)c->s[2],
                     (long long)c->d[0], (long long)c->d[1], (long long)c->d[2],
                     (long long)c->op[0], (long long)c->op[1], (long long)c->op[2],
                     (long long)c->pads[0], (long long)c->pads[1], (long long)c->pads[2],
                     (long long)c->pads[3], (long long)c->pads[4], (long long)c->pads[5],
                     c->auto_pad ? c->auto_pad : "-", (int)c->has_oshape, (long long)e,
                     (double)t.y[e], t.ref[e]);
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
        c.in[i] = 1 + (int64_t)vt_uniform(r, 0, nsp == 3 ? 5 : nsp == 2 ? 9 : 20);
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

static void test_sweep_3d(void)
{
    sweep(3, 80, NULL, false, 13);
}

static void test_auto_pad(void)
{
    sweep(2, 25, "VALID", false, 3);
    sweep(2, 25, "SAME_UPPER", false, 4);
    sweep(2, 25, "SAME_LOWER", false, 5);
    sweep(1, 15, "SAME_UPPER", false, 6);
    sweep(3, 10, "VALID", false, 14);
    sweep(3, 10, "SAME_UPPER", false, 15);
    sweep(3, 10, "SAME_LOWER", false, 16);
}

static void test_output_shape(void)
{
    sweep(2, 40, NULL, true, 7);
    sweep(2, 20, "SAME_UPPER", true, 8);
    sweep(1, 20, NULL, true, 9);
    sweep(3, 20, NULL, true, 17);
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
    /* 3-D: a depthwise x2 upsampling and a volumetric decoder layer with odd sizes */
    tcase dw3 = {3,         1,         6,         1,         1,
                 {5, 6, 7}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0, 0, 0, 0},
                 {0, 0, 0}, true,      NULL,      false,     {0, 0, 0}};
    run_case(&dw3, 18);
    tcase big3 = {3,          2,         1,         8,         5,
                  {7, 9, 11}, {3, 3, 3}, {2, 1, 2}, {1, 2, 1}, {1, 0, 1, 1, 2, 0},
                  {1, 0, 1},  true,      NULL,      false,     {0, 0, 0}};
    run_case(&big3, 19);
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
    vn_tensor_desc x6 = {VN_F32, 6, {1, 3, 2, 2, 2, 2}}, w6 = {VN_F32, 6, {3, 2, 1, 1, 1, 1}};
    VT_CHECK(plan_ct(x6, w6, NULL, 0) == VN_ERR_SHAPE, "4-D");
    VT_CONTAINS(vn_last_error(), "rank 3 to 5");
    vn_tensor_desc x5 = {VN_F32, 5, {1, 3, 5, 5, 5}}, w5 = {VN_F32, 5, {3, 2, 3, 3, 3}};
    int64_t op3[3] = {0, 0, 1};
    vn_attr opad3 = {.name = "output_padding", .type = VN_ATTR_INTS, .ints = op3, .count = 3};
    VT_CHECK(plan_ct(x5, w5, &opad3, 1) == VN_ERR_INVALID_ARG, "3-D output_padding, stride 1");
    VT_CONTAINS(vn_last_error(), "output_padding[2] = 1 must be smaller");
    VT_CHECK(plan_ct(x5, w5, opad, 2) == VN_ERR_INVALID_ARG, "2 values for 3 axes");
    VT_CONTAINS(vn_last_error(), "has 2 values, expected 3");
    vn_tensor_desc w3 = {VN_F32, 3, {3, 2, 3}};
    VT_CHECK(plan_ct(x, w3, NULL, 0) == VN_ERR_SHAPE, "W rank");
    VT_CONTAINS(vn_last_error(), "W f32[3,2,3]");
}

int main(void)
{
    VT_RUN(test_sweep_2d);
    VT_RUN(test_sweep_1d);
    VT_RUN(test_sweep_3d);
    VT_RUN(test_auto_pad);
    VT_RUN(test_output_shape);
    VT_RUN(test_depthwise_and_large);
    VT_RUN(test_errors);
    return vt_summary();
}
