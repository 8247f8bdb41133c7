/*
 * device_struct.h — the device record, shared by device.c (life cycle,
 * configuration, arenas) and pool.c (handing blocks to the workers).
 * Private to src/runtime.
 *
 * Invariants:
 *   - `lock` guards every field of the job section and `stop`; `next_block` is
 *     the only job field touched without it (an atomic ticket counter);
 *   - a job is published by bumping `generation`; a worker runs each
 *     generation at most once and decrements `active` when it has no more
 *     blocks to take; the caller returns when `active` reaches 0;
 *   - `call_lock` is held by the one caller whose job is running, so jobs never
 *     overlap and each worker runs at most one block at a time.
 */
#ifndef VINCI_RUNTIME_DEVICE_STRUCT_H
#define VINCI_RUNTIME_DEVICE_STRUCT_H

#include <pthread.h>
#include <stdatomic.h>

#include "runtime/device_internal.h"

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
    vn_worker *workers;

    pthread_mutex_t call_lock;
    pthread_mutex_t lock;
    pthread_cond_t work_cv; /* workers wait here for a new generation */
    pthread_cond_t done_cv; /* the caller waits here for active == 0 */
    bool stop;

    /* the current job */
    uint64_t generation;
    vn_block_fn fn;
    void *ctx;
    int32_t num_blocks;
    atomic_int next_block;
    int32_t active;
};

/* The body of each worker thread (pool.c). */
void *vn_worker_main(void *arg);

#endif /* VINCI_RUNTIME_DEVICE_STRUCT_H */
