/*
 * test_pool_nc1hwc0.c — the vinci-domain pools on the blocked layout
 * (MaxPoolNC1HWC0, AveragePoolNC1HWC0, LpPoolNC1HWC0, GlobalAveragePoolNC1HWC0,
 * GlobalMaxPoolNC1HWC0) against the NCHW operators on the same data: the
 * test converts NCHW -> NC1HWC0 itself (C1 = ceil(C/16), last block padded
 * with zeros), runs both, converts back and compares, and checks that the
 * padded channels of the output are exactly zero.
 *
 * Bounds: max is exact; sums agree to 1e-5 (1 + |y|) (AveragePool; LpPool
 * 1e-4), the two layouts adding the same terms in the same order up to the
 * vector instruction's rounding.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_pool_ref.h"
#include "vt.h"

#define C0 16

/* [N, C, P] -> [N, C1, P, 16], zero-padded; P = pixels. */
static float *to_blocked(const float *x, int64_t n, int64_t c, int64_t pix)
{
    int64_t c1 = (c + C0 - 1) / C0;
    float *b = calloc((size_t)(n * c1 * pix * C0 + 1), sizeof *b);
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < pix; p++)
                b[((i * c1 + ch / C0) * pix + p) * C0 + ch % C0] = x[(i * c + ch) * pix + p];
    return b;
}

/* Compare blocked output yb with NCHW output y; padded lanes must be 0. */
static int compare(const char *op, const float *y, const float *yb, int64_t n, int64_t c,
                   int64_t pix, double rel)
{
    int64_t c1 = (c + C0 - 1) / C0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c1 * C0; ch++)
            for (int64_t p = 0; p < pix; p++) {
                double v = yb[((i * c1 + ch / C0) * pix + p) * C0 + ch % C0];
                double want = ch < c ? y[(i * c + ch) * pix + p] : 0.0;
                bool ok = v == want || fabs(v - want) <= rel * (1 + fabs(want));
                if (!ok && bad++ < 3)
                    VT_CHECK(ok, "%s n %lld ch %lld pixel %lld: blocked %.7g, NCHW %.7g%s", op,
                             (long long)i, (long long)ch, (long long)p, v, want,
                             ch >= c ? " (padded channel)" : "");
            }
    if (!bad) VT_CHECK(true, "agree");
    return bad;
}

static vn_tensor_desc nchw_desc(int nsp, int64_t n, int64_t c, const int64_t *sp)
{
    vn_tensor_desc d = {VN_F32, nsp + 2, {n, c}};
    for (int i = 0; i < nsp; i++) d.dims[2 + i] = sp[i];
    return d;
}

static vn_tensor_desc blocked_desc(int nsp, int64_t n, int64_t c, const int64_t *sp)
{
    vn_tensor_desc d = {VN_F32, nsp + 3, {n, (c + C0 - 1) / C0}};
    for (int i = 0; i < nsp; i++) d.dims[2 + i] = sp[i];
    d.dims[nsp + 2] = C0;
    return d;
}

