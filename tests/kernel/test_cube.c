/*
 * test_cube.c — the cube instructions in a user kernel: load A / B, mmad,
 * fixpipe against a double reference, mmad on a pre-packed B read in place
 * (two K chunks, a column block past the first panel, partial tiles), mmad
 * on a row-major f32 B read in place (bit-identical to load + mmad), and
 * checked-mode failures (wrong position, out-of-bounds extent, misalignment,
 * unwritten operand, a bad packed-B block, a B in place that is not whole
 * panels or out of bounds, an out-of-bounds prefetch hint) naming the call
 * and file:line.
 */
#include "vinci/vinci.h"
#include "vt.h"

typedef struct cube_args {
    vn_gm a, b, c;
    int64_t m, n, k;
    int bug; /* 0: none; see the cases below */
} cube_args;

/* C = relu(A * B) for one small block, written straight-line as a user would. */
static void cube_kernel(vn_core *core, const void *p)
{
    const cube_args *g = p;
    vn_position apos = g->bug == 1 ? VN_B2 : VN_A2; /* bug 1: A in L0B */
    vn_local a = vn_buf_new(core, apos, vn_cube_a_elems(VN_F32, g->m, g->k), VN_F32);
    vn_local b = vn_buf_new(core, VN_B1, vn_cube_b_elems(VN_F32, g->k, g->n), VN_F32);
    vn_local c = vn_buf_new(core, VN_CO1, vn_cube_c_elems(VN_F32, g->m, g->n), VN_F32);
    if (g->bug == 3)
        a = vn_local_as(vn_local_at(core, vn_local_as(a, VN_U8), 32), VN_F32),
        a.data = (char *)a.data + 4;
    vn_cube_load_a(core, a, vn_mat_make(g->a, 0, g->k, 1), g->m + (g->bug == 2 ? 1 : 0), g->k);
    if (g->bug != 4) vn_cube_load_b(core, b, vn_mat_make(g->b, 0, g->n, 1), g->k, g->n);
    vn_cube_mmad(core, c, a, b, g->m, g->n, g->k, true);
    vn_fixpipe fp = {.alpha = 1.0f, .act = VN_ACT_RELU};
    vn_cube_fixpipe(core, vn_mat_make(g->c, 0, g->n, 1), c, g->m, g->n, &fp);
}

/* C = relu(A * B) through load, mmad and fixpipe against a double
 * reference (tolerance: (k + 4) * 2^-23 * sum |a*b|). */
static void check_cube_kernel(int64_t m, int64_t n, int64_t k)
{
    vt_rng r = {42};
    float *A = malloc((size_t)(m * k) * 4), *B = malloc((size_t)(k * n) * 4);
    float *C = malloc((size_t)(m * n) * 4);
    vt_fill(&r, A, m * k, -1, 1), vt_fill(&r, B, k * n, -1, 1);
    cube_args g = {vn_gm_make(A, VN_F32, m * k),
                   vn_gm_make(B, VN_F32, k * n),
                   vn_gm_make(C, VN_F32, m * n),
                   m,
                   n,
                   k,
                   0};
    vn_kernel_counters cnt;
    VT_OK(vn_launch(NULL, &(vn_launch_desc){cube_kernel, "cube", 1, &g, 1, 0}, &cnt));
    VT_CHECK(cnt.cube_ops == m * n * k, "cube_ops %lld", (long long)cnt.cube_ops);
    int bad = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0, mag = 0;
            for (int64_t q = 0; q < k; q++)
                s += (double)A[i * k + q] * B[q * n + j],
                    mag += fabs((double)A[i * k + q] * B[q * n + j]);
            s = s > 0 ? s : 0;
            bad += fabs(C[i * n + j] - s) > (k + 4) * 1.2e-7 * mag;
        }
    VT_CHECK(bad == 0, "m %lld n %lld k %lld: %d wrong", (long long)m, (long long)n, (long long)k,
             bad);
    free(A), free(B), free(C);
}

/* k = 1024: the L0A rows are 4 KiB apart, a stride that stacks them in one
 * L1 set, so mmad copies them apart in two chunks (cube.c panel_copied). */
