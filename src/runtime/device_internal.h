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

#endif /* VINCI_RUNTIME_DEVICE_INTERNAL_H */
