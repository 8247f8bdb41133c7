/*
 * test_event.c — events: record, query, host synchronize with timeout,
 * cross-stream waits checked by data, elapsed time, life time.
 */
#include "rt_util.h"
#include "vt.h"

typedef struct produce_ctx {
    atomic_int *gate;
    int *buf;
    int n, value;
} produce_ctx;

/* Waits for the gate (if any), then fills the buffer: a slow producer. */
static vn_status produce_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    produce_ctx *p = ctx;
    if (p->gate)
        while (!atomic_load(p->gate)) sched_yield();
    for (int i = 0; i < p->n; i++) p->buf[i] = p->value + i;
    return VN_OK;
}

static void test_record_query_sync(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    vn_event *e = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    VT_OK(vn_event_create(d, &e));
    VT_OK(vn_event_query(e)); /* never recorded: complete */
    atomic_int gate = 0;
    VT_OK(rt_submit_gate(s, &gate));
    VT_OK(vn_event_record(e, s));
    VT_CHECK(vn_event_query(e) == VN_ERR_NOT_READY, "query before the work");
    VT_CHECK(vn_event_synchronize(e, 10) == VN_ERR_TIMEOUT, "no timeout");
    atomic_store(&gate, 1);
    VT_OK(vn_event_synchronize(e, 10000));
    VT_OK(vn_event_query(e));
    VT_OK(vn_stream_destroy(s));
    vn_event_destroy(e);
    vn_device_destroy(d);
}

/* B copies what A produced after waiting on A's event: the values prove the order. */
static void test_cross_stream_wait_by_data(void)
{
    vn_device *d = rt_device(3);
    vn_stream *a = NULL, *b = NULL;
    vn_event *e = NULL;
    VT_OK(vn_stream_create(d, 0, &a));
    VT_OK(vn_stream_create(d, 0, &b));
    VT_OK(vn_event_create(d, &e));
    enum { N = 4096 };
    static int src[N], dst[N];
    for (int round = 0; round < 20; round++) {
        atomic_int gate = 0;
        produce_ctx p = {&gate, src, N, round * 1000};
        vn_task_desc t = {"produce", 1, produce_block, &p, NULL};
        VT_OK(vn_stream_submit(a, &t));
        VT_OK(vn_event_record(e, a));
        VT_OK(vn_stream_wait_event(b, e));
        VT_OK(vn_memcpy_async(b, dst, src, sizeof src));
        rt_sleep_ms(round % 3); /* give B every chance to run early */
        atomic_store(&gate, 1);
        VT_OK(vn_stream_synchronize(b, 10000));
        int bad = 0;
        for (int i = 0; i < N; i++) bad += dst[i] != round * 1000 + i;
        VT_CHECK(bad == 0, "round %d: %d values copied before they were produced", round, bad);
        VT_OK(vn_stream_synchronize(a, 10000));
    }
    VT_OK(vn_stream_destroy(a));
    VT_OK(vn_stream_destroy(b));
    vn_event_destroy(e);
    vn_device_destroy(d);
}

static vn_status sleep_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    rt_sleep_ms(*(int *)ctx);
    return VN_OK;
}

static void test_elapsed(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = vn_device_default_stream(d);
    vn_event *e0 = NULL, *e1 = NULL;
    VT_OK(vn_event_create(d, &e0));
    VT_OK(vn_event_create(d, &e1));
    double ms = -1;
    VT_CHECK(vn_event_elapsed_ms(e0, e1, &ms) == VN_ERR_STATE, "never recorded");
    int sleep_ms = 30;
    vn_task_desc t = {"sleep", 1, sleep_block, &sleep_ms, NULL};
    VT_OK(vn_event_record(e0, s));
    VT_OK(vn_stream_submit(s, &t));
    VT_OK(vn_event_record(e1, s));
    VT_OK(vn_event_synchronize(e1, 10000));
    VT_OK(vn_event_elapsed_ms(e0, e1, &ms));
    VT_CHECK(ms >= 29.0 && ms < 5000.0, "elapsed %.3f ms for a 30 ms task", ms);
    vn_event_destroy(e0);
    vn_event_destroy(e1);
    vn_device_destroy(d);
}

/* Destroying an event with a pending record and wait is safe. */
static void test_destroy_pending(void)
{
    vn_device *d = rt_device(2);
    vn_stream *a = NULL, *b = NULL;
    vn_event *e = NULL;
    VT_OK(vn_stream_create(d, 0, &a));
    VT_OK(vn_stream_create(d, 0, &b));
    VT_OK(vn_event_create(d, &e));
    VT_OK(vn_stream_wait_event(b, e)); /* never recorded: no wait */
    VT_OK(vn_stream_synchronize(b, 1000));
    atomic_int gate = 0;
    VT_OK(rt_submit_gate(a, &gate));
    VT_OK(vn_event_record(e, a));
    VT_OK(vn_stream_wait_event(b, e));
    vn_event_destroy(e);
    VT_CHECK(vn_stream_query(b) == VN_ERR_NOT_READY, "b did not wait");
    atomic_store(&gate, 1);
    VT_OK(vn_stream_synchronize(b, 10000));
    VT_OK(vn_stream_destroy(a));
    VT_OK(vn_stream_destroy(b));
    vn_device_destroy(d);
}

int main(void)
{
    VT_RUN(test_record_query_sync);
    VT_RUN(test_cross_stream_wait_by_data);
    VT_RUN(test_elapsed);
    VT_RUN(test_destroy_pending);
    return vt_summary();
}
