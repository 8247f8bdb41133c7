/*
 * event.c — events: a record marks a stream position; waits and host
 * synchronisation wait for the latest record made before them.
 *
 * Records are numbered per event. A wait captures the number of the latest
 * record at submission and is satisfied once a record with that number or a
 * later one has completed (records of one event are expected to complete in
 * order, e.g. all on one stream). A record completes when all earlier work of
 * its stream has, even if that work failed or was skipped, so a stream
 * waiting on a failed stream's event never hangs; the failure itself is
 * reported by the failed stream's synchronize.
 *
 * Life time: the user's handle and every pending record or wait task hold a
 * reference; the event is freed when the last one goes.
 */
#include <stdlib.h>

#include "runtime/stream_internal.h"

vn_status vn_event_create(vn_device *device, vn_event **out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_event_create", "out is NULL");
    *out = NULL;
    if (!device) {
        vn_status st = vn_device_default(&device);
        if (st != VN_OK) return st;
    }
    vn_event *e = calloc(1, sizeof *e);
    if (!e) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_event_create", "cannot allocate an event");
    e->device = device;
    e->refs = 1;
    vn_cond_init_monotonic(&e->cv);
    *out = e;
    return VN_OK;
}

void vn_event_unref_locked(vn_event *e)
{
    if (--e->refs > 0) return;
    pthread_cond_destroy(&e->cv);
    free(e);
}

void vn_event_destroy(vn_event *event)
{
    if (!event) return;
    vn_device *d = event->device;
    pthread_mutex_lock(&d->lock);
    event->destroyed = true;
    vn_event_unref_locked(event);
    pthread_mutex_unlock(&d->lock);
}

static vn_status check_pair(const char *what, vn_event *e, vn_stream **s)
{
    if (!e) return vn_error(VN_ERR_INVALID_ARG, what, "event is NULL");
    *s = vn_stream_resolve(*s);
    if (!*s) return vn_error(VN_ERR_INVALID_ARG, what, "no stream");
    if ((*s)->device != e->device)
        return vn_error(VN_ERR_INVALID_ARG, what,
                        "the event and stream %u belong to different devices", (unsigned)(*s)->id);
    return VN_OK;
}

vn_status vn_event_record(vn_event *event, vn_stream *stream)
{
    vn_status st = check_pair("vn_event_record", event, &stream);
    if (st != VN_OK) return st;
    vn_task *t = vn_task_new(stream, TASK_RECORD);
    if (!t) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_event_record", "cannot allocate a task");
    pthread_mutex_lock(&event->device->lock);
    t->event = event;
    t->target = ++event->recorded;
    event->refs++;
    vn_stream_enqueue_locked(stream, t);
    pthread_mutex_unlock(&event->device->lock);
    return VN_OK;
}

vn_status vn_stream_wait_event(vn_stream *stream, vn_event *event)
{
    vn_status st = check_pair("vn_stream_wait_event", event, &stream);
    if (st != VN_OK) return st;
    vn_task *t = vn_task_new(stream, TASK_WAIT);
    if (!t) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_stream_wait_event", "cannot allocate a task");
    pthread_mutex_lock(&event->device->lock);
    if (event->recorded == 0) { /* never recorded: nothing to wait for */
        pthread_mutex_unlock(&event->device->lock);
        free(t);
        return VN_OK;
    }
    t->event = event;
    t->target = event->recorded;
    event->refs++;
    vn_stream_enqueue_locked(stream, t);
    pthread_mutex_unlock(&event->device->lock);
    return VN_OK;
}

bool vn_event_try_wait_locked(vn_task *t)
{
    vn_event *e = t->event;
    if (e->completed >= t->target) return true;
    t->stream->wait_next = e->waiters;
    e->waiters = t->stream;
    return false;
}

void vn_event_complete_locked(vn_task *t)
{
    vn_event *e = t->event;
    if (t->target > e->completed) {
        e->completed = t->target;
        e->time_ns = vn_now_ns();
    }
    atomic_fetch_add_explicit(&e->device->progress, 1, memory_order_release);
    if (e->host_waiters > 0) pthread_cond_broadcast(&e->cv);
    /* Detach the satisfied waiters first: resuming them may park streams on
     * this event again. */
    vn_stream *ready = NULL;
    for (vn_stream **at = &e->waiters; *at;) {
        vn_stream *s = *at;
        if (s->current->target <= e->completed) {
            *at = s->wait_next;
            s->wait_next = ready;
            ready = s;
        } else {
            at = &s->wait_next;
        }
    }
    while (ready) {
        vn_stream *s = ready;
        ready = s->wait_next;
        s->wait_next = NULL;
        vn_task *w = s->current;
        vn_event_unref_locked(e); /* the wait's reference; the record's is still held */
        vn_stream_step_done_locked(s, w);
        free(w);
    }
    vn_event_unref_locked(e);
}

static bool event_done(const void *arg)
{
    const vn_event *e = arg;
    return e->completed >= e->recorded;
}

vn_status vn_event_synchronize(vn_event *event, int64_t timeout_ms)
{
    if (!event) return vn_error(VN_ERR_INVALID_ARG, "vn_event_synchronize", "event is NULL");
    vn_device *d = event->device;
    pthread_mutex_lock(&d->lock);
    vn_status st = vn_host_wait_locked(d, &event->cv, &event->host_waiters, event_done, event,
                                       timeout_ms, "vn_event_synchronize");
    pthread_mutex_unlock(&d->lock);
    return st;
}

vn_status vn_event_query(vn_event *event)
{
    if (!event) return vn_error(VN_ERR_INVALID_ARG, "vn_event_query", "event is NULL");
    pthread_mutex_lock(&event->device->lock);
    bool done = event_done(event);
    pthread_mutex_unlock(&event->device->lock);
    return done ? VN_OK : VN_ERR_NOT_READY;
}

vn_status vn_event_elapsed_ms(vn_event *start, vn_event *end, double *ms)
{
    if (!start || !end || !ms)
        return vn_error(VN_ERR_INVALID_ARG, "vn_event_elapsed_ms", "NULL argument");
    if (start->device != end->device)
        return vn_error(VN_ERR_INVALID_ARG, "vn_event_elapsed_ms", "events of different devices");
    vn_device *d = start->device;
    vn_status st = VN_OK;
    pthread_mutex_lock(&d->lock);
    if (start->recorded == 0 || end->recorded == 0)
        st = vn_error(VN_ERR_STATE, "vn_event_elapsed_ms", "the %s event was never recorded",
                      start->recorded == 0 ? "start" : "end");
    else if (!event_done(start) || !event_done(end))
        st = VN_ERR_NOT_READY;
    else
        *ms = (double)(end->time_ns - start->time_ns) * 1e-6;
    pthread_mutex_unlock(&d->lock);
    return st;
}
