/*
 * scheduler.c — the device's one worker pool, shared by every stream and by
 * synchronous callers.
 *
 * Jobs wait in one ready list ordered by priority, FIFO within a priority.
 * A free worker claims the next block of the list's head, so the highest
 * priority ready job gets workers first; a running block is never pre-empted.
 * A worker with nothing to do spins for at most SPIN_NS (cheap hand-off when
 * work arrives right behind the last block; none while the CPUs are taken by
 * running callers, helpers and other spinners) and then sleeps on a condition
 * variable, so an idle device costs no CPU. A push wakes sleepers only for
 * the blocks the spinning workers will not take: a futex wake is a system
 * call for the submitter and, on an idle machine or VM, tens of microseconds
 * before the sleeper runs.
 *
 * Caller-runs. A host thread in vn_device_run_blocks runs blocks of its own
 * job too (vn_sched_caller_run, as a guest worker index), and its job is
 * capped at num_workers - 1 pool workers (worker_cap), so at most num_workers
 * threads run it; with one worker the caller runs every block and nobody is
 * woken. A pool worker skips a job at its cap and takes the next ready one.
 * Across jobs, pool workers help callers only while helpers and running
 * callers number less than num_workers: two host threads launching at once on
 * two workers each run their own blocks, rather than four threads sharing two
 * CPUs. Stream jobs are not capped.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "runtime/stream_internal.h"
#include "runtime/worker_hook.h"

/* Bounded spin before sleeping. Long enough to bridge the gap between a
 * graph's nodes and a block's imbalance (a worker that slept is woken by a
 * futex call, and on a VM its idle vCPU may take hundreds of us to run it:
 * with 20 us, ResNet-50 at 2 workers on a 2-vCPU Zen 3 VM took 46-73 ms,
 * with 1 ms 46 ms), short enough that an idle process stops using CPU
 * within a millisecond (test_idle). Spinners that would crowd the CPUs stop
 * at once (work_ready_or_crowded). */
#define SPIN_NS 1000000

/* The spin of a host that ran its share of a `hosts` job and waits for the
 * other members: short, since nothing counts it among the busy threads. */
#define HOST_HELP_SPIN_NS 20000

/* Set on worker threads: a block that waits on its own device gets an error,
 * not a deadlock. */
static _Thread_local const vn_device *current_device;

bool vn_sched_on_worker(const vn_device *d)
{
    return d && current_device == d;
}

/* MXCSR bit 15 flushes denormal results to zero, bit 6 reads denormal inputs
 * as zero. Returns the MXCSR before, for a host thread to restore. */
static unsigned set_denormal_mode(const vn_device *d)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned was = _mm_getcsr();
    if (!d->keep_denormals) _mm_setcsr(was | 0x8040u);
    return was;
#else
    (void)d;
    return 0;
#endif
}

static void restore_fp_mode(const vn_device *d, unsigned mxcsr)
{
#if defined(__x86_64__) || defined(__i386__)
    if (!d->keep_denormals) _mm_setcsr(mxcsr);
#else
    (void)d, (void)mxcsr;
#endif
}

/* How many more pool workers may join capped jobs now (may be <= 0). */
static int32_t helper_room(vn_device *d)
{
    return d->num_workers - atomic_load_explicit(&d->callers_running, memory_order_relaxed) -
           atomic_load_explicit(&d->helpers_on, memory_order_relaxed);
}

/* The spinners `job` may count on: those not already taken by the unclaimed
 * blocks of the other ready jobs. A spinner takes the list's head first, and
 * a job pushed later may go ahead of earlier ones (a higher priority), so
 * every other job's blocks are subtracted, not only those ahead of `job`.
 * Counting every spinner for every push lost wake-ups: with one worker
 * spinning and one asleep, two pushes each relied on the spinner, which took
 * the first job (a block that waited for the host), and the second job
 * waited for a wake-up that never came (test_errors under CPU contention).
 * Over-counting blocks only wakes a sleeper more than needed. */
static int32_t free_spinners_locked(const vn_device *d, const vn_job *job)
{
    int32_t free = atomic_load_explicit(&d->spinners, memory_order_acquire);
    for (const vn_job *j = d->ready; j && free > 0; j = j->next)
        if (j != job) free -= j->num_blocks - j->next_block;
    return free > 0 ? free : 0;
}

