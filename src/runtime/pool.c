/*
 * pool.c — vn_device_run_blocks: a synchronous job on the device's scheduler.
 *
 * Caller-runs (as ONNX Runtime's pool: N - 1 pool threads plus the caller).
 * The calling thread takes a guest slot of the device (its own worker index
 * and arenas, scheduler.c) and runs blocks of its job itself instead of
 * sleeping; the job is capped at num_workers - 1 pool workers, so at most
 * num_workers threads run it. With one worker, or one block, the job never
 * enters the ready list: the caller runs it alone, and no thread is woken.
 * When the caller finds no block left to claim it spins briefly for the pool
 * workers still in its blocks, then sleeps. With every guest slot taken (more
 * concurrent callers than VN_GUEST_SLOTS), or with VINCI_CALLER_RUNS=0, the
 * caller only waits, and the pool runs every block, as before.
 *
 * The job lives on the caller's stack; the caller waits until the job's
 * finish (run by the thread that completed the last block) sets `done` under
 * the device lock. The finisher touches nothing of the job after unlocking,
 * so the caller may return (and its stack die) as soon as it sees `done`
 * under the lock.
 *
 * vn_device_run_hosted (the graph executor's nodes that run at once) is the
 * same job with `hosts` set: its blocks are whole nodes, taken by the caller
 * and by pool workers, and each node's launches run with the thread that
 * runs the node as their caller (a pool worker as itself, the caller in its
 * guest slot). Once no node is left to take, the caller helps with the
 * others' kernels, as a pool worker would, until every node is done.
 */
#include <stdint.h>
#include <stdlib.h>

#include "runtime/stream_internal.h"

/* Bounded spin of a caller that ran out of blocks, waiting for the pool
 * workers still running its others (50 us). */
#define TAIL_SPIN_NS 50000

typedef struct sync_job {
    vn_job job; /* first: the scheduler hands back this pointer */
    vn_device *device;
    vn_block_fn fn;
    void *ctx;
    atomic_bool done; /* written under the lock; read without it by the tail spin */
    pthread_cond_t cv;
} sync_job;

static void sync_run(vn_job *job, int32_t worker, int32_t block)
{
    sync_job *s = (sync_job *)job;
    s->fn(s->ctx, worker, block);
}

static void sync_finish(vn_job *job, int32_t worker)
{
    (void)worker;
    sync_job *s = (sync_job *)job;
    vn_device *d = s->device;
    pthread_mutex_lock(&d->lock);
    atomic_store_explicit(&s->done, true, memory_order_release);
    pthread_cond_signal(&s->cv);
    vn_sched_job_done_locked(d);
    pthread_mutex_unlock(&d->lock);
}

static bool sync_done(const void *arg)
{
    return atomic_load_explicit(&((const sync_job *)arg)->done, memory_order_acquire);
}

/* A free guest slot of the device, now held by the caller, or NULL. */
static vn_worker *claim_guest(vn_device *d)
{
    unsigned busy = atomic_load_explicit(&d->guests_busy, memory_order_relaxed);
    for (;;) {
        int g = 0;
        while (g < VN_GUEST_SLOTS && (busy >> g) & 1u) g++;
        if (g == VN_GUEST_SLOTS) return NULL;
        if (atomic_compare_exchange_weak_explicit(&d->guests_busy, &busy, busy | 1u << g,
                                                  memory_order_acquire, memory_order_relaxed))
            return &d->workers[d->num_workers + g];
    }
}

static void release_guest(vn_device *d, const vn_worker *guest)
{
    unsigned bit = 1u << (guest->index - d->num_workers);
    atomic_fetch_and_explicit(&d->guests_busy, ~bit, memory_order_release);
}

/* The caller runs blocks too; pool workers share the job when there are any
 * to share it with. */
static void run_with_caller(vn_device *d, sync_job *s, vn_worker *guest)
{
    int32_t helpers = d->num_workers - 1;
    if (helpers == 0 || s->job.num_blocks == 1) {
        vn_sched_caller_run(d, &s->job, guest, false);
        return;
    }
    s->job.worker_cap = helpers;
    pthread_mutex_lock(&d->lock);
    vn_sched_push_locked(d, &s->job);
    vn_sched_caller_run(d, &s->job, guest, true);
    if (!sync_done(s)) {
        pthread_mutex_unlock(&d->lock);
        vn_spin_until(sync_done, s, vn_now_ns() + TAIL_SPIN_NS); /* the others' last blocks */
        pthread_mutex_lock(&d->lock);
    }
    while (!sync_done(s)) pthread_cond_wait(&s->cv, &d->lock);
    pthread_mutex_unlock(&d->lock);
}

/* No guest slot: the pool runs every block while the caller waits. */
static void run_on_pool(vn_device *d, sync_job *s)
{
    pthread_mutex_lock(&d->lock);
    vn_sched_push_locked(d, &s->job);
    vn_host_wait_spin_locked(d, sync_done, s); /* short jobs: no sleep, no wake-up */
    while (!sync_done(s)) pthread_cond_wait(&s->cv, &d->lock);
    pthread_mutex_unlock(&d->lock);
}

