/*
 * worker_hook.h — the profiler's view of worker threads: an optional pair of
 * calls around every block a worker runs (src/profile/counters.c uses it to
 * open perf counters on each worker thread and read them around its blocks).
 * Process-wide; off (NULL) it costs one load and a branch per block.
 */
#ifndef VINCI_RUNTIME_WORKER_HOOK_H
#define VINCI_RUNTIME_WORKER_HOOK_H

#include <stdatomic.h>
#include <stdint.h>

#include "vinci/runtime.h"

typedef struct vn_worker_hook {
    /* On worker `worker` of `device`, before and after one block; `state` is
     * what block_begin returned. Both run on the worker thread. */
    void *(*block_begin)(const vn_device *device, int32_t worker);
    void (*block_end)(void *state);
} vn_worker_hook;

extern _Atomic(const vn_worker_hook *) vn_worker_hook_active;

/* NULL turns it off. The hook must stay valid for blocks already begun. */
void vn_worker_hook_set(const vn_worker_hook *hook);

static inline const vn_worker_hook *vn_worker_hook_get(void)
{
    return atomic_load_explicit(&vn_worker_hook_active, memory_order_acquire);
}

#endif /* VINCI_RUNTIME_WORKER_HOOK_H */
