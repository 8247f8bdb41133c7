/*
 * cmd_run.c — `vinci run model.onnx --input name=file.npy ... [--output-dir DIR]
 * [--input-shape name:dims] [-O0..-O3]`: compile the model for the inputs'
 * actual shapes and small integer inputs' values (through a cache keyed on
 * both; see vn_model_compile_specialised), run it once and write each
 * output as DIR/<output name>.npy. Also the helpers run, bench and compile share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "vinci/graph.h"

#define MAX_IO 64

int vn_cli_parse_shape(const char *arg, vn_input_shape *s)
{
    const char *colon = strrchr(arg, ':');
    if (!colon || colon == arg) return -1;
    s->rank = 0;
    for (const char *p = colon + 1; *p;) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || s->rank >= VN_MAX_RANK || (*end && *end != ',')) return -1;
        s->dims[s->rank++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    s->name = strndup(arg, (size_t)(colon - arg));
    return s->name ? 0 : -1;
}

int vn_cli_parse_shape_set(const char *arg, vn_input_shape *out, int max)
{
    int n = 0;
    const char *p = arg;
    for (; *p && n < max; n++) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *one = strndup(p, len);
        int bad = !one || vn_cli_parse_shape(one, &out[n]);
        free(one);
        if (bad) {
            while (n-- > 0) free((void *)out[n].name);
            return -1;
        }
        p = end ? end + 1 : p + len;
    }
    if (*p == '\0') return n;
    while (n-- > 0) free((void *)out[n].name); /* more shapes than max */
    return -1;
}

int vn_cli_load_vnm(const char *cmd, const char *path, vn_device *dev, const vn_input_shape *shapes,
                    int num_shapes, vn_model_set **set, const vn_model **model)
{
    *model = NULL;
    vn_status st = vn_model_set_load(path, dev, set);
    if (st == VN_OK && num_shapes) st = vn_model_set_pick(*set, shapes, num_shapes, model);
    if (st == VN_OK && !num_shapes) *model = vn_model_set_model(*set, 0);
    if (st == VN_OK) return 0;
    fprintf(stderr, "vinci %s: %s\n", cmd, vn_last_error());
    vn_model_set_destroy(*set);
    *set = NULL;
    return 1;
}

void vn_cli_report_error(const char *cmd, const vn_graph *g)
{
    fprintf(stderr, "vinci %s: %s\n", cmd, vn_last_error());
    size_t n = g ? vn_graph_unsupported_report(g, NULL, 0) : 0;
    char *text = n ? malloc(n + 1) : NULL;
    if (!text) return;
    vn_graph_unsupported_report(g, text, n + 1);
    fprintf(stderr, "unsupported operators:\n  ");
    for (const char *p = text; *p; p++) {
        fputc(*p, stderr);
        if (*p == '\n') fputs("  ", stderr);
    }
    fputc('\n', stderr);
    free(text);
}

typedef struct run_args {
    const char *model, *out_dir;
    int32_t level;
    int precision;   /* vn_precision (--precision) */
    bool specialise; /* compile small integer / scalar inputs in as constants (default) */
    const char *in_names[MAX_IO], *in_files[MAX_IO];
    int32_t num_in;
    vn_input_shape shapes[MAX_IO];
    int32_t num_shapes;
} run_args;

static int usage(void)
{
    fprintf(stderr,
            "usage: vinci run model.onnx|model.vnm --input name=file.npy ... [--output-dir DIR]\n"
            "                 [--input-shape name:d0,d1,...] " VN_CLI_MODEL_OPTS_USAGE
            " [--no-specialise]\n"
            "Small integer inputs (i32/i64/bool, at most 1024 values: axes, pads,\n"
            "shapes) and scalar inputs are compiled in as constants: the model is\n"
            "specialised to their values (a model whose every input is such folds\n"
            "entirely at compile time); --no-specialise compiles for the shapes only.\n"
            "Exit status: 0 ok, 1 error, 2 usage, 3 unsupported operator or dtype.\n");
    return 2;
}

