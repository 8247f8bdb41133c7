/*
 * cmd_profile.c — `vinci profile model.{onnx,vnm} [--threads N] [--iters N]
 * [--out DIR] [--top N] [--peaks GFLOPS,GBS] [--input-shape name:dims]
 * [--async] [-O0..-O3]`: on a device of N worker threads (default: as
 * VINCI_NUM_THREADS or the usable CPUs), run the
 * model on zero-filled inputs 3 x `iters` times without and as many with
 * profiling, one of each in turn (the profile covers all profiled runs),
 * write DIR/op_summary.csv, DIR/trace.json and DIR/roofline.svg, and print the
 * top-N nodes by time and the profiling overhead. Without --peaks the roofs
 * are measured (as `vinci machine`, a few seconds). --async runs the model
 * on the device's default stream (vn_model_run_async), so the trace shows
 * the stream's track too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "vinci/profile.h"

#define MAX_IO 64
#define ROUNDS 3 /* plain and profiled runs: ROUNDS * iters each */

typedef struct prof_opts {
    const char *path, *out;
    int32_t iters, top, level, ns, threads;
    int precision; /* vn_precision (--precision) */
    bool async;
    vn_device *dev;
    double gflops, gbs;
    vn_input_shape shapes[MAX_IO];
} prof_opts;

static double now_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Per-run wall time and CPU time of every thread of the process: on a shared
 * machine the CPU time shows the profiler's own cost when the wall time
 * mostly shows the neighbours. */
typedef struct run_cost {
    double wall, cpu;
} run_cost;

