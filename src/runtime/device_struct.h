/*
 * device_struct.h — the device record and the scheduler's job, shared by the
 * files of src/runtime. Private to src/runtime.
 *
 * Locking. One mutex per device, `lock`, guards the scheduler (ready list,
 * sleepers, live-job count), every stream's queue and state, every event of
 * the device, the callback queue and the profile buffer. One lock means there
 * is no lock order to get wrong; it is held only for list and counter updates,
 * never while user code (a block, a callback, a release function) runs.
 * Fields read without it are atomics and say so.
 *
 * Invariants:
 *   - a job is in the ready list while it has unclaimed blocks (next_block <
 *     num_blocks); the list is ordered by priority (high first), then by `order`
 *     (FIFO within a priority);
 *   - `jobs_live` counts jobs pushed whose `finish` has not yet completed; it is
 *     decremented in the same critical section that hands the stream its next
 *     task, so jobs_live == 0 means no worker can make progress on its own (the
 *     callback thread's deadlock test relies on this);
 *   - a worker runs one block at a time, so blocks may use its arenas freely;
 *   - worker indices num_workers .. num_workers + VN_GUEST_SLOTS - 1 are guest
 *     slots: a host thread inside vn_device_run_blocks that runs blocks of its
 *     own job holds one (bit set in guests_busy) for the whole call, so a guest
 *     index, like a worker's, is used by one thread at a time.
 */
#ifndef VINCI_RUNTIME_DEVICE_STRUCT_H
#define VINCI_RUNTIME_DEVICE_STRUCT_H

#include <pthread.h>
#include <stdatomic.h>

#include "runtime/device_internal.h"

typedef struct vn_task vn_task;
typedef struct vn_job vn_job;

/* A profiled job's block records (one allocation) and the hook that gives
 * each block its kernel counters. */
typedef struct vn_job_profile {
    vn_block_stats_fn stats; /* may be NULL */
    void *ctx;
    vn_profile_block blocks[]; /* num_blocks of them, indexed by block */
} vn_job_profile;

/* A unit of scheduling: `num_blocks` calls of run(), then one call of finish(). */
struct vn_job {
    vn_job *next;       /* ready list link (lock) */
    int32_t priority;   /* higher first */
    uint64_t order;     /* push order, FIFO within a priority */
    int32_t num_blocks; /* >= 1 */
    int32_t next_block; /* next block to claim (lock) */
    atomic_int blocks_done;
    /* Most pool workers running its blocks at once, 0 for no limit (pool.c
     * caps a synchronous job whose caller runs blocks too). */
    int32_t worker_cap;
    atomic_int workers_on; /* pool workers in one of its blocks (capped jobs only) */
    /* Runs one block, without the lock. */
    void (*run)(vn_job *job, int32_t worker, int32_t block);
    /* Runs once, without the lock, on the worker that finished the last block.
     * It must take the lock and call vn_sched_job_done_locked exactly once. */
    void (*finish)(vn_job *job, int32_t worker);
    /* NULL unless profiled (set before the push, owned by the pusher): each
     * block's run() is then timed into its record (profile.c). */
    vn_job_profile *prof;
    /* Its blocks are host functions that run blocks on this device themselves
     * (the graph executor's concurrent nodes, pool.c vn_device_run_hosted):
     * the thread running one is that launch's caller, as its own worker. */
    bool hosts;
};

/* Host threads that may run blocks of their synchronous jobs at once; more
 * concurrent callers wait for the pool as before (pool.c). */
#define VN_GUEST_SLOTS 4

/* A bounded FIFO of profile records of one type (profile.c). */
typedef struct vn_prof_queue {
    void *data;
    size_t len, cap;  /* in records */
    uint64_t dropped; /* records lost to the cap since the last drain */
} vn_prof_queue;

typedef struct vn_worker {
    vn_device *device;
    int32_t index;
    pthread_t thread;
    bool started;
    void *arena[VN_ARENA_COUNT];
    void *slot[VN_WORKER_SLOT_COUNT];
    size_t slot_bytes[VN_WORKER_SLOT_COUNT];
} vn_worker;

struct vn_device {
    int32_t num_workers;
    int64_t arena_size[VN_ARENA_COUNT];
    bool checked;
    bool keep_denormals;
    bool caller_runs;        /* pool.c; VINCI_CALLER_RUNS=0 turns it off */
    bool initialised;        /* lock and condition variables exist */
    vn_worker *workers;      /* num_workers pool workers, then VN_GUEST_SLOTS guest slots */
    atomic_uint guests_busy; /* bit g: guest slot g is held by a host thread */

    pthread_mutex_t lock;
    bool stop; /* workers and the callback thread exit once their queues are empty */

