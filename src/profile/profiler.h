/*
 * profiler.h — the profiler's state, shared by its collector (session.c) and
 * writers (write_*.c).
 */
#ifndef VINCI_PROFILE_PROFILER_H
#define VINCI_PROFILE_PROFILER_H

#include <pthread.h>

#include "profile/hook.h"
#include "profile/perf.h"

/* One node run or one model run (node -1): a slice of the trace. */
typedef struct vn_prof_slice {
    int32_t node, tid;
    int64_t t0_ns, t1_ns;
} vn_prof_slice;

#define VN_PROF_MAX_SLICES (1 << 20) /* past this only the summary grows */

struct vn_profiler {
    vn_prof_hook hook; /* first: the executor's callbacks get the profiler back */
    const vn_model *model;
    double peak_gflops, peak_gbs;
    vn_profile_node *nodes;
    int32_t num_nodes;
    vn_prof_slice *slices;
    int64_t num_slices, cap_slices;
    int64_t runs;
    double run_ms;
    int64_t epoch_ns; /* the trace's time zero */
    vn_sw_counters sw;
    vn_perf perf;
    bool perf_open;
    int64_t hw_begin[VN_HW_COUNT];
    int32_t runner_tid; /* the trace's track of the running thread */
    pthread_t runner;   /* only this thread's node runs are recorded */
};

void vn_prof_add_slice(vn_profiler *p, int32_t node, int32_t tid, int64_t t0, int64_t t1);
int32_t vn_prof_tid(void);
/* Per-call ms, FLOPs, bytes and the bound of node i. */
vn_bound vn_prof_node_bound(const vn_profiler *p, const vn_profile_node *n, double *frac);

#endif /* VINCI_PROFILE_PROFILER_H */
