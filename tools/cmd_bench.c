/*
 * cmd_bench.c — `vinci bench model.onnx [--threads N] [--iters N]
 * [--input-shape name:dims] [-O0..-O3]`: compile (timed), fill the inputs with
 * random values (floats in [-1, 1), integers in [0, 4), booleans), then N
 * threads each run the model `iters` times with its own context after one
 * warm-up run. Prints per-run latency (median, min, max over all runs) and
 * throughput (runs per second of wall time).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "vinci/graph.h"

#define MAX_IO 64

typedef struct bench {
    const vn_model *model;
    vn_named_tensor in[MAX_IO];
    int32_t num_in, iters;
    double *lat; /* per thread: iters latencies */
    vn_status status;
    char error[512];
} bench;

typedef struct worker {
    bench *b;
    double *lat;
    vn_status status;
    char error[512];
} worker;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *thread_main(void *arg)
{
    worker *w = arg;
    bench *b = w->b;
    vn_model_ctx *ctx = NULL;
    vn_status st = vn_model_ctx_create(b->model, &ctx);
    if (st == VN_OK) st = vn_model_run(b->model, ctx, b->in, b->num_in, NULL, 0); /* warm-up */
    for (int32_t i = 0; i < b->iters && st == VN_OK; i++) {
        double t0 = now_ms();
        st = vn_model_run(b->model, ctx, b->in, b->num_in, NULL, 0);
        w->lat[i] = now_ms() - t0;
    }
    w->status = st;
    if (st != VN_OK) snprintf(w->error, sizeof w->error, "%s", vn_last_error());
    vn_model_ctx_destroy(ctx);
    return NULL;
}

static void fill_random(vn_tensor *t, uint64_t *seed)
{
    int64_t n = vn_desc_numel(&t->desc);
    for (int64_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t r = (uint32_t)(*seed >> 33);
        float f = (float)r / 2147483648.0f * 2.0f - 1.0f;
        switch (t->desc.dtype) {
        case VN_F32:
            ((float *)t->data)[i] = f;
            break;
        case VN_F16:
            ((uint16_t *)t->data)[i] = vn_f32_to_f16(f);
            break;
        case VN_BF16:
            ((uint16_t *)t->data)[i] = vn_f32_to_bf16(f);
            break;
        case VN_I8:
            ((int8_t *)t->data)[i] = (int8_t)(r % 4);
            break;
        case VN_U8:
            ((uint8_t *)t->data)[i] = (uint8_t)(r % 4);
            break;
        case VN_I32:
            ((int32_t *)t->data)[i] = (int32_t)(r % 4);
            break;
        case VN_I64:
        case VN_U64:
            ((int64_t *)t->data)[i] = (int64_t)(r % 4);
            break;
        case VN_F64:
            ((double *)t->data)[i] = f;
            break;
        case VN_I16:
        case VN_U16:
            ((uint16_t *)t->data)[i] = (uint16_t)(r % 4);
            break;
        case VN_U32:
            ((uint32_t *)t->data)[i] = r % 4;
            break;
        default: /* bool */
            ((uint8_t *)t->data)[i] = (uint8_t)(r & 1);
            break;
        }
    }
}

