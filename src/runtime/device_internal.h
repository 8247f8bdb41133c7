/*
 * device_internal.h — what layers above the runtime may ask of a device beyond
 * its public API: per-worker storage that persists across calls.
 *
 * The kernel layer keeps one block context (vn_core) and, in checked mode, the
 * shadow maps of each worker's arenas here, so a launch allocates nothing per
 * block and checked mode pays for its shadow memory only once per worker.
 */
#ifndef VINCI_RUNTIME_DEVICE_INTERNAL_H
#define VINCI_RUNTIME_DEVICE_INTERNAL_H

#include "vinci/runtime.h"

/* Storage slots per worker; each upper-layer user owns one key. */
enum { VN_WORKER_SLOT_CORE = 0, VN_WORKER_SLOT_SHADOW, VN_WORKER_SLOT_COUNT };

/* Slot `key` of worker `worker`: at least `bytes` bytes, 64-byte aligned,
 * zeroed when (re)allocated, kept until the device is destroyed. NULL on
 * allocation failure (with vn_last_error set).
 * Invariant that makes it lock-free: only code running on that worker (a block
 * of vn_device_run_blocks) calls it for that worker. */
void *vn_device_worker_slot(vn_device *device, int32_t worker, int key, size_t bytes);

/* Fills the kernel counters of block `block`'s profile record, on the worker
 * that has just run it (`ctx`: the block function's). Called only while
 * profiling is on; leaves a block that did not run at zero. */
typedef void (*vn_block_stats_fn)(void *ctx, int32_t worker, int32_t block, vn_profile_block *rec);

/* vn_stream_submit with a task kind for profiles and the hook that gives its
 * blocks' records their kernel counters (may be NULL); the task's record
 * sums them. */
vn_status vn_stream_submit_ex(vn_stream *stream, const vn_task_desc *task, vn_task_kind kind,
                              vn_block_stats_fn stats);

/* vn_device_run_blocks with that hook, for the blocks' profile records. */
vn_status vn_device_run_blocks_ex(vn_device *device, int32_t num_blocks, vn_block_fn fn, void *ctx,
                                  vn_block_stats_fn stats);

/* The graph executor's concurrent nodes: runs fn(ctx, worker, b) for b in
 * 0 .. num_blocks - 1 at once, each on a thread that then launches its own
 * kernels (vn_device_run_blocks) as their caller, with its own worker index;
 * the calling thread takes blocks too and, once none is left, helps with
 * the others' kernels. fn's worker argument means nothing to it. With one
 * worker, caller-runs off, no guest slot free or on a worker of the device,
 * the blocks run one after another on the calling thread. Returns when all
 * are done; fn reports its own errors. */
vn_status vn_device_run_hosted(vn_device *device, int32_t num_blocks, vn_block_fn fn, void *ctx);

/* From a task block about to return a failure: the message the stream's error
 * should carry instead of vn_last_error() (the launcher passes the kernel's own
 * message). Copied before the block returns. */
void vn_task_set_block_message(const char *message);

#endif /* VINCI_RUNTIME_DEVICE_INTERNAL_H */
