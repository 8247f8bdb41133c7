/*
 * wait.c — how a host thread waits for stream or event progress: on a
 * monotonic clock, with an optional deadline, and with deadlock detection.
 *
 * Deadlocks. A worker of the device that waits for device work may hold the
 * very worker that work needs: refused at once. The callback thread is the
 * only thread that runs callbacks; when it waits, work behind any queued
 * callback cannot finish. It may wait while jobs are live (workers make
 * progress, and their finishing may complete the target); once no job is
 * live and the target is still not done, only the callback thread itself
 * could move things on, so the wait returns VN_ERR_STATE instead of hanging.
 * vn_sched_job_done_locked wakes it when jobs_live drops to 0.
 *
 * Latency. A host thread asleep on a condition variable needs a futex wake
 * and, on an idle machine (or a VM, where the vCPU halts), tens of
 * microseconds before it runs again; a short kernel finishes sooner than
 * that. So a wait first spins, without the lock, for at most HOST_SPIN_NS
 * while watching the device's progress counter, and only then sleeps. The
 * spin is bounded, so an idle process still stops using CPU at once.
 *
 * On a busy machine the spin can hurt: a worker woken onto this CPU waits
 * behind the spinner. So the device keeps a score: a spin that ended the
 * wait raises it, one that timed out lowers it a lot, and while it is
 * negative waits sleep at once (each such wait raises it by one, so spinning
 * is retried now and then). Every spin also yields its CPU every few
 * microseconds (vn_spin_until), so a runnable thread there, that worker
 * included, runs at once.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "runtime/stream_internal.h"

/* Bounded spin of a host wait before it sleeps. */
#define HOST_SPIN_NS 20000

int64_t vn_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void vn_cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
}

static struct timespec to_timespec(int64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000)};
    return ts;
}

/* A spin yields its CPU at most this often: sched_yield is a system call
 * (a few hundred ns, during which the spinner does not look at its
 * condition). Linux 6.18 (EEVDF), 2-vCPU Zen 3 VM, 2 workers, a busy loop
 * pinned to one CPU: MobileNetV2 took 16.6 ms a run without yields (twice
 * its 1-worker time), 8.8 ms with them (ONNX Runtime 13.1), SqueezeNet 11.7
 * -> 6.4 (9.7), the transformer 20.6 -> 10.8 (16.6); two such processes at
 * once 16.2-16.9 -> 8.0-8.1 ms each. Unloaded, the same. */
#define SPIN_YIELD_NS 2000

bool vn_spin_until(bool (*stop)(const void *arg), const void *arg, int64_t until)
{
    int64_t yielded = vn_now_ns();
    for (int i = 1;; i++) {
        if (stop(arg)) return true;
        if (i % 64 == 0) {
            int64_t now = vn_now_ns();
            if (now > until) return false;
            /* Let another runnable thread of this CPU go first. Spinning
             * through its turn took its time, and the scheduler, counting
             * the spin as our run time, then preempted us in the middle of
             * a block that the block's job had to wait for (numbers at
             * SPIN_YIELD_NS). */
            if (now - yielded >= SPIN_YIELD_NS) {
                sched_yield();
                yielded = now;
            }
        }
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
    }
}

typedef struct progress_watch {
    const vn_device *d;
    unsigned seen;
} progress_watch;

static bool progress_moved(const void *arg)
{
    const progress_watch *w = arg;
    return atomic_load_explicit(&w->d->progress, memory_order_acquire) != w->seen;
}

/* Spins without the lock until the device made progress or `until` passed;
 * true on progress. The caller holds the lock before and after. */
static bool spin_for_progress(vn_device *d, int64_t until)
{
    progress_watch w = {d, atomic_load_explicit(&d->progress, memory_order_acquire)};
    pthread_mutex_unlock(&d->lock);
    bool moved = vn_spin_until(progress_moved, &w, until);
    pthread_mutex_lock(&d->lock);
    return moved;
}

void vn_host_wait_spin_locked(vn_device *d, bool (*done)(const void *arg), const void *arg)
{
    /* Spin only while some worker sleeps (a CPU is free for us) and not all
     * of them do (all asleep or just signalled: the one woken may be placed
     * on this CPU, and a spinning waiter would only delay it). With every
     * worker busy, spinning would take a CPU from them. */
    if (d->sleepers == 0 || d->sleepers >= d->num_workers) return;
    if (d->host_spin_score < 0) {
        d->host_spin_score++;
        return;
    }
    int64_t until = vn_now_ns() + HOST_SPIN_NS;
    while (!done(arg) && spin_for_progress(d, until)) {
    }
    if (done(arg))
        d->host_spin_score += d->host_spin_score < 16;
    else
        d->host_spin_score -= 32;
}

vn_status vn_host_wait_locked(vn_device *d, pthread_cond_t *cv, int32_t *waiters,
                              bool (*done)(const void *arg), const void *arg, int64_t timeout_ms,
                              const char *what)
{
    if (done(arg)) return VN_OK;
    if (vn_sched_on_worker(d))
        return vn_error(VN_ERR_STATE, what,
                        "called from a block running on the same device: it would deadlock");
    bool on_cb = vn_callback_on_thread(d);
    int64_t deadline = timeout_ms >= 0 ? vn_now_ns() + timeout_ms * 1000000 : 0;
    vn_status st = VN_OK;
    if (!on_cb && timeout_ms != 0) vn_host_wait_spin_locked(d, done, arg);
    (*waiters)++;
    if (on_cb) d->cb_wait_cv = cv;
    while (!done(arg)) {
        if (on_cb && d->jobs_live == 0) {
            st = vn_error(VN_ERR_STATE, what,
                          "called from a host callback, and the work it waits for needs the "
                          "callback thread (e.g. a callback queued behind the running one): "
                          "it would deadlock");
            break;
        }
        if (timeout_ms < 0) {
            pthread_cond_wait(cv, &d->lock);
            continue;
        }
        struct timespec ts = to_timespec(deadline);
        if (pthread_cond_timedwait(cv, &d->lock, &ts) == ETIMEDOUT && !done(arg)) {
            st = vn_error(VN_ERR_TIMEOUT, what, "not done after %lld ms (the work goes on)",
                          (long long)timeout_ms);
            break;
        }
    }
    if (on_cb) d->cb_wait_cv = NULL;
    (*waiters)--;
    return st;
}
