/*
 * test_callback.c — host callbacks: stream order, blocking and non-blocking,
 * the status of the work before, chains, calls that would deadlock, batching.
 */
#include "rt_util.h"
#include "vt.h"

static int order_log[1000];
static int order_len;

static void log_cb(void *user, vn_status status)
{
    (void)status;
    order_log[order_len++] = (int)(intptr_t)user; /* only the callback thread writes */
}

static void test_order_and_blocking(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    order_len = 0;
    for (int i = 0; i < 300; i++)
        VT_OK(vn_stream_add_callback(s, log_cb, (void *)(intptr_t)i, i % 2 == 0));
    VT_OK(vn_stream_synchronize(s, 10000));
    int bad = order_len != 300;
    for (int i = 0; i < order_len; i++) bad += order_log[i] != i;
    VT_CHECK(bad == 0, "%d callbacks out of order (%d ran)", bad, order_len);
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

typedef struct block_test {
    atomic_int gate;
    atomic_int seen; /* what the task after the callback observed */
} block_test;

static void open_gate_cb(void *user, vn_status status)
{
    (void)status;
    rt_sleep_ms(20);
    atomic_store(&((block_test *)user)->gate, 1);
}

static vn_status observe_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    block_test *b = ctx;
    atomic_store(&b->seen, atomic_load(&b->gate) + 1);
    return VN_OK;
}

/* Blocking: the next task sees the callback's effect. Non-blocking: it runs
 * without waiting (the callback is still sleeping). */
static void test_blocking_vs_not(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = vn_device_default_stream(d);
    for (int blocking = 0; blocking < 2; blocking++) {
        block_test b = {0};
        VT_OK(vn_stream_add_callback(s, open_gate_cb, &b, blocking));
        vn_task_desc t = {"observe", 1, observe_block, &b, NULL};
        VT_OK(vn_stream_submit(s, &t));
        VT_OK(vn_stream_synchronize(s, 10000));
        VT_CHECK(atomic_load(&b.gate) == 1, "synchronize returned before the callback");
        VT_CHECK(atomic_load(&b.seen) == (blocking ? 2 : 1), "blocking %d: task saw gate %d",
                 blocking, atomic_load(&b.seen) - 1);
    }
    vn_device_destroy(d);
}

static vn_status fail_block(void *ctx, int32_t worker, int32_t block)
{
    (void)ctx, (void)worker, (void)block;
    return vn_error(VN_ERR_KERNEL, "fail_block", "planted failure");
}

static vn_status statuses[2];

static void status_cb(void *user, vn_status status)
{
    statuses[(intptr_t)user] = status;
}

static void test_status_of_work_before(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = vn_device_default_stream(d);
    VT_OK(vn_stream_add_callback(s, status_cb, (void *)0, true));
    vn_task_desc t = {"fail", 1, fail_block, NULL, NULL};
    VT_OK(vn_stream_submit(s, &t));
    VT_OK(vn_stream_add_callback(s, status_cb, (void *)1, false));
    VT_CHECK(vn_stream_synchronize(s, 10000) == VN_ERR_KERNEL, "error lost");
    VT_CHECK(statuses[0] == VN_OK, "first callback got %s", vn_status_name(statuses[0]));
    VT_CHECK(statuses[1] == VN_ERR_KERNEL, "second got %s", vn_status_name(statuses[1]));
    vn_device_destroy(d);
}

typedef struct chain {
    vn_stream *s;
    int left;       /* only the callback thread touches it */
    atomic_int ran; /* read by the test thread while the chain runs */
    int *out;
} chain;

static vn_status chain_write_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    chain *c = ctx;
    int ran = atomic_load(&c->ran);
    c->out[ran - 1] = ran;
    return VN_OK;
}