static run_cost cost_now(void)
{
    return (run_cost){now_ms(CLOCK_MONOTONIC), now_ms(CLOCK_PROCESS_CPUTIME_ID)};
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* The median of v[0..n) (reorders v). */
static double median(double *v, int32_t n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Zeros are a valid value of every dtype (and index): enough to time dense ops. */
static int make_inputs(const vn_model *m, vn_named_tensor *in, int32_t *n)
{
    *n = vn_model_num_inputs(m);
    if (*n > MAX_IO) return (fprintf(stderr, "vinci profile: too many inputs\n"), 1);
    for (int32_t i = 0; i < *n; i++) {
        vn_model_input(m, i, &in[i].name, &in[i].tensor.desc);
        int64_t e = vn_desc_numel(&in[i].tensor.desc);
        size_t bytes = (size_t)(e > 0 ? e : 1) * vn_dtype_size(in[i].tensor.desc.dtype);
        if (!(in[i].tensor.data = vn_aligned_alloc(bytes, 64))) return 1;
        memset(in[i].tensor.data, 0, bytes);
    }
    return 0;
}

/* A run, on stream `s` when not NULL. */
static vn_status run_once(const vn_model *m, vn_model_ctx *c, const vn_named_tensor *in, int32_t n,
                          vn_stream *s)
{
    if (!s) return vn_model_run(m, c, in, n, NULL, 0);
    vn_status st = vn_model_run_async(m, c, s, in, n, NULL, 0);
    vn_status sync = vn_stream_synchronize(s, -1);
    return st != VN_OK ? st : sync;
}

/* One run, profiled when p is not NULL, and what it cost. */
static vn_status timed_run(const vn_model *m, vn_profiler *p, vn_model_ctx *c,
                           const vn_named_tensor *in, int32_t n, vn_stream *s, run_cost *cost)
{
    run_cost t0 = cost_now();
    vn_status st = !p  ? run_once(m, c, in, n, s)
                   : s ? vn_profiler_run_async(p, c, s, in, n)
                       : vn_profiler_run(p, c, in, n);
    run_cost t1 = cost_now();
    *cost = (run_cost){t1.wall - t0.wall, t1.cpu - t0.cpu};
    return st;
}

/* The overhead of profiling: `runs` pairs of one plain and one profiled run,
 * in alternating order, so that a neighbour's burst on this shared machine
 * hits both sides of a pair alike. Printed: the median run of each side,
 * the median of the pairs' ratios and the CPU time of all threads. */
typedef struct overhead {
    double *wall[2], *cpu[2], *ratio; /* [0] plain, [1] profiled */
    int32_t runs;
} overhead;

static vn_status measure(const vn_model *m, vn_profiler *p, vn_model_ctx *c,
                         const vn_named_tensor *in, int32_t n, vn_stream *s, overhead *o)
{
    vn_status st = VN_OK;
    for (int32_t i = 0; i < o->runs && st == VN_OK; i++)
        for (int32_t k = 0; k < 2 && st == VN_OK; k++) {
            int32_t on = (k + i) % 2; /* even pairs plain first, odd ones profiled first */
            run_cost r;
            st = timed_run(m, on ? p : NULL, c, in, n, s, &r);
            o->wall[on][i] = r.wall;
            o->cpu[on][i] = r.cpu;
        }
    for (int32_t i = 0; i < o->runs; i++)
        o->ratio[i] = o->wall[0][i] > 0 ? o->wall[1][i] / o->wall[0][i] : 1;
    return st;
}

static void print_overhead(overhead *o)
{
    double ratio = median(o->ratio, o->runs);
    double off = median(o->wall[0], o->runs), on = median(o->wall[1], o->runs);
    double coff = median(o->cpu[0], o->runs), con = median(o->cpu[1], o->runs);
    printf("overhead: %.4f ms/run off, %.4f ms/run on (%+.1f%%; median of %d pairs of runs, "
           "paired ratio %+.1f%%); CPU time of all threads %.4f ms/run off, %.4f ms/run on "
           "(%+.1f%%)\n",
           off, on, off > 0 ? 100.0 * (on - off) / off : 0, (int)o->runs, 100.0 * (ratio - 1), coff,
           con, coff > 0 ? 100.0 * (con - coff) / coff : 0);
}

static int write_outputs(const vn_profiler *p, const char *dir)
{
    char path[4096];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return (fprintf(stderr, "vinci profile: cannot create '%s'\n", dir), 1);
    snprintf(path, sizeof path, "%s/op_summary.csv", dir);
    vn_status st = vn_profiler_write_csv(p, path);
    snprintf(path, sizeof path, "%s/trace.json", dir);
    if (st == VN_OK) st = vn_profiler_write_trace(p, path);
    snprintf(path, sizeof path, "%s/roofline.svg", dir);
    if (st == VN_OK) st = vn_profiler_write_svg(p, path);
    if (st != VN_OK) return (fprintf(stderr, "vinci profile: %s\n", vn_last_error()), 1);
    printf("wrote %s/op_summary.csv, %s/trace.json, %s/roofline.svg\n", dir, dir, dir);
    return 0;
}

/* Plain and profiled runs in turn (after a warm-up), the files, the table. */
static int profile_model(const vn_model *m, const prof_opts *o)
{
    vn_named_tensor in[MAX_IO];
    int32_t n = 0;
    vn_model_ctx *c = NULL;
    vn_profiler *p = NULL;
    vn_stream *s = o->async ? vn_device_default_stream(o->dev) : NULL;
    overhead ov = {.runs = ROUNDS * o->iters};
    double *times = calloc((size_t)ov.runs * 5, sizeof *times);
    for (int32_t k = 0; k < 2 && times; k++) {
        ov.wall[k] = times + (size_t)ov.runs * (size_t)k;
        ov.cpu[k] = times + (size_t)ov.runs * (size_t)(2 + k);
    }
    ov.ratio = times ? times + (size_t)ov.runs * 4 : NULL;
    memset(in, 0, sizeof in); /* freed up to n even when make_inputs stops early */
    int rc = times ? make_inputs(m, in, &n) : (fprintf(stderr, "vinci profile: no memory\n"), 1);
    vn_status st = rc ? VN_ERR_OUT_OF_MEMORY : vn_model_ctx_create(m, &c);
    if (st == VN_OK) st = vn_profiler_create(m, o->gflops, o->gbs, &p);
    run_cost warm;
    if (st == VN_OK) st = timed_run(m, NULL, c, in, n, s, &warm);
    if (st == VN_OK) st = measure(m, p, c, in, n, s, &ov);
    if (st != VN_OK && rc == 0) rc = (fprintf(stderr, "vinci profile: %s\n", vn_last_error()), 1);
    if (rc == 0) rc = write_outputs(p, o->out);
    if (rc == 0) {
        vn_profiler_print_top(p, o->top, stdout);
        print_overhead(&ov);
    }
    free(times);
    vn_profiler_destroy(p);
    vn_model_ctx_destroy(c);
    for (int32_t i = 0; i < n; i++) vn_aligned_free(in[i].tensor.data);
    return rc;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: vinci profile model.onnx|model.vnm [--threads N] [--iters N] [--out DIR] "
            "[--top N] [--peaks GFLOPS,GBS] [--input-shape name:d0,d1,...] "
            "[--async] " VN_CLI_MODEL_OPTS_USAGE "\n");
    return 2;
}

static int parse(int argc, char **argv, prof_opts *o)
{
    int rc = 0, mo = 0;
    int level = o->level;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *s = argv[i];
        bool more = i + 1 < argc;
        if ((mo = vn_cli_parse_model_opt(argc, argv, &i, &level, &o->precision)) != 0)
            rc = mo < 0 ? usage() : (o->level = level, 0);
        else if (!strcmp(s, "--input-shape") && more && o->ns < MAX_IO)
            rc = vn_cli_parse_shape(argv[++i], &o->shapes[o->ns]) ? usage() : (o->ns++, 0);
        else if (!strcmp(s, "--threads") && more)
            rc = (o->threads = atoi(argv[++i])) >= 1 ? 0 : usage();
        else if (!strcmp(s, "--async"))
            o->async = true;
        else if (!strcmp(s, "--iters") && more)
            rc = (o->iters = atoi(argv[++i])) >= 1 ? 0 : usage();
        else if (!strcmp(s, "--top") && more)
            rc = (o->top = atoi(argv[++i])) >= 1 ? 0 : usage();
        else if (!strcmp(s, "--out") && more)
            o->out = argv[++i];
        else if (!strcmp(s, "--peaks") && more)
            rc = sscanf(argv[++i], "%lf,%lf", &o->gflops, &o->gbs) == 2 ? 0 : usage();
        else if (s[0] != '-' && !o->path)
            o->path = s;
        else
            rc = usage();
    }
    return rc == 0 && !o->path ? usage() : rc;
}