static int parse(int argc, char **argv, run_args *a)
{
    a->out_dir = ".";
    a->level = VN_CLI_DEFAULT_LEVEL;
    a->specialise = true;
    int level = a->level, opt = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--input") && i + 1 < argc && a->num_in < MAX_IO) {
            const char *eq = strchr(argv[++i], '=');
            if (!eq || eq == argv[i]) return usage();
            a->in_names[a->num_in] = strndup(argv[i], (size_t)(eq - argv[i]));
            a->in_files[a->num_in++] = eq + 1;
        } else if (!strcmp(s, "--input-shape") && i + 1 < argc && a->num_shapes < MAX_IO) {
            if (vn_cli_parse_shape(argv[++i], &a->shapes[a->num_shapes++])) return usage();
        } else if (!strcmp(s, "--no-specialise")) {
            a->specialise = false;
        } else if (!strcmp(s, "--output-dir") && i + 1 < argc) {
            a->out_dir = argv[++i];
        } else if ((opt = vn_cli_parse_model_opt(argc, argv, &i, &level, &a->precision)) != 0) {
            if (opt < 0) return usage();
            a->level = level;
        } else if (s[0] != '-' && !a->model) {
            a->model = s;
        } else {
            return usage();
        }
    }
    return a->model ? 0 : usage();
}

/* The shape set: every file's shape, plus --input-shape for inputs without a file. */
static int32_t shape_set(const run_args *a, const vn_tensor *t, vn_input_shape *out)
{
    int32_t n = 0;
    for (int32_t i = 0; i < a->num_in; i++) {
        out[n].name = a->in_names[i];
        out[n].rank = t[i].desc.rank;
        memcpy(out[n++].dims, t[i].desc.dims, sizeof out[0].dims);
    }
    for (int32_t i = 0; i < a->num_shapes; i++) {
        bool given = false;
        for (int32_t k = 0; k < a->num_in; k++) given |= !strcmp(a->in_names[k], a->shapes[i].name);
        if (!given) out[n++] = a->shapes[i];
    }
    return n;
}

/* Output names come from the model file: keep them to one safe path component. */
static void output_path(const char *dir, const char *name, char *buf, size_t size)
{
    char safe[200];
    size_t k = 0;
    for (const char *p = name; *p && k + 1 < sizeof safe; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || (c == '.' && k > 0);
        safe[k++] = ok ? c : '_';
    }
    safe[k] = '\0';
    snprintf(buf, size, "%s/%s.npy", dir, k ? safe : "output");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int write_outputs(const vn_model *m, vn_model_ctx *ctx, const char *dir)
{
    /* the directory is made when missing (one level, like the user asked) */
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "vinci run: --output-dir %s: %s\n", dir, strerror(errno));
        return 1;
    }
    for (int32_t i = 0; i < vn_model_num_outputs(m); i++) {
        const char *name;
        vn_tensor t;
        char path[1024], d[160];
        if (vn_model_output(m, i, &name, NULL) != VN_OK || vn_model_ctx_output(ctx, name, &t) ||
            (output_path(dir, name, path, sizeof path), vn_npy_write(path, &t)) != VN_OK) {
            fprintf(stderr, "vinci run: %s\n", vn_last_error());
            return 1;
        }
        printf("output %-20s %-20s -> %s\n", name, vn_desc_format(&t.desc, d, sizeof d), path);
    }
    return 0;
}

