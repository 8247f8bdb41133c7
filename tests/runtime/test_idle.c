/*
 * test_idle.c — an idle device uses no CPU: after work ends, the process's
 * CPU time (getrusage, not wall time) stops growing within milliseconds.
 */
#include "rt_util.h"
#include "vt.h"

static vn_status tiny_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    atomic_fetch_add((atomic_int *)ctx, 1);
    return VN_OK;
}

static void note_cb(void *user, vn_status status)
{
    (void)status;
    atomic_fetch_add((atomic_int *)user, 1);
}

static void test_idle_uses_no_cpu(void)
{
    vn_device *d = rt_device(4);
    vn_stream *s[4];
    atomic_int n = 0;
    for (int i = 0; i < 4; i++) VT_OK(vn_stream_create(d, i - 2, &s[i]));
    vn_task_desc t = {"tiny", 8, tiny_block, &n, NULL};
    for (int r = 0; r < 500; r++) {
        VT_OK(vn_stream_submit(s[r % 4], &t));
        if (r % 50 == 0) VT_OK(vn_stream_add_callback(s[r % 4], note_cb, &n, r % 100 == 0));
    }
    for (int i = 0; i < 4; i++) VT_OK(vn_stream_synchronize(s[i], 10000));
    rt_sleep_ms(10); /* the bounded spin (SPIN_NS, 1 ms) has ended */
    double cpu0 = rt_cpu_ms();
    rt_sleep_ms(200);
    double grew = rt_cpu_ms() - cpu0;
    VT_CHECK(grew < 5.0, "CPU time grew %.2f ms during 200 ms of idle", grew);
    printf("       idle: CPU time grew %.3f ms over 200 ms\n", grew);
    for (int i = 0; i < 4; i++) VT_OK(vn_stream_destroy(s[i]));
    vn_device_destroy(d);
}

int main(void)
{
    VT_RUN(test_idle_uses_no_cpu);
    return vt_summary();
}
