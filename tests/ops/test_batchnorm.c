/*
 * test_batchnorm.c — BatchNormalization (inference) against a double
 * reference: ranks 2 to 5, channels 1 to 37, f32 and f16, outputs 1 and 2
 * (copies of the inputs in inference), and the errors. Training mode:
 * test_batchnorm_training.c.
 * Tolerance: |y - ref| <= 1e-5 * (1 + |ref|) for f32 (two f32 roundings of
 * a and b plus one FMA-free multiply-add); 1 f16 ulp of ref plus 2^-11 of the
 * terms for f16 (a and b are rounded to f16 too).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

static void run_case(vt_rng *r, vn_dtype dt, int32_t rank, const int64_t *dims, double eps)
{
    int64_t c = dims[1], n = 1;
    for (int32_t d = 0; d < rank; d++) n *= dims[d];
    int64_t inner = n / dims[0] / c;
    size_t es = vn_dtype_size(dt);
    void *x = malloc((size_t)n * es + 1), *y = malloc((size_t)n * es + 1);
    void *prm[4];
    for (int i = 0; i < 4; i++) prm[i] = malloc((size_t)c * es);
    for (int64_t i = 0; i < n; i++) vt_put(dt, x, i, vt_uniform(r, -3, 3));
    for (int64_t i = 0; i < c; i++) {
        vt_put(dt, prm[0], i, vt_uniform(r, 0.5, 2));    /* scale */
        vt_put(dt, prm[1], i, vt_uniform(r, -1, 1));     /* B */
        vt_put(dt, prm[2], i, vt_uniform(r, -0.5, 0.5)); /* mean */
        vt_put(dt, prm[3], i, vt_uniform(r, 0.1, 3));    /* var */
    }
    vn_tensor_desc in[5];
    int64_t cdim[1] = {c};
    in[0] = vt_desc(dt, rank, dims);
    for (int i = 1; i < 5; i++) in[i] = vt_desc(dt, 1, cdim);
    vn_attr eattr = {.name = "epsilon", .type = VN_ATTR_FLOAT, .f = eps};
    vn_attrs attrs = {&eattr, 1};
    vn_tensor ti[5] = {
        {in[0], x}, {in[1], prm[0]}, {in[2], prm[1]}, {in[3], prm[2]}, {in[4], prm[3]}};
    void *rm = malloc((size_t)c * es), *rv = malloc((size_t)c * es);
    vn_tensor to[3] = {{in[0], y}, {in[3], rm}, {in[4], rv}};
    vn_status st = vt_op_once("BatchNormalization", ti, 5, &attrs, to, 3);
    VT_OK(st);
    if (st == VN_OK) {
        /* inference: the running statistics are input_mean and input_var */
        VT_CHECK(!memcmp(rm, prm[2], (size_t)c * es) && !memcmp(rv, prm[3], (size_t)c * es),
                 "outputs 1 and 2 copy input_mean and input_var");
        double worst = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t ch = i / inner % c;
            double xv = vt_get(dt, x, i);
            double ref = (xv - vt_get(dt, prm[2], ch)) / sqrt(vt_get(dt, prm[3], ch) + eps) *
                             vt_get(dt, prm[0], ch) +
                         vt_get(dt, prm[1], ch);
            double tol = dt == VN_F32
                             ? 1e-5 * (1 + fabs(ref))
                             : ldexp(1.0, -10) * fabs(ref) + ldexp(1.0, -11) * (4 + fabs(xv) * 4);
            double e = fabs(vt_get(dt, y, i) - ref) / tol;
            if (e > worst) worst = e;
        }
        VT_CHECK(worst <= 1.0, "%s rank %d C %lld: error %.2f of the bound", vn_dtype_name(dt),
                 (int)rank, (long long)c, worst);
    }
    free(rm), free(rv);
    free(x), free(y);
    for (int i = 0; i < 4; i++) free(prm[i]);
}

static void test_shapes(void)
{
    vt_rng r = {42};
    const int64_t shapes[][5] = {
        {3, 5}, {2, 7, 9}, {1, 37, 13, 11}, {2, 16, 4, 5, 3}, {1, 1, 1, 1}};
    const int32_t ranks[] = {2, 3, 4, 5, 4};
    for (int s = 0; s < 5; s++) {
        run_case(&r, VN_F32, ranks[s], shapes[s], 1e-5);
        run_case(&r, VN_F16, ranks[s], shapes[s], 1e-3);
    }
    const int64_t big[4] = {1, 64, 56, 56};
    run_case(&r, VN_F32, 4, big, 1e-5);
}

static void test_errors(void)
{
    int64_t xd[4] = {1, 8, 4, 4}, bad[1] = {7}, good[1] = {8};
    vn_tensor_desc in[5] = {vt_desc(VN_F32, 4, xd), vt_desc(VN_F32, 1, good),
                            vt_desc(VN_F32, 1, bad), vt_desc(VN_F32, 1, good),
                            vt_desc(VN_F32, 1, good)};
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "BatchNormalization", in, 5, NULL, &plan) == VN_ERR_SHAPE,
             "bad B shape");
    VT_CONTAINS(vn_last_error(), "BatchNormalization");
    VT_CONTAINS(vn_last_error(), "input 2 is f32[7]");
    in[2] = vt_desc(VN_F32, 1, good);
    vn_attr t = {.name = "training_mode", .type = VN_ATTR_INT, .i = 2};
    vn_attrs attrs = {&t, 1};
    VT_CHECK(vn_op_plan_create(NULL, "BatchNormalization", in, 5, &attrs, &plan) ==
                 VN_ERR_INVALID_ARG,
             "training_mode 2");
    VT_CONTAINS(vn_last_error(), "training_mode is 2");
    vn_attr sp = {.name = "spatial", .type = VN_ATTR_INT, .i = 0};
    vn_attrs sattrs = {&sp, 1};
    VT_CHECK(vn_op_plan_create(NULL, "BatchNormalization", in, 5, &sattrs, &plan) ==
                 VN_ERR_UNSUPPORTED,
             "spatial 0");
    VT_CONTAINS(vn_last_error(), "spatial = 0");
}

int main(void)
{
    VT_RUN(test_shapes);
    VT_RUN(test_errors);
    return vt_summary();
}
