/*
 * hook.c — the executor's hook pointer and the profiler's clock.
 */
#include <time.h>

#include "profile/hook.h"

_Atomic(vn_prof_hook *) vn_prof_hook_active = NULL;

/* CLOCK_MONOTONIC: the same clock on every thread, so slices line up in a trace. */
int64_t vn_prof_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
