/*
 * profile.c — the profiling hook: device-wide buffers of task and block
 * records that the profiler drains. Tasks decide at dispatch, synchronous
 * launches at their start, whether they are profiled, so profiling off costs
 * one branch per block (scheduler.c's test of job->prof) and nothing else.
 *
 * A profiled job carries one record per block (vn_job_profile): each block
 * writes only its own, so the workers share no lock or cache line on the
 * way; the job's end publishes them under the device lock it takes anyway.
 * A task's own record is derived from its blocks' (vn_profile_task_record):
 * one collection path, and the two always agree.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/stream_internal.h"
#include "runtime/worker_hook.h"

#define PROFILE_CAP ((size_t)1 << 20) /* records per queue */

vn_status vn_device_set_profiling(vn_device *device, bool on)
{
    if (!device) return vn_error(VN_ERR_INVALID_ARG, "vn_device_set_profiling", "device is NULL");
    atomic_store(&device->profiling, on);
    return VN_OK;
}

bool vn_device_profiling(const vn_device *device)
{
    return device && atomic_load(&((vn_device *)device)->profiling);
}

/* Room for `n` more records of `size` bytes; false (nothing changed) past the cap. */
static bool queue_reserve(vn_prof_queue *q, size_t n, size_t size)
{
    if (q->len + n <= q->cap) return true;
    if (q->len + n > PROFILE_CAP) return false;
    size_t cap = q->cap ? q->cap : 1024;
    while (cap < q->len + n) cap *= 2;
    cap = cap < PROFILE_CAP ? cap : PROFILE_CAP;
    void *p = realloc(q->data, cap * size);
    if (!p) return false;
    q->data = p;
    q->cap = cap;
    return true;
}

/* Appends `n` records, all or none (counted as dropped); returns where they
 * went, or NULL. recs NULL drops them. */
static void *queue_push(vn_prof_queue *q, const void *recs, size_t n, size_t size)
{
    if (!recs || !queue_reserve(q, n, size)) {
        q->dropped += n;
        return NULL;
    }
    void *at = (char *)q->data + q->len * size;
    memcpy(at, recs, n * size);
    q->len += n;
    return at;
}

static size_t queue_drain(vn_device *d, vn_prof_queue *q, void *out, size_t max, size_t size,
                          uint64_t *dropped)
{
    if (!d || (!out && max)) return 0;
    pthread_mutex_lock(&d->lock);
    size_t n = q->len < max ? q->len : max;
    if (n) {
        memcpy(out, q->data, n * size);
        memmove(q->data, (char *)q->data + n * size, (q->len - n) * size);
        q->len -= n;
    }
    if (dropped) {
        *dropped = q->dropped;
        q->dropped = 0;
    }
    pthread_mutex_unlock(&d->lock);
    return n;
}

void vn_profile_append_locked(vn_device *d, const vn_profile_record *rec)
{
    queue_push(&d->prof_tasks, rec, 1, sizeof *rec);
}

size_t vn_device_profile_drain(vn_device *device, vn_profile_record *out, size_t max,
                               uint64_t *dropped)
{
    return device ? queue_drain(device, &device->prof_tasks, out, max, sizeof *out, dropped) : 0;
}

size_t vn_device_profile_drain_blocks(vn_device *device, vn_profile_block *out, size_t max,
                                      uint64_t *dropped)
{
    return device ? queue_drain(device, &device->prof_blocks, out, max, sizeof *out, dropped) : 0;
}

void vn_profile_shutdown(vn_device *d)
{
    free(d->prof_tasks.data);
    free(d->prof_blocks.data);
    memset(&d->prof_tasks, 0, sizeof d->prof_tasks);
    memset(&d->prof_blocks, 0, sizeof d->prof_blocks);
}

/* ---- block records ---- */

vn_job_profile *vn_profile_job_new(int32_t num_blocks, vn_block_stats_fn stats, void *ctx)
{
    vn_job_profile *jp = calloc(1, sizeof *jp + (size_t)num_blocks * sizeof jp->blocks[0]);
    if (!jp) return NULL;
    jp->stats = stats;
    jp->ctx = ctx;
    return jp;
}

void vn_profile_run_block(vn_job *job, int32_t worker, int32_t block)
{
    vn_job_profile *jp = job->prof;
    vn_profile_block *b = &jp->blocks[block];
    b->block = block;
    b->worker = worker;
    b->start_ns = vn_now_ns();
    job->run(job, worker, block);
    b->end_ns = vn_now_ns();
    if (jp->stats) jp->stats(jp->ctx, worker, block, b);
}

void vn_profile_publish_blocks_locked(vn_device *d, const vn_job_profile *jp, int32_t n,
                                      uint32_t stream_id, uint64_t task)
{
    vn_profile_block *out =
        queue_push(&d->prof_blocks, jp ? jp->blocks : NULL, (size_t)n, sizeof *out);
    for (int32_t i = 0; out && i < n; i++) {
        out[i].task = task;
        out[i].stream_id = stream_id;
    }
}

void vn_profile_task_record(const vn_job_profile *jp, int32_t n, vn_profile_record *rec)
{
    const vn_profile_block *first = &jp->blocks[0], *last = &jp->blocks[0];
    for (int32_t i = 0; i < n; i++) {
        const vn_profile_block *b = &jp->blocks[i];
        if (b->start_ns < first->start_ns) first = b;
        if (b->end_ns > last->end_ns) last = b;
        rec->bytes_in += b->bytes_in;
        rec->bytes_out += b->bytes_out;
        rec->vector_elem_ops += b->vector_elem_ops;
        rec->cube_ops += b->cube_ops;
        for (int a = 0; a < VN_ARENA_COUNT; a++)
            if (b->scratch_high_water[a] > rec->scratch_high_water[a])
                rec->scratch_high_water[a] = b->scratch_high_water[a];
    }
    rec->start_ns = first->start_ns;
    rec->end_ns = last->end_ns;
    rec->first_worker = first->worker;
    rec->last_worker = last->worker;
}

/* ---- the worker hook (worker_hook.h) ---- */
_Atomic(const vn_worker_hook *) vn_worker_hook_active = NULL;

void vn_worker_hook_set(const vn_worker_hook *hook)
{
    atomic_store_explicit(&vn_worker_hook_active, hook, memory_order_release);
}
