/*
 * task.c — work tasks: submission (generic, memcpy, memset), their job on the
 * scheduler, failure capture and completion.
 *
 * A work task is always run as a job, even when it is skipped (the stream has
 * an error) or fails by injection: it then has one empty block. That way its
 * `release` runs on a worker, outside the device lock, like any other task's,
 * and there is one completion path.
 *
 * Failure: a block fails by returning non-VN_OK; the lowest failing block's
 * message is kept, and blocks above it are skipped, so the reported failure
 * does not depend on thread timing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/stream_internal.h"

/* Blocks spread a copy over the workers; below this size one block is cheaper. */
#define MIN_COPY_CHUNK ((size_t)64 * 1024)

static _Thread_local const char *block_message;

void vn_task_set_block_message(const char *message)
{
    block_message = message;
}

vn_task *vn_task_new(vn_stream *s, task_type type)
{
    vn_task *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->stream = s;
    t->type = type;
    atomic_init(&t->fail_block, INT32_MAX);
    return t;
}

static void record_failure(vn_task *t, int32_t block, vn_status status)
{
    const char *msg = block_message ? block_message : vn_last_error();
    block_message = NULL;
    vn_device *d = t->stream->device;
    pthread_mutex_lock(&d->lock);
    if (block < atomic_load_explicit(&t->fail_block, memory_order_relaxed)) {
        atomic_store_explicit(&t->fail_block, block, memory_order_relaxed);
        t->fail_status = status;
        snprintf(t->fail_message, sizeof t->fail_message, "%s", msg);
    }
    pthread_mutex_unlock(&d->lock);
}

static void work_run(vn_job *job, int32_t worker, int32_t block)
{
    vn_task *t = (vn_task *)job;
    if (t->skip || t->injected) return;
    if (block > atomic_load_explicit(&t->fail_block, memory_order_relaxed)) return;
    vn_status st = t->block(t->ctx, worker, block);
    if (st != VN_OK) record_failure(t, block, st);
}

/* The task's record, from its blocks' (a skipped or injected task's one
 * empty block gives its times and no counters). */
static void profile_begin(const vn_task *t, vn_profile_record *rec)
{
    memset(rec, 0, sizeof *rec);
    vn_profile_task_record(t->job.prof, t->job.num_blocks, rec);
    rec->task = t->seq;
    rec->stream_id = t->stream->id;
    rec->priority = t->stream->priority;
    rec->kind = t->kind;
    rec->skipped = t->skip;
    rec->num_blocks = t->skip || t->injected ? 0 : t->job.num_blocks;
    snprintf(rec->name, sizeof rec->name, "%s", t->name);
}

/* Under the lock: the task's outcome becomes the stream's state. */
static void conclude_locked(vn_task *t, vn_profile_record *rec)
{
    vn_stream *s = t->stream;
    int32_t fail_block = atomic_load_explicit(&t->fail_block, memory_order_relaxed);
    if (t->injected)
        vn_stream_fail_locked(s, t->seq, -1, t->name, s->fault_status, "injected fault");
    else if (fail_block != INT32_MAX)
        vn_stream_fail_locked(s, t->seq, fail_block, t->name, t->fail_status, t->fail_message);
    if (rec) {
        rec->status = t->skip || t->injected || fail_block != INT32_MAX ? s->err.status : VN_OK;
        vn_profile_append_locked(s->device, rec);
        if (rec->num_blocks)
            vn_profile_publish_blocks_locked(s->device, t->job.prof, rec->num_blocks, s->id,
                                             t->seq);
    }
}

static void work_finish(vn_job *job, int32_t worker)
{
    (void)worker;
    vn_task *t = (vn_task *)job;
    vn_stream *s = t->stream;
    vn_device *d = s->device;
    vn_profile_record rec;
    if (t->job.prof) profile_begin(t, &rec);
    if (t->release) t->release(t->ctx);
    pthread_mutex_lock(&d->lock);
    conclude_locked(t, t->job.prof ? &rec : NULL);
    vn_stream_step_done_locked(s, t);
    vn_sched_job_done_locked(d);
    pthread_mutex_unlock(&d->lock);
    free(t->job.prof);
    free(t);
}

static void note_skip_locked(vn_stream *s)
{
    vn_stream_error_info *e = &s->err;
    e->skipped++;
    if (e->task)
        snprintf(e->last_skipped, sizeof e->last_skipped,
                 "skipped: stream failed at task %llu: %.200s", (unsigned long long)e->task,
                 e->message);
    else
        snprintf(e->last_skipped, sizeof e->last_skipped, "skipped: %.240s", e->message);
}

/* Profiled: a record per block. With no memory for them the task goes
 * unprofiled, counted as one dropped task record. */
static void profile_task_locked(vn_task *t)
{
    bool ran = !t->skip && !t->injected;
    t->job.prof = vn_profile_job_new(t->job.num_blocks, ran ? t->stats : NULL, t->ctx);
    if (!t->job.prof) vn_profile_append_locked(t->stream->device, NULL);
}