/* Run `op` on x (NCHW) and `op`NC1HWC0 on its blocked form; compare. */
static void run_both(const char *op, int nsp, int64_t n, int64_t c, const int64_t *sp,
                     const vn_attrs *attrs, uint64_t seed)
{
    vt_rng r = {seed};
    int64_t pix = 1;
    for (int i = 0; i < nsp; i++) pix *= sp[i];
    float *x = malloc((size_t)(n * c * pix + 1) * sizeof *x);
    vt_fill(&r, x, (size_t)(n * c * pix), -2, 2);
    float *xb = to_blocked(x, n, c, pix);
    char bop[64];
    snprintf(bop, sizeof bop, "vinci::%sNC1HWC0", op);
    vn_tensor_desc xd = nchw_desc(nsp, n, c, sp), xbd = blocked_desc(nsp, n, c, sp);
    vn_op_plan *p = NULL, *pb = NULL;
    VT_OK(vn_op_plan_create(NULL, op, &xd, 1, attrs, &p));
    VT_OK(vn_op_plan_create(NULL, bop, &xbd, 1, attrs, &pb));
    if (p && pb) {
        const vn_tensor_desc *yd = vn_op_plan_output(p, 0), *ybd = vn_op_plan_output(pb, 0);
        int64_t opix = vn_desc_numel(yd) / (n * c);
        bool shape_ok = ybd->rank == nsp + 3 && ybd->dims[nsp + 2] == C0;
        for (int i = 0; i < nsp; i++) shape_ok &= ybd->dims[2 + i] == yd->dims[2 + i];
        VT_CHECK(shape_ok, "%s: blocked output shape", bop);
        float *y = calloc((size_t)(vn_desc_numel(yd) + 1), 4);
        int64_t *idx = calloc((size_t)(vn_desc_numel(yd) + 1), 8);
        float *yb = malloc((size_t)(vn_desc_numel(ybd) + 1) * 4);
        for (int64_t e = 0; e < vn_desc_numel(ybd); e++) yb[e] = NAN; /* all must be written */
        vn_tensor in = {xd, x}, inb = {xbd, xb};
        vn_tensor out[2] = {{*yd, y}, {*yd, idx}}, outb = {*ybd, yb};
        int no = vn_op_plan_num_outputs(p);
        if (no > 1) out[1].desc = *vn_op_plan_output(p, 1);
        VT_OK(vn_op_run(p, &in, 1, out, no, NULL));
        VT_OK(vn_op_run(pb, &inb, 1, &outb, 1, NULL));
        if (shape_ok) compare(bop, y, yb, n, c, opix, strncmp(op, "Lp", 2) == 0 ? 1e-4 : 1e-5);
        free(y), free(idx), free(yb);
    }
    vn_op_plan_destroy(p);
    vn_op_plan_destroy(pb);
    free(x), free(xb);
}

static void test_windowed_sweep(void)
{
    static const char *const ops[] = {"MaxPool", "AveragePool", "LpPool"};
    static const int64_t chans[] = {1, 5, 16, 19, 33};
    vt_rng r = {7};
    int ran = 0;
    for (int i = 0; i < 400 && ran < 90; i++) {
        int nsp = 1 + (int)vt_uniform(&r, 0, 3);
        pcase c;
        memset(&c, 0, sizeof c);
        c.op = ops[i % 3];
        c.nsp = nsp;
        c.n = 1 + (int64_t)vt_uniform(&r, 0, 2);
        c.c = chans[(int)vt_uniform(&r, 0, 5)];
        for (int d = 0; d < nsp; d++) {
            c.in[d] = 1 + (int64_t)vt_uniform(&r, 0, nsp == 3 ? 6 : 14);
            c.k[d] = 1 + (int64_t)vt_uniform(&r, 0, 4);
            c.s[d] = 1 + (int64_t)vt_uniform(&r, 0, 3);
            c.d[d] = 1 + (int64_t)vt_uniform(&r, 0, 2);
            int64_t dk = (c.k[d] - 1) * c.d[d] + 1;
            c.pads[d] = (int64_t)vt_uniform(&r, 0, (double)dk);
            c.pads[nsp + d] = (int64_t)vt_uniform(&r, 0, (double)dk);
        }
        c.ceil_mode = i % 2;
        c.cip = (i / 2) % 2;
        c.p = 1 + i % 3;
        static const char *const modes[] = {NULL, "VALID", "SAME_UPPER", "SAME_LOWER", NULL};
        c.auto_pad = modes[(i / 3) % 5];
        pref ref;
        static const float zero[4096];
        pcase probe = c; /* legality from the reference on one plane of zeros */
        probe.n = probe.c = 1;
        ref_pool(&probe, zero, &ref);
        free(ref.y), free(ref.idx);
        if (ref.empty) continue;
        pattrs a;
        pcase_attrs(&c, &a);
        run_both(c.op, nsp, c.n, c.c, c.in, &a.attrs, 100 + (uint64_t)i);
        ran++;
    }
    VT_CHECK(ran == 90, "%d legal cases", ran);
}

