/*
 * scheduler.c — the device's one worker pool, shared by every stream and by
 * synchronous callers.
 *
 * Jobs wait in one ready list ordered by priority, FIFO within a priority.
 * A free worker claims the next block of the list's head, so the highest
 * priority ready job gets workers first; a running block is never pre-empted.
 * A worker with nothing to do spins for at most SPIN_NS (cheap hand-off when
 * work arrives right behind the last block) and then sleeps on a condition
 * variable, so an idle device costs no CPU. A push wakes sleepers only for
 * the blocks the spinning workers will not take: a futex wake is a system
 * call for the submitter and, on an idle machine or VM, tens of microseconds
 * before the sleeper runs.
 */
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "runtime/device_struct.h"
#include "runtime/worker_hook.h"

/* Bounded spin before sleeping (the brief allows at most 50 us). */
#define SPIN_NS 20000

/* Set on worker threads: a block that waits on its own device gets an error,
 * not a deadlock. */
static _Thread_local const vn_device *current_device;

bool vn_sched_on_worker(const vn_device *d)
{
    return d && current_device == d;
}

/* MXCSR bit 15 flushes denormal results to zero, bit 6 reads denormal inputs as zero. */
static void set_denormal_mode(const vn_device *d)
{
#if defined(__x86_64__) || defined(__i386__)
    if (!d->keep_denormals) _mm_setcsr(_mm_getcsr() | 0x8040u);
#else
    (void)d;
#endif
}

void vn_sched_push_locked(vn_device *d, vn_job *job)
{
    job->next_block = 0;
    atomic_store_explicit(&job->blocks_done, 0, memory_order_relaxed);
    job->order = d->next_order++;
    vn_job **at = &d->ready;
    while (*at && (*at)->priority >= job->priority) at = &(*at)->next;
    job->next = *at;
    *at = job;
    d->jobs_live++;
    atomic_fetch_add_explicit(&d->ready_count, 1, memory_order_release);
    /* A spinner reads ready_count at most ~100 ns later; it may time out in
     * between, but then it takes the lock and sees the job before sleeping. */
    int32_t want = job->num_blocks - atomic_load_explicit(&d->spinners, memory_order_acquire);
    int32_t wake = want < d->sleepers ? want : d->sleepers;
    for (int32_t i = 0; i < wake; i++) pthread_cond_signal(&d->work_cv);
}

void vn_sched_job_done_locked(vn_device *d)
{
    d->jobs_live--;
    atomic_fetch_add_explicit(&d->progress, 1, memory_order_release);
    /* The callback thread blocked in a host wait re-checks for a deadlock. */
    if (d->jobs_live == 0 && d->cb_wait_cv) pthread_cond_broadcast(d->cb_wait_cv);
}

/* Claims the next block of the head job; unlinks the job when it was the last. */
static vn_job *claim_locked(vn_device *d, int32_t *block)
{
    vn_job *job = d->ready;
    *block = job->next_block++;
    if (job->next_block == job->num_blocks) {
        d->ready = job->next;
        atomic_fetch_sub_explicit(&d->ready_count, 1, memory_order_relaxed);
    }
    return job;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins (without the lock) until work may be ready or SPIN_NS passed. The
 * caller re-checks the ready list under the lock afterwards, so a push that
 * counted this worker as a spinner is never lost. */
static void spin_for_work(vn_device *d)
{
    atomic_fetch_add_explicit(&d->spinners, 1, memory_order_acq_rel);
    int64_t until = mono_ns() + SPIN_NS;
    for (int i = 1;; i++) {
        if (atomic_load_explicit(&d->ready_count, memory_order_acquire) > 0) break;
        if (i % 64 == 0 && mono_ns() > until) break;
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
    }
    atomic_fetch_sub_explicit(&d->spinners, 1, memory_order_acq_rel);
}

/* One block, between the profiler's worker hook calls when it is set. */
static void run_block(vn_worker *w, vn_job *job, int32_t block)
{
    const vn_worker_hook *hook = vn_worker_hook_get();
    void *state = hook ? hook->block_begin(w->device, w->index) : NULL;
    job->run(job, w->index, block);
    if (hook) hook->block_end(state);
}

void *vn_worker_main(void *arg)
{
    vn_worker *w = arg;
    vn_device *d = w->device;
    current_device = d;
    set_denormal_mode(d);
    bool spun = false;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        if (!d->ready) {
            if (d->stop) break;
            if (!spun) {
                pthread_mutex_unlock(&d->lock);
                spin_for_work(d);
                spun = true;
                pthread_mutex_lock(&d->lock);
                continue;
            }
            d->sleepers++;
            pthread_cond_wait(&d->work_cv, &d->lock);
            d->sleepers--;
            spun = false;
            continue;
        }
        int32_t block;
        vn_job *job = claim_locked(d, &block);
        pthread_mutex_unlock(&d->lock);

        /* Read before the count goes up: once it does, the last finisher may
         * free the job. */
        int32_t num_blocks = job->num_blocks;
        run_block(w, job, block);
        if (atomic_fetch_add_explicit(&job->blocks_done, 1, memory_order_acq_rel) + 1 == num_blocks)
            job->finish(job, w->index);
        spun = false;
        pthread_mutex_lock(&d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}
