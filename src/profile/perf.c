/*
 * perf.c — hardware counters through perf_event_open, software counters
 * through getrusage(RUSAGE_THREAD). A VM without a PMU refuses the hardware
 * events (ENOENT / EOPNOTSUPP); that is recorded per counter, not an error.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "profile/perf.h"

static const uint64_t hw_config[VN_HW_COUNT] = {
    PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CACHE_REFERENCES,
    PERF_COUNT_HW_CACHE_MISSES, PERF_COUNT_HW_BRANCH_MISSES};

const char *vn_hw_counter_name(int32_t counter)
{
    static const char *names[VN_HW_COUNT] = {"cycles", "instructions", "cache_refs", "cache_misses",
                                             "branch_misses"};
    return counter >= 0 && counter < VN_HW_COUNT ? names[counter] : "?";
}

static bool perf_disabled(void)
{
    const char *e = getenv("VINCI_PERF_DISABLE");
    return e && e[0] && strcmp(e, "0") != 0;
}

static int open_one(uint64_t config)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = config;
    a.exclude_kernel = 1; /* allowed at perf_event_paranoid 2 */
    a.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    return fd < 0 ? -1 : (int)fd;
}

void vn_perf_open(vn_perf *p)
{
    bool off = perf_disabled();
    for (int32_t k = 0; k < VN_HW_COUNT; k++) p->fd[k] = off ? -1 : open_one(hw_config[k]);
}

void vn_perf_close(vn_perf *p)
{
    for (int32_t k = 0; k < VN_HW_COUNT; k++) {
        if (p->fd[k] >= 0) close(p->fd[k]);
        p->fd[k] = -1;
    }
}

void vn_perf_read(const vn_perf *p, int64_t out[VN_HW_COUNT])
{
    for (int32_t k = 0; k < VN_HW_COUNT; k++) {
        uint64_t v = 0;
        if (p->fd[k] >= 0 && read(p->fd[k], &v, sizeof v) != (ssize_t)sizeof v) v = 0;
        out[k] = (int64_t)v;
    }
}

bool vn_perf_any(const vn_perf *p)
{
    for (int32_t k = 0; k < VN_HW_COUNT; k++)
        if (p->fd[k] >= 0) return true;
    return false;
}

vn_sw_counters vn_sw_now(void)
{
    struct rusage r;
    if (getrusage(RUSAGE_THREAD, &r) != 0) return (vn_sw_counters){0, 0, 0};
    double ms = (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
                (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
    return (vn_sw_counters){ms, (int64_t)(r.ru_minflt + r.ru_majflt),
                            (int64_t)(r.ru_nvcsw + r.ru_nivcsw)};
}