/* Each link submits a task and the next link: work and callbacks alternate. */
static void chain_cb(void *user, vn_status status)
{
    (void)status;
    chain *c = user;
    atomic_fetch_add(&c->ran, 1);
    if (c->left-- == 0) return;
    vn_task_desc t = {"chain_write", 1, chain_write_block, c, NULL};
    vn_stream_submit(c->s, &t);
    vn_stream_add_callback(c->s, chain_cb, c, true);
}

static void test_chains(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    static int out[100];
    chain c = {s, 50, 0, out};
    VT_OK(vn_stream_add_callback(s, chain_cb, &c, false));
    /* The chain extends the stream while we wait: wait until it has ended. */
    for (int i = 0; i < 100000 && atomic_load(&c.ran) < 51; i++)
        VT_OK(vn_stream_synchronize(s, 10000));
    VT_OK(vn_stream_synchronize(s, 10000));
    VT_CHECK(atomic_load(&c.ran) == 51, "chain ran %d links", atomic_load(&c.ran));
    int bad = 0;
    for (int i = 0; i < 50; i++) bad += out[i] != i + 1;
    VT_CHECK(bad == 0, "%d chain writes wrong", bad);
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

/* ---- calls that would deadlock ---- */

typedef struct reentry {
    vn_stream *own, *other;
    vn_event *event;
    atomic_int start; /* the test has submitted everything */
    vn_status sync_own, destroy_own, reset_own, sync_other, event_sync, sync_free;
    char msg_own[512], msg_other[512];
} reentry;

static void reenter_cb(void *user, vn_status status)
{
    (void)status;
    reentry *r = user;
    while (!atomic_load(&r->start)) sched_yield();
    r->sync_own = vn_stream_synchronize(r->own, -1);
    snprintf(r->msg_own, sizeof r->msg_own, "%s", vn_last_error());
    r->destroy_own = vn_stream_destroy(r->own);
    r->reset_own = vn_stream_reset(r->own);
    r->sync_other = vn_stream_synchronize(r->other, -1);
    snprintf(r->msg_other, sizeof r->msg_other, "%s", vn_last_error());
    r->event_sync = vn_event_synchronize(r->event, -1);
}

static void nothing_cb(void *user, vn_status status)
{
    (void)user, (void)status;
}

static void free_sync_cb(void *user, vn_status status)
{
    (void)status;
    reentry *r = user;
    /* `other` has only plain work now: waiting on it is fine. */
    r->sync_free = vn_stream_synchronize(r->other, -1);
}

static void test_deadlocks_refused(void)
{
    vn_device *d = rt_device(2);
    reentry r = {0};
    VT_OK(vn_stream_create(d, 0, &r.own));
    VT_OK(vn_stream_create(d, 0, &r.other));
    VT_OK(vn_event_create(d, &r.event));
    VT_OK(vn_stream_add_callback(r.own, reenter_cb, &r, true));
    /* `other` waits for a callback queued behind reenter_cb; the event is
     * recorded behind that callback too. */
    atomic_int gate = 0;
    VT_OK(rt_submit_gate(r.other, &gate));
    VT_OK(vn_stream_add_callback(r.other, nothing_cb, NULL, true));
    VT_OK(vn_event_record(r.event, r.other));
    atomic_store(&gate, 1);
    atomic_store(&r.start, 1);
    VT_OK(vn_stream_synchronize(r.own, 10000));
    VT_OK(vn_stream_synchronize(r.other, 10000));
    VT_CHECK(r.sync_own == VN_ERR_STATE, "sync own: %s", vn_status_name(r.sync_own));
    VT_CONTAINS(r.msg_own, "deadlock");
    VT_CHECK(r.destroy_own == VN_ERR_STATE, "destroy own: %s", vn_status_name(r.destroy_own));
    VT_CHECK(r.reset_own == VN_ERR_STATE, "reset own: %s", vn_status_name(r.reset_own));
    VT_CHECK(r.sync_other == VN_ERR_STATE, "sync other: %s", vn_status_name(r.sync_other));
    VT_CONTAINS(r.msg_other, "deadlock");
    VT_CHECK(r.event_sync == VN_ERR_STATE, "event sync: %s", vn_status_name(r.event_sync));

    /* A wait that can finish is allowed from a callback. */
    gate = 0;
    VT_OK(rt_submit_gate(r.other, &gate));
    VT_OK(vn_stream_add_callback(r.own, free_sync_cb, &r, false));
    rt_sleep_ms(5);
    atomic_store(&gate, 1);
    VT_OK(vn_stream_synchronize(r.own, 10000));
    VT_CHECK(r.sync_free == VN_OK, "sync of free stream: %s", vn_status_name(r.sync_free));
    vn_event_destroy(r.event);
    VT_OK(vn_stream_destroy(r.own));
    VT_OK(vn_stream_destroy(r.other));
    vn_device_destroy(d);
}

/* ---- batching ---- */

static atomic_int hold_entered;

static void hold_cb(void *user, vn_status status)
{
    (void)status;
    atomic_int *gate = user;
    atomic_store(&hold_entered, 1);
    while (!atomic_load(gate)) sched_yield();
}

static atomic_int batch_ran;

static void count_cb(void *user, vn_status status)
{
    (void)user, (void)status;
    atomic_fetch_add(&batch_ran, 1);
}

static void test_batching(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s[4];
    for (int i = 0; i < 4; i++) VT_OK(vn_stream_create(d, 0, &s[i]));
    atomic_int gate = 0;
    VT_OK(vn_stream_add_callback(s[0], hold_cb, &gate, false));
    /* hold_cb runs and holds the callback thread (a fixed sleep was not
     * enough on a loaded machine: the thread had not taken it yet) */
    while (!atomic_load(&hold_entered)) sched_yield();
    for (int i = 0; i < 200; i++)
        VT_OK(vn_stream_add_callback(s[i % 4], count_cb, NULL, i % 3 == 0));
    /* Non-blocking ones on s[1..3] are ready now; wait until all are queued. */
    rt_sleep_ms(20);
    vn_callback_stats before;
    VT_OK(vn_device_callback_stats(d, &before));
    atomic_store(&gate, 1);
    for (int i = 0; i < 4; i++) VT_OK(vn_stream_synchronize(s[i], 10000));
    vn_callback_stats after;
    VT_OK(vn_device_callback_stats(d, &after));
    VT_CHECK(atomic_load(&batch_ran) == 200, "ran %d", atomic_load(&batch_ran));
    VT_CHECK(after.delivered - before.delivered == 200, "delivered %llu",
             (unsigned long long)(after.delivered - before.delivered));
    /* Blocking callbacks release their stream one at a time, so a few rounds
     * are needed; without batching it would be one per callback. */
    VT_CHECK(after.wakeups - before.wakeups < 120, "%llu wake-ups for 200 callbacks",
             (unsigned long long)(after.wakeups - before.wakeups));
    for (int i = 0; i < 4; i++) VT_OK(vn_stream_destroy(s[i]));

    VT_OK(vn_device_set_callback_batching(d, false));
    VT_OK(vn_device_callback_stats(d, &before));
    for (int i = 0; i < 50; i++)
        VT_OK(vn_stream_add_callback(vn_device_default_stream(d), count_cb, NULL, false));
    VT_OK(vn_stream_synchronize(vn_device_default_stream(d), 10000));
    VT_OK(vn_device_callback_stats(d, &after));
    VT_CHECK(after.wakeups - before.wakeups == 50, "unbatched: %llu wake-ups for 50",
             (unsigned long long)(after.wakeups - before.wakeups));
    vn_device_destroy(d);
}

int main(void)
{
    VT_RUN(test_order_and_blocking);
    VT_RUN(test_blocking_vs_not);
    VT_RUN(test_status_of_work_before);
    VT_RUN(test_chains);
    VT_RUN(test_deadlocks_refused);
    VT_RUN(test_batching);
    return vt_summary();
}
