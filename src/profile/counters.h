/*
 * counters.h — what the profiler needs of the counters module (counters.c)
 * beyond the public vn_counters_* calls: per-worker snapshots taken in one
 * pass, and each worker's span of blocks since the last mark (a node's slice
 * on that worker's track).
 */
#ifndef VINCI_PROFILE_COUNTERS_H
#define VINCI_PROFILE_COUNTERS_H

#include "vinci/profile.h"

/* A worker's counted blocks: counters, how many, and since the last
 * vn_ctr_mark the first block's start and the last block's end (ns). */
typedef struct vn_ctr_worker {
    vn_counter_values ctr;
    int64_t blocks;
    int64_t first_ns, last_ns; /* first_ns 0: no block since the mark */
} vn_ctr_worker;

/* Starts a new span for every worker (a node begins). */
void vn_ctr_mark(void);
/* Workers 0..num_workers-1 of the enabled device (absent ones read zero), the
 * calling thread's counts so far (`self`, everything it ran) and, when
 * `self_blocks` is not NULL, the blocks the calling thread ran itself (as the
 * caller of a synchronous launch). Both may be NULL. */
void vn_ctr_snapshot(vn_ctr_worker *workers, int32_t num_workers, vn_counter_values *self,
                     vn_ctr_worker *self_blocks);
/* The enabled device's worker count (0 when disabled). */
int32_t vn_ctr_num_workers(void);
/* As vn_counters_disable, but every thread's perf events stay on, so that
 * the next vn_counters_enable switches none (profiled runs in a row). Events
 * on cost only at their threads' context switches, none at blocks. */
void vn_ctr_pause(void);
/* Switches the events off unless counting was enabled again since a pause. */
void vn_ctr_release(void);
/* How many times every thread's events were switched on or off (tests). */
int64_t vn_ctr_switches(void);

#endif /* VINCI_PROFILE_COUNTERS_H */