void vn_task_dispatch_work_locked(vn_task *t)
{
    vn_stream *s = t->stream;
    vn_device *d = s->device;
    t->skip = s->err.status != VN_OK;
    t->injected = !t->skip && s->fault_task == t->seq;
    if (t->skip) note_skip_locked(s);
    if (t->skip || t->injected) t->job.num_blocks = 1;
    if (atomic_load_explicit(&d->profiling, memory_order_relaxed)) profile_task_locked(t);
    t->job.priority = s->priority;
    vn_sched_push_locked(d, &t->job);
}

/* ---- submission -------------------------------------------------------------- */

vn_status vn_stream_submit_ex(vn_stream *stream, const vn_task_desc *desc, vn_task_kind kind,
                              vn_block_stats_fn stats)
{
    if (!desc || !desc->block)
        return vn_error(VN_ERR_INVALID_ARG, "vn_stream_submit", "%s is NULL",
                        desc ? "block" : "task");
    if (desc->num_blocks < 1)
        return vn_error(VN_ERR_INVALID_ARG, "vn_stream_submit", "task %s: num_blocks %d < 1",
                        desc->name ? desc->name : "(unnamed)", (int)desc->num_blocks);
    vn_stream *s = vn_stream_resolve(stream);
    if (!s) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_submit", "no stream");
    vn_task *t = vn_task_new(s, TASK_WORK);
    if (!t) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_stream_submit", "cannot allocate a task");
    snprintf(t->name, sizeof t->name, "%s", desc->name ? desc->name : "(unnamed)");
    t->kind = kind;
    t->block = desc->block;
    t->ctx = desc->ctx;
    t->release = desc->release;
    t->stats = stats;
    t->job.num_blocks = desc->num_blocks;
    t->job.run = work_run;
    t->job.finish = work_finish;
    pthread_mutex_lock(&s->device->lock);
    vn_stream_enqueue_locked(s, t);
    pthread_mutex_unlock(&s->device->lock);
    return VN_OK;
}

vn_status vn_stream_submit(vn_stream *stream, const vn_task_desc *task)
{
    return vn_stream_submit_ex(stream, task, VN_TASK_GENERIC, NULL);
}

/* ---- memcpy / memset ------------------------------------------------------------ */

typedef struct fill_args {
    void *dst;
    const void *src;
    int value;
    size_t bytes, chunk;
} fill_args;

static vn_status copy_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker;
    const fill_args *f = ctx;
    size_t off = (size_t)block * f->chunk;
    size_t n = f->bytes - off < f->chunk ? f->bytes - off : f->chunk;
    if (n) memmove((char *)f->dst + off, (const char *)f->src + off, n);
    return VN_OK;
}

static vn_status set_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker;
    const fill_args *f = ctx;
    size_t off = (size_t)block * f->chunk;
    size_t n = f->bytes - off < f->chunk ? f->bytes - off : f->chunk;
    if (n) memset((char *)f->dst + off, f->value, n);
    return VN_OK;
}

static void free_ctx(void *ctx)
{
    free(ctx);
}

static vn_status submit_fill(vn_stream *stream, const char *name, vn_task_kind kind, void *dst,
                             const void *src, int value, size_t bytes)
{
    if (!dst || (kind == VN_TASK_MEMCPY && !src))
        return vn_error(VN_ERR_INVALID_ARG, name, "%s is NULL", dst ? "src" : "dst");
    vn_stream *s = vn_stream_resolve(stream);
    if (!s) return vn_error(VN_ERR_INVALID_ARG, name, "no stream");
    fill_args *f = malloc(sizeof *f);
    if (!f) return vn_error(VN_ERR_OUT_OF_MEMORY, name, "cannot allocate a task");
    size_t per = bytes / (2 * (size_t)s->device->num_workers) + 1;
    size_t chunk = per < MIN_COPY_CHUNK ? MIN_COPY_CHUNK : (per + 4095) / 4096 * 4096;
    *f = (fill_args){dst, src, value, bytes, chunk};
    size_t blocks = bytes ? (bytes + chunk - 1) / chunk : 1;
    vn_task_desc d = {kind == VN_TASK_MEMCPY ? "memcpy" : "memset", (int32_t)blocks,
                      kind == VN_TASK_MEMCPY ? copy_block : set_block, f, free_ctx};
    vn_status st = vn_stream_submit_ex(s, &d, kind, NULL);
    if (st != VN_OK) free(f);
    return st;
}

vn_status vn_memcpy_async(vn_stream *stream, void *dst, const void *src, size_t bytes)
{
    return submit_fill(stream, "vn_memcpy_async", VN_TASK_MEMCPY, dst, src, 0, bytes);
}

vn_status vn_memset_async(vn_stream *stream, void *dst, int value, size_t bytes)
{
    return submit_fill(stream, "vn_memset_async", VN_TASK_MEMSET, dst, NULL, value, bytes);
}
