/*
 * vinci/runtime.h — the device: a pool of worker threads ("AI cores"), each
 * owning its scratch arenas, and synchronous launch of blocks over them.
 *
 * The scratch arenas play the roles of an Ascend AI core's on-chip buffers:
 * UB (vector staging), L1 (matrix staging), L0A / L0B (matrix operands) and
 * L0C (matrix accumulator). Their sizes are configurable per device and are
 * what kernels query to size their tiles.
 *
 * Issue [B] adds asynchronous execution on top (second half of this file):
 * streams, events, host callbacks, sticky errors, priorities, profiling.
 */
#ifndef VINCI_RUNTIME_H
#define VINCI_RUNTIME_H

#include "vinci/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vn_arena {
    VN_ARENA_UB = 0, /* vector unit buffer: VECIN / VECOUT / VECCALC */
    VN_ARENA_L1,     /* matrix staging: A1 / B1 */
    VN_ARENA_L0A,    /* left matrix operand: A2 */
    VN_ARENA_L0B,    /* right matrix operand: B2 */
    VN_ARENA_L0C,    /* accumulator: CO1 */
    VN_ARENA_COUNT
} vn_arena;

/* "UB", "L1", "L0A", "L0B", "L0C". */
const char *vn_arena_name(vn_arena arena);

/* Default arena sizes in bytes (the Ascend 910B sizes, which sit well inside
 * a CPU core's L2): UB 192 KiB, L1 512 KiB, L0A 64 KiB, L0B 64 KiB, L0C 128 KiB. */
int64_t vn_arena_default_size(vn_arena arena);

typedef struct vn_device vn_device;

typedef struct vn_device_options {
    /* Worker threads. 0: VINCI_NUM_THREADS if set, else the CPUs this process
     * may use: min(its CPU affinity, its cgroup CPU quota rounded up). */
    int32_t num_threads;
    /* Bytes per arena per worker; 0 keeps the default (or VINCI_UB_SIZE etc.). */
    int64_t arena_bytes[VN_ARENA_COUNT];
    /* Checked mode for every launch on this device (VINCI_CHECKED=1 also turns it on). */
    bool checked;
    /* Workers flush denormals to zero (MXCSR FTZ + DAZ), as the NPU's vector
     * unit does and because subnormal arithmetic is up to 100x slower on x86.
     * true keeps IEEE subnormals (tests comparing against exact references). */
    bool keep_denormals;
    /* Start with profiling on (see vn_device_set_profiling). */
    bool profiling;
} vn_device_options;

/* Create a device. `options` may be NULL for the defaults. */
vn_status vn_device_create(const vn_device_options *options, vn_device **out);
/* Destroy a device and join its workers. NULL is ignored. */
void vn_device_destroy(vn_device *device);

/* The process-wide default device, created on first use with default options
 * (thread-safe). Never destroy it. */
vn_status vn_device_default(vn_device **out);

int32_t vn_device_num_workers(const vn_device *device);
int64_t vn_device_arena_size(const vn_device *device, vn_arena arena);
bool vn_device_checked(const vn_device *device);

/* Worker indices a block may be given: 0 .. vn_device_num_worker_ids() - 1.
 * The first vn_device_num_workers() are the pool's threads; the rest are
 * guest slots, held by host threads that run blocks of their own
 * vn_device_run_blocks / vn_launch call. Size per-worker arrays with this. */
int32_t vn_device_num_worker_ids(const vn_device *device);

/* Worker `worker`'s arena (any worker index, guests included): base pointer
 * (64-byte aligned) of `vn_device_arena_size` bytes. */
void *vn_device_arena(vn_device *device, int32_t worker, vn_arena arena);

/* Run fn(ctx, worker, block) for block = 0 .. num_blocks-1, spread over the
 * calling thread and at most num_workers - 1 pool workers, and return when
 * all have finished. A worker index (the caller's is a guest index, see
 * vn_device_num_worker_ids) runs one block at a time, so a block may use its
 * worker's arenas freely. Calls from several
 * threads run concurrently with each other and with streams (priority
 * VN_PRIORITY_NORMAL). VN_ERR_STATE from a block of the same device. */
typedef void (*vn_block_fn)(void *ctx, int32_t worker, int32_t block);
vn_status vn_device_run_blocks(vn_device *device, int32_t num_blocks, vn_block_fn fn, void *ctx);

