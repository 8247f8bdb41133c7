/*
 * cpus.c — how many workers a device starts by default: the CPUs this process
 * may actually use, not the machine's core count. A container limited to two
 * CPUs on a 64-core host must not start 64 workers that fight over two CPUs.
 *
 * The limit is min(CPU affinity, cgroup CPU quota rounded up). The quota comes
 * from cgroup v2 (cpu.max of the process's cgroup, then of the mount root) or
 * cgroup v1 (cpu.cfs_quota_us / cpu.cfs_period_us).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/device_struct.h"

int32_t vn_cgroup_v1_cpus(long long quota_us, long long period_us)
{
    if (quota_us <= 0 || period_us <= 0) return 0;
    long long n = (quota_us + period_us - 1) / period_us;
    return n > 0 && n < INT32_MAX ? (int32_t)n : 0;
}

int32_t vn_cgroup_v2_cpus(const char *text)
{
    if (!text || strncmp(text, "max", 3) == 0) return 0;
    long long quota = 0, period = 0;
    if (sscanf(text, "%lld %lld", &quota, &period) != 2) return 0;
    return vn_cgroup_v1_cpus(quota, period);
}

static bool read_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    return ok;
}

static long long read_ll(const char *path)
{
    char buf[64];
    return read_line(path, buf, sizeof buf) ? strtoll(buf, NULL, 10) : 0;
}

/* The process's cgroup v2 path from /proc/self/cgroup ("0::/path"), or "". */
static void own_cgroup_v2(char *path, size_t cap)
{
    path[0] = '\0';
    char line[512];
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) != 0) continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(path, cap, "%.*s", (int)(cap - 1), line + 3);
        break;
    }
    fclose(f);
}

static int32_t cgroup_cpus(void)
{
    char rel[400], path[512], buf[128];
    own_cgroup_v2(rel, sizeof rel);
    if (rel[0] && strcmp(rel, "/") != 0) {
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", rel);
        if (read_line(path, buf, sizeof buf)) return vn_cgroup_v2_cpus(buf);
    }
    if (read_line("/sys/fs/cgroup/cpu.max", buf, sizeof buf)) return vn_cgroup_v2_cpus(buf);
    static const char *const v1[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"};
    for (size_t i = 0; i < sizeof v1 / sizeof v1[0]; i++) {
        char q[128], p[128];
        snprintf(q, sizeof q, "%s/cpu.cfs_quota_us", v1[i]);
        snprintf(p, sizeof p, "%s/cpu.cfs_period_us", v1[i]);
        int32_t n = vn_cgroup_v1_cpus(read_ll(q), read_ll(p));
        if (n > 0) return n;
    }
    return 0;
}

int32_t vn_usable_cpus(void)
{
    int32_t n = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
    if (n <= 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online > 0 ? (int32_t)online : 1;
    }
    int32_t quota = cgroup_cpus();
    return quota > 0 && quota < n ? quota : n;
}
