/*
 * test_profiler_bound.c — the profiler's bound on real kernels against this
 * machine's roofs (vn_machine_peaks_get: the file `vinci machine` saved, else
 * measured): a large Add (16 Mi f32 elements, 192 MiB of traffic, far past
 * any cache) must come out memory bound and a 2048 x 2048 x 2048 MatMul
 * compute bound, in the node record and in op_summary.csv's bound column.
 * The FLOPs and bytes behind the verdict come from the kernels' counters, so
 * they are checked against the work the ops must do: the Add one FLOP and 12
 * bytes per element, the MatMul 2 K FLOPs per output and at least its three
 * matrices' bytes. The scalar path has no measured compute roof and a
 * sanitizer build no meaningful speed: their verdicts are skipped. test_profiler.c checks
 * the rule itself on synthetic figures; this checks that real kernels feed it the right ones.
 * A verdict gets three tries (profile_for): a parallel test can slow one down.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "csv_field.h"
#include "graph/onnx_build.h"
#include "vinci/machine.h"
#include "vinci/profile.h"
#include "vt.h"

#define ADD_N  (16 * 1024 * 1024)
#define MM_K   2048
#define RUNS   3
#define MAX_IN 2

/* A one-node model `op(a, b) -> y`, a and b inputs of the given shape and
 * ONNX element types, compiled in `precision` (vn_precision). */
static vn_model *typed_node(vn_graph **g, const char *op, int rank, const int64_t *ad,
                            const int64_t *bd, int at, int bt, int yt, int32_t precision)
{
    ob gr = {0};
    const char *in[] = {"a", "b", NULL}, *out[] = {"y", NULL};
    ob_node(&gr, op, "the_op", in, out, NULL);
    ob_str(&gr, 2, "bound");
    ob_value_info(&gr, 11, "a", at, rank, ad, NULL);
    ob_value_info(&gr, 11, "b", bt, rank, bd, NULL);
    ob_value_info(&gr, 12, "y", yt, -1, NULL, NULL);
    ob m = ob_model(&gr, 17);
    vn_model *model = NULL;
    VT_OK(vn_graph_load_onnx_bytes(m.p, m.n, "bound.onnx", NULL, g));
    ob_free(&m);
    vn_compile_options o = {.opt_level = 1, .precision = precision};
    if (*g) VT_OK(vn_model_compile(*g, &o, &model));
    return model;
}

static vn_model *one_node(vn_graph **g, const char *op, int rank, const int64_t *ad,
                          const int64_t *bd)
{
    return typed_node(g, op, rank, ad, bd, OB_FLOAT, OB_FLOAT, OB_FLOAT, VN_PRECISION_F32);
}

/* RUNS profiled runs on inputs of small random values (after one warm-up). */
static vn_profiler *profile(vn_model *m)
{
    vn_named_tensor in[MAX_IN];
    vn_model_ctx *c = NULL;
    vn_profiler *p = NULL;
    vt_rng r = {7};
    int32_t n = vn_model_num_inputs(m);
    for (int32_t i = 0; i < n; i++) {
        vn_model_input(m, i, &in[i].name, &in[i].tensor.desc);
        size_t e = (size_t)vn_desc_numel(&in[i].tensor.desc);
        in[i].tensor.data = vn_aligned_alloc(e * sizeof(float), 64);
        vt_fill(&r, in[i].tensor.data, e, -1, 1);
    }
    VT_OK(vn_model_ctx_create(m, &c));
    VT_OK(vn_model_run(m, c, in, n, NULL, 0));
    VT_OK(vn_profiler_create(m, 0, 0, &p)); /* 0, 0: this machine's roofs */
    for (int32_t i = 0; i < RUNS && p; i++) VT_OK(vn_profiler_run(p, c, in, n));
    vn_model_ctx_destroy(c);
    for (int32_t i = 0; i < n; i++) vn_aligned_free(in[i].tensor.data);
    return p;
}