    /* scheduler (scheduler.c) */
    pthread_cond_t work_cv; /* idle workers sleep here */
    vn_job *ready;
    uint64_t next_order;
    int32_t sleepers;
    int64_t jobs_live;
    atomic_int ready_count; /* mirror of the ready list length, for spinning workers */
    atomic_int spinners;    /* workers spinning for work: a push need not wake them */
    /* Caller-runs (scheduler.c): host threads running blocks of their own
     * jobs, and pool workers in blocks of such (capped) jobs. Pool workers
     * join capped jobs only while the two add up to less than num_workers,
     * so concurrent callers do not oversubscribe the CPUs. */
    atomic_int callers_running;
    atomic_int helpers_on;
    /* Idle workers spin only while callers_running + helpers_on + spinners
     * stay within this: min(num_workers, usable CPUs). */
    int32_t busy_max;
    /* Bumped (under the lock) whenever a host waiter might be done: stream
     * and event progress, a synchronous job's end. Host waits spin on it
     * briefly before sleeping (wait.c). */
    atomic_uint progress;
    int32_t host_spin_score; /* wait.c: < 0 while host spins keep timing out */

    /* streams (stream.c); the default stream is also in the list */
    struct vn_stream *streams;
    struct vn_stream *default_stream;
    uint32_t next_stream_id;
    bool stop_on_failure;

    /* callbacks (callback.c) */
    pthread_t cb_thread;
    bool cb_started;
    bool cb_sleeping;
    bool cb_batching;
    pthread_cond_t cb_cv;
    vn_task *cb_head, *cb_tail;
    uint64_t cb_wakeups, cb_delivered;
    pthread_cond_t *cb_wait_cv; /* where the callback thread waits in a host wait, or NULL */

    /* profiling (profile.c) */
    atomic_bool profiling;
    vn_prof_queue prof_tasks;  /* vn_profile_record */
    vn_prof_queue prof_blocks; /* vn_profile_block */
    uint64_t prof_sync_jobs;   /* profiled synchronous launches so far */
};

/* ---- scheduler.c ---- */
void *vn_worker_main(void *arg);
/* Append a job to the ready list and wake workers for it. */
void vn_sched_push_locked(vn_device *d, vn_job *job);
/* A job's finish is done; wakes a callback-thread waiter when the device goes quiet. */
void vn_sched_job_done_locked(vn_device *d);
/* True on a worker thread of `d`, or on a host thread while it runs blocks of `d`. */
bool vn_sched_on_worker(const vn_device *d);
/* Caller-runs: the calling host thread runs blocks of `job` as worker `guest`
 * (a guest slot it holds) until none is left to claim, with the device's
 * denormal mode (its own FP environment restored afterwards). The job is in
 * the ready list when `pushed` (pool workers share it; called with the lock
 * held, returns with it held), else the caller runs every block alone
 * without the lock and finish is not called. Pushed, the thread that
 * completes the last block runs finish. */
void vn_sched_caller_run(vn_device *d, vn_job *job, vn_worker *guest, bool pushed);
/* The worker whose `hosts` block the calling thread is running on `d` (the
 * caller its launches run as), or NULL. */
vn_worker *vn_sched_host_worker(const vn_device *d);
/* vn_device_run_hosted's caller: runs blocks of the pushed `hosts` job as
 * `guest` until none is left to claim, then blocks of whatever a pool worker
 * could take (its launches' kernels among them) until done(arg), sleeping on
 * `cv` when there is nothing to help with. Called and returns with the lock
 * held. */
void vn_sched_host_run_locked(vn_device *d, vn_job *job, vn_worker *guest,
                              bool (*done)(const void *arg), const void *arg, pthread_cond_t *cv);

/* ---- cpus.c ---- */
/* CPUs this process may use: min(affinity, cgroup v2 / v1 CPU quota rounded up). */
int32_t vn_usable_cpus(void);
/* Parses a cgroup v2 cpu.max text ("max 100000", "150000 100000"): the quota
 * in CPUs rounded up, or 0 for no limit or malformed text. */
int32_t vn_cgroup_v2_cpus(const char *text);
/* From cgroup v1 cfs_quota_us and cfs_period_us (quota <= 0: no limit -> 0). */
int32_t vn_cgroup_v1_cpus(long long quota_us, long long period_us);

/* ---- device life cycle hooks (stream.c, callback.c) ---- */
vn_status vn_streams_init(vn_device *d);
/* Waits for and destroys every stream of the device. */
void vn_streams_shutdown(vn_device *d);
void vn_callback_shutdown(vn_device *d);
void vn_profile_shutdown(vn_device *d);

/* ---- profile.c: block records ---- */
/* A job's block records, zeroed; NULL on no memory. Free with free(). */
vn_job_profile *vn_profile_job_new(int32_t num_blocks, vn_block_stats_fn stats, void *ctx);
/* Runs block `block` of a profiled job, timed and counted into its record. */
void vn_profile_run_block(vn_job *job, int32_t worker, int32_t block);
/* Appends a job's `n` block records as task `task` of stream `stream_id`,
 * all or none (none: counted as dropped); jp NULL drops n records. */
void vn_profile_publish_blocks_locked(vn_device *d, const vn_job_profile *jp, int32_t n,
                                      uint32_t stream_id, uint64_t task);
/* A task's record from its `n` blocks' (n >= 1): first start, last end,
 * their workers, the counters summed (high-water marks: the maximum). */
void vn_profile_task_record(const vn_job_profile *jp, int32_t n, vn_profile_record *rec);

#endif /* VINCI_RUNTIME_DEVICE_STRUCT_H */