void vn_sched_push_locked(vn_device *d, vn_job *job)
{
    job->next_block = 0;
    atomic_store_explicit(&job->blocks_done, 0, memory_order_relaxed);
    atomic_store_explicit(&job->workers_on, 0, memory_order_relaxed);
    job->order = d->next_order++;
    vn_job **at = &d->ready;
    while (*at && (*at)->priority >= job->priority) at = &(*at)->next;
    job->next = *at;
    *at = job;
    d->jobs_live++;
    atomic_fetch_add_explicit(&d->ready_count, 1, memory_order_release);
    /* A spinner reads ready_count at most ~100 ns later; it may time out in
     * between, but then it takes the lock and sees the job before sleeping. */
    int32_t want = job->num_blocks;
    if (job->worker_cap > 0) { /* a capped job's caller takes a block itself */
        want = job->num_blocks - 1 < job->worker_cap ? job->num_blocks - 1 : job->worker_cap;
        int32_t room = helper_room(d) - 1; /* the pushing caller is about to run */
        want = want < room ? want : room;
    }
    want -= free_spinners_locked(d, job);
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

/* The ready-list link to the first job a pool worker may take a block of (in
 * priority order, skipping jobs at their worker cap), or NULL. */
static vn_job **next_for_worker_locked(vn_device *d)
{
    bool room = helper_room(d) > 0;
    for (vn_job **at = &d->ready; *at; at = &(*at)->next) {
        const vn_job *j = *at;
        if (j->worker_cap == 0 ||
            (room && atomic_load_explicit(&j->workers_on, memory_order_relaxed) < j->worker_cap))
            return at;
    }
    return NULL;
}

/* The ready-list link to `job`, or NULL once all its blocks are claimed. */
static vn_job **link_of_locked(vn_device *d, const vn_job *job)
{
    vn_job **at = &d->ready;
    while (*at && *at != job) at = &(*at)->next;
    return *at ? at : NULL;
}

/* Claims the next block of the job at `at`; unlinks the job when it was the last. */
static int32_t claim_locked(vn_device *d, vn_job **at)
{
    vn_job *job = *at;
    int32_t block = job->next_block++;
    if (job->next_block == job->num_blocks) {
        *at = job->next;
        atomic_fetch_sub_explicit(&d->ready_count, 1, memory_order_relaxed);
    }
    return block;
}

static bool work_ready(const void *arg)
{
    const vn_device *d = arg;
    return atomic_load_explicit(&d->ready_count, memory_order_acquire) > 0;
}

/* A spinning pool worker: its device, and how many spinners were there
 * when it began (its rank). */
typedef struct spinner {
    const vn_device *d;
    int32_t rank;
} spinner;

/* Work may be ready, or this spinner is one thread too many: the running
 * callers and helpers plus the spinners that began before it already fill
 * busy_max (the workers, or the usable CPUs where those are fewer), so only
 * the extra spinners stop. A caller-runs job is capped at num_workers - 1
 * pool workers, so with the caller and one pool worker on a 2-worker device
 * the other pool worker has nothing to take: spinning beside them, it shared
 * a CPU with one of them (measured on a 2-vCPU Zen 3 VM: ResNet-50 at 2
 * threads ran in 45 or 70 ms by where Linux had put the three threads).
 * Ranks are not renumbered as spinners leave: a late one may stop early,
 * which only costs a wake-up. */
static bool work_ready_or_crowded(const void *arg)
{
    const spinner *sp = arg;
    const vn_device *d = sp->d;
    if (work_ready(d)) return true;
    return sp->rank + atomic_load_explicit(&d->callers_running, memory_order_relaxed) +
               atomic_load_explicit(&d->helpers_on, memory_order_relaxed) >=
           d->busy_max;
}

/* Spins (without the lock) until work may be ready, this spinner is one too
 * many, or SPIN_NS passed. The caller re-checks the ready list under the
 * lock afterwards, so a job pushed while this worker counted as a spinner is
 * seen before it sleeps (and free_spinners_locked keeps one spinner from
 * being counted for two jobs). */
static void spin_for_work(vn_device *d)
{
    spinner sp = {d, atomic_fetch_add_explicit(&d->spinners, 1, memory_order_acq_rel)};
    vn_spin_until(work_ready_or_crowded, &sp, vn_now_ns() + SPIN_NS);
    atomic_fetch_sub_explicit(&d->spinners, 1, memory_order_acq_rel);
}

/* Set while the thread runs a block of a `hosts` job: the worker its
 * launches run as (vn_sched_host_worker); NULL inside any other block, so a
 * kernel block that launches still gets the deadlock error. */
static _Thread_local vn_worker *host_worker;

vn_worker *vn_sched_host_worker(const vn_device *d)
{
    return host_worker && host_worker->device == d ? host_worker : NULL;
}

/* One block, between the profiler's worker hook calls when it is set; a
 * profiled job's block is timed into its record. Every block of every job
 * passes here, so this is where block records are collected. A `hosts`
 * block (a whole node) is neither hooked nor profiled: its launches' blocks
 * are. */
static void run_block(vn_worker *w, vn_job *job, int32_t block)
{
    vn_worker *was = host_worker;
    host_worker = job->hosts ? w : NULL;
    const vn_worker_hook *hook = job->hosts ? NULL : vn_worker_hook_get();
    void *state = hook ? hook->block_begin(w->device, w->index) : NULL;
    if (job->prof)
        vn_profile_run_block(job, w->index, block);
    else
        job->run(job, w->index, block);
    if (hook) hook->block_end(state);
    host_worker = was;
}

/* Claims the next block of the job at `at` and runs it as worker `w`; the
 * thread that completes the job's last block runs its finish. A helper (a
 * pool worker, or a host waiting in vn_sched_host_run_locked) counts in a
 * capped job's workers_on and the device's helpers_on while it runs the
 * block; the job's own caller does not. Called and returns with the lock
 * held. */
static void run_claimed_locked(vn_device *d, vn_worker *w, vn_job **at, bool helper)
{
    vn_job *job = *at;
    int32_t block = claim_locked(d, at);
    bool counted = helper && job->worker_cap > 0;
    if (counted) {
        atomic_fetch_add_explicit(&job->workers_on, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&d->helpers_on, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&d->lock);

    /* Read before the count goes up: once it does, the last finisher may
     * free the job. */
    int32_t num_blocks = job->num_blocks;
    run_block(w, job, block);
    if (counted) {
        atomic_fetch_sub_explicit(&d->helpers_on, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&job->workers_on, 1, memory_order_relaxed);
    }
    if (atomic_fetch_add_explicit(&job->blocks_done, 1, memory_order_acq_rel) + 1 == num_blocks)
        job->finish(job, w->index);
    pthread_mutex_lock(&d->lock);
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
        vn_job **at = d->ready ? next_for_worker_locked(d) : NULL;
        if (!at) {
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
        run_claimed_locked(d, w, at, true);
        spun = false;
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

/* Every block of a job nobody else sees, in order, without the lock. */
static void run_alone(vn_worker *guest, vn_job *job)
{
    for (int32_t b = 0; b < job->num_blocks; b++) run_block(guest, job, b);
}

/* Claims blocks of a pushed job until none is left; the lock is held between. */
static void run_shared_locked(vn_device *d, vn_job *job, vn_worker *guest)
{
    vn_job **at;
    while ((at = link_of_locked(d, job)) != NULL) run_claimed_locked(d, guest, at, false);
}

void vn_sched_caller_run(vn_device *d, vn_job *job, vn_worker *guest, bool pushed)
{
    /* While it runs blocks the caller counts as a worker of d: a block that
     * waits on d gets the same error as on a pool worker. */
    const vn_device *was = current_device;
    current_device = d;
    unsigned mxcsr = set_denormal_mode(d);
    atomic_fetch_add_explicit(&d->callers_running, 1, memory_order_relaxed);
    if (pushed)
        run_shared_locked(d, job, guest);
    else
        run_alone(guest, job);
    atomic_fetch_sub_explicit(&d->callers_running, 1, memory_order_relaxed);
    restore_fp_mode(d, mxcsr);
    current_device = was;
}

typedef struct host_wait {
    vn_device *d;
    bool (*done)(const void *arg);
    const void *arg;
} host_wait;

static bool done_or_work(const void *arg)
{
    const host_wait *h = arg;
    return h->done(h->arg) || work_ready(h->d);
}

void vn_sched_host_run_locked(vn_device *d, vn_job *job, vn_worker *guest,
                              bool (*done)(const void *arg), const void *arg, pthread_cond_t *cv)
{
    const vn_device *was = current_device;
    current_device = d;
    unsigned mxcsr = set_denormal_mode(d);
    run_shared_locked(d, job, guest); /* this thread's share of the host blocks */
    host_wait h = {d, done, arg};
    while (!done(arg)) { /* then the kernels of the others' launches */
        vn_job **at = d->ready ? next_for_worker_locked(d) : NULL;
        if (at) {
            run_claimed_locked(d, guest, at, true);
            continue;
        }
        pthread_mutex_unlock(&d->lock);
        vn_spin_until(done_or_work, &h, vn_now_ns() + HOST_HELP_SPIN_NS);
        pthread_mutex_lock(&d->lock);
        if (!done(arg) && !(d->ready && next_for_worker_locked(d))) pthread_cond_wait(cv, &d->lock);
    }
    restore_fp_mode(d, mxcsr);
    current_device = was;
}