/* Column `col` of the_op's row (the only one) in op_summary.csv. */
static void csv_column(const vn_profiler *p, const char *col, char *out, size_t size)
{
    char dir[] = "/tmp/vinci_bound_XXXXXX", path[64], header[4096], row[4096];
    out[0] = 0;
    if (!mkdtemp(dir)) return;
    snprintf(path, sizeof path, "%s/op_summary.csv", dir);
    VT_OK(vn_profiler_write_csv(p, path));
    FILE *f = fopen(path, "r");
    if (f && fgets(header, sizeof header, f) && fgets(row, sizeof row, f))
        for (int k = 0; k < 64; k++) {
            char name[64];
            csv_field(header, k, name, sizeof name);
            if (!strcmp(name, col)) csv_field(row, k, out, size);
        }
    if (f) fclose(f);
    remove(path);
    rmdir(dir);
}

static void check_bound(const char *what, vn_profiler *p, vn_bound want)
{
#ifdef VINCI_SANITIZED
    /* Instrumented code runs several times slower than the roofs were
     * measured at: its bound would say nothing about the kernel. */
    printf("  %s: bound not checked in a sanitizer build\n", what);
    return;
#endif
    double gflops, gbs, frac = 0;
    vn_profiler_peaks(p, &gflops, &gbs);
    const vn_profile_node *n = vn_profiler_node(p, 0);
    double avg = n->total_ms / (double)n->calls;
    printf("  %s: %.3f ms (min %.3f), %.3g FLOP, %.3g B, %.1f GFLOP/s, %.1f GB/s; roofs %.1f "
           "GFLOP/s, %.1f GB/s\n",
           what, avg, n->min_ms, n->flops, n->bytes, n->flops / avg / 1e6, n->bytes / avg / 1e6,
           gflops, gbs);
    vn_bound got = vn_profile_classify(avg, n->flops, n->bytes, gflops, gbs, &frac);
    VT_CHECK(got == want, "%s is %s bound (%.1f %% of its roof), not %s", what, vn_bound_name(got),
             100 * frac, vn_bound_name(want));
    char csv[32];
    csv_column(p, "bound", csv, sizeof csv);
    VT_CHECK(!strcmp(csv, vn_bound_name(want)), "%s: op_summary.csv says '%s'", what, csv);
}

/* The verdict of the_op's average time against the roofs. */
static vn_bound verdict(const vn_profiler *p)
{
    double gflops, gbs, frac = 0;
    vn_profiler_peaks(p, &gflops, &gbs);
    const vn_profile_node *n = vn_profiler_node(p, 0);
    return vn_profile_classify(n->total_ms / (double)n->calls, n->flops, n->bytes, gflops, gbs,
                               &frac);
}

/* Profiles until the verdict is `want`, ATTEMPTS times at most: under ctest
 * -j2 another test can halve a run's bandwidth for a while, which makes a
 * memory-bound op look latency bound. A wrong counter or rule fails every
 * attempt. Returns the last profiler. */
#ifdef VINCI_SANITIZED
#define ATTEMPTS 1 /* no verdict is checked there */
#else
#define ATTEMPTS 3
#endif
static vn_profiler *profile_for(vn_model *m, vn_bound want)
{
    vn_profiler *p = NULL;
    for (int a = 0; a < ATTEMPTS; a++) {
        vn_profiler_destroy(p);
        p = profile(m);
        if (!p || verdict(p) == want) break;
    }
    return p;
}

/* Roofs exist for the vector ISAs; the scalar path has no measured roof. */
static bool have_roofs(vn_profiler *p)
{
    double gflops, gbs;
    vn_profiler_peaks(p, &gflops, &gbs);
    if (gflops > 0 && gbs > 0) return true;
    printf("  skipped: no roofs for this ISA path (%.1f GFLOP/s, %.1f GB/s)\n", gflops, gbs);
    return false;
}

