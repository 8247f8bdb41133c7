/*
 * perf.c — a thread's counters through perf_event_open. A VM without a PMU
 * refuses the hardware events (ENOENT / EOPNOTSUPP); that is recorded per
 * counter, not an error. Hardware counters count user space only
 * (exclude_kernel, which perf_event_paranoid 2 allows) and are scaled by time
 * enabled / time running when the kernel multiplexes them.
 */
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "profile/perf.h"

#define CACHE_READ_MISS(cache)                                                                     \
    ((cache) | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16))

static const struct {
    uint32_t type;
    uint64_t config;
} events[VN_CTR_COUNT] = {
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {PERF_TYPE_HW_CACHE, CACHE_READ_MISS(PERF_COUNT_HW_CACHE_L1D)},
    {PERF_TYPE_HW_CACHE, CACHE_READ_MISS(PERF_COUNT_HW_CACHE_LL)},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
};

static atomic_bool forced_off;

void vn_counters_force_unavailable(bool on)
{
    atomic_store(&forced_off, on);
}

bool vn_perf_unavailable(void)
{
    const char *e = getenv("VINCI_PERF_DISABLE");
    return atomic_load(&forced_off) || (e && e[0] && strcmp(e, "0") != 0);
}

const char *vn_counter_name(int32_t counter)
{
    static const char *names[VN_CTR_COUNT] = {
        "cycles",          "instructions",  "cache_refs",    "cache_misses", "l1d_read_misses",
        "llc_read_misses", "branch_misses", "task_clock_ns", "page_faults",  "ctx_switches"};
    return counter >= 0 && counter < VN_CTR_COUNT ? names[counter] : "?";
}

static int open_event(int32_t k, int group, uint64_t read_format, bool user_only)
{
    if (vn_perf_unavailable()) return -1;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = events[k].type;
    a.config = events[k].config;
    a.read_format = read_format;
    a.exclude_kernel = user_only; /* user only is allowed at perf_event_paranoid 2 */
    a.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -1 : (int)fd;
}

/* The software group: task clock leads; all three or none (then getrusage).
 * They count kernel time too (a context switch or a page fault happens in the
 * kernel): where that is not allowed, getrusage gives the same counts. */
static void open_sw_group(int fd[3])
{
    fd[0] = open_event(VN_CTR_TASK_CLOCK_NS, -1, PERF_FORMAT_GROUP, false);
    fd[1] = fd[0] < 0 ? -1 : open_event(VN_CTR_PAGE_FAULTS, fd[0], PERF_FORMAT_GROUP, false);
    fd[2] = fd[1] < 0 ? -1 : open_event(VN_CTR_CTX_SWITCHES, fd[0], PERF_FORMAT_GROUP, false);
    if (fd[2] >= 0) return;
    for (int32_t k = 0; k < 3; k++) {
        if (fd[k] >= 0) close(fd[k]);
        fd[k] = -1;
    }
}

void vn_perf_open(vn_perf *p)
{
    uint64_t scaled = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    p->num_hw = 0;
    for (int32_t k = 0; k < VN_CTR_NUM_HW; k++) {
        p->hw[k] = open_event(k, -1, scaled, true);
        p->num_hw += p->hw[k] >= 0;
    }
    open_sw_group(p->sw);
}

void vn_perf_close(vn_perf *p)
{
    for (int32_t k = 0; k < VN_CTR_NUM_HW; k++) {
        if (p->hw[k] >= 0) close(p->hw[k]);
        p->hw[k] = -1;
    }
    for (int32_t k = 2; k >= 0; k--) {
        if (p->sw[k] >= 0) close(p->sw[k]);
        p->sw[k] = -1;
    }
    p->num_hw = 0;
}

static int64_t read_scaled(int fd)
{
    uint64_t v[3] = {0, 0, 0}; /* value, time enabled, time running */
    if (read(fd, v, sizeof v) != (ssize_t)sizeof v) return 0;
    if (v[2] == 0) return 0;
    if (v[2] < v[1]) return (int64_t)((double)v[0] * (double)v[1] / (double)v[2]);
    return (int64_t)v[0];
}

static void read_sw(const vn_perf *p, int64_t out[VN_CTR_COUNT])
{
    if (p->sw[0] >= 0) {
        uint64_t v[4] = {0, 0, 0, 0}; /* nr, then the values in group order */
        if (read(p->sw[0], v, sizeof v) == (ssize_t)sizeof v && v[0] == 3)
            for (int32_t k = 0; k < 3; k++) out[VN_CTR_TASK_CLOCK_NS + k] = (int64_t)v[1 + k];
        return;
    }
    struct rusage r;
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        out[VN_CTR_TASK_CLOCK_NS] = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    if (getrusage(RUSAGE_THREAD, &r) != 0) return;
    out[VN_CTR_PAGE_FAULTS] = (int64_t)(r.ru_minflt + r.ru_majflt);
    out[VN_CTR_CTX_SWITCHES] = (int64_t)(r.ru_nvcsw + r.ru_nivcsw);
}

void vn_perf_read(const vn_perf *p, int64_t out[VN_CTR_COUNT])
{
    memset(out, 0, VN_CTR_COUNT * sizeof *out);
    if (p->num_hw)
        for (int32_t k = 0; k < VN_CTR_NUM_HW; k++)
            if (p->hw[k] >= 0) out[k] = read_scaled(p->hw[k]);
    read_sw(p, out);
}

void vn_perf_supported(const vn_perf *p, bool out[VN_CTR_COUNT])
{
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) out[k] = k >= VN_CTR_NUM_HW || p->hw[k] >= 0;
}

void vn_perf_enable(const vn_perf *p, bool on)
{
    unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
    for (int32_t k = 0; k < VN_CTR_NUM_HW; k++)
        if (p->hw[k] >= 0) ioctl(p->hw[k], req, 0);
    if (p->sw[0] >= 0) ioctl(p->sw[0], req, PERF_IOC_FLAG_GROUP);
}
