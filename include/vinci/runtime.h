/*
 * vinci/runtime.h — the device: a pool of worker threads ("AI cores"), each
 * owning its scratch arenas, and synchronous launch of blocks over them.
 *
 * The scratch arenas play the roles of an Ascend AI core's on-chip buffers:
 * UB (vector staging), L1 (matrix staging), L0A / L0B (matrix operands) and
 * L0C (matrix accumulator). Their sizes are configurable per device and are
 * what kernels query to size their tiles.
 *
 * (Issue [B] adds streams, events, callbacks and the caching allocator on top.)
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
    /* Worker threads. 0: VINCI_NUM_THREADS if set, else the online CPUs. */
    int32_t num_threads;
    /* Bytes per arena per worker; 0 keeps the default (or VINCI_UB_SIZE etc.). */
    int64_t arena_bytes[VN_ARENA_COUNT];
    /* Checked mode for every launch on this device (VINCI_CHECKED=1 also turns it on). */
    bool checked;
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

/* Worker `worker`'s arena: base pointer (64-byte aligned) of `vn_device_arena_size` bytes. */
void *vn_device_arena(vn_device *device, int32_t worker, vn_arena arena);

/* Run fn(ctx, worker, block) for block = 0 .. num_blocks-1, spread over the
 * workers, and return when all have finished. Blocks of one call never run
 * twice at once on the same worker, so a block may use its worker's arenas
 * freely. Calls from several threads are serialised. */
typedef void (*vn_block_fn)(void *ctx, int32_t worker, int32_t block);
vn_status vn_device_run_blocks(vn_device *device, int32_t num_blocks, vn_block_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_RUNTIME_H */
