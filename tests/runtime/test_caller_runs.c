/*
 * test_caller_runs.c — synchronous launches run blocks on the calling thread
 * too (pool.c): with one worker every block runs on the caller and no thread
 * sleeps or wakes; with N workers at most N threads run one job; concurrent
 * callers each get their own guest slot (worker index and arenas); with the
 * guest slots exhausted the pool runs everything; the caller's FP mode and
 * the deadlock rules are kept; stream work stays on the pool.
 */
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "rt_util.h"
#include "runtime/device_struct.h"
#include "vt.h"

#define MAX_BLOCKS 512
#define MAX_IDS    64

typedef struct who_ctx {
    vn_device *device;
    pthread_t thread[MAX_BLOCKS];
    int32_t worker[MAX_BLOCKS];
    atomic_int runs[MAX_BLOCKS];
    atomic_int running, max_running;
    atomic_int on_id[MAX_IDS]; /* blocks running now per worker index */
    atomic_int id_overlap;
    int spin; /* busy iterations per block, so blocks overlap in time */
} who_ctx;

static void who_block(void *ctx, int32_t worker, int32_t block)
{
    who_ctx *c = ctx;
    int now = atomic_fetch_add(&c->running, 1) + 1;
    int seen = atomic_load(&c->max_running);
    while (now > seen && !atomic_compare_exchange_weak(&c->max_running, &seen, now)) {
    }
    if (worker >= 0 && worker < MAX_IDS && atomic_fetch_add(&c->on_id[worker], 1) != 0)
        atomic_store(&c->id_overlap, 1);
    c->thread[block] = pthread_self();
    c->worker[block] = worker;
    atomic_fetch_add(&c->runs[block], 1);
    for (volatile int i = 0; i < c->spin; i++) {
    }
    if (worker >= 0 && worker < MAX_IDS) atomic_fetch_sub(&c->on_id[worker], 1);
    atomic_fetch_sub(&c->running, 1);
}

static who_ctx *who_new(vn_device *d, int spin)
{
    who_ctx *c = calloc(1, sizeof *c);
    c->device = d;
    c->spin = spin;
    return c;
}

static int bad_runs(const who_ctx *c, int32_t blocks)
{
    int bad = 0;
    for (int32_t b = 0; b < blocks; b++) bad += atomic_load(&c->runs[b]) != 1;
    return bad;
}

static long voluntary_switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

/* One worker: every block on the caller, under a guest index; the caller
 * never sleeps (no voluntary context switch over many launches). */
static void test_one_worker_runs_on_caller(void)
{
    vn_device *d = rt_device(1);
    who_ctx *c = who_new(d, 0);
    VT_CHECK(vn_device_num_worker_ids(d) > vn_device_num_workers(d), "guest ids exist");
    VT_OK(vn_device_run_blocks(d, 64, who_block, c));
    int elsewhere = 0, not_guest = 0;
    for (int32_t b = 0; b < 64; b++) {
        elsewhere += !pthread_equal(c->thread[b], pthread_self());
        not_guest +=
            c->worker[b] < vn_device_num_workers(d) || c->worker[b] >= vn_device_num_worker_ids(d);
    }
    VT_CHECK(bad_runs(c, 64) == 0, "each block once");
    VT_CHECK(elsewhere == 0, "%d blocks ran on another thread", elsewhere);
    VT_CHECK(not_guest == 0, "%d blocks without a guest index", not_guest);
    rt_sleep_ms(5); /* the worker, if it were woken, would now be asleep again */
    long before = voluntary_switches();
    for (int i = 0; i < 2000; i++) {
        memset(c->runs, 0, sizeof c->runs);
        VT_OK(vn_device_run_blocks(d, 8, who_block, c));
    }
    long slept = voluntary_switches() - before;
    VT_CHECK(slept <= 20, "the caller slept %ld times in 2000 launches", slept);
    free(c);
    vn_device_destroy(d);
}

/* N workers: every block once, at most N threads at once, the caller among them. */
static void test_concurrency_capped(void)
{
    for (int32_t n = 2; n <= 4; n++) {
        vn_device *d = rt_device(n);
        for (int rep = 0; rep < 10; rep++) {
            who_ctx *c = who_new(d, 2000);
            VT_OK(vn_device_run_blocks(d, MAX_BLOCKS, who_block, c));
            VT_CHECK(bad_runs(c, MAX_BLOCKS) == 0, "%d workers: a block did not run once", n);
            VT_CHECK(atomic_load(&c->max_running) <= n, "%d workers: %d blocks at once", n,
                     atomic_load(&c->max_running));
            VT_CHECK(!atomic_load(&c->id_overlap), "two blocks at once on one worker index");
            pthread_t distinct[MAX_BLOCKS];
            int nd = 0, on_caller = 0;
            for (int32_t b = 0; b < MAX_BLOCKS; b++) {
                on_caller += pthread_equal(c->thread[b], pthread_self());
                int k = 0;
                while (k < nd && !pthread_equal(distinct[k], c->thread[b])) k++;
                if (k == nd) distinct[nd++] = c->thread[b];
            }
            /* At most n at once (above); over the job's life a block may pass
             * from one pool worker to another, so only the pool and the caller. */
            VT_CHECK(nd <= n + 1, "%d workers: %d threads ran the job", n, nd);
            VT_CHECK(on_caller > 0, "%d workers: the caller ran no block", n);
            free(c);
        }
        vn_device_destroy(d);
    }
}

