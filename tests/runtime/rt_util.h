/*
 * rt_util.h — helpers the runtime tests share: a gate a task can wait on
 * (so a test controls when work finishes), tiny tasks, and a CPU-time clock.
 */
#ifndef VINCI_TESTS_RT_UTIL_H
#define VINCI_TESTS_RT_UTIL_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>

#include "vinci/kernel.h"
#include "vinci/runtime.h"

static inline vn_device *rt_device(int32_t workers)
{
    vn_device_options o = {0};
    o.num_threads = workers;
    vn_device *d = NULL;
    if (vn_device_create(&o, &d) != VN_OK) {
        fprintf(stderr, "cannot create a device: %s\n", vn_last_error());
        exit(1);
    }
    return d;
}

/* A block that multiplies to a subnormal (1e-30 * 1e-9 = 1e-39): result 0
 * where the thread flushes denormals, else the subnormal. */
typedef struct denormal_ctx {
    volatile float tiny, scale;
    float result;
} denormal_ctx;

static inline void denormal_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    denormal_ctx *c = ctx;
    c->result = c->tiny * c->scale;
}

/* A task that spins (yielding) until its gate opens. */
static inline vn_status rt_gate_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    atomic_int *gate = ctx;
    while (!atomic_load(gate)) sched_yield();
    return VN_OK;
}

static inline vn_status rt_submit_gate(vn_stream *s, atomic_int *gate)
{
    vn_task_desc t = {"gate", 1, rt_gate_block, gate, NULL};
    return vn_stream_submit(s, &t);
}

static inline double rt_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
}

static inline void rt_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif /* VINCI_TESTS_RT_UTIL_H */