static void test_cube_kernel(void)
{
    check_cube_kernel(13, 35, 19);
    check_cube_kernel(12, 35, 1024);
    VT_CHECK(vn_cube_shape_of(VN_F32).mr > 0 && vn_cube_shape_of(VN_I32).mr == 0, "shapes");
}

/* The bf16 and int8 cube runs on AMX tiles (MR = 32) exactly when the CPU and
 * OS have them, the path is AVX-512 and VINCI_AMX is not 0; the f32 shape
 * never changes. Guards against the tile kernels silently not running (or
 * running where they must not). */
static void test_amx_choice(void)
{
    const vn_cpu_features *f = vn_cpu_features_get();
    const char *env = getenv("VINCI_AMX");
    bool want = vn_isa_active() == VN_ISA_AVX512 && f->amx_tile && f->amx_bf16 && f->amx_int8 &&
                f->os_amx && !(env && strcmp(env, "0") == 0);
    vn_cube_shape bf = vn_cube_shape_of(VN_BF16), i8 = vn_cube_shape_of(VN_U8);
    VT_CHECK((bf.mr == 32) == want && (i8.mr == 32) == want, "AMX expected %d: bf16 MR %d, int8 %d",
             (int)want, (int)bf.mr, (int)i8.mr);
    VT_CHECK(bf.nr == 32 || vn_isa_active() != VN_ISA_AVX512, "bf16 NR %d", (int)bf.nr);
    VT_CHECK(vn_cube_shape_of(VN_F32).mr != 32, "f32 MR %d", (int)vn_cube_shape_of(VN_F32).mr);
}

/* ---- mmad on a pre-packed B ------------------------------------------------ */

typedef struct packed_args {
    vn_gm a, pb, c;
    int64_t m, n, k, K, n0, k1; /* block: columns [n0, n0+n), chunks [0, k1) and [k1, k) */
    int bug;        /* 0: none; 1: n0 off a panel; 2: past the packed B; 3: misaligned */
    bool direct;    /* A read in place (vn_cube_mmad_packed_direct), not loaded */
    int64_t a_rows; /* rows of the A tensor (>= m; the direct form reads past m) */
} packed_args;

/* C = A (m x k) * B[0:k, n0:n0+n] in two K chunks, B read where it lies. */
static void packed_kernel(vn_core *core, const void *p)
{
    const packed_args *g = p;
    vn_local a = vn_buf_new(core, VN_A2, vn_cube_a_elems(VN_F32, g->m, g->k), VN_F32);
    vn_local c = vn_buf_new(core, VN_CO1, vn_cube_c_elems(VN_F32, g->m, g->n), VN_F32);
    vn_gm pb = g->pb;
    int64_t n0 = g->n0 + (g->bug == 1 ? 1 : 0);
    if (g->bug == 2) pb.len -= 1;
    if (g->bug == 3) pb.data = (float *)pb.data + 1;
    for (int64_t k0 = 0; k0<g->k; k0 = g->k1> k0 ? g->k1 : g->k) {
        int64_t kl = (g->k1 > k0 ? g->k1 : g->k) - k0;
        vn_mat am = vn_mat_make(g->a, k0, g->k, g->bug == 4 ? 2 : 1); /* 4: strided A columns */
        if (g->direct) {
            vn_cube_mmad_packed_direct(core, c, am, pb, g->K, g->m, k0, kl, n0, g->n, k0 == 0);
            continue;
        }
        vn_cube_load_a(core, a, am, g->m, kl);
        vn_cube_mmad_packed(core, c, a, pb, g->K, g->m, k0, kl, n0, g->n, k0 == 0);
    }
    vn_cube_fixpipe(core, vn_mat_make(g->c, 0, g->n, 1), c, g->m, g->n, NULL);
}

/* The whole B (K x N) in the documented panel layout (f32: KP = 1). */
static float *pack_ref(const float *B, int64_t K, int64_t N, int64_t nr)
{
    int64_t panels = (N + nr - 1) / nr;
    float *pb = vn_aligned_alloc((size_t)(panels * nr * K) * 4, 64);
    for (int64_t q = 0; q < panels; q++)
        for (int64_t r = 0; r < K; r++)
            for (int64_t j = 0; j < nr; j++) {
                int64_t col = q * nr + j;
                pb[q * nr * K + r * nr + j] = col < N ? B[r * N + col] : 0.0f;
            }
    return pb;
}

