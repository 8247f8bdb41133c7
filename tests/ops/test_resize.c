/*
 * test_resize.c — Resize (10, 11+) and Upsample against a double-precision
 * reference written here from the ONNX reference implementation's scalar
 * algorithm: per output element, per axis the source coordinate, the n
 * nearest source indices of an edge-padded line (found by sorting distances,
 * ties to the smaller index) and their coefficients, and the tensor-product
 * sum over the axes (vinci runs separable passes instead).
 */
#include "test_shape_ops_harness.h"

enum { M_NEAREST, M_LINEAR, M_CUBIC };
static const char *const mode_names[] = {"nearest", "linear", "cubic"};
static const char *const ctm_names[] = {"half_pixel",         "half_pixel_symmetric",
                                        "pytorch_half_pixel", "align_corners",
                                        "asymmetric",         "tf_crop_and_resize"};
static const char *const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil"};

typedef struct ref_cfg {
    int32_t mode, ctm, nearest; /* nearest 4: Resize-10's floor-up / ceil-down */
    double a, extrap;
    bool exclude, antialias;
    int32_t rank;
    int64_t in[4], out[4];
    double scale[4], lo[4], hi[4];
} ref_cfg;

#define REF_MAX_TAPS 64

/* Taps of output position o along axis d; false: extrapolate. */
static bool ref_taps(const ref_cfg *c, int32_t d, int64_t o, int32_t *n, int64_t *idx, double *w)
{
    double in = (double)c->in[d], s = c->scale[d], outf = s * in, y = (double)o, x;
    if (fabs(s - 1.0) < 1e-9 && c->out[d] == c->in[d] &&
        (c->ctm != 5 || (c->lo[d] == 0 && c->hi[d] == 1))) {
        *n = 1, idx[0] = o, w[0] = 1.0;
        return true;
    }
    if (c->ctm == 0)
        x = (y + 0.5) / s - 0.5;
    else if (c->ctm == 1)
        x = in / 2 * (1 - (double)c->out[d] / outf) + (y + 0.5) / s - 0.5;
    else if (c->ctm == 2)
        x = outf == 1 ? -0.5 : (y + 0.5) / s - 0.5;
    else if (c->ctm == 3)
        x = outf == 1 ? 0 : y * (in - 1) / (outf - 1);
    else if (c->ctm == 4)
        x = y / s;
    else {
        x = outf == 1 ? (c->hi[d] - c->lo[d]) * (in - 1) / 2
                      : y * (c->hi[d] - c->lo[d]) * (in - 1) / (outf - 1);
        x += c->lo[d] * (in - 1);
        if (x < 0 || x > in - 1) return false;
    }
    double ratio = x == floor(x) ? 1.0 : x - floor(x);
    double coef[REF_MAX_TAPS];
    int32_t k = 0;
    if (c->mode == M_NEAREST) {
        bool right;
        if (c->nearest == 4)
            right = s < 1 ? true : ratio == 1.0;
        else if (ratio == 1.0)
            right = true;
        else if (c->nearest == 0)
            right = ratio > 0.5;
        else if (c->nearest == 1)
            right = ratio >= 0.5;
        else
            right = c->nearest == 3;
        coef[0] = !right, coef[1] = right, k = 2;
    } else {
        double sc = c->antialias ? fmin(s, 1.0) : 1.0, sum = 0;
        double support = c->mode == M_LINEAR ? 1 : 2;
        int64_t start = c->antialias ? (int64_t)floor(-support / sc) + 1 : 1 - (int64_t)support;
        for (int64_t i = start; i < 2 - start; i++) {
            double t = fabs(sc * ((double)i - ratio)), A = c->a;
            double v = c->mode == M_LINEAR ? fmax(0, 1 - t)
                       : t <= 1            ? (A + 2) * t * t * t - (A + 3) * t * t + 1
                       : t < 2             ? A * t * t * t - 5 * A * t * t + 8 * A * t - 4 * A
                                           : 0;
            coef[k++] = v, sum += v;
        }
        if (c->antialias)
            for (int32_t j = 0; j < k; j++) coef[j] /= sum;
    }
    /* the k nearest indices to x on the line padded by ceil(k/2) edges */
    int64_t pad = (k + 1) / 2, len = c->in[d] + 2 * pad;
    int64_t chosen[REF_MAX_TAPS];
    bool *used = calloc((size_t)len, 1);
    for (int32_t j = 0; j < k; j++) { /* distances unpadded: x + pad could round */
        int64_t best = -1;
        for (int64_t i = 0; i < len; i++)
            if (!used[i] &&
                (best < 0 || fabs(x - (double)(i - pad)) < fabs(x - (double)(best - pad))))
                best = i;
        used[best] = true;
    }
    int32_t m = 0;
    for (int64_t i = 0; i < len; i++)
        if (used[i]) chosen[m++] = i - pad;
    free(used);
    if (c->exclude) {
        double sum = 0;
        for (int32_t j = 0; j < k; j++) {
            if (chosen[j] < 0 || chosen[j] >= c->in[d]) coef[j] = 0;
            sum += coef[j];
        }
        for (int32_t j = 0; j < k; j++) coef[j] /= sum;
    }
    for (int32_t j = 0; j < k; j++) {
        idx[j] = chosen[j] < 0 ? 0 : chosen[j] >= c->in[d] ? c->in[d] - 1 : chosen[j];
        w[j] = coef[j];
    }
    *n = k;
    return true;
}

