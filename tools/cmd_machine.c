/*
 * cmd_machine.c — `vinci machine [--threads N]`: measure this machine's
 * compute and bandwidth peaks (a few seconds), print them as a table and save
 * them to the peaks file (vn_machine_peaks_path) for later processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vinci/machine.h"

static int machine_usage(FILE *f)
{
    fprintf(f, "usage: vinci machine [--threads N]\n"
               "  measure fp32 / bf16 / int8 compute and DRAM / L2 bandwidth peaks,\n"
               "  for 1 thread and for N threads (default: the default device's workers)\n");
    return f == stderr ? 2 : 0;
}

/* Parses the arguments; returns -1 on success, else the exit code. */
static int parse_args(int argc, char **argv, int32_t *threads)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return machine_usage(stdout);
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            char *end = NULL;
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 1 || v > 4096) {
                fprintf(stderr, "vinci machine: --threads wants 1..4096, got '%s'\n", argv[i]);
                return 2;
            }
            *threads = (int32_t)v;
            continue;
        }
        fprintf(stderr, "vinci machine: unknown argument '%s'\n", argv[i]);
        return machine_usage(stderr);
    }
    return -1;
}

int vn_cmd_machine(int argc, char **argv)
{
    int32_t threads = 0;
    int rc = parse_args(argc, argv, &threads);
    if (rc >= 0) return rc;

    vn_device *dev = NULL;
    vn_device_options o = {0};
    o.num_threads = threads; /* 0: VINCI_NUM_THREADS or the online CPUs */
    vn_machine_peaks p;
    vn_status st = vn_device_create(&o, &dev);
    if (st == VN_OK) {
        printf("measuring (a few seconds) with %d worker%s...\n", vn_device_num_workers(dev),
               vn_device_num_workers(dev) == 1 ? "" : "s");
        fflush(stdout);
        st = vn_machine_measure(dev, &p);
    }
    vn_device_destroy(dev);
    if (st != VN_OK) {
        fprintf(stderr, "vinci machine: %s\n", vn_last_error());
        return 1;
    }
    char text[2048], path[1024];
    vn_machine_format(&p, text, sizeof text);
    fputs(text, stdout);
    /* kept for the profiler's roofs and the benchmarks (vn_machine_peaks_get) */
    if (vn_machine_peaks_path(path, sizeof path) == VN_OK &&
        vn_machine_peaks_save(&p, path) == VN_OK)
        printf("saved to %s (the profiler's roofs; VINCI_MACHINE_FILE moves it)\n", path);
    return 0;
}
