/*
 * pool.c — vn_device_run_blocks: a synchronous job on the device's scheduler.
 *
 * The job lives on the caller's stack; the caller sleeps until the job's
 * finish (run by the worker that completed the last block) sets `done` under
 * the device lock. The finisher touches nothing of the job after unlocking,
 * so the caller may return (and its stack die) as soon as it sees `done`.
 */
#include "runtime/stream_internal.h"

typedef struct sync_job {
    vn_job job; /* first: the scheduler hands back this pointer */
    vn_device *device;
    vn_block_fn fn;
    void *ctx;
    bool done;
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
    s->done = true;
    pthread_cond_signal(&s->cv);
    vn_sched_job_done_locked(d);
    pthread_mutex_unlock(&d->lock);
}

static bool sync_done(void *arg)
{
    return ((const sync_job *)arg)->done;
}

vn_status vn_device_run_blocks(vn_device *device, int32_t num_blocks, vn_block_fn fn, void *ctx)
{
    if (!device || !fn)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_run_blocks", "%s is NULL",
                        device ? "fn" : "device");
    if (num_blocks < 0)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_run_blocks", "num_blocks %d < 0",
                        (int)num_blocks);
    if (vn_sched_on_worker(device))
        return vn_error(VN_ERR_STATE, "vn_device_run_blocks",
                        "called from a block running on the same device: it would deadlock");
    if (num_blocks == 0) return VN_OK;

    sync_job s = {.device = device, .fn = fn, .ctx = ctx};
    s.job.priority = VN_PRIORITY_NORMAL;
    s.job.num_blocks = num_blocks;
    s.job.run = sync_run;
    s.job.finish = sync_finish;
    pthread_cond_init(&s.cv, NULL);
    pthread_mutex_lock(&device->lock);
    vn_sched_push_locked(device, &s.job);
    vn_host_wait_spin_locked(device, sync_done, &s); /* short jobs: no sleep, no wake-up */
    while (!s.done) pthread_cond_wait(&s.cv, &device->lock);
    pthread_mutex_unlock(&device->lock);
    pthread_cond_destroy(&s.cv);
    return VN_OK;
}