int vn_cmd_profile(int argc, char **argv)
{
    prof_opts o = {.out = "profile", .iters = 20, .top = 10, .level = VN_CLI_DEFAULT_LEVEL};
    int rc = parse(argc, argv, &o);
    vn_graph *g = NULL;
    vn_model *compiled = NULL;
    vn_model_set *set = NULL; /* a .vnm: the model for --input-shape, or its first */
    const vn_model *m = NULL;
    vn_device *dev = NULL;
    vn_device_options dopt = {.num_threads = o.threads};
    vn_status dst = o.threads ? vn_device_create(&dopt, &dev) : vn_device_default(&dev);
    if (rc == 0 && dst != VN_OK) rc = (fprintf(stderr, "vinci: %s\n", vn_last_error()), 1);
    if (rc == 0 && vn_cli_is_vnm(o.path))
        rc = vn_cli_load_vnm("profile", o.path, dev, o.shapes, o.ns, &set, &m);
    if (rc == 0 && !m && vn_graph_load_onnx(o.path, &g) != VN_OK)
        rc = (fprintf(stderr, "vinci profile: %s\n", vn_last_error()), 1);
    vn_compile_options opt = {.opt_level = o.level,
                              .device = dev,
                              .shapes = o.shapes,
                              .num_shapes = o.ns,
                              .precision = o.precision};
    if (rc == 0 && !m && vn_model_compile(g, &opt, &compiled) != VN_OK)
        rc = (vn_cli_report_error("profile", g), 1);
    if (!m) m = compiled;
    if (rc == 0) {
        printf("model: %s, %d iterations, %d worker threads%s\n", o.path, (int)o.iters,
               (int)vn_device_num_workers(dev), o.async ? ", on the default stream" : "");
        o.dev = dev;
        rc = profile_model(m, &o);
    }
    vn_model_destroy(compiled);
    vn_model_set_destroy(set);
    vn_graph_destroy(g);
    if (o.threads) vn_device_destroy(dev);
    for (int32_t i = 0; i < o.ns; i++) free((void *)o.shapes[i].name);
    return rc;
}