static vn_status run_packed(int bug, float *C, const float *A, const float *B, packed_args *g)
{
    int64_t nr = vn_cube_shape_of(VN_F32).nr, N = g->n0 + g->n + 3;
    float *pb = pack_ref(B, g->K, N, nr);
    g->pb = vn_gm_make(pb, VN_F32, (N + nr - 1) / nr * nr * g->K);
    g->a = vn_gm_make((void *)A, VN_F32, (g->a_rows > g->m ? g->a_rows : g->m) * g->k);
    g->c = vn_gm_make(C, VN_F32, g->m * g->n);
    g->bug = bug;
    vn_status st = vn_launch(NULL, &(vn_launch_desc){packed_kernel, "packed", 1, g, 1, 0}, NULL);
    vn_aligned_free(pb);
    return st;
}

static void test_mmad_packed(void)
{
    vt_rng r = {7};
    int64_t nr = vn_cube_shape_of(VN_F32).nr;
    /* rows past MR, a partial last panel, K = k (ends at K) and k < K */
    for (int t = 0; t < 2; t++) {
        packed_args g = {.m = 13, .n = nr + 5, .k = 19, .K = t ? 23 : 19, .n0 = nr, .k1 = 8};
        g.a_rows = vn_cube_rows_read(VN_F32, g.m);
        int64_t N = g.n0 + g.n + 3;
        float A[32 * 19], C[13 * 80], C2[13 * 80], *B = malloc((size_t)(g.K * N) * 4);
        vt_fill(&r, A, 32 * 19, -1, 1), vt_fill(&r, B, g.K * N, -1, 1);
        VT_CHECK(g.a_rows >= g.m && g.a_rows <= 32, "rows read %lld", (long long)g.a_rows);
        VT_OK(run_packed(0, C, A, B, &g));
        g.direct = true;
        VT_OK(run_packed(0, C2, A, B, &g));
        int bad = 0;
        for (int64_t i = 0; i < g.m; i++)
            for (int64_t j = 0; j < g.n; j++) {
                double s = 0;
                for (int64_t q = 0; q < g.k; q++) s += (double)A[i * g.k + q] * B[q * N + g.n0 + j];
                bad += fabs(C[i * g.n + j] - s) > 1e-5;
            }
        VT_CHECK(bad == 0, "K %lld: %d wrong", (long long)g.K, bad);
        VT_CHECK(memcmp(C, C2, (size_t)(g.m * g.n) * 4) == 0,
                 "K %lld: A read in place differs from A loaded", (long long)g.K);
        free(B);
    }
}

/* The direct form reads rows past m: an A tensor of exactly m rows (13, not
 * a multiple of any kernel height) is out of bounds, named. */
static void test_mmad_packed_direct_bounds(void)
{
    int64_t nr = vn_cube_shape_of(VN_F32).nr;
    packed_args g = {.m = 13, .n = 8, .k = 8, .K = 8, .n0 = nr, .k1 = 8, .direct = true};
    int64_t N = g.n0 + g.n + 3;
    float A[13 * 8] = {0}, C[13 * 8], *B = calloc((size_t)(g.K * N), 4);
    vn_status st = run_packed(0, C, A, B, &g);
    free(B);
    VT_CHECK(vn_cube_rows_read(VN_F32, 13) > 13, "rows read %lld",
             (long long)vn_cube_rows_read(VN_F32, 13));
    VT_CHECK(st == VN_ERR_KERNEL, "status %s", vn_status_name(st));
    VT_CONTAINS(vn_last_error(), "vn_cube_mmad_packed_direct");
    VT_CONTAINS(vn_last_error(), "out of bounds");
    VT_CONTAINS(vn_last_error(), "test_cube.c:");
    /* A whose columns are not contiguous is not an L0A block: refused in any mode */
    g.m = 12, g.a_rows = 32;
    float A2[32 * 8 * 2] = {0};
    B = calloc((size_t)(g.K * N), 4);
    st = run_packed(4, C, A2, B, &g);
    free(B);
    VT_CHECK(st == VN_ERR_KERNEL, "strided A: status %s", vn_status_name(st));
    VT_CONTAINS(vn_last_error(), "vn_cube_mmad_packed_direct");
    VT_CONTAINS(vn_last_error(), "contiguous rows");
}

