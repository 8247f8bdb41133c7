/*
 * test_profiler.c — the profiler on the bundled model (models/mlp_tiny.onnx,
 * input x f32[batch,64], compiled here at batch 64): op_summary.csv parsed
 * back (columns, every node, node times summing to the run time within 5 %),
 * trace.json checked by a small JSON parser, roofline.svg with one circle per
 * op, hardware counters forced off (VINCI_PERF_DISABLE=1), and the bound rule
 * on known cases. Fixed roofs keep the classification independent of the VM.
 */
#include <stdlib.h>
#include <unistd.h>

#include "vinci/profile.h"
#include "vt.h"

#define PEAK_GFLOPS 1000.0
#define PEAK_GBS    20.0
#define RUNS        30

static int model_path(const char *file, char *buf, size_t size)
{
    const char *tail = strstr(__FILE__, "tests/profile/");
    if (!tail) return -1;
    snprintf(buf, size, "%.*smodels/%s", (int)(tail - __FILE__), __FILE__, file);
    FILE *f = fopen(buf, "rb");
    if (!f) return -1;
    fclose(f);
    return 0;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* ---- a minimal JSON syntax checker (RFC 8259 grammar, no semantics) ---- */
static const char *js_value(const char *s);
static const char *js_ws(const char *s)
{
    while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t') s++;
    return s;
}
static const char *js_string(const char *s)
{
    if (*s++ != '"') return NULL;
    for (; *s && *s != '"'; s++) {
        if ((unsigned char)*s < 0x20) return NULL;
        if (*s == '\\' && !*++s) return NULL;
    }
    return *s == '"' ? s + 1 : NULL;
}
static const char *js_number(const char *s)
{
    char *end;
    strtod(s, &end);
    return end == s ? NULL : end;
}
static const char *js_seq(const char *s, char close, bool object)
{
    s = js_ws(s + 1);
    if (*s == close) return s + 1;
    for (;;) {
        if (object) {
            s = js_string(js_ws(s));
            if (!s || *(s = js_ws(s)) != ':') return NULL;
            s++;
        }
        if (!(s = js_value(s))) return NULL;
        s = js_ws(s);
        if (*s == close) return s + 1;
        if (*s++ != ',') return NULL;
    }
}
static const char *js_value(const char *s)
{
    s = js_ws(s);
    if (*s == '{') return js_seq(s, '}', true);
    if (*s == '[') return js_seq(s, ']', false);
    if (*s == '"') return js_string(s);
    if (!strncmp(s, "true", 4)) return s + 4;
    if (!strncmp(s, "false", 5)) return s + 5;
    if (!strncmp(s, "null", 4)) return s + 4;
    return js_number(s);
}
static bool json_valid(const char *s)
{
    const char *e = js_value(s);
    return e && *js_ws(e) == 0;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* ---- the bundled model ---- */
static vn_graph *graph; /* outlives the models: their node names point into it */

static vn_model *compile_mlp(void)
{
    char path[1024];
    vn_graph *g = NULL;
    vn_model *m = NULL;
    if (model_path("mlp_tiny.onnx", path, sizeof path)) return NULL;
    vn_input_shape x = {"x", 2, {64, 64}};
    vn_compile_options o = {1, NULL, &x, 1};
    VT_OK(vn_graph_load_onnx(path, &g));
    VT_OK(vn_model_compile(g, &o, &m));
    vn_graph_destroy(graph);
    graph = g;
    return m;
}

static vn_profiler *profile_runs(vn_model *m, int32_t runs)
{
    vn_profiler *p = NULL;
    vn_model_ctx *c = NULL;
    vn_named_tensor in = {"x", {{VN_F32, 2, {64, 64}}, NULL}};
    in.tensor.data = vn_aligned_alloc(64 * 64 * 4, 64);
    memset(in.tensor.data, 0, 64 * 64 * 4);
    VT_OK(vn_model_ctx_create(m, &c));
    VT_OK(vn_model_run(m, c, &in, 1, NULL, 0)); /* warm-up, unprofiled */
    VT_OK(vn_profiler_create(m, PEAK_GFLOPS, PEAK_GBS, &p));
    for (int32_t i = 0; i < runs; i++) VT_OK(vn_profiler_run(p, c, &in, 1));
    vn_model_ctx_destroy(c);
    vn_aligned_free(in.tensor.data);
    return p;
}

static const char *const columns =
    "name,op_type,inputs,outputs,calls,total_ms,avg_ms,min_ms,max_ms,share,flops,bytes,gflops,"
    "gbs,intensity,bound,roof_fraction,cycles,instructions,cache_refs,cache_misses,branch_misses";

/* Field k of a CSV line (quoted fields hold commas); copied into buf. */
static void csv_field(const char *line, int k, char *buf, size_t size)
{
    size_t n = 0;
    bool q = false;
    for (int idx = 0; *line && *line != '\n' && idx <= k; line++) {
        if (*line == '"')
            q = !q;
        else if (*line == ',' && !q)
            idx++;
        else if (idx == k && n + 1 < size)
            buf[n++] = *line;
    }
    buf[n] = 0;
}

static void check_csv(const vn_model *m, const vn_profiler *p, const char *path)
{
    char *s = read_all(path);
    VT_CHECK(s != NULL, "read %s", path);
    if (!s) return;
    VT_CHECK(!strncmp(s, columns, strlen(columns)), "CSV header");
    double sum = 0;
    int32_t rows = 0;
    for (char *line = strchr(s, '\n'); line && line[1]; line = strchr(line + 1, '\n'), rows++) {
        char name[256], total[64], calls[64];
        csv_field(line + 1, 0, name, sizeof name);
        csv_field(line + 1, 4, calls, sizeof calls);
        csv_field(line + 1, 5, total, sizeof total);
        const char *want = "";
        vn_model_node(m, rows, &want, NULL, NULL);
        VT_CHECK(!strcmp(name, want), "row %d is '%s', node '%s'", (int)rows, name, want);
        VT_CHECK(atoi(calls) == RUNS, "node %s: %s calls", name, calls);
        sum += atof(total);
    }
    VT_CHECK(rows == vn_model_num_nodes(m), "%d rows, %d nodes", (int)rows,
             (int)vn_model_num_nodes(m));
    double run = vn_profiler_run_ms(p);
    VT_CHECK(sum <= run && sum >= 0.95 * run, "node times %.4f ms, runs %.4f ms", sum, run);
    free(s);
}

static void check_trace(const vn_model *m, const char *path)
{
    char *s = read_all(path);
    VT_CHECK(s && json_valid(s), "trace.json is valid JSON");
    if (!s) return;
    VT_CHECK(strstr(s, "{\"traceEvents\":[") == s, "traceEvents first");
    VT_CHECK(count(s, "\"ph\":\"X\"") == RUNS * (vn_model_num_nodes(m) + 1), "slices");
    VT_CHECK(count(s, "\"name\":\"model run\"") == RUNS, "run slices");
    VT_CHECK(!json_valid("{\"a\":[1,2,}") && !json_valid("{\"a\" 1}"), "checker rejects");
    free(s);
}

static void check_svg(const vn_profiler *p, const char *path)
{
    char *s = read_all(path);
    VT_CHECK(s != NULL, "read %s", path);
    if (!s) return;
    int ops = 0;
    for (int32_t i = 0; i < vn_profiler_num_nodes(p); i++)
        ops += vn_profiler_node(p, i)->flops > 0 && vn_profiler_node(p, i)->bytes > 0;
    VT_CHECK(!strncmp(s, "<?xml", 5) && strstr(s, "</svg>"), "SVG document");
    VT_CHECK(count(s, "<circle class=\"op\"") == ops, "%d circles for %d ops",
             count(s, "<circle class=\"op\""), ops);
    VT_CHECK(count(s, "<circle") == count(s, "</circle>"), "balanced circles");
    free(s);
}

static void test_mlp_profile(void)
{
    vn_model *m = compile_mlp();
    if (!m) return (void)printf("  skipped: models/mlp_tiny.onnx not found\n");
    vn_profiler *p = profile_runs(m, RUNS);
    char dir[] = "/tmp/vinci_prof_XXXXXX", csv[64], trace[64], svg[64];
    VT_CHECK(mkdtemp(dir) != NULL, "temporary directory");
    snprintf(csv, sizeof csv, "%s/op_summary.csv", dir);
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    snprintf(svg, sizeof svg, "%s/roofline.svg", dir);
    VT_OK(vn_profiler_write_csv(p, csv));
    VT_OK(vn_profiler_write_trace(p, trace));
    VT_OK(vn_profiler_write_svg(p, svg));
    check_csv(m, p, csv);
    check_trace(m, trace);
    check_svg(p, svg);
    /* fc1 is x[64,64] @ W[64,128]: 64*64*128 multiply-accumulates, 2 FLOPs each. */
    VT_CHECK(vn_profiler_node(p, 0)->flops == 2.0 * 64 * 64 * 128, "fc1 FLOPs %.0f",
             vn_profiler_node(p, 0)->flops);
    vn_profiler_print_top(p, 5, stdout);
    remove(csv), remove(trace), remove(svg), rmdir(dir);
    vn_profiler_destroy(p);
    vn_model_destroy(m);
}

static void test_counters_disabled(void)
{
    vn_model *m = compile_mlp();
    if (!m) return;
    setenv("VINCI_PERF_DISABLE", "1", 1);
    vn_profiler *p = profile_runs(m, 3);
    unsetenv("VINCI_PERF_DISABLE");
    for (int32_t i = 0; i < vn_profiler_num_nodes(p); i++)
        for (int32_t k = 0; k < VN_HW_COUNT; k++)
            VT_CHECK(!vn_profiler_node(p, i)->hw_supported[k], "counter %d off", (int)k);
    VT_CHECK(vn_profiler_num_runs(p) == 3, "runs carried on");
    VT_CHECK(vn_profiler_sw(p).task_clock_ms >= 0, "software counters");
    char path[] = "/tmp/vinci_prof_csv_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    VT_OK(vn_profiler_write_csv(p, path));
    char *s = read_all(path);
    VT_CHECK(s && count(s, "unsupported") == VN_HW_COUNT * vn_profiler_num_nodes(p), "CSV says so");
    free(s);
    remove(path);
    vn_profiler_destroy(p);
    vn_model_destroy(m);
}

/* Known kernels at plausible speeds (roofs 1000 GFLOP/s, 20 GB/s; ridge 50). */
static void test_bound_rule(void)
{
    double n = 16.0 * 1024 * 1024, frac = 0;
    double add_bytes = 3 * 4 * n, add_ms = add_bytes / 15e9 * 1e3; /* at 15 GB/s */
    VT_CHECK(vn_profile_classify(add_ms, n, add_bytes, PEAK_GFLOPS, PEAK_GBS, &frac) ==
                 VN_BOUND_MEMORY,
             "16 Mi Add is memory bound");
    VT_CHECK(frac > 0.7 && frac < 0.8, "Add at %.2f of its roof", frac);
    double k = 1024, mm_flops = 2 * k * k * k, mm_bytes = 3 * 4 * k * k;
    double mm_ms = mm_flops / 500e9 * 1e3; /* at 500 GFLOP/s */
    VT_CHECK(vn_profile_classify(mm_ms, mm_flops, mm_bytes, PEAK_GFLOPS, PEAK_GBS, &frac) ==
                 VN_BOUND_COMPUTE,
             "1024 MatMul is compute bound");
    VT_CHECK(frac > 0.49 && frac < 0.51, "MatMul at %.2f of its roof", frac);
    /* Short, or far below both roofs: latency. */
    VT_CHECK(vn_profile_classify(0.005, mm_flops, mm_bytes, PEAK_GFLOPS, PEAK_GBS, NULL) ==
                 VN_BOUND_LATENCY,
             "5 us op");
    VT_CHECK(vn_profile_classify(100 * mm_ms, mm_flops, mm_bytes, PEAK_GFLOPS, PEAK_GBS, NULL) ==
                 VN_BOUND_LATENCY,
             "MatMul at 5 GFLOP/s");
    VT_CHECK(!strcmp(vn_bound_name(VN_BOUND_MEMORY), "memory"), "names");
}

int main(void)
{
    VT_RUN(test_bound_rule);
    VT_RUN(test_mlp_profile);
    VT_RUN(test_counters_disabled);
    vn_graph_destroy(graph);
    return vt_summary();
}