static void ref_resize(const ref_cfg *c, const vn_tensor *x, double *y)
{
    int64_t total = 1;
    for (int32_t d = 0; d < c->rank; d++) total *= c->out[d];
    static int64_t idx[4][REF_MAX_TAPS];
    static double w[4][REF_MAX_TAPS];
    for (int64_t e = 0; e < total; e++) {
        int64_t o[4], rem = e;
        int32_t n[4];
        bool inside = true;
        for (int32_t d = c->rank - 1; d >= 0; d--) o[d] = rem % c->out[d], rem /= c->out[d];
        for (int32_t d = 0; d < c->rank; d++) inside &= ref_taps(c, d, o[d], &n[d], idx[d], w[d]);
        if (!inside) {
            y[e] = c->extrap;
            continue;
        }
        double acc = 0;
        int32_t t[4] = {0};
        for (;;) {
            double wt = 1;
            int64_t off = 0;
            for (int32_t d = 0; d < c->rank; d++)
                wt *= w[d][t[d]], off = off * c->in[d] + idx[d][t[d]];
            acc += wt * th_at(x, off);
            int32_t d = c->rank - 1;
            while (d >= 0 && ++t[d] == n[d]) t[d--] = 0;
            if (d < 0) break;
        }
        y[e] = acc;
    }
}

/* Compares vinci's output with the reference; tolerance by dtype. */
static bool close_to(const vn_tensor *y, const ref_cfg *c, const double *ref, double tol)
{
    if (y->desc.rank != c->rank) return false;
    int64_t total = 1;
    for (int32_t d = 0; d < c->rank; d++) {
        if (y->desc.dims[d] != c->out[d]) return false;
        total *= c->out[d];
    }
    for (int64_t e = 0; e < total; e++)
        if (fabs(th_at(y, e) - ref[e]) > tol * (1 + fabs(ref[e]))) {
            fprintf(stderr, "  element %lld: got %g want %g\n", (long long)e, th_at(y, e), ref[e]);
            return false;
        }
    return true;
}

static vn_tensor random_x(vn_dtype dt, int32_t rank, const int64_t *dims, uint64_t seed)
{
    vn_tensor x = th_make(dt, rank, dims);
    vt_rng r = {seed};
    for (int64_t i = 0; i < vn_desc_numel(&x.desc); i++) th_set(&x, i, vt_uniform(&r, -2, 2));
    return x;
}