/* Concurrent callers: each block writes its own slot, and uses its worker's
 * UB arena as private scratch (a shared arena would corrupt the pattern). */
typedef struct caller_ctx {
    vn_device *device;
    int id;
    int32_t out[MAX_BLOCKS];
    int failures;
} caller_ctx;

static void scratch_block(void *ctx, int32_t worker, int32_t block)
{
    caller_ctx *c = ctx;
    uint32_t *ub = vn_device_arena(c->device, worker, VN_ARENA_UB);
    if (!ub) {
        c->out[block] = -1;
        return;
    }
    uint32_t tag = (uint32_t)(c->id * 100000 + block);
    for (int i = 0; i < 1024; i++) ub[i] = tag + (uint32_t)i;
    sched_yield(); /* let another thread run in between */
    int ok = 1;
    for (int i = 0; i < 1024; i++) ok &= ub[i] == tag + (uint32_t)i;
    c->out[block] = ok ? (int32_t)tag : -2;
}

static void *caller_main(void *arg)
{
    caller_ctx *c = arg;
    for (int rep = 0; rep < 30; rep++) {
        memset(c->out, 0, sizeof c->out);
        int32_t blocks = 1 + (rep * 37 + c->id * 11) % 64;
        if (vn_device_run_blocks(c->device, blocks, scratch_block, c) != VN_OK) c->failures++;
        for (int32_t b = 0; b < blocks; b++) c->failures += c->out[b] != c->id * 100000 + b;
    }
    return NULL;
}

static void run_callers(int32_t workers, int threads)
{
    vn_device *d = rt_device(workers);
    pthread_t t[16];
    caller_ctx *c = calloc((size_t)threads, sizeof *c);
    for (int i = 0; i < threads; i++) {
        c[i].device = d;
        c[i].id = i + 1;
        pthread_create(&t[i], NULL, caller_main, &c[i]);
    }
    int failures = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        failures += c[i].failures;
    }
    VT_CHECK(failures == 0, "%d workers, %d callers: %d wrong blocks", (int)workers, threads,
             failures);
    VT_CHECK(atomic_load(&d->guests_busy) == 0, "guest slots released");
    free(c);
    vn_device_destroy(d);
}

static void test_concurrent_callers(void)
{
    run_callers(1, 4);
    run_callers(2, 4);
    run_callers(3, VN_GUEST_SLOTS);
    run_callers(2, 3 * VN_GUEST_SLOTS); /* more callers than guest slots */
}

/* Every guest slot held: the caller waits, the pool runs every block. */
static void test_guests_exhausted(void)
{
    vn_device *d = rt_device(2);
    atomic_store(&d->guests_busy, (1u << VN_GUEST_SLOTS) - 1);
    who_ctx *c = who_new(d, 1000);
    VT_OK(vn_device_run_blocks(d, 100, who_block, c));
    int on_caller = 0, not_pool = 0;
    for (int32_t b = 0; b < 100; b++) {
        on_caller += pthread_equal(c->thread[b], pthread_self());
        not_pool += c->worker[b] >= vn_device_num_workers(d);
    }
    VT_CHECK(bad_runs(c, 100) == 0, "each block once");
    VT_CHECK(on_caller == 0 && not_pool == 0, "%d blocks on the caller, %d off the pool", on_caller,
             not_pool);
    atomic_store(&d->guests_busy, 0);
    free(c);
    vn_device_destroy(d);

    setenv("VINCI_CALLER_RUNS", "0", 1); /* off: the same, on any device */
    d = rt_device(1);
    unsetenv("VINCI_CALLER_RUNS");
    c = who_new(d, 0);
    VT_OK(vn_device_run_blocks(d, 10, who_block, c));
    on_caller = not_pool = 0;
    for (int32_t b = 0; b < 10; b++) {
        on_caller += pthread_equal(c->thread[b], pthread_self());
        not_pool += c->worker[b] >= vn_device_num_workers(d);
    }
    VT_CHECK(bad_runs(c, 10) == 0 && on_caller == 0 && not_pool == 0,
             "VINCI_CALLER_RUNS=0: %d on the caller, %d off the pool", on_caller, not_pool);
    free(c);
    vn_device_destroy(d);
}

