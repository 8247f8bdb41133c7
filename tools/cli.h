/*
 * cli.h — the vinci command-line tool's sub-commands. Each lives in its own
 * file tools/cmd_<name>.c and is listed once in the table in tools/vinci.c.
 */
#ifndef VINCI_TOOLS_CLI_H
#define VINCI_TOOLS_CLI_H

typedef struct vn_cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the sub-command name */
} vn_cli_command;

int vn_cmd_info(int argc, char **argv);
int vn_cmd_ops(int argc, char **argv);
int vn_cmd_machine(int argc, char **argv);
int vn_cmd_graph_info(int argc, char **argv); /* `vinci info model.onnx` */

#endif /* VINCI_TOOLS_CLI_H */
