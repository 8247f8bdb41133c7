/*
 * hook.h — the one place the graph executor (src/graph/exec.c) calls into the
 * profiler. It stays a plain pointer so that, with profiling off, a node run
 * costs one relaxed atomic load and a branch; the profiler layer sets it.
 */
#ifndef VINCI_PROFILE_HOOK_H
#define VINCI_PROFILE_HOOK_H

#include <stdatomic.h>
#include <stdint.h>

#include "vinci/graph.h"

typedef struct vn_prof_hook vn_prof_hook;
struct vn_prof_hook {
    /* Called before node `node` of `model` runs; returns its start time (ns). */
    int64_t (*node_begin)(vn_prof_hook *h, const vn_model *model, int32_t node);
    /* Called after it ran, with the counters its kernels filled. */
    void (*node_end)(vn_prof_hook *h, const vn_model *model, int32_t node, int64_t t0_ns,
                     const vn_kernel_counters *c);
};

/* NULL when no profiler runs. */
extern _Atomic(vn_prof_hook *) vn_prof_hook_active;

static inline vn_prof_hook *vn_prof_hook_get(void)
{
    return atomic_load_explicit(&vn_prof_hook_active, memory_order_acquire);
}

int64_t vn_prof_now_ns(void);

#endif /* VINCI_PROFILE_HOOK_H */
