/*
 * vinci/profile.h — the profiler (msprof for CPUs): per-node times and kernel
 * counters of model runs, software counters (getrusage) per run, hardware
 * counters (perf_event_open) where the kernel exposes them, the roofline
 * bound of each node, and writers for op_summary.csv, trace.json (Chrome
 * trace format) and a printed top-N table.
 *
 *     vn_profiler *p;  vn_profiler_create(model, peaks_gflops, peaks_gbs, &p);
 *     for (...) vn_profiler_run(p, ctx, inputs, n);   // profiled runs
 *     vn_profiler_write_csv(p, "out/op_summary.csv");
 *     vn_profiler_destroy(p);
 *
 * Profiling is off unless a profiler is running: one pointer test per node.
 */
#ifndef VINCI_PROFILE_H
#define VINCI_PROFILE_H

#include <stdio.h>

#include "vinci/graph.h"
#include "vinci/machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where an op sits on the roofline (msprof's Compute / Memory / Latency Bound). */
typedef enum vn_bound { VN_BOUND_COMPUTE = 0, VN_BOUND_MEMORY = 1, VN_BOUND_LATENCY = 2 } vn_bound;

/* The bound rule:
 *   - latency: the op ran under 20 us per call, or reached under 10 % of both
 *     the compute roof and the bandwidth roof (it waits on neither);
 *   - otherwise compute when its intensity (FLOP/byte) is at or right of the
 *     ridge peak_gflops / peak_gbs, memory when left of it.
 * *roof_fraction (may be NULL) is the achieved GFLOP/s over the roof at the op's
 * intensity, min(peak_gflops, intensity * peak_gbs); for an op with no FLOPs,
 * achieved GB/s over peak_gbs. */
#define VN_PROFILE_LATENCY_US   20.0
#define VN_PROFILE_LOW_FRACTION 0.10
vn_bound vn_profile_classify(double ms_per_call, double flops, double bytes, double peak_gflops,
                             double peak_gbs, double *roof_fraction);
const char *vn_bound_name(vn_bound b);

/* Hardware counters tried per thread; a counter the kernel refuses (or all of
 * them with VINCI_PERF_DISABLE=1) is reported "unsupported", never an error. */
enum {
    VN_HW_CYCLES,
    VN_HW_INSTRUCTIONS,
    VN_HW_CACHE_REFS,
    VN_HW_CACHE_MISSES,
    VN_HW_BRANCH_MISSES,
    VN_HW_COUNT
};
const char *vn_hw_counter_name(int32_t counter);

/* Software counters of the running thread over the profiled runs. */
typedef struct vn_sw_counters {
    double task_clock_ms; /* user + system CPU time */
    int64_t page_faults;  /* minor + major */
    int64_t ctx_switches; /* voluntary + involuntary */
} vn_sw_counters;

typedef struct vn_profile_node {
    const char *name, *op_type;
    char inputs[256], outputs[256]; /* "f32[1,64];f32[64,32]" */
    int64_t calls;
    double total_ms, min_ms, max_ms;
    double flops, bytes;         /* per call, from the kernel counters */
    vn_kernel_counters counters; /* summed over calls */
    bool hw_supported[VN_HW_COUNT];
    int64_t hw[VN_HW_COUNT]; /* summed over calls */
} vn_profile_node;

typedef struct vn_profiler vn_profiler;

/* Roofs in GFLOP/s and GB/s (0, 0: measured by vn_machine_peaks_get). */
vn_status vn_profiler_create(const vn_model *model, double peak_gflops, double peak_gbs,
                             vn_profiler **out);
void vn_profiler_destroy(vn_profiler *p);
/* One profiled vn_model_run (outputs into the context's buffers). */
vn_status vn_profiler_run(vn_profiler *p, vn_model_ctx *ctx, const vn_named_tensor *inputs,
                          int32_t num_inputs);

int32_t vn_profiler_num_nodes(const vn_profiler *p);
const vn_profile_node *vn_profiler_node(const vn_profiler *p, int32_t index);
int64_t vn_profiler_num_runs(const vn_profiler *p);
double vn_profiler_run_ms(const vn_profiler *p); /* all profiled runs, wall */
vn_sw_counters vn_profiler_sw(const vn_profiler *p);
void vn_profiler_peaks(const vn_profiler *p, double *gflops, double *gbs);

/* Writers; errors name the path. */
vn_status vn_profiler_write_csv(const vn_profiler *p, const char *path);
vn_status vn_profiler_write_trace(const vn_profiler *p, const char *path);
vn_status vn_profiler_write_svg(const vn_profiler *p, const char *path);
/* The top `n` nodes by time, with bound and fraction of roof, and the total. */
void vn_profiler_print_top(const vn_profiler *p, int32_t n, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_PROFILE_H */