static void expect_packed_fail(int bug, const char *what)
{
    int64_t nr = vn_cube_shape_of(VN_F32).nr;
    packed_args g = {.m = 4, .n = 8, .k = 8, .K = 8, .n0 = nr, .k1 = 8};
    int64_t N = g.n0 + g.n + 3;
    float A[32] = {0}, C[32], *B = calloc((size_t)(g.K * N), 4);
    vn_status st = run_packed(bug, C, A, B, &g);
    free(B);
    VT_CHECK(st == VN_ERR_KERNEL, "packed bug %d: status %s", bug, vn_status_name(st));
    VT_CONTAINS(vn_last_error(), "vn_cube_mmad_packed");
    VT_CONTAINS(vn_last_error(), what);
    VT_CONTAINS(vn_last_error(), "test_cube.c:");
}

/* C1 = A * B through load_b + mmad, C2 = the same with B read in place
 * (vn_cube_mmad_gm), B's rows ldb apart; the next block hinted with
 * vn_prefetch_mat and C1's lines requested with vn_prefetch_mat_now; C3 the
 * same with A read in place against the loaded B (vn_cube_mmad_a_gm). bug
 * 1: n not whole panels; 2: B past its tensor; 3: a hint past A; 4: a
 * request past C1; 5: A read in place from rows past its tensor. */
typedef struct gm_args {
    vn_gm a, b, c1, c2, c3;
    int64_t m, n, k, ldb;
    int bug;
} gm_args;

static void gm_kernel(vn_core *core, const void *p)
{
    const gm_args *g = p;
    vn_local a = vn_buf_new(core, VN_A2, vn_cube_a_elems(VN_F32, g->m, g->k), VN_F32);
    vn_local b = vn_buf_new(core, VN_B1, vn_cube_b_elems(VN_F32, g->k, g->n), VN_F32);
    vn_local c = vn_buf_new(core, VN_CO1, vn_cube_c_elems(VN_F32, g->m, g->n), VN_F32);
    vn_mat av = vn_mat_make(g->a, 0, g->k, 1), bv = vn_mat_make(g->b, 0, g->ldb, 1);
    vn_prefetch_mat(core, av, g->m + (g->bug == 3 ? 16 : 0), g->k);
    vn_cube_load_a(core, a, av, g->m, g->k);
    vn_cube_load_b(core, b, bv, g->k, g->n);
    vn_cube_mmad(core, c, a, b, g->m, g->n, g->k, true);
    vn_mat c1 = vn_mat_make(g->c1, 0, g->n, 1);
    vn_prefetch_mat_now(core, c1, g->m + (g->bug == 4 ? 1 : 0), g->n);
    vn_cube_fixpipe(core, c1, c, g->m, g->n, NULL);
    int64_t n = g->n - (g->bug == 1 ? 1 : 0), k = g->k + (g->bug == 2 ? 1 : 0);
    vn_cube_mmad_gm(core, c, a, bv, g->m, n, k, true);
    vn_cube_fixpipe(core, vn_mat_make(g->c2, 0, g->n, 1), c, g->m, g->n, NULL);
    vn_mat a_late = vn_mat_make(g->a, g->bug == 5 ? 8 * g->k : 0, g->k, 1); /* 5: rows past A */
    vn_cube_mmad_a_gm(core, c, a_late, b, g->m, g->n, g->k, true);
    vn_cube_fixpipe(core, vn_mat_make(g->c3, 0, g->n, 1), c, g->m, g->n, NULL);
}

static vn_status run_gm(int bug, int64_t m, int64_t n, int64_t k, int64_t ldb, const float *A,
                        const float *B, float *C1, float *C2, float *C3)
{
    /* A holds the rows the kernels read past m (vn_cube_rows_read) */
    gm_args g = {vn_gm_make((void *)A, VN_F32, vn_cube_rows_read(VN_F32, m) * k),
                 vn_gm_make((void *)B, VN_F32, (k - 1) * ldb + n),
                 vn_gm_make(C1, VN_F32, m * n),
                 vn_gm_make(C2, VN_F32, m * n),
                 vn_gm_make(C3, VN_F32, m * n),
                 m,
                 n,
                 k,
                 ldb,
                 bug};
    return vn_launch(NULL, &(vn_launch_desc){gm_kernel, "cube_gm", 1, &g, 1, 0}, NULL);
}

