/*
 * cmd_graph_info.c — `vinci info model.onnx [--input-shape name:d0,d1,...]`:
 * a model's inputs and outputs with their shapes, opset imports, operator
 * histogram and every operator vinci does not support. With --input-shape
 * (or a model whose shapes are all fixed) the outputs' inferred shapes too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vinci/graph.h"

#define MAX_SHAPES 64

/* "f32[batch,3,224,224]" with symbolic dims by name, "?" when unnamed. */
static void print_value(const vn_value_info *v)
{
    printf("  %-24s %s", v->name, vn_dtype_name(v->desc.dtype));
    if (v->desc.rank < 0) {
        printf("[?]\n");
        return;
    }
    printf("[");
    for (int32_t i = 0; i < v->desc.rank; i++) {
        if (i) printf(",");
        if (v->desc.dims[i] >= 0)
            printf("%lld", (long long)v->desc.dims[i]);
        else
            printf("%s", v->sym[i] ? v->sym[i] : "?");
    }
    printf("]\n");
}

static void print_model(const vn_graph *g)
{
    printf("opsets:");
    for (int32_t i = 0; i < vn_graph_num_opsets(g); i++) {
        vn_opset o;
        vn_graph_opset(g, i, &o);
        printf(" %s %lld", o.domain[0] ? o.domain : "ai.onnx", (long long)o.version);
    }
    printf("\ninputs:\n");
    vn_value_info v;
    for (int32_t i = 0; i < vn_graph_num_inputs(g); i++)
        if (vn_graph_input(g, i, &v) == VN_OK) print_value(&v);
    printf("outputs:\n");
    for (int32_t i = 0; i < vn_graph_num_outputs(g); i++)
        if (vn_graph_output(g, i, &v) == VN_OK) print_value(&v);
    printf("nodes: %d, initializers: %d\noperators:\n", (int)vn_graph_num_nodes(g),
           (int)vn_graph_num_initializers(g));
    for (int32_t i = 0; i < vn_graph_num_op_types(g); i++) {
        vn_op_count c;
        vn_graph_op_type(g, i, &c);
        printf("  %6d  %s%s%s%s\n", (int)c.count, c.domain, c.domain[0] ? "::" : "", c.op_type,
               c.supported ? "" : "   (unsupported)");
    }
}

static void print_unsupported(const vn_graph *g)
{
    size_t n = vn_graph_unsupported_report(g, NULL, 0);
    if (!n) {
        printf("unsupported operators: none\n");
        return;
    }
    char *text = malloc(n + 1);
    if (!text) return;
    vn_graph_unsupported_report(g, text, n + 1);
    printf("unsupported operators:\n  ");
    for (const char *p = text; *p; p++) {
        putchar(*p);
        if (*p == '\n') printf("  ");
    }
    printf("\n");
    free(text);
}

/* ---- .vnm offline models ---------------------------------------------------------- */

static void print_io(const vn_model *m)
{
    char buf[160];
    for (int32_t out = 0; out <= 1; out++) {
        int32_t n = out ? vn_model_num_outputs(m) : vn_model_num_inputs(m);
        printf("%s:\n", out ? "outputs" : "inputs");
        for (int32_t i = 0; i < n; i++) {
            const char *name;
            vn_tensor_desc d;
            if ((out ? vn_model_output : vn_model_input)(m, i, &name, &d) == VN_OK)
                printf("  %-24s %s\n", name, vn_desc_format(&d, buf, sizeof buf));
        }
    }
}

/* Operator histogram of the nodes that run, by count (then first seen). */
static void print_op_histogram(const vn_model *m)
{
    int32_t n = vn_model_num_nodes(m), kinds = 0;
    const char **ops = calloc((size_t)n + 1, sizeof *ops);
    int32_t *counts = calloc((size_t)n + 1, sizeof *counts);
    for (int32_t i = 0; ops && counts && i < n; i++) {
        const char *op;
        vn_model_node(m, i, NULL, &op, NULL);
        int32_t k = 0;
        while (k < kinds && strcmp(ops[k], op)) k++;
        if (k == kinds) ops[kinds++] = op;
        counts[k]++;
    }
    printf("operators (%d nodes):\n", (int)n);
    for (int32_t done = 0; done < kinds; done++) { /* selection by count: few kinds */
        int32_t best = -1;
        for (int32_t k = 0; k < kinds; k++)
            if (counts[k] > 0 && (best < 0 || counts[k] > counts[best])) best = k;
        printf("  %6d  %s\n", (int)counts[best], ops[best]);
        counts[best] = -counts[best];
    }
    free(ops);
    free(counts);
}

