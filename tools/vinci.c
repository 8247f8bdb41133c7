/*
 * vinci.c — the command-line tool: `vinci <command> [args]`.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const vn_cli_command commands[] = {
    {"info",
     "this machine's CPU features, ISA path, workers and arenas; `info model.onnx`: a model's "
     "inputs, outputs, opsets and operators",
     vn_cmd_info},
    {"ops", "list the registered operators", vn_cmd_ops},
    {"machine", "measure this machine's compute and bandwidth peaks (a few seconds)",
     vn_cmd_machine},
    {"compile", "compile a model: passes, plans, memory plan; prints what changed", vn_cmd_compile},
    {"run", "run a model on .npy inputs and write its outputs as .npy", vn_cmd_run},
    {"bench", "time a model on random inputs (latency, throughput, compile time)", vn_cmd_bench},
    {"profile", "profile a model: per-node times, counters, roofline bound, trace", vn_cmd_profile},
};
enum { NUM_COMMANDS = sizeof commands / sizeof commands[0] };

static int usage(FILE *f)
{
    fprintf(f, "usage: vinci <command> [args]\n\ncommands:\n");
    for (int i = 0; i < NUM_COMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    return f == stderr ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage(stderr);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) return usage(stdout);
    for (int i = 0; i < NUM_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "vinci: unknown command '%s'\n", argv[1]);
    return usage(stderr);
}
