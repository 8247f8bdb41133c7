/*
 * test_priority.c — a short high-priority job submitted after a long
 * low-priority backlog completes before the backlog does. Asserted on
 * completion sequence numbers, not times.
 */
#include <sched.h>

#include "rt_util.h"
#include "vt.h"

static atomic_int sequence;

typedef struct job_ctx {
    atomic_int last_seq; /* completion number of this job's last block */
    int spin_us;
} job_ctx;

static vn_status busy_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    job_ctx *j = ctx;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < j->spin_us);
    int seq = atomic_fetch_add(&sequence, 1);
    int prev = atomic_load(&j->last_seq);
    while (seq > prev && !atomic_compare_exchange_weak(&j->last_seq, &prev, seq)) {
    }
    return VN_OK;
}

/* A gate holds every worker until the test opens it, so the backlog and the
 * urgent job are both queued before any of them can start: the outcome does
 * not depend on how fast the test thread submits (it is slow under TSan). */
static atomic_int gate_open, gate_entered;

static vn_status gate_block(void *ctx, int32_t worker, int32_t block)
{
    (void)ctx, (void)worker, (void)block;
    atomic_fetch_add(&gate_entered, 1);
    while (!atomic_load(&gate_open)) sched_yield();
    return VN_OK;
}

static void test_high_before_backlog(void)
{
    vn_device *d = rt_device(2);
    vn_stream *low[3], *high = NULL, *gate = NULL;
    static job_ctx low_job = {0, 100}, high_job = {0, 10};
    for (int i = 0; i < 3; i++) VT_OK(vn_stream_create(d, VN_PRIORITY_LOW, &low[i]));
    VT_OK(vn_stream_create(d, VN_PRIORITY_HIGH, &high));
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &gate));
    vn_task_desc gate_task = {"gate", 2, gate_block, NULL, NULL};
    VT_OK(vn_stream_submit(gate, &gate_task));
    while (atomic_load(&gate_entered) < 2) sched_yield(); /* both workers held */
    vn_task_desc backlog = {"backlog", 200, busy_block, &low_job, NULL};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) VT_OK(vn_stream_submit(low[i], &backlog));
    vn_task_desc urgent = {"urgent", 2, busy_block, &high_job, NULL};
    VT_OK(vn_stream_submit(high, &urgent));
    atomic_store(&gate_open, 1);
    VT_OK(vn_stream_synchronize(high, 30000));
    VT_OK(vn_stream_synchronize(gate, 30000));
    for (int i = 0; i < 3; i++) VT_OK(vn_stream_synchronize(low[i], 30000));
    int hi = atomic_load(&high_job.last_seq), lo = atomic_load(&low_job.last_seq);
    VT_CHECK(lo == 3 * 2 * 200 + 2 - 1, "backlog last seq %d", lo);
    /* When the gate opens both jobs are ready and the workers take the urgent
     * job's two blocks first: completions #0 and #1 on an idle machine. The
     * bound is looser because the OS may deschedule a worker that has already
     * claimed an urgent block (seen as #39-#51 with three test processes on 2
     * cores); without priorities the urgent job would finish last (#1201). */
    VT_CHECK(hi < 300, "the high-priority job finished as completion #%d of %d", hi, lo + 1);
    printf("       high-priority job done as completion #%d; backlog's last #%d\n", hi, lo);
    for (int i = 0; i < 3; i++) VT_OK(vn_stream_destroy(low[i]));
    VT_OK(vn_stream_destroy(high));
    VT_OK(vn_stream_destroy(gate));
    vn_device_destroy(d);
}

static vn_status count_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    atomic_fetch_add((atomic_int *)ctx, 1);
    return VN_OK;
}

static vn_status hold_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    while (!atomic_load((atomic_int *)ctx)) sched_yield();
    return VN_OK;
}

/* A push must not count on a spinner that an earlier or a higher-priority
 * job takes (scheduler.c, free_spinners_locked). Each round pushes a
 * low-priority task, then a high-priority gate that holds its worker until
 * the host has synchronized the low task. With one worker spinning and the
 * other asleep, the spinner takes the gate (the list's head): the low task
 * needs the sleeper woken, or its synchronize times out. The pause between
 * rounds is about one spin (1 ms), so that state comes up: the worker of the
 * low task starts spinning before the gate's worker does. */
static void test_no_lost_wake_behind_priority(void)
{
    vn_device *d = rt_device(2);
    vn_stream *lo = NULL, *hi = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_LOW, &lo));
    VT_OK(vn_stream_create(d, VN_PRIORITY_HIGH, &hi));
    atomic_int ran = 0, open = 0;
    vn_task_desc low = {"low", 1, count_block, &ran, NULL};
    vn_task_desc gate = {"gate", 1, hold_block, &open, NULL};
    int rounds = 300, done = 0;
    for (int r = 0; r < rounds; r++) {
        atomic_store(&open, 0);
        VT_OK(vn_stream_submit(lo, &low));
        VT_OK(vn_stream_submit(hi, &gate));
        vn_status st = vn_stream_synchronize(lo, 5000);
        atomic_store(&open, 1);
        VT_OK(vn_stream_synchronize(hi, 5000));
        if (st != VN_OK) { /* the gate is open now: the low task runs late */
            VT_OK(vn_stream_synchronize(lo, 5000));
            break;
        }
        done++;
        struct timespec ts = {0, 900000 + (r % 7) * 50000}; /* 0.90 .. 1.20 ms */
        nanosleep(&ts, NULL);
    }
    VT_CHECK(done == rounds, "round %d: the low task did not run while the gate held a worker",
             done);
    VT_CHECK(atomic_load(&ran) == done + (done < rounds), "low ran %d times in %d rounds",
             atomic_load(&ran), done);
    VT_OK(vn_stream_destroy(lo));
    VT_OK(vn_stream_destroy(hi));
    vn_device_destroy(d);
}

int main(void)
{
    VT_RUN(test_high_before_backlog);
    VT_RUN(test_no_lost_wake_behind_priority);
    return vt_summary();
}