static void print_vnm_model(const vn_model *m)
{
    vn_model_file_info fi;
    vn_model_stats s;
    vn_model_file_info_get(m, &fi);
    vn_model_get_stats(m, &s);
    printf("producer: %s %s, compiled from %s\n", fi.producer, fi.producer_version, fi.source);
    printf("compile options: O%d, precision %s (as compiled: %.2f ms, %d nodes before passes)\n",
           (int)fi.opt_level,
           fi.precision == VN_PRECISION_BF16 ? "bf16 (matrix products, direct convolutions)"
                                             : "f32 (as in the model)",
           s.compile_ms, (int)s.nodes_before);
    print_io(m);
    print_op_histogram(m);
    printf("memory plan: arena %zu bytes (activations %zu, %zu in place), workspace %zu bytes, "
           "constants %zu bytes\n",
           s.arena_bytes, s.activation_bytes, s.inplace_count, s.workspace_bytes, s.constant_bytes);
    printf("load: %.3f ms (re-plan %.3f ms), weights %zu bytes\n", fi.load_ms, fi.replan_ms,
           fi.weight_bytes);
}

/* A .vnm: its one model, or each of its shape sets' models. */
static int vnm_info(const char *path)
{
    vn_model_set *set = NULL;
    const vn_model *first = NULL;
    if (vn_cli_load_vnm("info", path, NULL, NULL, 0, &set, &first)) return 1;
    vn_model_file_info fi;
    vn_model_file_info_get(first, &fi);
    int32_t n = vn_model_set_count(set);
    if (n == 1)
        printf("model: %s (.vnm version %u, %zu bytes)\n", path, (unsigned)fi.version,
               fi.file_bytes);
    else
        printf("model: %s (%d input-shape sets, each a .vnm version %u model; picked at run time "
               "by the inputs' shapes)\n",
               path, (int)n, (unsigned)fi.version);
    for (int32_t k = 0; k < n; k++) {
        if (n > 1) printf("\n== shape set %d of %d\n", (int)k, (int)n);
        print_vnm_model(vn_model_set_model(set, k));
    }
    vn_model_set_destroy(set);
    return 0;
}

int vn_cmd_graph_info(int argc, char **argv)
{
    const char *path = NULL;
    vn_input_shape shapes[MAX_SHAPES];
    int32_t num_shapes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--input-shape") && i + 1 < argc && num_shapes < MAX_SHAPES) {
            if (vn_cli_parse_shape(argv[++i], &shapes[num_shapes]) == 0) {
                num_shapes++;
                continue;
            }
            fprintf(stderr, "vinci info: bad --input-shape '%s' (want name:d0,d1,...)\n", argv[i]);
            return 2;
        }
        if (argv[i][0] == '-' || path) {
            fprintf(stderr, "usage: vinci info [model.onnx [--input-shape name:d0,d1,...]]\n");
            return 2;
        }
        path = argv[i];
    }
    if (path && vn_cli_is_vnm(path)) { /* compiled already: the file fixes the shapes */
        for (int32_t i = 0; i < num_shapes; i++) free((void *)shapes[i].name);
        return vnm_info(path);
    }
    vn_graph *g = NULL;
    if (vn_graph_load_onnx(path, &g) != VN_OK) {
        fprintf(stderr, "vinci info: %s\n", vn_last_error());
        return 1;
    }
    printf("model: %s\n", path);
    print_model(g);
    print_unsupported(g);
    if (vn_graph_infer(g, shapes, num_shapes) == VN_OK) {
        printf("inferred outputs:\n");
        vn_value_info v;
        for (int32_t i = 0; i < vn_graph_num_outputs(g); i++)
            if (vn_graph_output(g, i, &v) == VN_OK) print_value(&v);
    } else if (vn_graph_unsupported_report(g, NULL, 0) == 0) {
        printf("shape inference: %s\n", vn_last_error());
    }
    for (int32_t i = 0; i < num_shapes; i++) free((void *)shapes[i].name);
    vn_graph_destroy(g);
    return 0;
}