/* ==== asynchronous execution (issue [B]) ================================== *
 *
 * A stream is an in-order queue of tasks (kernel launches, copies, fills,
 * event records and waits, host callbacks). Tasks of one stream run in order;
 * tasks of different streams run concurrently on the device's one worker pool.
 * When several streams have ready work, higher priority streams get workers
 * first; a running block is never pre-empted. There is no implicit
 * synchronisation between streams, the default stream included.
 *
 * Errors: asynchronous calls return only submission errors. An execution error
 * (a checked-mode violation, an operator's runtime error, an injected fault)
 * sticks to its stream with its context (task number, kernel, block, message);
 * later tasks of that stream are skipped and record why; the next synchronize
 * returns the first error (and vn_last_error() its message); vn_stream_reset
 * clears it. Other streams are unaffected unless the device's stop-on-failure
 * option is on.
 */

typedef struct vn_stream vn_stream;
typedef struct vn_event vn_event;

#define VN_PRIORITY_LOW    (-1)
#define VN_PRIORITY_NORMAL 0
#define VN_PRIORITY_HIGH   1

/* Create a stream; higher `priority` runs first (any int; see the constants). */
vn_status vn_stream_create(vn_device *device, int32_t priority, vn_stream **out);
/* Wait for the stream's pending work, then destroy it. VN_ERR_STATE from a host
 * callback of this stream (it would deadlock). NULL is ignored. */
vn_status vn_stream_destroy(vn_stream *stream);
/* The device's default stream (never destroy it). */
vn_stream *vn_device_default_stream(vn_device *device);
vn_device *vn_stream_device(const vn_stream *stream);

/* Wait until all work submitted so far has finished. `timeout_ms` < 0 waits
 * forever; on expiry VN_ERR_TIMEOUT (the work goes on). Returns the stream's
 * first execution error, if any. VN_ERR_STATE when called from a host callback
 * in a way that would deadlock. */
vn_status vn_stream_synchronize(vn_stream *stream, int64_t timeout_ms);
/* VN_OK when all submitted work is done, VN_ERR_NOT_READY otherwise; never blocks. */
vn_status vn_stream_query(vn_stream *stream);
/* Wait until the work submitted before the call has finished (or was
 * skipped), then clear the stream's sticky error so new work runs again.
 * VN_ERR_STATE where synchronize would deadlock. */
vn_status vn_stream_reset(vn_stream *stream);

/* The stream's first execution error and what it caused. */
typedef struct vn_stream_error_info {
    vn_status status; /* VN_OK when the stream has no error */
    uint64_t
        task; /* number of the failed task (1-based, per stream; 0: stopped by another stream) */
    int32_t block;          /* failing block, or -1 */
    char kernel[64];        /* kernel / task name */
    char message[768];      /* "task N, kernel K, block B: message" */
    uint64_t skipped;       /* tasks skipped since the error */
    char last_skipped[256]; /* why the latest one was skipped ("skipped: stream failed at task N:
                               ...") */
} vn_stream_error_info;
vn_status vn_stream_get_error(vn_stream *stream, vn_stream_error_info *out);

/* Stable small id of the stream (in errors and profiles); the default stream is 0. */
uint32_t vn_stream_id(const vn_stream *stream);
int32_t vn_stream_priority(const vn_stream *stream);

/* A generic task: `num_blocks` calls of `block` spread over the workers. A
 * block reports failure by returning non-VN_OK after vn_error(); the runtime
 * keeps the first message. `release(ctx)` (may be NULL) runs once when the task
 * is finished or skipped. */
typedef vn_status (*vn_task_block_fn)(void *ctx, int32_t worker, int32_t block);
typedef struct vn_task_desc {
    const char *name; /* shown in errors and profiles */
    int32_t num_blocks;
    vn_task_block_fn block;
    void *ctx;
    void (*release)(void *ctx);
} vn_task_desc;
vn_status vn_stream_submit(vn_stream *stream, const vn_task_desc *task);

vn_status vn_memcpy_async(vn_stream *stream, void *dst, const void *src, size_t bytes);
vn_status vn_memset_async(vn_stream *stream, void *dst, int value, size_t bytes);

/* ---- events ---- */
vn_status vn_event_create(vn_device *device, vn_event **out);
void vn_event_destroy(vn_event *event);
/* Capture the stream's current position; completes when all earlier work has. */
vn_status vn_event_record(vn_event *event, vn_stream *stream);
/* Later work on `stream` waits until the event's last record completed. */
vn_status vn_stream_wait_event(vn_stream *stream, vn_event *event);
vn_status vn_event_synchronize(vn_event *event, int64_t timeout_ms);
vn_status vn_event_query(vn_event *event); /* VN_OK or VN_ERR_NOT_READY */
/* Milliseconds between two completed records. */
vn_status vn_event_elapsed_ms(vn_event *start, vn_event *end, double *ms);

/* ---- host callbacks ---- */
/* Runs on a runtime-owned callback thread after all earlier work of the stream,
 * in stream order. `status` is VN_OK or the error that stopped the stream.
 * With `blocking`, later work of the stream waits for the callback to return.
 * A callback may submit more work and more callbacks (chains). */
