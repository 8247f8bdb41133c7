/*
 * pool.c — handing the blocks of one call to the device's workers.
 *
 * A call publishes a job (fn, ctx, block count) under the device lock and
 * wakes every worker; workers take block indices from an atomic counter until
 * it runs past the count, so fast workers take more blocks and no block runs
 * twice. Idle workers sleep on a condition variable: an idle device costs no
 * CPU. Callers are serialised by `call_lock` (see device_struct.h).
 */
#include "runtime/device_struct.h"

/* Set on worker threads so a block that calls back into its own device gets
 * an error instead of a deadlock on call_lock. */
static _Thread_local const vn_device *current_device;

static void run_job(vn_device *d, int32_t worker, vn_block_fn fn, void *ctx, int32_t num_blocks)
{
    for (;;) {
        int32_t block = atomic_fetch_add_explicit(&d->next_block, 1, memory_order_relaxed);
        if (block >= num_blocks) return;
        fn(ctx, worker, block);
    }
}

void *vn_worker_main(void *arg)
{
    vn_worker *w = arg;
    vn_device *d = w->device;
    current_device = d;
    uint64_t seen = 0;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        while (!d->stop && d->generation == seen) pthread_cond_wait(&d->work_cv, &d->lock);
        if (d->stop) break;
        seen = d->generation;
        vn_block_fn fn = d->fn;
        void *ctx = d->ctx;
        int32_t num_blocks = d->num_blocks;
        pthread_mutex_unlock(&d->lock);

        run_job(d, w->index, fn, ctx, num_blocks);

        pthread_mutex_lock(&d->lock);
        if (--d->active == 0) pthread_cond_signal(&d->done_cv);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

vn_status vn_device_run_blocks(vn_device *device, int32_t num_blocks, vn_block_fn fn, void *ctx)
{
    if (!device || !fn)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_run_blocks", "%s is NULL",
                        device ? "fn" : "device");
    if (num_blocks < 0)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_run_blocks", "num_blocks %d < 0",
                        (int)num_blocks);
    if (current_device == device)
        return vn_error(VN_ERR_STATE, "vn_device_run_blocks",
                        "called from a block running on the same device: it would deadlock");
    if (num_blocks == 0) return VN_OK;

    pthread_mutex_lock(&device->call_lock);
    pthread_mutex_lock(&device->lock);
    device->fn = fn;
    device->ctx = ctx;
    device->num_blocks = num_blocks;
    atomic_store_explicit(&device->next_block, 0, memory_order_relaxed);
    device->active = device->num_workers;
    device->generation++;
    pthread_cond_broadcast(&device->work_cv);
    while (device->active > 0) pthread_cond_wait(&device->done_cv, &device->lock);
    pthread_mutex_unlock(&device->lock);
    pthread_mutex_unlock(&device->call_lock);
    return VN_OK;
}
