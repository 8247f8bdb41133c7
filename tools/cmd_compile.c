/*
 * cmd_compile.c — `vinci compile model.onnx [-O0..-O3] [--input-shape name:dims]`:
 * compile and report compile time, node counts before and after, what each
 * pass changed and the memory plan; with -o model.vnm, write the offline
 * model (src/graph/vnm*.c) that `vinci run / bench / info` load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vinci/graph.h"

#define MAX_SHAPES 64

static int usage(void)
{
    fprintf(stderr, "usage: vinci compile model.onnx [-o model.vnm] " VN_CLI_MODEL_OPTS_USAGE
                    " [--input-shape name:d0,d1,...]\n");
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

int vn_cmd_compile(int argc, char **argv)
{
    const char *path = NULL, *out_path = NULL; /* -o: the .vnm offline model */
    vn_input_shape shapes[MAX_SHAPES];
    int32_t ns = 0;
    int level = VN_CLI_DEFAULT_LEVEL, precision = 0, mo = 0;
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--input-shape") && i + 1 < argc && ns < MAX_SHAPES)
            rc = vn_cli_parse_shape(argv[++i], &shapes[ns]) ? usage() : (ns++, 0);
        else if ((mo = vn_cli_parse_model_opt(argc, argv, &i, &level, &precision)) != 0)
            rc = mo < 0 ? usage() : 0;
        else if (!strcmp(s, "-o") && i + 1 < argc && !out_path)
            out_path = argv[++i];
        else if (s[0] != '-' && !path)
            path = s;
        else
            rc = usage();
    }
    if (rc == 0 && !path) rc = usage();
    vn_graph *g = NULL;
    vn_model *m = NULL;
    vn_device *dev = NULL; /* started before the compile timer: not part of compile time */
    if (rc == 0 && vn_device_default(&dev) != VN_OK)
        rc = (fprintf(stderr, "vinci: %s\n", vn_last_error()), 1);
    vn_compile_options opt = {.opt_level = level,
                              .device = dev,
                              .shapes = shapes,
                              .num_shapes = ns,
                              .precision = precision};
    if (rc == 0 && vn_graph_load_onnx(path, &g) != VN_OK)
        rc = (fprintf(stderr, "vinci compile: %s\n", vn_last_error()), 1);
    if (rc == 0 && vn_model_compile(g, &opt, &m) != VN_OK)
        rc = (vn_cli_report_error("compile", g), 1);
    if (rc == 0) {
        printf("model: %s\n", path);
        print_stats(m);
    }
    if (rc == 0 && out_path && vn_model_save(m, out_path) != VN_OK)
        rc = (fprintf(stderr, "vinci compile: %s\n", vn_last_error()), 1);
    else if (rc == 0 && out_path)
        printf("wrote %s\n", out_path);
    vn_model_destroy(m);
    vn_graph_destroy(g);
    for (int32_t i = 0; i < ns; i++) free((void *)shapes[i].name);
    return rc;
}