static int run_model(const run_args *a, vn_graph *g, vn_tensor *t)
{
    vn_input_shape shapes[2 * MAX_IO];
    int32_t ns = shape_set(a, t, shapes);
    vn_compile_options opt = {.opt_level = a->level, .precision = a->precision};
    vn_model_cache *cache = NULL;
    const vn_model *m = NULL;
    vn_model_ctx *ctx = NULL;
    vn_named_tensor in[MAX_IO];
    for (int32_t i = 0; i < a->num_in; i++) in[i] = (vn_named_tensor){a->in_names[i], t[i]};
    double t0 = now_ms();
    vn_status st = vn_model_cache_create(g, &opt, &cache);
    if (st == VN_OK && a->specialise)
        st = vn_model_cache_get_values(cache, shapes, ns, in, a->num_in, &m);
    else if (st == VN_OK)
        st = vn_model_cache_get(cache, shapes, ns, &m);
    double t1 = now_ms();
    if (st == VN_OK) st = vn_model_ctx_create(m, &ctx);
    if (st == VN_OK) st = vn_model_run(m, ctx, in, a->num_in, NULL, 0);
    double t2 = now_ms();
    int rc = 1;
    if (st != VN_OK) {
        vn_cli_report_error("run", g);
        if (st == VN_ERR_UNSUPPORTED || st == VN_ERR_DTYPE) rc = 3;
    } else {
        printf("compiled in %.2f ms (%d nodes), ran in %.3f ms\n", t1 - t0,
               (int)vn_model_num_nodes(m), t2 - t1);
        rc = write_outputs(m, ctx, a->out_dir);
    }
    vn_model_ctx_destroy(ctx);
    vn_model_cache_destroy(cache);
    return rc;
}

/* An offline model: loaded instead of compiled; of a file with several shape
 * sets, the model compiled for the inputs' shapes. */
static int run_vnm(const run_args *a, vn_tensor *t)
{
    vn_model_set *set = NULL;
    const vn_model *m = NULL;
    vn_model_ctx *ctx = NULL;
    vn_named_tensor in[MAX_IO];
    vn_input_shape shapes[MAX_IO];
    for (int32_t i = 0; i < a->num_in; i++) {
        in[i] = (vn_named_tensor){a->in_names[i], t[i]};
        shapes[i] = (vn_input_shape){a->in_names[i], t[i].desc.rank, {0}};
        memcpy(shapes[i].dims, t[i].desc.dims, sizeof shapes[i].dims);
    }
    double t0 = now_ms();
    if (vn_cli_load_vnm("run", a->model, NULL, shapes, a->num_in, &set, &m)) return 1;
    double t1 = now_ms();
    vn_status st = vn_model_ctx_create(m, &ctx);
    if (st == VN_OK) st = vn_model_run(m, ctx, in, a->num_in, NULL, 0);
    double t2 = now_ms();
    int rc = 1;
    if (st != VN_OK) {
        fprintf(stderr, "vinci run: %s\n", vn_last_error());
        if (st == VN_ERR_UNSUPPORTED || st == VN_ERR_DTYPE) rc = 3;
    } else {
        printf("loaded in %.2f ms (%d nodes%s), ran in %.3f ms\n", t1 - t0,
               (int)vn_model_num_nodes(m), vn_model_set_count(set) > 1 ? ", picked by shapes" : "",
               t2 - t1);
        rc = write_outputs(m, ctx, a->out_dir);
    }
    vn_model_ctx_destroy(ctx);
    vn_model_set_destroy(set);
    return rc;
}

int vn_cmd_run(int argc, char **argv)
{
    run_args a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    vn_tensor t[MAX_IO];
    memset(t, 0, sizeof t);
    vn_graph *g = NULL;
    int32_t loaded = 0;
    for (; rc == 0 && loaded < a.num_in; loaded++)
        if (vn_npy_read(a.in_files[loaded], &t[loaded]) != VN_OK) {
            fprintf(stderr, "vinci run: input '%s': %s\n", a.in_names[loaded], vn_last_error());
            rc = 1;
        }
    bool vnm = rc == 0 && vn_cli_is_vnm(a.model); /* an offline model: no ONNX, no compile */
    if (vnm) rc = run_vnm(&a, t);
    if (rc == 0 && !vnm && vn_graph_load_onnx(a.model, &g) != VN_OK) {
        fprintf(stderr, "vinci run: %s\n", vn_last_error());
        rc = 1;
    }
    if (rc == 0 && !vnm) rc = run_model(&a, g, t);
    vn_graph_destroy(g);
    for (int32_t i = 0; i < loaded; i++) vn_aligned_free(t[i].data);
    for (int32_t i = 0; i < a.num_in; i++) free((void *)a.in_names[i]);
    for (int32_t i = 0; i < a.num_shapes; i++) free((void *)a.shapes[i].name);
    return rc;
}