/* Resize-19 with scales (sizes == NULL) or sizes on all axes of x. */
static void check_case(ref_cfg *c, const vn_tensor *x, const double *scales, const int64_t *sizes,
                       const char *policy, double tol, const char *what)
{
    int64_t r2 = 2 * c->rank, rk = c->rank, zero = 0;
    double roi[8];
    for (int32_t d = 0; d < c->rank; d++) roi[d] = c->lo[d], roi[c->rank + d] = c->hi[d];
    vn_tensor in[4] = {*x, th_from(VN_F32, 1, c->ctm == 5 ? &r2 : &zero, roi),
                       th_from(VN_F32, 1, sizes ? &zero : &rk, scales),
                       sizes ? th_ints(rk, sizes) : th_make(VN_I64, 1, &zero)};
    vn_attr a[] = {TH_STR("mode", mode_names[c->mode]),
                   TH_STR("coordinate_transformation_mode", ctm_names[c->ctm]),
                   TH_STR("nearest_mode", nearest_names[c->nearest]),
                   TH_FLOAT("cubic_coeff_a", c->a),
                   TH_FLOAT("extrapolation_value", c->extrap),
                   TH_INT("exclude_outside", c->exclude),
                   TH_INT("antialias", c->antialias),
                   TH_STR("keep_aspect_ratio_policy", policy)};
    vn_attrs at = {a, 8};
    vn_tensor out[1];
    vn_status st = th_op("Resize", in, sizes ? 4 : 3, true, &at, out, 1);
    VT_CHECK(st == VN_OK, "%s: %s", what, vn_last_error());
    if (st == VN_OK) {
        int64_t total = vn_desc_numel(&out[0].desc);
        double *ref = malloc((size_t)(total ? total : 1) * sizeof *ref);
        ref_resize(c, x, ref);
        VT_CHECK(close_to(&out[0], c, ref, tol), "%s", what);
        free(ref);
        th_free(out, 1);
    }
    th_free(in + 1, 3);
}

/* Output sizes and scales of the reference for scales / sizes. */
static void setup(ref_cfg *c, const vn_tensor *x, const double *scales, const int64_t *sizes,
                  int32_t policy)
{
    c->rank = x->desc.rank;
    double one = policy == 1 ? INFINITY : 0;
    for (int32_t d = 0; d < c->rank; d++) {
        c->in[d] = x->desc.dims[d];
        if (!c->hi[d]) c->hi[d] = 1;
        if (sizes) {
            c->scale[d] = (double)sizes[d] / (double)c->in[d], c->out[d] = sizes[d];
            one = policy == 1 ? fmin(one, c->scale[d]) : fmax(one, c->scale[d]);
        } else {
            c->scale[d] = (double)(float)scales[d];
            c->out[d] = (int64_t)floor(c->scale[d] * (double)c->in[d]);
        }
    }
    if (sizes && policy)
        for (int32_t d = 0; d < c->rank; d++)
            c->scale[d] = one, c->out[d] = (int64_t)(one * (double)c->in[d] + 0.5);
}

static void test_modes_and_transforms(void)
{
    int64_t dims[4] = {2, 3, 5, 7};
    vn_tensor x = random_x(VN_F32, 4, dims, 11);
    static const double scale_sets[3][4] = {{1, 1, 2, 1.5}, {1, 1, 0.6, 0.5}, {1, 1, 1.7, 0.8}};
    char what[160];
    for (int32_t mode = 0; mode < 3; mode++)
        for (int32_t ctm = 0; ctm < 6; ctm++)
            for (int32_t s = 0; s < 3; s++)
                for (int32_t nm = 0; nm < (mode == M_NEAREST ? 4 : 1); nm++) {
                    ref_cfg c = {mode, ctm, nm, -0.75, 0, false, false, 0, {0}, {0}, {0}, {0}, {0}};
                    if (ctm == 5) c.lo[2] = 0.25, c.hi[2] = 1.125, c.lo[3] = -0.125, c.hi[3] = 0.75;
                    c.extrap = ctm == 5 ? 3.5 : 0;
                    setup(&c, &x, scale_sets[s], NULL, 0);
                    snprintf(what, sizeof what, "%s %s scales#%d %s", mode_names[mode],
                             ctm_names[ctm], (int)s, nearest_names[nm]);
                    check_case(&c, &x, scale_sets[s], NULL, "stretch", 1e-5, what);
                }
    th_free(&x, 1);
}

