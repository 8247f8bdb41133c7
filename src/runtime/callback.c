/*
 * callback.c — host callbacks: one runtime-owned thread per device (started
 * at the first vn_stream_add_callback) runs them in the order they became
 * ready, which keeps each stream's callbacks in stream order.
 *
 * Batching: when the thread wakes it takes every ready callback in one go
 * (one lock round trip, one wake-up for many callbacks), and producers signal
 * it only when it sleeps. Without batching (a benchmark switch) producers
 * signal per callback and the thread takes one per round.
 *
 * Re-entrancy: the thread marks which stream's callback it is running, so
 * waits that would deadlock are refused (stream.c, wait.c).
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/stream_internal.h"

static _Thread_local vn_stream *running_stream;
static _Thread_local const vn_device *callback_device;

vn_stream *vn_callback_current_stream(void)
{
    return running_stream;
}

bool vn_callback_on_thread(const vn_device *d)
{
    return d && callback_device == d;
}

void vn_callback_dispatch_locked(vn_task *t)
{
    vn_stream *s = t->stream;
    vn_device *d = s->device;
    t->cb_status = s->err.status;
    if (!t->blocking) {
        t->nb_next = NULL;
        if (s->nb_tail)
            s->nb_tail->nb_next = t;
        else
            s->nb_head = t;
        s->nb_tail = t;
    }
    t->next = NULL;
    if (d->cb_tail)
        d->cb_tail->next = t;
    else
        d->cb_head = t;
    d->cb_tail = t;
    if (d->cb_sleeping || !d->cb_batching) pthread_cond_signal(&d->cb_cv);
}

/* The callback returned: blocking ones release their stream, non-blocking
 * ones leave the pending list (they finish in order, so t is its head). */
static void callback_done_locked(vn_task *t)
{
    vn_stream *s = t->stream;
    s->callbacks_outstanding--;
    if (t->blocking) {
        vn_stream_step_done_locked(s, t);
    } else {
        s->nb_head = t->nb_next;
        if (!s->nb_head) s->nb_tail = NULL;
        vn_stream_notify_locked(s);
    }
}

static void run_batch(vn_device *d, vn_task *batch)
{
    while (batch) {
        vn_task *t = batch;
        batch = t->next;
        running_stream = t->stream;
        t->fn(t->user, t->cb_status);
        running_stream = NULL;
        pthread_mutex_lock(&d->lock);
        callback_done_locked(t);
        pthread_mutex_unlock(&d->lock);
        free(t);
    }
}

static void *callback_main(void *arg)
{
    vn_device *d = arg;
    callback_device = d;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        while (!d->cb_head && !d->stop) {
            d->cb_sleeping = true;
            pthread_cond_wait(&d->cb_cv, &d->lock);
            d->cb_sleeping = false;
        }
        if (!d->cb_head) break; /* stopping, and nothing left */
        vn_task *batch = d->cb_head;
        size_t n = 1;
        if (d->cb_batching) {
            for (vn_task *t = batch->next; t; t = t->next) n++;
            d->cb_head = d->cb_tail = NULL;
        } else {
            d->cb_head = batch->next;
            if (!d->cb_head) d->cb_tail = NULL;
            batch->next = NULL;
        }
        d->cb_wakeups++;
        d->cb_delivered += n;
        pthread_mutex_unlock(&d->lock);
        run_batch(d, batch);
        pthread_mutex_lock(&d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static vn_status start_thread_locked(vn_device *d)
{
    if (d->cb_started) return VN_OK;
    int rc = pthread_create(&d->cb_thread, NULL, callback_main, d);
    if (rc != 0)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_stream_add_callback",
                        "cannot start the callback thread: %s", strerror(rc));
    d->cb_started = true;
    return VN_OK;
}

vn_status vn_stream_add_callback(vn_stream *stream, vn_host_fn fn, void *user, bool blocking)
{
    if (!fn) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_add_callback", "fn is NULL");
    vn_stream *s = vn_stream_resolve(stream);
    if (!s) return vn_error(VN_ERR_INVALID_ARG, "vn_stream_add_callback", "no stream");
    vn_task *t = vn_task_new(s, TASK_CALLBACK);
    if (!t)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_stream_add_callback", "cannot allocate a task");
    t->fn = fn;
    t->user = user;
    t->blocking = blocking;
    vn_device *d = s->device;
    pthread_mutex_lock(&d->lock);
    vn_status st = start_thread_locked(d);
    if (st == VN_OK) vn_stream_enqueue_locked(s, t);
    pthread_mutex_unlock(&d->lock);
    if (st != VN_OK) free(t);
    return st;
}

void vn_callback_shutdown(vn_device *d)
{
    pthread_mutex_lock(&d->lock);
    bool started = d->cb_started;
    d->stop = true; /* workers see it too; they drain their list before exiting */
    pthread_cond_signal(&d->cb_cv);
    pthread_mutex_unlock(&d->lock);
    if (started) pthread_join(d->cb_thread, NULL);
}

vn_status vn_device_set_callback_batching(vn_device *device, bool batching)
{
    if (!device) return vn_error(VN_ERR_INVALID_ARG, "vn_device_set_callback_batching", "NULL");
    pthread_mutex_lock(&device->lock);
    device->cb_batching = batching;
    pthread_mutex_unlock(&device->lock);
    return VN_OK;
}

vn_status vn_device_callback_stats(vn_device *device, vn_callback_stats *out)
{
    if (!device || !out)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_callback_stats", "NULL argument");
    pthread_mutex_lock(&device->lock);
    out->wakeups = device->cb_wakeups;
    out->delivered = device->cb_delivered;
    pthread_mutex_unlock(&device->lock);
    return VN_OK;
}
