/*
 * cli.h — the vinci command-line tool's sub-commands. Each lives in its own
 * file tools/cmd_<name>.c and is listed once in the table in tools/vinci.c.
 */
#ifndef VINCI_TOOLS_CLI_H
#define VINCI_TOOLS_CLI_H

#include <string.h>

typedef struct vn_cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the sub-command name */
} vn_cli_command;

int vn_cmd_info(int argc, char **argv);
int vn_cmd_ops(int argc, char **argv);
int vn_cmd_machine(int argc, char **argv);
int vn_cmd_graph_info(int argc, char **argv); /* `vinci info model.onnx` */
int vn_cmd_run(int argc, char **argv);        /* `vinci run model.onnx --input x=a.npy` */
int vn_cmd_bench(int argc, char **argv);      /* `vinci bench model.onnx` */
int vn_cmd_compile(int argc, char **argv);    /* `vinci compile model.onnx -O1` */
int vn_cmd_profile(int argc, char **argv);    /* `vinci profile model.onnx --out DIR` */

/* Shared by run, bench and compile (tools/cmd_run.c). */
struct vn_input_shape;
struct vn_graph;
/* "name:d0,d1,..." (an empty dim list is a scalar); the name is malloc'ed. 0 on success. */
int vn_cli_parse_shape(const char *arg, struct vn_input_shape *out);
/* "x:1,3;y:2" (shapes separated by ';'): one shape set into out[0..max); the
 * count, or -1 when malformed or longer than max. Names are malloc'ed. */
int vn_cli_parse_shape_set(const char *arg, struct vn_input_shape *out, int max);
/* A path ending in ".vnm": an offline model (or a file of several shape sets). */
static inline int vn_cli_is_vnm(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && !strcmp(path + n - 4, ".vnm");
}
/* Load a .vnm (one model, or one per shape set) and pick the model for
 * `shapes` (any model when num_shapes is 0: the first); prints the error as
 * "vinci <cmd>: ..." and returns non-zero on failure. */
struct vn_model_set;
struct vn_model;
struct vn_device;
int vn_cli_load_vnm(const char *cmd, const char *path, struct vn_device *dev,
                    const struct vn_input_shape *shapes, int num_shapes, struct vn_model_set **set,
                    const struct vn_model **model);
/* Print vn_last_error() and, for an unsupported model, every unsupported operator. */
void vn_cli_report_error(const char *cmd, const struct vn_graph *graph);

/* The optimisation level of compile, run, bench and profile: O3 (all fusions)
 * unless -O0 .. -O3 says otherwise. */
#define VN_CLI_DEFAULT_LEVEL 3
/* True (and *level set) when arg is -O0, -O1, -O2 or -O3. */
static inline int vn_cli_parse_level(const char *arg, int *level)
{
    if (arg[0] != '-' || arg[1] != 'O' || arg[2] < '0' || arg[2] > '3' || arg[3]) return 0;
    *level = arg[2] - '0';
    return 1;
}

/* The model options of compile, run, bench and profile: -O0..-O3 and
 * --precision f32|bf16 (vn_precision; fp32 is f32). 1: argv[*i] was one (and
 * *i is past its value); -1: --precision with no valid value; 0: not one of them. */
static inline int vn_cli_parse_model_opt(int argc, char **argv, int *i, int *level, int *precision)
{
    if (vn_cli_parse_level(argv[*i], level)) return 1;
    if (strcmp(argv[*i], "--precision")) return 0;
    const char *v = *i + 1 < argc ? argv[++*i] : "";
    if (!strcmp(v, "f32") || !strcmp(v, "fp32") || !strcmp(v, "bf16")) {
        *precision = v[0] == 'b'; /* VN_PRECISION_BF16 : VN_PRECISION_F32 */
        return 1;
    }
    return -1;
}

#define VN_CLI_MODEL_OPTS_USAGE "[-O0..-O3] [--precision f32|bf16]"

#endif /* VINCI_TOOLS_CLI_H */