typedef void (*vn_host_fn)(void *user, vn_status status);
vn_status vn_stream_add_callback(vn_stream *stream, vn_host_fn fn, void *user, bool blocking);

/* ---- device-wide options ---- */
/* The first execution error on any stream stops every stream of the device:
 * each gets a sticky error "stopped: stream S failed at task N: ..." and skips
 * its later work until vn_stream_reset. */
vn_status vn_device_set_stop_on_failure(vn_device *device, bool stop);

/* Callback delivery: with batching (the default) every callback ready when
 * the callback thread wakes is delivered in that one wake-up; without it the
 * thread is signalled per callback and delivers one per wake-up. */
vn_status vn_device_set_callback_batching(vn_device *device, bool batching);
typedef struct vn_callback_stats {
    uint64_t wakeups;   /* delivery rounds of the callback thread */
    uint64_t delivered; /* callbacks run */
} vn_callback_stats;
vn_status vn_device_callback_stats(vn_device *device, vn_callback_stats *out);

/* Test-only fault injection: task number `task` (1-based, counting every task
 * submitted to the stream, as in error messages) fails with `status` and the
 * message "injected fault" instead of running, as if its kernel had failed.
 * Applies to work tasks (kernels, copies, fills, vn_stream_submit); 0 disarms. */
vn_status vn_stream_inject_fault(vn_stream *stream, uint64_t task, vn_status status);

/* ---- profiling hook (read by the profiler, [F]) ---- */
typedef enum vn_task_kind {
    VN_TASK_KERNEL = 0, /* vn_launch_async */
    VN_TASK_GENERIC,    /* vn_stream_submit */
    VN_TASK_MEMCPY,
    VN_TASK_MEMSET,
} vn_task_kind;

/* One finished (or skipped) work task. Timestamps: CLOCK_MONOTONIC ns, start
 * of its first block and end of its last block. */
typedef struct vn_profile_record {
    uint64_t task; /* number within its stream */
    uint32_t stream_id;
    int32_t priority;
    vn_task_kind kind;
    vn_status status; /* VN_OK, the failure, or the stream's error when skipped */
    bool skipped;
    char name[48];
    int32_t num_blocks;
    int32_t first_worker, last_worker; /* workers of the first and the last block */
    int64_t start_ns, end_ns;
    /* kernel counters of [A] (zero for copies and generic tasks): the sums
     * of its blocks' (vn_profile_block), high-water marks their maximum */
    int64_t bytes_in, bytes_out, vector_elem_ops, cube_ops;
    int64_t scratch_high_water[VN_ARENA_COUNT];
} vn_profile_record;

/* One block of a profiled work task, or of a synchronous launch
 * (vn_launch, vn_device_run_blocks) made while profiling was on: those have
 * stream_id VN_PROFILE_SYNC and `task` numbers the device's profiled
 * synchronous launches from 1. Timestamps: CLOCK_MONOTONIC ns around the
 * block's call, inside its task's record's [start_ns, end_ns]. A task
 * skipped or failed by injection ran no block and has none. */
#define VN_PROFILE_SYNC UINT32_MAX
typedef struct vn_profile_block {
    uint64_t task;
    uint32_t stream_id;
    int32_t block;  /* 0 .. num_blocks - 1 */
    int32_t worker; /* the worker index that ran it (a guest index for a caller's block) */
    int64_t start_ns, end_ns;
    /* the block's kernel counters of [A] (zero for copies, generic tasks and
     * blocks a lower block's failure skipped) */
    int64_t bytes_in, bytes_out, vector_elem_ops, cube_ops;
    int64_t scratch_high_water[VN_ARENA_COUNT]; /* bytes carved from each arena */
} vn_profile_block;

/* Profiling off (the default) costs one predictable branch per block. On,
 * every work task appends a vn_profile_record and its vn_profile_blocks, and
 * every synchronous launch its vn_profile_blocks. */
vn_status vn_device_set_profiling(vn_device *device, bool on);
/* Whether profiling is on (false for NULL). */
bool vn_device_profiling(const vn_device *device);
/* Move up to `max` of the oldest records into `out`; returns how many. The
 * buffer keeps at most 1 << 20 records; `dropped` (may be NULL) receives how
 * many were lost to that cap since the last drain. */
size_t vn_device_profile_drain(vn_device *device, vn_profile_record *out, size_t max,
                               uint64_t *dropped);
/* Likewise for block records, in the order their task or launch finished
 * (a task's blocks in block order). Its own cap of 1 << 20 records; a task
 * or launch whose blocks do not all fit loses them all, counted in `dropped`. */
size_t vn_device_profile_drain_blocks(vn_device *device, vn_profile_block *out, size_t max,
                                      uint64_t *dropped);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_RUNTIME_H */