static void test_wide(void)
{
    /* a ResNet stem pool: 3x3 stride 2 pad 1 on 112x112, 64 channels */
    int64_t k[2] = {3, 3}, s[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
    vn_attr items[3] = {{.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = k, .count = 2},
                        {.name = "strides", .type = VN_ATTR_INTS, .ints = s, .count = 2},
                        {.name = "pads", .type = VN_ATTR_INTS, .ints = pads, .count = 4}};
    vn_attrs a = {items, 3};
    run_both("MaxPool", 2, 1, 64, (int64_t[]){112, 112}, &a, 1);
    run_both("AveragePool", 2, 1, 35, (int64_t[]){57, 61}, &a, 2);
    /* SqueezeNet 1.1's pools: 3x3 stride 2, no pads, ceil_mode (a clipped last window) */
    vn_attr sq[3] = {items[0], items[1], {.name = "ceil_mode", .type = VN_ATTR_INT, .i = 1}};
    vn_attrs b = {sq, 3};
    run_both("MaxPool", 2, 1, 64, (int64_t[]){111, 111}, &b, 3);
    run_both("MaxPool", 2, 1, 128, (int64_t[]){55, 55}, &b, 4);
    run_both("MaxPool", 2, 2, 40, (int64_t[]){27, 27}, &b, 5);
}

static void test_global(void)
{
    static const char *const ops[] = {"GlobalAveragePool", "GlobalMaxPool"};
    for (int o = 0; o < 2; o++) {
        run_both(ops[o], 2, 2, 19, (int64_t[]){7, 7}, NULL, 3);
        run_both(ops[o], 2, 1, 64, (int64_t[]){56, 56}, NULL, 4);
        run_both(ops[o], 1, 3, 5, (int64_t[]){1}, NULL, 5);
        run_both(ops[o], 3, 1, 33, (int64_t[]){3, 4, 5}, NULL, 6);
        run_both(ops[o], 2, 1, 16, (int64_t[]){200, 201}, NULL, 7); /* chunked plane */
        run_both(ops[o], 1, 2, 21, (int64_t[]){2, 3}, NULL, 8);     /* pixels % 4 == 2, 3 */
        run_both(ops[o], 1, 2, 21, (int64_t[]){1, 7}, NULL, 9);
    }
}

static void test_errors(void)
{
    int64_t k[2] = {2, 2};
    vn_attr ks = {.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = k, .count = 2};
    vn_attrs a = {&ks, 1};
    vn_op_plan *p = NULL;
    vn_tensor_desc c8 = {VN_F32, 5, {1, 2, 6, 6, 8}};
    VT_CHECK(vn_op_plan_create(NULL, "MaxPoolNC1HWC0", &c8, 1, &a, &p) == VN_ERR_SHAPE, "C0 8");
    VT_CONTAINS(vn_last_error(), "vinci::MaxPoolNC1HWC0");
    VT_CONTAINS(vn_last_error(), "last dim must be C0 = 16");
    vn_tensor_desc h = {VN_F16, 5, {1, 2, 6, 6, 16}};
    VT_CHECK(vn_op_plan_create(NULL, "vinci::AveragePoolNC1HWC0", &h, 1, &a, &p) == VN_ERR_DTYPE,
             "f16");
    VT_CONTAINS(vn_last_error(), "AveragePoolNC1HWC0");
    vn_tensor_desc r3 = {VN_F32, 3, {1, 6, 16}};
    VT_CHECK(vn_op_plan_create(NULL, "GlobalMaxPoolNC1HWC0", &r3, 1, NULL, &p) == VN_ERR_SHAPE,
             "rank 3");
    VT_CONTAINS(vn_last_error(), "GlobalMaxPoolNC1HWC0");
    VT_CONTAINS(vn_last_error(), "has rank 3");
}

int main(void)
{
    VT_RUN(test_windowed_sweep);
    VT_RUN(test_wide);
    VT_RUN(test_global);
    VT_RUN(test_errors);
    return vt_summary();
}
