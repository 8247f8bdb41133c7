/*
 * vinci/memory.h — the caching allocator for device memory (host RAM here).
 *
 * Freeing and allocating device buffers through the OS is slow (system calls,
 * page faults on first touch), so vinci, like torch_npu, keeps freed blocks in
 * a cache and hands them out again:
 *
 *   - Every block is 64-byte aligned and belongs to a stream (its owner: the
 *     stream passed to vn_mem_alloc). A freed block goes back to its owner's
 *     cache and is reusable there at once: work on one stream runs in order, so
 *     later work cannot overlap earlier work that still uses the block.
 *   - A block used by other streams too must be declared with
 *     vn_mem_record_stream. On free, the allocator records an event on each of
 *     those streams, and the block returns to its owner's cache only when all
 *     those events have completed (polled without blocking; alloc never waits).
 *   - Sizes are rounded (vn_mem_round_size): requests up to 1 MiB to a multiple
 *     of 512 bytes, larger ones to a multiple of 2 MiB (backed by 2 MiB-aligned
 *     mappings, so transparent huge pages can serve them). A cached block is
 *     reused only for a request of the same rounded size (exact size classes:
 *     O(1), no splitting, no fragmentation inside a block).
 *   - A memory limit caps the reserved bytes: VINCI_MEM_LIMIT (bytes, optional
 *     K / M / G suffix, powers of 1024) read when a device's allocator is first
 *     used, or vn_mem_set_limit. A request that would exceed it first releases
 *     cache that is provably idle, then fails with VN_ERR_OUT_OF_MEMORY and a
 *     message with the request size and the statistics below.
 *
 * All calls are thread-safe. Cache hits and frees do not call malloc. Each
 * thread keeps a small cache of the blocks it freed (per stream and size), so
 * a hit or a free of a block the same thread allocated takes no lock; a block
 * may still be freed on any thread, and a thread's cache goes back to the
 * shared cache when the thread exits. The statistics count those caches
 * (blocks in them are "cached"), and the limit, vn_mem_release_cache and
 * stream destroy reach into them.
 */
#ifndef VINCI_MEMORY_H
#define VINCI_MEMORY_H

#include "vinci/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The block size vinci reserves for a request of `bytes` (0 for 0): up to
 * 1 MiB, rounded up to a multiple of 512; above, to a multiple of 2 MiB. */
size_t vn_mem_round_size(size_t bytes);

/* Allocate `bytes` (> 0) of device memory for use on `stream` (NULL: the
 * device's default stream). `device` may be NULL when `stream` is given (its
 * device is used) and when both are NULL the default device is used. The memory
 * is 64-byte aligned and not zeroed. */
vn_status vn_mem_alloc(vn_device *device, vn_stream *stream, size_t bytes, void **out);

/* Return a block to its stream's cache. NULL is ignored. VN_ERR_INVALID_ARG for
 * a pointer vn_mem_alloc did not return (or already freed). */
vn_status vn_mem_free(void *ptr);

/* Declare that `stream` (another stream of the same device) uses the block, so
 * that after vn_mem_free the block is not reused until the work `stream` has
 * been given so far is done. Call it once the work is enqueued, before freeing. */
vn_status vn_mem_record_stream(void *ptr, vn_stream *stream);

typedef struct vn_mem_stats {
    uint64_t allocated;      /* bytes in live blocks (rounded sizes) */
    uint64_t requested;      /* bytes asked for by live allocations (not rounded) */
    uint64_t reserved;       /* bytes held from the OS: live + cached + pending blocks */
    uint64_t cached;         /* bytes of blocks ready for reuse */
    uint64_t pending;        /* bytes of freed blocks waiting for other streams' events */
    uint64_t peak_allocated; /* maxima since the start or vn_mem_reset_peak */
    uint64_t peak_reserved;
    uint64_t num_allocs; /* successful vn_mem_alloc calls */
    uint64_t num_frees;
    uint64_t cache_hits;   /* allocations served from the cache */
    uint64_t cache_misses; /* allocations that took new memory from the OS */
    uint64_t num_ooms;     /* failed allocations (limit, OS, injected faults) */
    uint64_t num_releases; /* blocks given back to the OS */
    uint64_t limit;        /* reserved-bytes cap; 0 = none */
} vn_mem_stats;

/* The device's statistics (NULL: the default device). Exact at the time of the call. */
vn_status vn_mem_stats_get(vn_device *device, vn_mem_stats *out);

/* Set peak_allocated / peak_reserved to the current values. */
vn_status vn_mem_reset_peak(vn_device *device);

/* Give cached blocks back to the OS. Blocks cached on a stream that still has
 * work are freed once that work has passed the point of this call, so the call
 * waits for it (like torch's empty_cache synchronising the device). Blocks still
 * pending on other streams' events are waited for too. Live blocks stay.
 * Not from a host callback of a stream holding cached blocks: the call would
 * wait for that stream, which waits for the callback. */
vn_status vn_mem_release_cache(vn_device *device);

/* Cap the device's reserved bytes (0: no limit). Overrides VINCI_MEM_LIMIT.
 * Blocks already reserved are not taken away. */
vn_status vn_mem_set_limit(vn_device *device, uint64_t bytes);

/* Test hook: the n-th vn_mem_alloc call on the device from now on (n >= 1)
 * fails with VN_ERR_OUT_OF_MEMORY ("injected fault"); n = 0 disarms it. */
vn_status vn_mem_fault_inject(vn_device *device, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_MEMORY_H */
