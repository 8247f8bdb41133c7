/*
 * cmd_compile.c — `vinci compile model.onnx [-O0..-O3] [--input-shape name:dims]`:
 * compile and report compile time, node counts before and after, what each
 * pass changed and the memory plan; with -o model.vnm, write the offline
 * model (src/graph/vnm*.c) that `vinci run / bench / info` load. With
 * --shape-set (repeatable), one model per shape set in one file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vinci/graph.h"

#define MAX_SHAPES 64
#define MAX_SETS   16

static int usage(void)
{
    fprintf(stderr,
            "usage: vinci compile model.onnx [-o model.vnm] " VN_CLI_MODEL_OPTS_USAGE
            " [--input-shape name:d0,d1,...] [--shape-set 'name:d0,...;name2:...' ...]\n"
            "  --input-shape: an input's shape in every model compiled\n"
            "  --shape-set: one model per --shape-set, all in one .vnm; vinci run / bench /\n"
            "    profile pick the one for the inputs' shapes (vn_model_set_pick)\n");
    return 2;
}

static void print_bytes(const char *what, size_t b)
{
    printf("  %-22s %12zu bytes (%.2f MiB)\n", what, b, (double)b / (1024.0 * 1024.0));
}

static void print_stats(const vn_model *m)
{
    vn_model_stats s;
    vn_model_get_stats(m, &s);
    printf("compile time: %.2f ms (O%d)\n", s.compile_ms, (int)s.opt_level);
    printf("nodes: %d before, %d after\n", (int)s.nodes_before, (int)s.nodes_after);
    for (int32_t i = 0; i < s.num_reports; i++) {
        const vn_pass_report *r = &s.reports[i];
        printf("  pass %-18s %4d change%s%s%s\n", r->pass, (int)r->changes,
               r->changes == 1 ? "" : "s", r->changes ? ": " : "", r->detail);
    }
    printf("memory plan:\n");
    print_bytes("arena peak", s.arena_bytes);
    print_bytes("sum of activations", s.activation_bytes);
    printf("  %-22s %12zu\n", "in-place activations", s.inplace_count);
    print_bytes("largest workspace", s.workspace_bytes);
    print_bytes("constants", s.constant_bytes);
    for (int32_t i = 0; i < vn_model_num_inputs(m); i++) {
        const char *name;
        vn_tensor_desc d;
        char buf[160];
        vn_model_input(m, i, &name, &d);
        printf("input  %-20s %s\n", name, vn_desc_format(&d, buf, sizeof buf));
    }
    for (int32_t i = 0; i < vn_model_num_outputs(m); i++) {
        const char *name;
        vn_tensor_desc d;
        char buf[160];
        vn_model_output(m, i, &name, &d);
        if (d.rank < 0) /* control flow made it: even the rank is known only at run time */
            snprintf(buf, sizeof buf, "%s[?]", vn_dtype_name(d.dtype));
        else
            vn_desc_format(&d, buf, sizeof buf);
        printf("output %-20s %s%s\n", name, buf,
               d.rank < 0 || strstr(buf, "-1") ? " (shape known at run time)" : "");
    }
}

/* The command line: shapes for every set (--input-shape) and the sets. */
typedef struct compile_args {
    const char *path, *out_path; /* -o: the .vnm offline model */
    vn_input_shape common[MAX_SHAPES];
    int32_t num_common;
    vn_input_shape sets[MAX_SETS][MAX_SHAPES]; /* --shape-set: each after the common shapes */
    int32_t set_len[MAX_SETS], num_sets;
    int level, precision;
} compile_args;