static int make_inputs(bench *b)
{
    uint64_t seed = 42;
    b->num_in = vn_model_num_inputs(b->model);
    if (b->num_in > MAX_IO) return (fprintf(stderr, "vinci bench: too many inputs\n"), 1);
    for (int32_t i = 0; i < b->num_in; i++) {
        vn_named_tensor *t = &b->in[i];
        vn_model_input(b->model, i, &t->name, &t->tensor.desc);
        int64_t n = vn_desc_numel(&t->tensor.desc);
        size_t bytes = (size_t)(n > 0 ? n : 1) * vn_dtype_size(t->tensor.desc.dtype);
        if (!(t->tensor.data = vn_aligned_alloc(bytes, 64)))
            return (fprintf(stderr, "vinci bench: no memory for input '%s'\n", t->name), 1);
        fill_random(&t->tensor, &seed);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run_threads(bench *b, int32_t threads)
{
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    double *lat = calloc((size_t)threads * (size_t)b->iters + 1, sizeof *lat);
    if (!w || !tid || !lat) return (free(w), free(tid), free(lat), 1);
    double t0 = now_ms();
    int32_t started = 0;
    for (; started < threads; started++) {
        w[started] = (worker){b, lat + (size_t)started * (size_t)b->iters, VN_OK, ""};
        if (pthread_create(&tid[started], NULL, thread_main, &w[started])) break;
    }
    for (int32_t i = 0; i < started; i++) pthread_join(tid[i], NULL);
    double wall = now_ms() - t0;
    int rc = started == threads ? 0 : 1;
    for (int32_t i = 0; i < started && rc == 0; i++)
        if (w[i].status != VN_OK) rc = (fprintf(stderr, "vinci bench: %s\n", w[i].error), 1);
    size_t n = (size_t)threads * (size_t)b->iters;
    if (rc == 0) {
        qsort(lat, n, sizeof *lat, cmp_double);
        double med = n % 2 ? lat[n / 2] : (lat[n / 2 - 1] + lat[n / 2]) / 2;
        printf("latency: median %.3f ms, min %.3f ms, max %.3f ms (%zu runs, %d thread%s)\n", med,
               lat[0], lat[n - 1], n, (int)threads, threads == 1 ? "" : "s");
        printf("throughput: %.1f runs/s\n", (double)n / (wall / 1e3));
    }
    free(w);
    free(tid);
    free(lat);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: vinci bench model.onnx|model.vnm [--threads N] [--iters N] "
                    "[--input-shape name:d0,d1,...] " VN_CLI_MODEL_OPTS_USAGE "\n"
                    "  --threads N: N client threads, each running the model (throughput); the "
                    "workers each run uses are VINCI_NUM_THREADS (default: the usable CPUs)\n");
    return 2;
}

/* Random inputs, then the threads' runs. */
static int bench_compiled(const vn_model *m, int32_t threads, int32_t iters)
{
    bench b = {.model = m, .iters = iters};
    int rc = make_inputs(&b);
    if (rc == 0) rc = run_threads(&b, threads);
    for (int32_t i = 0; i < b.num_in; i++) vn_aligned_free(b.in[i].tensor.data);
    return rc;
}

static int bench_model(vn_graph *g, const vn_compile_options *opt, int32_t threads, int32_t iters)
{
    vn_model *m = NULL;
    if (vn_model_compile(g, opt, &m) != VN_OK) return (vn_cli_report_error("bench", g), 1);
    vn_model_stats s;
    vn_model_get_stats(m, &s);
    printf("compile: %.2f ms, %d nodes (of %d), arena %.2f MiB (activations %.2f MiB)\n",
           s.compile_ms, (int)s.nodes_after, (int)s.nodes_before, (double)s.arena_bytes / 1048576.0,
           (double)s.activation_bytes / 1048576.0);
    int rc = bench_compiled(m, threads, iters);
    vn_model_destroy(m);
    return rc;
}

/* An offline model: loaded (timed) instead of compiled; of a file with
 * several shape sets, the model for --input-shape (or its first). */
static int bench_vnm(const char *path, vn_device *dev, const vn_compile_options *opt,
                     int32_t threads, int32_t iters)
{
    vn_model_set *set = NULL;
    const vn_model *m = NULL;
    if (vn_cli_load_vnm("bench", path, dev, opt->shapes, opt->num_shapes, &set, &m)) return 1;
    vn_model_file_info fi;
    vn_model_stats s;
    vn_model_file_info_get(m, &fi);
    vn_model_get_stats(m, &s);
    printf("load: %.2f ms (re-plan %.2f ms), %d nodes, arena %.2f MiB", fi.load_ms, fi.replan_ms,
           (int)s.nodes_after, (double)s.arena_bytes / 1048576.0);
    if (vn_model_set_count(set) > 1)
        printf(" (picked from %d shape sets)", (int)vn_model_set_count(set));
    printf("\n");
    int rc = bench_compiled(m, threads, iters);
    vn_model_set_destroy(set);
    return rc;
}

int vn_cmd_bench(int argc, char **argv)
{
    const char *path = NULL;
    vn_input_shape shapes[MAX_IO];
    int32_t ns = 0, threads = 1, iters = 20;
    int level = VN_CLI_DEFAULT_LEVEL, precision = 0, mo = 0;
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--input-shape") && i + 1 < argc && ns < MAX_IO)
            rc = vn_cli_parse_shape(argv[++i], &shapes[ns]) ? usage() : (ns++, 0);
        else if ((mo = vn_cli_parse_model_opt(argc, argv, &i, &level, &precision)) != 0)
            rc = mo < 0 ? usage() : 0;
        else if (!strcmp(s, "--threads") && i + 1 < argc)
            rc = (threads = atoi(argv[++i])) >= 1 && threads <= 256 ? 0 : usage();
        else if (!strcmp(s, "--iters") && i + 1 < argc)
            rc = (iters = atoi(argv[++i])) >= 1 && iters <= 10000000 ? 0 : usage();
        else if (s[0] != '-' && !path)
            path = s;
        else
            rc = usage();
    }
    if (rc == 0 && !path) rc = usage();
    vn_graph *g = NULL;
    bool vnm = rc == 0 && vn_cli_is_vnm(path);
    if (rc == 0 && !vnm && vn_graph_load_onnx(path, &g) != VN_OK)
        rc = (fprintf(stderr, "vinci bench: %s\n", vn_last_error()), 1);
    vn_device *dev = NULL; /* started before the compile timer: not part of compile time */
    if (rc == 0 && vn_device_default(&dev) != VN_OK)
        rc = (fprintf(stderr, "vinci: %s\n", vn_last_error()), 1);
    vn_compile_options opt = {.opt_level = level,
                              .device = dev,
                              .shapes = shapes,
                              .num_shapes = ns,
                              .precision = precision};
    if (rc == 0) {
        printf("model: %s\n", path);
        rc =
            vnm ? bench_vnm(path, dev, &opt, threads, iters) : bench_model(g, &opt, threads, iters);
    }
    vn_graph_destroy(g);
    for (int32_t i = 0; i < ns; i++) free((void *)shapes[i].name);
    return rc;
}