static void test_large_add_is_memory_bound(void)
{
    int64_t d[1] = {ADD_N};
    vn_graph *g = NULL;
    vn_model *m = one_node(&g, "Add", 1, d, d);
    vn_profiler *p = m ? profile_for(m, VN_BOUND_MEMORY) : NULL;
    if (p && have_roofs(p)) {
        const vn_profile_node *n = vn_profiler_node(p, 0);
        VT_CHECK(n->flops == (double)ADD_N, "Add: %.0f FLOPs, one per element", n->flops);
        VT_CHECK(n->bytes == 12.0 * ADD_N, "Add: %.0f bytes, 12 per element", n->bytes);
        check_bound("Add f32[16Mi]", p, VN_BOUND_MEMORY);
    }
    vn_profiler_destroy(p);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

static void test_matmul_2048_is_compute_bound(void)
{
    int64_t d[2] = {MM_K, MM_K};
    vn_graph *g = NULL;
    vn_model *m = one_node(&g, "MatMul", 2, d, d);
    vn_profiler *p = m ? profile_for(m, VN_BOUND_COMPUTE) : NULL;
    if (p && have_roofs(p)) {
        const vn_profile_node *n = vn_profiler_node(p, 0);
        double k = MM_K;
        VT_CHECK(n->flops == 2 * k * k * k, "MatMul: %.0f FLOPs, 2 K per output", n->flops);
        /* At least each matrix once; the kernels' real traffic is more (A is
         * read again for every column tile of B: ~20 x 16 MiB). */
        VT_CHECK(n->bytes >= 3 * 4 * k * k, "MatMul: %.0f bytes for three 16 MiB matrices",
                 n->bytes);
        check_bound("MatMul 2048^3", p, VN_BOUND_COMPUTE);
    }
    vn_profiler_destroy(p);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

/* A node's compute roof follows the precision its cube work ran in: a bf16
 * MatMul is held to the bf16 roof (AMX tiles where the CPU has them, else
 * vdpbf16ps; the f32 roof where neither was measured), a MatMulInteger to
 * the int8 one; op_summary.csv names the precision and the roof. */
static void check_precision(const char *what, vn_model *m, const char *want, double low_peak)
{
    vn_profiler *p = m ? profile(m) : NULL;
    char prec[32] = "", roof[32] = "";
    double gflops = 0, gbs = 0;
    if (p) {
        csv_column(p, "precision", prec, sizeof prec);
        csv_column(p, "roof_gflops", roof, sizeof roof);
        vn_profiler_peaks(p, &gflops, &gbs);
    }
    printf("  %s: precision %s, roof %s GFLOP/s (f32 roof %.1f)\n", what, prec, roof, gflops);
    VT_CHECK(!strcmp(prec, want), "%s: precision '%s', want %s", what, prec, want);
    double r = atof(roof);
    VT_CHECK(low_peak > 0 ? r > 0 && r != gflops : r == 0 || fabs(r - gflops) < 0.1,
             "%s: roof %.1f with f32 roof %.1f (the machine's %s figure %.1f)", what, r, gflops,
             want, low_peak);
    vn_profiler_destroy(p);
}

static void test_precision_roofs(void)
{
    vn_machine_peaks k;
    if (vn_machine_peaks_get(&k) != VN_OK) {
        VT_CHECK(0, "no machine peaks");
        return;
    }
    int64_t d[2] = {256, 256};
    vn_graph *g = NULL;
    vn_model *m =
        typed_node(&g, "MatMul", 2, d, d, OB_FLOAT, OB_FLOAT, OB_FLOAT, VN_PRECISION_BF16);
    check_precision("MatMul bf16", m, "bf16", k.has_amx ? k.amx_bf16_gflops[0] : k.bf16_gflops[0]);
    vn_model_destroy(m);
    vn_graph_destroy(g);
    m = typed_node(&g, "MatMulInteger", 2, d, d, OB_UINT8, OB_INT8, 6 /* INT32 */,
                   VN_PRECISION_F32);
    check_precision("MatMulInteger", m, "int8", k.has_amx ? k.amx_int8_gops[0] : k.int8_gops[0]);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

int main(void)
{
    VT_RUN(test_large_add_is_memory_bound);
    VT_RUN(test_matmul_2048_is_compute_bound);
    VT_RUN(test_precision_roofs);
    return vt_summary();
}
