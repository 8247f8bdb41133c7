/*
 * perf.h — the perf counters of one thread. Hardware counters are opened one
 * by one (a kernel may expose some and not others); the three software
 * counters form one perf group, read with one system call, or, where
 * perf_event_open is refused, come from getrusage and the thread CPU clock.
 */
#ifndef VINCI_PROFILE_PERF_H
#define VINCI_PROFILE_PERF_H

#include "vinci/profile.h"

typedef struct vn_perf {
    int hw[VN_CTR_NUM_HW]; /* -1: unsupported */
    int sw[3];             /* the software group, sw[0] leads; -1: getrusage fallback */
    int32_t num_hw;        /* supported hardware counters */
} vn_perf;

/* Opens the calling thread's counters; never fails (unsupported ones are -1). */
void vn_perf_open(vn_perf *p);
void vn_perf_close(vn_perf *p);
/* The thread's counts so far; unsupported counters read 0. Only the thread
 * that opened them may read the software fallback. */
void vn_perf_read(const vn_perf *p, int64_t out[VN_CTR_COUNT]);
/* Counting on or off (any thread may call it): counters off cost nothing at
 * context switches, so profiling off costs nothing. */
void vn_perf_enable(const vn_perf *p, bool on);
void vn_perf_supported(const vn_perf *p, bool out[VN_CTR_COUNT]);
/* VINCI_PERF_DISABLE=1 or vn_counters_force_unavailable(true). */
bool vn_perf_unavailable(void);

#endif /* VINCI_PROFILE_PERF_H */