/* While profiling is on: the job's block records (NULL when off). */
static vn_job_profile *profile_begin(vn_device *d, int32_t num_blocks, vn_block_stats_fn stats,
                                     void *ctx)
{
    if (!atomic_load_explicit(&d->profiling, memory_order_relaxed)) return NULL;
    vn_job_profile *jp = vn_profile_job_new(num_blocks, stats, ctx);
    if (!jp) { /* no memory: the blocks are counted as dropped */
        pthread_mutex_lock(&d->lock);
        vn_profile_publish_blocks_locked(d, NULL, num_blocks, VN_PROFILE_SYNC, 0);
        pthread_mutex_unlock(&d->lock);
    }
    return jp;
}

/* The finished job's block records, numbered among the device's profiled launches. */
static void profile_end(vn_device *d, vn_job_profile *jp, int32_t num_blocks)
{
    pthread_mutex_lock(&d->lock);
    vn_profile_publish_blocks_locked(d, jp, num_blocks, VN_PROFILE_SYNC, ++d->prof_sync_jobs);
    pthread_mutex_unlock(&d->lock);
    free(jp);
}

vn_status vn_device_run_blocks(vn_device *device, int32_t num_blocks, vn_block_fn fn, void *ctx)
{
    return vn_device_run_blocks_ex(device, num_blocks, fn, ctx, NULL);
}

/* The worker the caller runs blocks as: its own inside a `hosts` block, else
 * a guest slot it claims (*claimed), or NULL to let the pool run them. */
static vn_worker *caller_worker(vn_device *d, bool *claimed)
{
    vn_worker *host = vn_sched_host_worker(d);
    vn_worker *guest = !host && d->caller_runs ? claim_guest(d) : NULL;
    *claimed = guest != NULL;
    return host ? host : guest;
}

static void sync_init(sync_job *s, vn_device *d, int32_t num_blocks, vn_block_fn fn, void *ctx)
{
    *s = (sync_job){.device = d, .fn = fn, .ctx = ctx};
    s->job.priority = VN_PRIORITY_NORMAL;
    s->job.num_blocks = num_blocks;
    s->job.run = sync_run;
    s->job.finish = sync_finish;
    atomic_init(&s->done, false);
    pthread_cond_init(&s->cv, NULL);
}

vn_status vn_device_run_blocks_ex(vn_device *device, int32_t num_blocks, vn_block_fn fn, void *ctx,
                                  vn_block_stats_fn stats)
{
    if (!device || !fn)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_run_blocks", "%s is NULL",
                        device ? "fn" : "device");
    if (num_blocks < 0)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_run_blocks", "num_blocks %d < 0",
                        (int)num_blocks);
    if (vn_sched_on_worker(device) && !vn_sched_host_worker(device))
        return vn_error(VN_ERR_STATE, "vn_device_run_blocks",
                        "called from a block running on the same device: it would deadlock");
    if (num_blocks == 0) return VN_OK;

    sync_job s;
    sync_init(&s, device, num_blocks, fn, ctx);
    s.job.prof = profile_begin(device, num_blocks, stats, ctx);
    bool claimed;
    vn_worker *guest = caller_worker(device, &claimed);
    if (guest) {
        run_with_caller(device, &s, guest);
        if (claimed) release_guest(device, guest);
    } else {
        run_on_pool(device, &s);
    }
    pthread_cond_destroy(&s.cv);
    if (s.job.prof) profile_end(device, s.job.prof, num_blocks);
    return VN_OK;
}

vn_status vn_device_run_hosted(vn_device *device, int32_t num_blocks, vn_block_fn fn, void *ctx)
{
    if (!device || !fn || num_blocks < 0)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_run_hosted", "device %p, fn %p, %d blocks",
                        (void *)device, (void *)(uintptr_t)fn, (int)num_blocks);
    bool share = !vn_sched_on_worker(device) && device->caller_runs && device->num_workers > 1;
    vn_worker *guest = share ? claim_guest(device) : NULL;
    if (!guest) { /* one after another on this thread, each launching as usual */
        for (int32_t b = 0; b < num_blocks; b++) fn(ctx, 0, b);
        return VN_OK;
    }
    if (num_blocks > 0) {
        sync_job s;
        sync_init(&s, device, num_blocks, fn, ctx);
        s.job.hosts = true;
        pthread_mutex_lock(&device->lock);
        vn_sched_push_locked(device, &s.job);
        vn_sched_host_run_locked(device, &s.job, guest, sync_done, &s, &s.cv);
        pthread_mutex_unlock(&device->lock);
        pthread_cond_destroy(&s.cv);
    }
    release_guest(device, guest);
    return VN_OK;
}