static void test_sizes_policies_and_filters(void)
{
    static const int64_t axes23[2] = {2, 3};
    int64_t dims[4] = {1, 2, 9, 6};
    vn_tensor x = random_x(VN_F32, 4, dims, 5);
    static const int64_t sizes[2][4] = {{1, 2, 4, 4}, {1, 2, 20, 9}};
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
    char what[160];
    for (int32_t mode = 0; mode < 3; mode++)
        for (int32_t s = 0; s < 2; s++)
            for (int32_t pol = 0; pol < 3; pol++)
                for (int32_t aa = 0; aa < 2; aa++) {
                    /* keep_aspect_ratio_policy is for the resized axes; here all of
                     * them, so N and C keep only under stretch */
                    if (pol && mode) continue;
                    ref_cfg c = {mode, 0,   0,  aa ? -0.5 : -0.75, 0, aa, aa && mode, 0, {0}, {0},
                                 {0},  {0}, {0}};
                    setup(&c, &x, NULL, sizes[s], pol);
                    snprintf(what, sizeof what, "%s sizes#%d %s antialias/exclude %d",
                             mode_names[mode], (int)s, policies[pol], (int)aa);
                    if (pol) { /* a one-axis-pair resize keeps N, C at scale 1 */
                        vn_attr a1[] = {TH_STR("keep_aspect_ratio_policy", policies[pol]),
                                        TH_INTS("axes", axes23, 2)};
                        vn_attrs at = {a1, 2};
                        int64_t two = 2, zero = 0;
                        vn_tensor in[4] = {x, th_make(VN_F32, 1, &zero), th_make(VN_F32, 1, &zero),
                                           th_ints(two, sizes[s] + 2)};
                        vn_tensor out[1];
                        ref_cfg c2 = c;
                        double one =
                            pol == 1 ? fmin((double)sizes[s][2] / 9.0, (double)sizes[s][3] / 6.0)
                                     : fmax((double)sizes[s][2] / 9.0, (double)sizes[s][3] / 6.0);
                        c2.scale[0] = c2.scale[1] = 1, c2.out[0] = 1, c2.out[1] = 2;
                        c2.scale[2] = c2.scale[3] = one;
                        c2.out[2] = (int64_t)(one * 9 + 0.5), c2.out[3] = (int64_t)(one * 6 + 0.5);
                        VT_OK(th_op("Resize", in, 4, true, &at, out, 1));
                        double *ref = malloc(4096 * sizeof *ref);
                        ref_resize(&c2, &x, ref);
                        VT_CHECK(close_to(&out[0], &c2, ref, 1e-5), "%s", what);
                        free(ref);
                        th_free(out, 1);
                        th_free(in + 1, 3);
                        continue;
                    }
                    check_case(&c, &x, NULL, sizes[s], policies[pol], 1e-5, what);
                }
    th_free(&x, 1);
}

static void test_antialias_strong_downsample(void)
{
    int64_t dims[2] = {13, 40};
    vn_tensor x = random_x(VN_F32, 2, dims, 9);
    static const double sc[2] = {0.3, 0.17};
    for (int32_t mode = 1; mode < 3; mode++) {
        ref_cfg c = {mode, 0, 0, -0.75, 0, mode == 2, true, 0, {0}, {0}, {0}, {0}, {0}};
        setup(&c, &x, sc, NULL, 0);
        check_case(&c, &x, sc, NULL, "stretch", 1e-5, mode == 1 ? "aa linear" : "aa cubic");
    }
    th_free(&x, 1);
}

static void test_f16_and_large_bilinear(void)
{
    int64_t dims[4] = {1, 3, 64, 48};
    static const double sc[4] = {1, 1, 2, 2}, sd[4] = {1, 1, 0.5, 0.5};
    for (int32_t dt = 0; dt < 2; dt++) {
        vn_tensor x = random_x(dt ? VN_F16 : VN_F32, 4, dims, 3);
        for (int32_t s = 0; s < 2; s++) {
            ref_cfg c = {M_LINEAR, 0, 0, -0.75, 0, false, false, 0, {0}, {0}, {0}, {0}, {0}};
            setup(&c, &x, s ? sd : sc, NULL, 0);
            check_case(&c, &x, s ? sd : sc, NULL, "stretch", dt ? 2e-3 : 1e-5,
                       dt ? "f16 bilinear" : "f32 bilinear 64x48");
        }
        th_free(&x, 1);
    }
}

static void test_nearest_int_and_axes(void)
{
    static const int64_t axes20[2] = {2, 0};
    int64_t dims[3] = {2, 3, 4};
    vn_tensor x = th_iota(VN_I32, 3, dims);
    int64_t two = 2, zero = 0, sizes[2] = {7, 3}; /* axes (2, 0): W -> 7, N -> 3 */
    vn_attr a[] = {TH_INTS("axes", axes20, 2), TH_STR("nearest_mode", "floor"),
                   TH_STR("coordinate_transformation_mode", "asymmetric")};
    vn_attrs at = {a, 3};
    vn_tensor in[4] = {x, th_make(VN_F32, 1, &zero), th_make(VN_F32, 1, &zero),
                       th_ints(two, sizes)};
    vn_tensor out[1];
    VT_OK(th_op("Resize", in, 4, true, &at, out, 1));
    ref_cfg c = {M_NEAREST,         4,   2,  -0.75, 0, false, false, 3, {2, 3, 4}, {3, 3, 7},
                 {1.5, 1, 7.0 / 4}, {0}, {0}};
    double ref[63];
    ref_resize(&c, &x, ref);
    VT_CHECK(close_to(&out[0], &c, ref, 0), "i32 nearest with axes");
    th_free(out, 1);
    th_free(in, 4);
}

