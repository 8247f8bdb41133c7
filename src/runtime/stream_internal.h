/*
 * stream_internal.h — streams, tasks and events as the files of src/runtime
 * share them. Private to src/runtime. Every field is guarded by the device
 * lock (device_struct.h) unless it says otherwise.
 *
 * A stream's pipeline: tasks wait in `head..tail`; the stream dispatches them
 * in order. A task that holds the stream (a work job, an unsatisfied event
 * wait, a blocking callback) sits in `current` until it finishes; records,
 * satisfied waits and non-blocking callbacks finish their pipeline step at
 * once. `pipeline_done` is the number of the last task whose step finished.
 * Non-blocking callbacks still running are kept, oldest first, in `nb_head`:
 * they run in stream order on the callback thread, so they finish in order.
 * All work up to task T is done iff pipeline_done >= T and no non-blocking
 * callback numbered <= T is pending.
 */
#ifndef VINCI_RUNTIME_STREAM_INTERNAL_H
#define VINCI_RUNTIME_STREAM_INTERNAL_H

#include <time.h>

#include "runtime/device_struct.h"

#define VN_MSG_CAP 768

typedef enum task_type { TASK_WORK, TASK_RECORD, TASK_WAIT, TASK_CALLBACK } task_type;

struct vn_task {
    vn_job job;       /* TASK_WORK: the scheduler's view */
    vn_task *next;    /* stream queue, then callback queue */
    vn_task *nb_next; /* stream's pending non-blocking callbacks */
    vn_stream *stream;
    uint64_t seq; /* task number within the stream, 1-based */
    task_type type;

    /* TASK_WORK */
    vn_task_kind kind;
    char name[48];
    vn_task_block_fn block;
    void *ctx;
    void (*release)(void *ctx);
    vn_block_stats_fn stats;
    bool skip;     /* decided at dispatch: the stream has an error */
    bool injected; /* decided at dispatch: fault injection */
    atomic_int
        fail_block; /* lowest failing block, INT32_MAX if none (blocks above it are skipped) */
    vn_status fail_status; /* with fail_message: guarded by the device lock */
    char fail_message[VN_MSG_CAP];

    /* TASK_RECORD, TASK_WAIT */
    vn_event *event;
    uint64_t target; /* record number made / awaited */

    /* TASK_CALLBACK */
    vn_host_fn fn;
    void *user;
    bool blocking;
    vn_status cb_status;
};

struct vn_stream {
    vn_device *device;
    vn_stream *dev_next; /* the device's stream list */
    uint32_t id;
    int32_t priority;
    pthread_cond_t cv; /* host waiters (monotonic clock) */
    int32_t host_waiters;

    vn_task *head, *tail;
    vn_task *current;
    vn_task *nb_head, *nb_tail;
    uint64_t submitted;
    uint64_t pipeline_done;
    int32_t callbacks_outstanding; /* queued or running callbacks */

    /* waiting on an event (current is a TASK_WAIT) */
    vn_stream *wait_next;

    /* sticky error */
    vn_stream_error_info err;
    /* fault injection */
    uint64_t fault_task;
    vn_status fault_status;
};

struct vn_event {
    vn_device *device;
    int32_t refs;       /* the user's + one per pending record / wait task */
    bool destroyed;     /* the user called vn_event_destroy */
    uint64_t recorded;  /* records submitted */
    uint64_t completed; /* highest record number completed */
    int64_t time_ns;    /* when the latest completed record completed */
    pthread_cond_t cv;  /* host waiters (monotonic clock) */
    int32_t host_waiters;
    vn_stream *waiters; /* streams whose current task waits on this event */
};

/* ---- wait.c ---- */
int64_t vn_now_ns(void);
/* The runtime's one bounded spin (workers waiting for work, host waits, a
 * caller waiting for its job's last blocks): pauses until stop(arg), reading
 * the clock every 64 rounds and yielding to any other runnable thread of its
 * CPU every few microseconds; true if stop(arg) became true before `until`
 * (vn_now_ns) passed. */
bool vn_spin_until(bool (*stop)(const void *arg), const void *arg, int64_t until);
/* Condition variable on CLOCK_MONOTONIC, so timeouts ignore wall-clock jumps. */
void vn_cond_init_monotonic(pthread_cond_t *cv);
/* Waits on `cv` under the device lock until done(arg), the deadline
 * (timeout_ms < 0: none) or a deadlock: on a worker of the device, or on its
 * callback thread while no job is live (only the blocked callback thread could
 * make progress). `what` names the call for messages. */
vn_status vn_host_wait_locked(vn_device *d, pthread_cond_t *cv, int32_t *waiters,
                              bool (*done)(const void *arg), const void *arg, int64_t timeout_ms,
                              const char *what);

/* Spins (dropping the lock) for at most a few tens of microseconds while
 * the device makes progress and done(arg) is still false. */
void vn_host_wait_spin_locked(vn_device *d, bool (*done)(const void *arg), const void *arg);

/* ---- stream.c ---- */
vn_stream *vn_stream_resolve(vn_stream *stream);
/* Appends a task (seq assigned here) and dispatches what can run. */
void vn_stream_enqueue_locked(vn_stream *s, vn_task *t);
/* Dispatches queued tasks until one holds the stream or the queue is empty. */
void vn_stream_advance_locked(vn_stream *s);
/* The task holding the stream finished its pipeline step. */
void vn_stream_step_done_locked(vn_stream *s, vn_task *t);
/* Records the stream's first error (and stops the device's other streams
 * when stop-on-failure is on). */
void vn_stream_fail_locked(vn_stream *s, uint64_t task, int32_t block, const char *kernel,
                           vn_status status, const char *message);
/* Wakes host waiters of the stream if its work is done. */
void vn_stream_notify_locked(vn_stream *s);

/* ---- task.c ---- */
vn_task *vn_task_new(vn_stream *s, task_type type);
void vn_task_dispatch_work_locked(vn_task *t);

/* ---- event.c ---- */
/* The record task reached the front of its stream: complete it. */
void vn_event_complete_locked(vn_task *t);
/* The wait task reached the front of its stream: true when satisfied at once,
 * else the stream is parked on the event. */
bool vn_event_try_wait_locked(vn_task *t);
void vn_event_unref_locked(vn_event *e);

/* ---- callback.c ---- */
void vn_callback_dispatch_locked(vn_task *t);
/* The stream whose callback the calling thread is running, or NULL. */
vn_stream *vn_callback_current_stream(void);
bool vn_callback_on_thread(const vn_device *d);

/* ---- profile.c ---- */
/* Appends a task record; NULL counts one dropped record. */
void vn_profile_append_locked(vn_device *d, const vn_profile_record *rec);

#endif /* VINCI_RUNTIME_STREAM_INTERNAL_H */
