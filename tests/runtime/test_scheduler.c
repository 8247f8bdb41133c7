/*
 * test_scheduler.c — the worker pool: default worker count from the cgroup
 * quota, flush-to-zero on workers by default and its opt-out, concurrent
 * synchronous callers next to streams.
 */
#include <pthread.h>

#include "rt_util.h"
#include "runtime/device_struct.h"
#include "vt.h"

static void test_cgroup_parsing(void)
{
    VT_CHECK(vn_cgroup_v2_cpus("max 100000\n") == 0, "max");
    VT_CHECK(vn_cgroup_v2_cpus("200000 100000\n") == 2, "2 CPUs");
    VT_CHECK(vn_cgroup_v2_cpus("150000 100000") == 2, "1.5 CPUs rounds up");
    VT_CHECK(vn_cgroup_v2_cpus("50000 100000") == 1, "half a CPU");
    VT_CHECK(vn_cgroup_v2_cpus("garbage") == 0, "garbage");
    VT_CHECK(vn_cgroup_v1_cpus(-1, 100000) == 0, "v1 unlimited");
    VT_CHECK(vn_cgroup_v1_cpus(250000, 100000) == 3, "v1 2.5 CPUs");
    int32_t n = vn_usable_cpus();
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    VT_CHECK(n >= 1 && n <= CPU_COUNT(&set), "usable %d, affinity %d", (int)n, CPU_COUNT(&set));
    unsetenv("VINCI_NUM_THREADS");
    vn_device *d = NULL;
    VT_OK(vn_device_create(NULL, &d));
    VT_CHECK(vn_device_num_workers(d) == n, "default workers %d, usable %d",
             (int)vn_device_num_workers(d), (int)n);
    vn_device_destroy(d);
}

static void test_flush_to_zero(void)
{
    for (int keep = 0; keep < 2; keep++) {
        vn_device_options o = {0};
        o.num_threads = 1;
        o.keep_denormals = keep;
        vn_device *d = NULL;
        VT_OK(vn_device_create(&o, &d));
        denormal_ctx c = {1e-30f, 1e-9f, -1.0f};
        VT_OK(vn_device_run_blocks(d, 1, denormal_block, &c));
        if (keep)
            VT_CHECK(c.result > 0.0f, "keep_denormals: got %g", (double)c.result);
        else
            VT_CHECK(c.result == 0.0f, "flush to zero: got %g", (double)c.result);
        vn_device_destroy(d);
    }
}

typedef struct caller {
    vn_device *d;
    atomic_int sum;
    int failures;
} caller;

static void add_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker;
    atomic_fetch_add(&((caller *)ctx)->sum, block + 1);
}

static void *call_loop(void *p)
{
    caller *c = p;
    for (int i = 0; i < 200; i++) {
        atomic_store(&c->sum, 0);
        if (vn_device_run_blocks(c->d, 16, add_block, c) != VN_OK ||
            atomic_load(&c->sum) != 16 * 17 / 2)
            c->failures++;
    }
    return NULL;
}

static vn_status spin_block(void *ctx, int32_t worker, int32_t block)
{
    (void)ctx, (void)worker, (void)block;
    return VN_OK;
}

static void test_concurrent_sync_callers_and_streams(void)
{
    vn_device *d = rt_device(3);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_HIGH, &s));
    vn_task_desc t = {"spin", 4, spin_block, NULL, NULL};
    for (int i = 0; i < 500; i++) VT_OK(vn_stream_submit(s, &t));
    caller c[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        c[i].d = d;
        atomic_init(&c[i].sum, 0);
        c[i].failures = 0;
        pthread_create(&th[i], NULL, call_loop, &c[i]);
    }
    int failures = 0;
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        failures += c[i].failures;
    }
    VT_CHECK(failures == 0, "%d synchronous calls returned early", failures);
    VT_OK(vn_stream_synchronize(s, 10000));
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

int main(void)
{
    VT_RUN(test_cgroup_parsing);
    VT_RUN(test_flush_to_zero);
    VT_RUN(test_concurrent_sync_callers_and_streams);
    return vt_summary();
}