static void test_mmad_gm(void)
{
    vt_rng r = {9};
    int64_t nr = vn_cube_shape_of(VN_F32).nr, m = 17, n = 2 * nr, k = 23, ldb = n + 5;
    float A[32 * 23] = {0}, B[23 * (2 * 64 + 5)], C1[17 * 2 * 64], C2[17 * 2 * 64], C3[17 * 2 * 64];
    vt_fill(&r, A, m * k, -1, 1), vt_fill(&r, B, k * ldb, -1, 1);
    VT_OK(run_gm(0, m, n, k, ldb, A, B, C1, C2, C3));
    int bad = 0, diff = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t q = 0; q < k; q++) s += (double)A[i * k + q] * B[q * ldb + j];
            bad += fabs(C2[i * n + j] - s) > 1e-5;
            diff += memcmp(&C1[i * n + j], &C2[i * n + j], 4) != 0;
            diff += memcmp(&C1[i * n + j], &C3[i * n + j], 4) != 0;
        }
    VT_CHECK(bad == 0 && diff == 0, "%d wrong, %d differ from load + mmad (in place B, in place A)",
             bad, diff);
    const char *what[] = {"multiple of the panel width", "out of bounds", "out of bounds",
                          "out of bounds", "out of bounds"};
    const char *call[] = {"vn_cube_mmad_gm", "vn_cube_mmad_gm", "vn_prefetch_mat",
                          "vn_prefetch_mat_now", "vn_cube_mmad_a_gm"};
    for (int bug = 1; bug <= 5; bug++) {
        vn_status st = run_gm(bug, m, n, k, ldb, A, B, C1, C2, C3);
        VT_CHECK(st == VN_ERR_KERNEL, "gm bug %d: status %s", bug, vn_status_name(st));
        VT_CONTAINS(vn_last_error(), call[bug - 1]);
        VT_CONTAINS(vn_last_error(), what[bug - 1]);
        VT_CONTAINS(vn_last_error(), "test_cube.c:");
    }
}

static void expect_fail(int bug, const char *call, const char *what)
{
    float A[8 * 8] = {0}, B[8 * 8] = {0}, C[8 * 8];
    cube_args g = {vn_gm_make(A, VN_F32, 64),
                   vn_gm_make(B, VN_F32, 64),
                   vn_gm_make(C, VN_F32, 64),
                   8,
                   8,
                   8,
                   bug};
    vn_status st = vn_launch(NULL, &(vn_launch_desc){cube_kernel, "cube", 1, &g, 1, 0}, NULL);
    VT_CHECK(st == VN_ERR_KERNEL, "bug %d: status %s", bug, vn_status_name(st));
    VT_CONTAINS(vn_last_error(), call);
    VT_CONTAINS(vn_last_error(), what);
    VT_CONTAINS(vn_last_error(), "test_cube.c:");
}

static void test_checked_failures(void)
{
    expect_fail(1, "vn_cube_load_a", "L0B");           /* A operand in the wrong position */
    expect_fail(2, "vn_cube_load_a", "out of bounds"); /* extent past the global tensor */
    expect_fail(3, "vn_cube_load_a", "aligned");       /* misaligned local */
    expect_fail(4, "vn_cube_mmad", "nothing wrote");   /* B never loaded */
    expect_packed_fail(1, "panel");                    /* a column block off a panel boundary */
    expect_packed_fail(2, "the packed B has");         /* columns past the packed B */
    expect_packed_fail(3, "aligned");                  /* a misaligned packed B */
}

int main(void)
{
    VT_RUN(test_cube_kernel);
    VT_RUN(test_amx_choice);
    VT_RUN(test_mmad_packed);
    VT_RUN(test_mmad_packed_direct_bounds);
    VT_RUN(test_mmad_gm);
    VT_RUN(test_checked_failures);
    return vt_summary();
}