/* Resize-10 and Upsample: asymmetric coordinates, floor when upsampling. */
static void test_resize10_and_upsample(void)
{
    int64_t dims[4] = {1, 2, 3, 2}, four = 4;
    vn_tensor x = random_x(VN_F32, 4, dims, 1);
    double sc[4] = {1, 1, 3, 2};
    vn_tensor in[2] = {x, th_from(VN_F32, 1, &four, sc)}, out[1];
    for (int32_t mode = 0; mode < 2; mode++) {
        vn_attr a[] = {TH_STR("mode", mode_names[mode])};
        vn_attrs at = {a, 1};
        ref_cfg c = {mode,         4,   4,  -0.75, 0, false, false, 4, {1, 2, 3, 2}, {1, 2, 9, 4},
                     {1, 1, 3, 2}, {0}, {0}};
        double ref[72];
        ref_resize(&c, &x, ref);
        VT_OK(th_op("Resize", in, 2, true, &at, out, 1));
        VT_CHECK(close_to(&out[0], &c, ref, 1e-6), "Resize-10 %s", mode_names[mode]);
        th_free(out, 1);
        VT_OK(th_op("Upsample", in, 2, true, &at, out, 1));
        VT_CHECK(close_to(&out[0], &c, ref, 1e-6), "Upsample-9 %s", mode_names[mode]);
        th_free(out, 1);
        float fs[4] = {1, 1, 3, 2};
        vn_attr a7[] = {TH_STR("mode", mode_names[mode]),
                        {.name = "scales", .type = VN_ATTR_FLOATS, .floats = fs, .count = 4}};
        vn_attrs at7 = {a7, 2};
        VT_OK(th_op("Upsample", in, 1, true, &at7, out, 1));
        VT_CHECK(close_to(&out[0], &c, ref, 1e-6), "Upsample-7 %s", mode_names[mode]);
        th_free(out, 1);
    }
    th_free(in, 2);
}

static void test_errors(void)
{
    int64_t dims[2] = {2, 2}, two = 2, zero = 0, sz[2] = {3, 3};
    double sc[2] = {2, 2};
    vn_tensor in[4] = {th_iota(VN_F32, 2, dims), th_make(VN_F32, 1, &zero),
                       th_from(VN_F32, 1, &two, sc), th_ints(two, sz)};
    vn_tensor out[1];
    VT_CHECK(th_op("Resize", in, 3, false, NULL, out, 1) == VN_ERR_UNSUPPORTED,
             "scales not constant");
    VT_CHECK(th_op("Resize", in, 4, true, NULL, out, 1) == VN_ERR_INVALID_ARG,
             "scales and sizes both given");
    vn_attr a[] = {TH_STR("mode", "bicubic")};
    vn_attrs at = {a, 1};
    VT_CHECK(th_op("Resize", in, 3, true, &at, out, 1) == VN_ERR_INVALID_ARG, "unknown mode");
    vn_attr b[] = {TH_STR("mode", "linear")};
    vn_attrs bt = {b, 1};
    vn_tensor xi = th_iota(VN_I32, 2, dims);
    vn_tensor in2[3] = {xi, in[1], in[2]};
    VT_CHECK(th_op("Resize", in2, 3, true, &bt, out, 1) == VN_ERR_UNSUPPORTED, "linear on int");
    th_free(&xi, 1);
    th_free(in, 4);
}

int main(void)
{
    VT_RUN(test_modes_and_transforms);
    VT_RUN(test_sizes_policies_and_filters);
    VT_RUN(test_antialias_strong_downsample);
    VT_RUN(test_f16_and_large_bilinear);
    VT_RUN(test_nearest_int_and_axes);
    VT_RUN(test_resize10_and_upsample);
    VT_RUN(test_errors);
    return vt_summary();
}