static int parse(int argc, char **argv, compile_args *a)
{
    int rc = 0, mo = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *s = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(s, "--input-shape") && more && a->num_common < MAX_SHAPES)
            rc = vn_cli_parse_shape(argv[++i], &a->common[a->num_common]) ? usage()
                                                                          : (a->num_common++, 0);
        else if (!strcmp(s, "--shape-set") && more && a->num_sets < MAX_SETS) {
            int32_t k = a->num_sets, n = vn_cli_parse_shape_set(argv[++i], a->sets[k], MAX_SHAPES);
            rc = n <= 0 ? usage() : (a->set_len[k] = n, a->num_sets++, 0);
        } else if ((mo = vn_cli_parse_model_opt(argc, argv, &i, &a->level, &a->precision)) != 0)
            rc = mo < 0 ? usage() : 0;
        else if (!strcmp(s, "-o") && more && !a->out_path)
            a->out_path = argv[++i];
        else if (s[0] != '-' && !a->path)
            a->path = s;
        else
            rc = usage();
    }
    for (int32_t k = 0; k < a->num_sets && rc == 0; k++)
        if (a->num_common + a->set_len[k] > MAX_SHAPES) {
            fprintf(stderr,
                    "vinci compile: shape set %d has %d shapes with --input-shape's; at "
                    "most %d\n",
                    (int)k + 1, (int)(a->num_common + a->set_len[k]), MAX_SHAPES);
            rc = 2;
        }
    return rc == 0 && !a->path ? usage() : rc;
}

/* The model for set k (the common shapes alone when there are no sets). */
static int compile_set(const compile_args *a, vn_graph *g, vn_device *dev, int32_t k,
                       vn_model **out)
{
    vn_input_shape shapes[MAX_SHAPES];
    int32_t ns = a->num_common, extra = a->num_sets ? a->set_len[k] : 0;
    memcpy(shapes, a->common, (size_t)ns * sizeof *shapes);
    if (extra) memcpy(shapes + ns, a->sets[k], (size_t)extra * sizeof *shapes);
    vn_compile_options opt = {.opt_level = a->level,
                              .device = dev,
                              .shapes = shapes,
                              .num_shapes = ns + extra,
                              .precision = a->precision};
    if (vn_model_compile(g, &opt, out) != VN_OK) return (vn_cli_report_error("compile", g), 1);
    if (a->num_sets > 1) printf("\n== shape set %d of %d\n", (int)k, (int)a->num_sets);
    print_stats(*out);
    return 0;
}

/* One model: a plain .vnm; several: a file of shape sets. */
static int save(const compile_args *a, vn_model *const *models, int32_t n)
{
    vn_status st = n == 1 ? vn_model_save(models[0], a->out_path)
                          : vn_model_set_save((const vn_model *const *)models, n, a->out_path);
    if (st != VN_OK) return (fprintf(stderr, "vinci compile: %s\n", vn_last_error()), 1);
    printf("wrote %s%s\n", a->out_path, n > 1 ? " (one model per shape set)" : "");
    return 0;
}

int vn_cmd_compile(int argc, char **argv)
{
    compile_args a = {.level = VN_CLI_DEFAULT_LEVEL};
    int rc = parse(argc, argv, &a);
    vn_graph *g = NULL;
    vn_model *m[MAX_SETS] = {0};
    int32_t n = a.num_sets ? a.num_sets : 1;
    vn_device *dev = NULL; /* started before the compile timer: not part of compile time */
    if (rc == 0 && vn_device_default(&dev) != VN_OK)
        rc = (fprintf(stderr, "vinci: %s\n", vn_last_error()), 1);
    if (rc == 0 && vn_graph_load_onnx(a.path, &g) != VN_OK)
        rc = (fprintf(stderr, "vinci compile: %s\n", vn_last_error()), 1);
    if (rc == 0) printf("model: %s\n", a.path);
    for (int32_t k = 0; rc == 0 && k < n; k++) rc = compile_set(&a, g, dev, k, &m[k]);
    if (rc == 0 && a.out_path) rc = save(&a, m, n);
    for (int32_t k = 0; k < n; k++) vn_model_destroy(m[k]);
    vn_graph_destroy(g);
    for (int32_t i = 0; i < a.num_common; i++) free((void *)a.common[i].name);
    for (int32_t k = 0; k < a.num_sets; k++)
        for (int32_t i = 0; i < a.set_len[k]; i++) free((void *)a.sets[k][i].name);
    return rc;
}
