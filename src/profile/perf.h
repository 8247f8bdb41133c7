/*
 * perf.h — hardware counters of one thread (perf_event_open) and software
 * counters (getrusage). Each hardware counter is opened on its own so that a
 * kernel exposing some but not all still gives the ones it has.
 */
#ifndef VINCI_PROFILE_PERF_H
#define VINCI_PROFILE_PERF_H

#include "vinci/profile.h"

typedef struct vn_perf {
    int fd[VN_HW_COUNT]; /* -1: unsupported (or VINCI_PERF_DISABLE=1) */
} vn_perf;

/* Open the counters for the calling thread; never fails. */
void vn_perf_open(vn_perf *p);
void vn_perf_close(vn_perf *p);
/* Current values; unsupported counters read 0. */
void vn_perf_read(const vn_perf *p, int64_t out[VN_HW_COUNT]);
bool vn_perf_any(const vn_perf *p);
/* The calling thread's software counters so far. */
vn_sw_counters vn_sw_now(void);

#endif /* VINCI_PROFILE_PERF_H */
