/*
 * stream.c — streams: life cycle, the in-order pipeline, synchronisation and
 * the sticky error. The pipeline rules are in stream_internal.h; every
 * function named *_locked runs under the device lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/allocator.h"
#include "runtime/stream_internal.h"

static vn_stream *stream_new_locked(vn_device *d, int32_t priority)
{
    vn_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->device = d;
    s->priority = priority;
    s->id = d->next_stream_id++;
    s->err.block = -1;
    vn_cond_init_monotonic(&s->cv);
    s->dev_next = d->streams;
    d->streams = s;
    return s;
}

vn_status vn_streams_init(vn_device *d)
{
    pthread_mutex_lock(&d->lock);
    d->default_stream = stream_new_locked(d, VN_PRIORITY_NORMAL);
    pthread_mutex_unlock(&d->lock);
    if (!d->default_stream)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_device_create",
                        "cannot allocate the default stream");
    return VN_OK;
}

vn_stream *vn_stream_resolve(vn_stream *stream)
{
    if (stream) return stream;
    vn_device *d = NULL;
    if (vn_device_default(&d) != VN_OK) return NULL;
    return d->default_stream;
}

vn_status vn_stream_create(vn_device *device, int32_t priority, vn_stream **out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_create", "out is NULL");
    *out = NULL;
    if (!device) {
        vn_status st = vn_device_default(&device);
        if (st != VN_OK) return st;
    }
    pthread_mutex_lock(&device->lock);
    vn_stream *s = stream_new_locked(device, priority);
    pthread_mutex_unlock(&device->lock);
    if (!s) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_stream_create", "cannot allocate a stream");
    *out = s;
    return VN_OK;
}

vn_stream *vn_device_default_stream(vn_device *device)
{
    if (!device && vn_device_default(&device) != VN_OK) return NULL;
    return device->default_stream;
}

vn_device *vn_stream_device(const vn_stream *stream)
{
    return stream ? stream->device : NULL;
}

uint32_t vn_stream_id(const vn_stream *stream)
{
    return stream ? stream->id : 0;
}

int32_t vn_stream_priority(const vn_stream *stream)
{
    return stream ? stream->priority : 0;
}

/* ---- the pipeline ------------------------------------------------------------ */

typedef struct done_arg {
    vn_stream *s;
    uint64_t target;
} done_arg;

static bool work_done(const void *arg)
{
    const done_arg *a = arg;
    const vn_stream *s = a->s;
    return s->pipeline_done >= a->target && (!s->nb_head || s->nb_head->seq > a->target);
}

void vn_stream_notify_locked(vn_stream *s)
{
    atomic_fetch_add_explicit(&s->device->progress, 1, memory_order_release);
    if (s->host_waiters > 0) pthread_cond_broadcast(&s->cv);
}

void vn_stream_enqueue_locked(vn_stream *s, vn_task *t)
{
    t->seq = ++s->submitted;
    t->next = NULL;
    if (s->tail)
        s->tail->next = t;
    else
        s->head = t;
    s->tail = t;
    if (t->type == TASK_CALLBACK) s->callbacks_outstanding++;
    vn_stream_advance_locked(s);
}

/* A wait on a failed stream is moot: its later work is skipped anyway. */
static bool dispatch_wait_locked(vn_stream *s, vn_task *t)
{
    if (s->err.status == VN_OK && !vn_event_try_wait_locked(t)) return false;
    vn_event_unref_locked(t->event);
    return true;
}

void vn_stream_advance_locked(vn_stream *s)
{
    while (!s->current && s->head) {
        vn_task *t = s->head;
        s->head = t->next;
        if (!s->head) s->tail = NULL;
        t->next = NULL;
        bool finished = true;
        switch (t->type) {
        case TASK_WORK:
            s->current = t;
            vn_task_dispatch_work_locked(t);
            finished = false;
            break;
        case TASK_RECORD:
            vn_event_complete_locked(t);
            break;
        case TASK_WAIT:
            finished = dispatch_wait_locked(s, t);
            if (!finished) s->current = t;
            break;
        case TASK_CALLBACK:
            /* The callback thread owns the task from here. */
            if (t->blocking) s->current = t;
            vn_callback_dispatch_locked(t);
            if (t->blocking) finished = false;
            break;
        }
        if (finished) {
            s->pipeline_done = s->pipeline_done > t->seq ? s->pipeline_done : t->seq;
            if (t->type != TASK_CALLBACK) free(t);
        }
    }
    vn_stream_notify_locked(s);
}

void vn_stream_step_done_locked(vn_stream *s, vn_task *t)
{
    s->current = NULL;
    s->pipeline_done = t->seq;
    vn_stream_advance_locked(s);
}

/* ---- errors ------------------------------------------------------------------ */

static void set_error(vn_stream *s, vn_status status, uint64_t task, int32_t block,
                      const char *kernel, const char *message)
{
    vn_stream_error_info *e = &s->err;
    e->status = status;
    e->task = task;
    e->block = block;
    snprintf(e->kernel, sizeof e->kernel, "%s", kernel ? kernel : "(unnamed)");
    snprintf(e->message, sizeof e->message, "%s", message);
    e->skipped = 0;
    e->last_skipped[0] = '\0';
}

