/*
 * profiler.h — the profiler's state, shared by its collector (session.c,
 * run.c) and writers (write_*.c).
 *
 * The trace's tracks: the thread that ran the nodes of synchronous runs
 * (process 1, tid its thread id), each worker (process 2, tid the worker
 * index), the blocks that thread ran itself as the caller of a synchronous
 * launch (process 2, tid num_workers, "host") and each stream of
 * asynchronous runs (process 3, tid the stream id).
 */
#ifndef VINCI_PROFILE_PROFILER_H
#define VINCI_PROFILE_PROFILER_H

#include <pthread.h>

#include "profile/counters.h"
#include "profile/hook.h"
#include "profile/perf.h"
#include "vinci/runtime.h"

enum { VN_PROF_PID_HOST = 1, VN_PROF_PID_WORKERS = 2, VN_PROF_PID_STREAMS = 3 };

/* A model run (node -1), a node run, or a node's blocks on one worker. */
typedef struct vn_prof_slice {
    int32_t node, pid, tid;
    int32_t blocks; /* worker slices: blocks run */
    int64_t run;    /* the model run it belongs to, 0-based */
    int64_t t0_ns, t1_ns;
    int64_t ctr[VN_CTR_COUNT];
} vn_prof_slice;

#define VN_PROF_MAX_SLICES (1 << 20) /* past this only the summary grows */

/* A block of a node's launches (node >= 0, launches made inside the node's
 * time) or of anything else the device ran while profiled (node -1): a
 * slice on its worker's track. */
typedef struct vn_prof_block {
    int32_t node;
    int64_t run;
    vn_profile_block b;
} vn_prof_block;

/* Block slices are kept for the first VN_PROF_BLOCK_RUNS runs only: their
 * number grows with nodes x workers (ResNet-18 on 2 workers: 88 blocks, 30
 * KB of trace a run; a 64-worker host or BERT-base many times that), while a
 * few runs show the blocks' balance. The node summary (blocks, imbalance)
 * counts every run. */
#define VN_PROF_BLOCK_RUNS 10

struct vn_profiler {
    vn_prof_hook hook; /* first: the executor's callbacks get the profiler back */
    const vn_model *model;
    vn_device *device;
    double peak_gflops, peak_gbs;
    /* compute roofs of nodes whose cube work is mostly bf16 / int8 (index
     * vn_prof_precision; 0: unknown, the f32 roof holds) */
    double peak_low[3];
    vn_profile_node *nodes;
    int32_t num_nodes;
    vn_prof_slice *slices;
    int64_t num_slices, cap_slices;
    bool was_profiling;         /* the device's profiling before the run in progress */
    vn_profile_record *records; /* stream tasks of asynchronous runs */
    int64_t num_records, cap_records;
    uint64_t records_dropped; /* by the runtime's cap or ours */
    vn_prof_block *blocks;    /* of the first VN_PROF_BLOCK_RUNS runs */
    int64_t num_blocks, cap_blocks;
    uint64_t blocks_dropped;   /* by the runtime's cap or ours */
    vn_profile_block *drained; /* blocks drained at a node's end (scratch) */
    int64_t cap_drained;
    double *imbalance_sum;    /* per node: the sum of its calls' imbalances */
    int64_t *imbalance_calls; /* ... over this many calls */
    int64_t runs;
    double run_ms;
    int64_t own_ns;   /* the profiler's own work inside the runs: the hooks outside node times */
    int64_t epoch_ns; /* the trace's time zero */
    vn_counter_values total; /* over all runs */
    bool supported[VN_CTR_COUNT];
    /* the run in progress */
    int32_t pid, tid; /* the track of its nodes */
    pthread_t runner; /* only this thread's node runs are recorded ... */
    bool any_thread;  /* ... unless the nodes run on the callback thread */
    int32_t num_workers;
    vn_ctr_worker *w_begin, *w_end;     /* per worker at the node's start and end */
    vn_ctr_worker host_begin, host_end; /* the running thread's own blocks, likewise */
    vn_counter_values self_begin;
};

/* Appends a slice (dropped past VN_PROF_MAX_SLICES or on no memory). */
vn_prof_slice *vn_prof_add_slice(vn_profiler *p, int32_t node, int32_t pid, int32_t tid, int64_t t0,
                                 int64_t t1);
int32_t vn_prof_tid(void);
/* Per node, the median of its calls' times in ms (medians.c); malloc'd,
 * num_nodes values (0 for a node with no timed call), NULL on no memory. */
double *vn_prof_medians(const vn_profiler *p);
/* What most of a node's cube work ran on: its compute roof follows it. */
typedef enum vn_prof_precision {
    VN_PREC_F32 = 0,
    VN_PREC_BF16 = 1,
    VN_PREC_INT8 = 2
} vn_prof_precision;
vn_prof_precision vn_prof_node_precision(const vn_profile_node *n);
const char *vn_prof_precision_name(vn_prof_precision p);
/* The compute roof of node n, GFLOP/s (GOP/s for int8). */
double vn_prof_node_roof(const vn_profiler *p, const vn_profile_node *n);
/* The roof of low precision q (bf16, int8) when some node with FLOPs is
 * held to it, else 0 (the writers show only the roofs in use). */
double vn_prof_used_roof(const vn_profiler *p, vn_prof_precision q);
/* Per-call ms, FLOPs, bytes and the bound of node i. */
vn_bound vn_prof_node_bound(const vn_profiler *p, const vn_profile_node *n, double *frac);
/* Grows *buf (of *cap elements of `size` bytes) to hold `need`, doubling
 * from 256 up to `limit` elements; false (nothing changed) past it or on no
 * memory. */
bool vn_prof_grow(void **buf, int64_t *cap, int64_t need, size_t size, int64_t limit);
typedef enum vn_prof_queue { VN_PROF_TASKS, VN_PROF_BLOCKS } vn_prof_queue;
/* Appends all queue q holds to *buf (n elements, capacity *cap, growing up
 * to `limit`); the new count. What does not fit is drained anyway and added
 * to *dropped (drain.c). */
int64_t vn_prof_drain(vn_device *d, vn_prof_queue q, void **buf, int64_t n, int64_t *cap,
                      int64_t limit, uint64_t *dropped);
/* Drains the device's block records: those of node `node` (>= 0) inside
 * its time [t0, t1] count towards it; every one is kept as a slice of this
 * run while runs < VN_PROF_BLOCK_RUNS (node -1 for the others). */
void vn_prof_take_blocks(vn_profiler *p, int32_t node, int64_t t0, int64_t t1);
/* Called by run.c around every profiled run; `completed`: the run succeeded. */
vn_status vn_prof_run_begin(vn_profiler *p);
void vn_prof_run_end(vn_profiler *p, int64_t t0, int64_t t1, bool completed);

#endif /* VINCI_PROFILE_PROFILER_H */