/* The caller's own MXCSR is untouched; its blocks still flush denormals. */
static void test_caller_fp_mode(void)
{
#if defined(__x86_64__) || defined(__i386__)
    for (int32_t n = 1; n <= 2; n++) {
        vn_device *d = rt_device(n);
        unsigned before = _mm_getcsr();
        denormal_ctx c = {1e-30f, 1e-9f, -1.0f};
        VT_OK(vn_device_run_blocks(d, 1, denormal_block, &c));
        VT_CHECK(c.result == 0.0f, "%d workers: the caller's block kept a denormal: %g", n,
                 (double)c.result);
        VT_CHECK(_mm_getcsr() == before, "MXCSR %#x after, %#x before", _mm_getcsr(), before);
        volatile float tiny = 1e-30f, scale = 1e-9f;
        VT_CHECK(tiny * scale > 0.0f, "the caller itself still keeps denormals");
        vn_device_destroy(d);
    }
#endif
}

/* Waiting on the device from a block the caller runs is the same error as on a worker. */
static vn_device *wait_device;
static vn_stream *wait_stream;
static vn_status nested_run, nested_sync;

static void noop_block(void *ctx, int32_t worker, int32_t block)
{
    (void)ctx, (void)worker, (void)block;
}

static void waiting_block(void *ctx, int32_t worker, int32_t block)
{
    (void)ctx, (void)worker, (void)block;
    nested_run = vn_device_run_blocks(wait_device, 1, noop_block, NULL);
    nested_sync = vn_stream_synchronize(wait_stream, -1);
}

static void test_deadlock_rules(void)
{
    wait_device = rt_device(1);
    VT_OK(vn_stream_create(wait_device, VN_PRIORITY_NORMAL, &wait_stream));
    atomic_int gate = 0;
    VT_OK(rt_submit_gate(wait_stream, &gate)); /* the stream is not done */
    VT_OK(vn_device_run_blocks(wait_device, 1, waiting_block, NULL));
    VT_CHECK(nested_run == VN_ERR_STATE, "nested run gave %s", vn_status_name(nested_run));
    VT_CHECK(nested_sync == VN_ERR_STATE, "synchronize gave %s", vn_status_name(nested_sync));
    atomic_store(&gate, 1);
    VT_OK(vn_stream_synchronize(wait_stream, -1));
    VT_OK(vn_device_run_blocks(wait_device, 3, noop_block, NULL)); /* the caller is a host again */
    vn_stream_destroy(wait_stream);
    vn_device_destroy(wait_device);
}

/* Stream work runs on pool workers only. */
typedef struct stream_ctx {
    pthread_t host;
    atomic_int off_pool;
    int32_t workers;
} stream_ctx;

static vn_status stream_block(void *ctx, int32_t worker, int32_t block)
{
    (void)block;
    stream_ctx *c = ctx;
    if (worker >= c->workers || pthread_equal(pthread_self(), c->host))
        atomic_fetch_add(&c->off_pool, 1);
    return VN_OK;
}

static void test_streams_stay_on_pool(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &s));
    stream_ctx c = {.host = pthread_self(), .workers = vn_device_num_workers(d)};
    atomic_init(&c.off_pool, 0);
    vn_task_desc t = {"pool only", 32, stream_block, &c, NULL};
    who_ctx *w = who_new(d, 100);
    for (int i = 0; i < 50; i++) {
        VT_OK(vn_stream_submit(s, &t));
        memset(w->runs, 0, sizeof w->runs);
        VT_OK(vn_device_run_blocks(d, 16, who_block, w)); /* next to the stream's work */
        VT_CHECK(bad_runs(w, 16) == 0, "each block once");
    }
    VT_OK(vn_stream_synchronize(s, -1));
    VT_CHECK(atomic_load(&c.off_pool) == 0, "%d stream blocks off the pool",
             atomic_load(&c.off_pool));
    free(w);
    vn_stream_destroy(s);
    vn_device_destroy(d);
}

int main(void)
{
    unsetenv("VINCI_CALLER_RUNS");
    VT_RUN(test_one_worker_runs_on_caller);
    VT_RUN(test_concurrency_capped);
    VT_RUN(test_concurrent_callers);
    VT_RUN(test_guests_exhausted);
    VT_RUN(test_caller_fp_mode);
    VT_RUN(test_deadlock_rules);
    VT_RUN(test_streams_stay_on_pool);
    return vt_summary();
}
