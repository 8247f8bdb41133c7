/*
 * vinci/profile.h — the profiler (msprof for CPUs): per-node times and kernel
 * counters of model runs, software and hardware counters (perf_event_open)
 * per worker thread where the kernel exposes them, the roofline bound of each node, and writers for
 * op_summary.csv, trace.json (Chrome trace format), roofline.svg and a printed top-N table.
 *
 *     vn_profiler *p;  vn_profiler_create(model, peaks_gflops, peaks_gbs, &p);
 *     for (...) vn_profiler_run(p, ctx, inputs, n);   // profiled runs
 *     vn_profiler_write_csv(p, "out/op_summary.csv");
 *     vn_profiler_destroy(p);
 *
 * Profiling is off unless a profiler is running: one pointer test per node
 * and two per block (the counters' worker hook, the runtime's block
 * records). Profiled, every node also gets its blocks' count and load
 * imbalance, and the trace a slice per block for the first runs (the
 * runtime's block records, vn_device_profile_drain_blocks). A profiler's
 * first run switches the workers' perf events on and vn_profiler_destroy
 * off (switching them interrupts their CPUs); between its runs they cost
 * only at those threads' context switches.
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

/* ---- performance counters (perf_event_open), usable around any launch or run ----
 *
 * Hardware counters are opened per thread, one by one, so a kernel that
 * exposes some but not all still gives those it has; a refused counter (a VM
 * without a PMU refuses them all) is "unsupported", never an error. Software
 * counters are always there: perf's software events, or getrusage and the
 * thread CPU clock where perf_event_open is refused altogether.
 *
 *     vn_counters_enable(device);         // each worker opens its counters
 *     vn_counter_values a, b, d;
 *     vn_counters_sample(&a);
 *     vn_launch(device, &desc, NULL);     // or vn_model_run, ...
 *     vn_counters_sample(&b);
 *     vn_counters_diff(&a, &b, &d);       // d.value[VN_CTR_INSTRUCTIONS], ...
 *     vn_counters_disable();
 */
typedef enum vn_counter {
    VN_CTR_CYCLES,
    VN_CTR_INSTRUCTIONS,
    VN_CTR_CACHE_REFS,
    VN_CTR_CACHE_MISSES,
    VN_CTR_L1D_READ_MISSES,
    VN_CTR_LLC_READ_MISSES,
    VN_CTR_BRANCH_MISSES,
    VN_CTR_TASK_CLOCK_NS, /* software counters from here on */
    VN_CTR_PAGE_FAULTS,
    VN_CTR_CTX_SWITCHES,
    VN_CTR_COUNT
} vn_counter;
#define VN_CTR_NUM_HW VN_CTR_TASK_CLOCK_NS    /* counters [0, VN_CTR_NUM_HW) are hardware */
const char *vn_counter_name(int32_t counter); /* "cycles", "l1d_read_misses", ... */

typedef struct vn_counter_values {
    int64_t value[VN_CTR_COUNT]; /* 0 where unsupported */
    bool supported[VN_CTR_COUNT];
} vn_counter_values;

/* Worker threads of `device` open their counters at their next block and read
 * them around every block from then on; the calling thread opens its own.
 * Process-wide: one device at a time (enabling another moves the counting). */
vn_status vn_counters_enable(vn_device *device);
void vn_counters_disable(void);
/* Counts so far: the device's workers (their counted blocks), the blocks other
 * host threads ran as callers of their own launches on it (those threads
 * may have exited since), plus the calling thread. A counter is supported
 * when every counted thread supports it. */
vn_status vn_counters_sample(vn_counter_values *out);
/* Counts so far of one worker's counted blocks only. */
vn_status vn_counters_sample_worker(int32_t worker, vn_counter_values *out);
/* out = b - a; supported where both are. */
void vn_counters_diff(const vn_counter_values *a, const vn_counter_values *b,
                      vn_counter_values *out);
/* Make every perf_event_open fail (as VINCI_PERF_DISABLE=1 does) for threads
 * that open counters from now on: hardware counters are then unsupported and
 * software counters come from getrusage. For tests of the fallback. */
void vn_counters_force_unavailable(bool on);

typedef struct vn_profile_node {
    const char *name, *op_type;
    const char *fused_from;         /* "a;b;c": the ONNX nodes a fused node came from; "" if none */
    char inputs[256], outputs[256]; /* "f32[1,64];f32[64,32]" */
    int64_t calls;
    double total_ms, min_ms, max_ms;
    double flops, bytes;         /* per call, from the kernel counters */
    vn_kernel_counters counters; /* summed over calls */
    vn_counter_values ctr;       /* perf counters of workers and runner, summed over calls */
    int64_t blocks;              /* blocks its kernels ran, summed over calls */
    /* Load imbalance of its blocks: per launch, the longest block's time over
     * the median block's; per call, the launches' weighted by their longest
     * block; averaged over the calls that ran blocks (1: even). */
    double block_imbalance;
} vn_profile_node;

typedef struct vn_profiler vn_profiler;

/* Roofs in GFLOP/s and GB/s (0, 0: measured by vn_machine_peaks_get). */
vn_status vn_profiler_create(const vn_model *model, double peak_gflops, double peak_gbs,
                             vn_profiler **out);
void vn_profiler_destroy(vn_profiler *p);
/* One profiled vn_model_run (outputs into the context's buffers). */
vn_status vn_profiler_run(vn_profiler *p, vn_model_ctx *ctx, const vn_named_tensor *inputs,
                          int32_t num_inputs);
/* One profiled vn_model_run_async on `stream`, synchronized: the run and the
 * stream's tasks land on that stream's track of the trace. */
vn_status vn_profiler_run_async(vn_profiler *p, vn_model_ctx *ctx, vn_stream *stream,
                                const vn_named_tensor *inputs, int32_t num_inputs);

int32_t vn_profiler_num_nodes(const vn_profiler *p);
const vn_profile_node *vn_profiler_node(const vn_profiler *p, int32_t index);
/* The median of node `index`'s call times in ms (0 if it ran no kernel, or
 * on no memory for a copy of its times): on a
 * shared machine a few slow calls pull total_ms / calls above what the node
 * usually takes. Over the calls the trace keeps (all but past 2^20 slices). */
double vn_profiler_node_median_ms(const vn_profiler *p, int32_t index);
int64_t vn_profiler_num_runs(const vn_profiler *p);
double vn_profiler_run_ms(const vn_profiler *p); /* all profiled runs, wall */
/* The part of vn_profiler_run_ms the profiler itself spent between nodes
 * (snapshotting every worker's counters and reading the running thread's
 * around each node, recording slices): time an unprofiled run does not
 * have. The rest of the run that no node covers is the executor's own work
 * (binding inputs and outputs, the node loop, view nodes, output copies). */
double vn_profiler_overhead_ms(const vn_profiler *p);
/* Perf counters over all profiled runs (workers and the running thread). */
vn_counter_values vn_profiler_counters(const vn_profiler *p);
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