void vn_stream_fail_locked(vn_stream *s, uint64_t task, int32_t block, const char *kernel,
                           vn_status status, const char *message)
{
    if (s->err.status != VN_OK) return; /* the first error wins */
    char text[VN_MSG_CAP];
    if (block >= 0)
        snprintf(text, sizeof text, "task %llu, kernel %s, block %d: %s", (unsigned long long)task,
                 kernel, (int)block, message);
    else
        snprintf(text, sizeof text, "task %llu, kernel %s: %s", (unsigned long long)task, kernel,
                 message);
    set_error(s, status, task, block, kernel, text);
    vn_device *d = s->device;
    if (!d->stop_on_failure) return;
    char stopped[VN_MSG_CAP];
    snprintf(stopped, sizeof stopped, "stopped: stream %u failed at %.700s", (unsigned)s->id, text);
    for (vn_stream *o = d->streams; o; o = o->dev_next)
        if (o != s && o->err.status == VN_OK) set_error(o, status, 0, -1, kernel, stopped);
}

vn_status vn_device_set_stop_on_failure(vn_device *device, bool stop)
{
    if (!device) return vn_error(VN_ERR_INVALID_ARG, "vn_device_set_stop_on_failure", "NULL");
    pthread_mutex_lock(&device->lock);
    device->stop_on_failure = stop;
    pthread_mutex_unlock(&device->lock);
    return VN_OK;
}

vn_status vn_stream_get_error(vn_stream *stream, vn_stream_error_info *out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_get_error", "out is NULL");
    vn_stream *s = vn_stream_resolve(stream);
    if (!s) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_get_error", "no stream");
    pthread_mutex_lock(&s->device->lock);
    *out = s->err;
    pthread_mutex_unlock(&s->device->lock);
    return VN_OK;
}

vn_status vn_stream_inject_fault(vn_stream *stream, uint64_t task, vn_status status)
{
    vn_stream *s = vn_stream_resolve(stream);
    if (!s) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_inject_fault", "no stream");
    if (task && status == VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, "vn_stream_inject_fault", "status VN_OK is no fault");
    pthread_mutex_lock(&s->device->lock);
    s->fault_task = task;
    s->fault_status = status;
    pthread_mutex_unlock(&s->device->lock);
    return VN_OK;
}

/* ---- host-side waits ------------------------------------------------------------ */

/* Waits for the work submitted so far, refusing the waits that would deadlock
 * from a callback. Called with the lock held. */
static vn_status drain_locked(vn_stream *s, int64_t timeout_ms, const char *what)
{
    if (vn_callback_current_stream() == s)
        return vn_error(VN_ERR_STATE, what,
                        "called from a host callback of stream %u: the stream waits for that "
                        "callback, so it would deadlock",
                        (unsigned)s->id);
    done_arg a = {s, s->submitted};
    if (vn_callback_on_thread(s->device) && !work_done(&a) && s->callbacks_outstanding > 0)
        return vn_error(VN_ERR_STATE, what,
                        "called from a host callback, and stream %u has a callback queued "
                        "behind the running one: it would deadlock",
                        (unsigned)s->id);
    return vn_host_wait_locked(s->device, &s->cv, &s->host_waiters, work_done, &a, timeout_ms,
                               what);
}

vn_status vn_stream_synchronize(vn_stream *stream, int64_t timeout_ms)
{
    vn_stream *s = vn_stream_resolve(stream);
    if (!s) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_synchronize", "no stream");
    pthread_mutex_lock(&s->device->lock);
    vn_status st = drain_locked(s, timeout_ms, "vn_stream_synchronize");
    if (st == VN_OK && s->err.status != VN_OK)
        st = vn_error(s->err.status, "vn_stream_synchronize", "stream %u: %s", (unsigned)s->id,
                      s->err.message);
    pthread_mutex_unlock(&s->device->lock);
    return st;
}

vn_status vn_stream_query(vn_stream *stream)
{
    vn_stream *s = vn_stream_resolve(stream);
    if (!s) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_query", "no stream");
    pthread_mutex_lock(&s->device->lock);
    done_arg a = {s, s->submitted};
    bool done = work_done(&a);
    pthread_mutex_unlock(&s->device->lock);
    return done ? VN_OK : VN_ERR_NOT_READY;
}

vn_status vn_stream_reset(vn_stream *stream)
{
    vn_stream *s = vn_stream_resolve(stream);
    if (!s) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_reset", "no stream");
    pthread_mutex_lock(&s->device->lock);
    vn_status st = drain_locked(s, -1, "vn_stream_reset");
    if (st == VN_OK) {
        memset(&s->err, 0, sizeof s->err);
        s->err.block = -1;
    }
    pthread_mutex_unlock(&s->device->lock);
    return st;
}

static void unlink_stream_locked(vn_stream *s)
{
    for (vn_stream **at = &s->device->streams; *at; at = &(*at)->dev_next)
        if (*at == s) {
            *at = s->dev_next;
            break;
        }
}

vn_status vn_stream_destroy(vn_stream *stream)
{
    if (!stream) return VN_OK;
    vn_device *d = stream->device;
    if (stream == d->default_stream)
        return vn_error(VN_ERR_STATE, "vn_stream_destroy", "the default stream is not destroyed");
    pthread_mutex_lock(&d->lock);
    vn_status st = drain_locked(stream, -1, "vn_stream_destroy");
    if (st == VN_OK) unlink_stream_locked(stream);
    pthread_mutex_unlock(&d->lock);
    if (st != VN_OK) return st;
    vn_mem_on_stream_destroy(stream); /* its cached blocks become shared; not under d->lock */
    pthread_cond_destroy(&stream->cv);
    free(stream);
    return VN_OK;
}

void vn_streams_shutdown(vn_device *d)
{
    pthread_mutex_lock(&d->lock);
    while (d->streams) {
        vn_stream *s = d->streams;
        drain_locked(s, -1, "vn_device_destroy");
        unlink_stream_locked(s);
        pthread_cond_destroy(&s->cv);
        free(s);
    }
    d->default_stream = NULL;
    pthread_mutex_unlock(&d->lock);
}
