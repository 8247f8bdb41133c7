/*
 * core_internal.h — what the kernel layer's files share: the block context
 * (vn_core), the queue record, and the checked-mode primitives.
 *
 * Invariants:
 *   - a vn_core lives for one block; vn_launch resets it (pipe reset: every
 *     arena's bump pointer back to 0) before the block runs;
 *   - every vn_local handed to a kernel points into one of the core's arenas
 *     and carries the bytes left from its start to the end of its buffer;
 *   - in checked mode shadow[a][i] != 0 iff byte i of arena a was written since
 *     the buffer holding it was allocated (queue alloc or vn_buf_new).
 */
#ifndef VINCI_KERNEL_CORE_INTERNAL_H
#define VINCI_KERNEL_CORE_INTERNAL_H

#include <setjmp.h>
#include <stdatomic.h>
#include <string.h>

#include "vinci/kernel.h"

#define VN_MAX_QUEUES        64 /* per block, like the hardware's buffer budget */
#define VN_MAX_QUEUE_BUFFERS 8  /* per queue */
#define VN_MAX_XFERS         8  /* pending asynchronous copies per block (xfer.c) */

typedef enum vn_slot_state {
    VN_SLOT_FREE = 0, /* available to alloc */
    VN_SLOT_HELD,     /* allocated, being written, not enqueued */
    VN_SLOT_QUEUED,   /* enqueued, waiting for deque */
    VN_SLOT_TAKEN     /* dequeued, being read, not freed */
} vn_slot_state;

struct vn_queue {
    int16_t id;
    vn_position position;
    vn_dtype dtype;
    int32_t num;       /* buffers */
    int32_t depth;     /* max enqueued at once */
    int64_t count;     /* elements per buffer */
    int64_t buf_bytes; /* bytes per buffer, a multiple of 32 */
    uint8_t *base;     /* first buffer */
    vn_slot_state state[VN_MAX_QUEUE_BUFFERS];
    int32_t fifo[VN_MAX_QUEUE_BUFFERS]; /* enqueued slots in order */
    int32_t fifo_head, fifo_len;
    /* checked mode: where the queue was made and where each slot last changed
     * state, so a leak at kernel end names the vn_alloc / vn_deque that took it */
    vn_site site;
    vn_site slot_site[VN_MAX_QUEUE_BUFFERS];
};

/* One block's share of a launch's shared tiles (tiles.c): the tiles still
 * to run are [front, end), front in the low 32 bits of `range`, end in the
 * high 32. The owner moves front up, other blocks move end down; a line of
 * its own, so that the owner's claims do not bounce another share's line. */
typedef struct vn_tile_share {
    _Atomic uint64_t range;
    char pad[64 - sizeof(uint64_t)];
} vn_tile_share;

/* Cut `tiles` tiles into `blocks` contiguous shares (shares[b] for block b). */
void vn_tile_shares_init(vn_tile_share *shares, int32_t blocks, int64_t tiles);
/* Block b's share of that cut: [*begin, *end). */
void vn_tile_share_of(int64_t tiles, int32_t blocks, int32_t b, int64_t *begin, int64_t *end);

/* A pending asynchronous copy (xfer.c). */
typedef struct vn_xfer {
    uint8_t *dst;
    const uint8_t *src;
    int64_t bytes;
    bool stream; /* non-temporal stores (a VN_CACHE_STREAM copy-out) */
} vn_xfer;

struct vn_core {
    int32_t block_idx, block_num;
    bool checked;
    const char *kernel_name;
    int64_t loop;                 /* -1 when the kernel never called vn_set_loop */
    vn_tile_share *shares;        /* the launch's shared tiles (block_num shares), or NULL */
    int64_t home_begin, home_end; /* its own share as the launch cut it (vn_tile_home) */
    bool tile_steal; /* a block takes tiles of other shares after its own (not checked) */
    int64_t batch_next, batch_stop; /* tiles of its own share this block has claimed, not run */
    bool own_done;                  /* its own share is empty: it claims there no more */

    uint8_t *arena[VN_ARENA_COUNT];
    int64_t arena_size[VN_ARENA_COUNT];
    int64_t arena_used[VN_ARENA_COUNT]; /* bump pointer of the pipe */
    uint8_t *shadow[VN_ARENA_COUNT];    /* checked mode only, else NULL */

    struct vn_queue queues[VN_MAX_QUEUES];
    int32_t num_queues;

    vn_kernel_counters counters; /* this block's (wall_ms unused) */

    /* the copy engine (xfer.c): pending copies of VECIN / VECOUT buffers */
    vn_xfer xfers[VN_MAX_XFERS];
    int32_t num_xfers;
    bool xfer_async;    /* copies may be deferred (release mode) */
    bool xfer_streamed; /* non-temporal stores since the last fence */

    /* failure: first violation of this block */
    jmp_buf *bail;
    vn_status status;
    char message[768];
};

/* Count `macs` multiply-accumulates of the cube on operands of dtype `a`
 * (f32, bf16, or u8 / i8: int8), for the profiler's per-precision roofs. */
static inline void vn_core_count_macs(vn_core *core, vn_dtype a, int64_t macs)
{
    core->counters.cube_ops += macs;
    if (a == VN_BF16) core->counters.cube_ops_bf16 += macs;
    if (a == VN_U8 || a == VN_I8) core->counters.cube_ops_int8 += macs;
}

/* Record a failure for this block ("<call> at file:line: message") and leave
 * the kernel through the launcher. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5), noreturn))
#endif
void vn_core_fail(vn_core *core, vn_site site, const char *call, const char *fmt, ...);

/* Which arena a pointer belongs to, or -1. */
int vn_core_arena_of(const vn_core *core, const void *p);

/* Checked-mode validation of an access to `bytes` bytes at byte `offset` of
 * local `t` by `call`: inside the tensor's extent; for reads, every byte was
 * written. Writes mark the bytes written. Call only when core->checked. */
/* Checked mode: bytes [off, off + bytes) lie inside global tensor g (copy.c);
 * `what` is "reads", "writes", ... for the message. */
void vn_check_gm(vn_core *core, vn_gm g, int64_t off, int64_t bytes, const char *what,
                 const char *call, vn_site site);
void vn_check_read(vn_core *core, vn_local t, int64_t offset, int64_t bytes, const char *call,
                   vn_site site);
void vn_check_write(vn_core *core, vn_local t, int64_t offset, int64_t bytes, const char *call,
                    vn_site site);
/* A local tensor is well-formed: points into an arena, 32-byte aligned; or a
 * window (vn_gm_window) outside every arena, aligned to its dtype. */
void vn_check_local(vn_core *core, vn_local t, const char *call, vn_site site);
/* vn_check_local, and t is not a window: for copies and cube instructions,
 * which move data between global memory and scratch. */
void vn_check_scratch(vn_core *core, vn_local t, const char *call, vn_site site);

/* A window's mode and cache hint live in its negative slot: -1 - bits, bit 0
 * set for a VN_CACHE_STREAM tensor, bit 1 for VN_WINDOW_WRITE (window.c). */
static inline int vn_window_bits(vn_local t)
{
    return t.owner == VN_OWNER_GM ? -1 - t.slot : 0;
}
static inline bool vn_window_writable(vn_local t)
{
    return (vn_window_bits(t) & 2) != 0;
}
/* A window written with non-temporal stores. */
static inline bool vn_window_streamed(vn_local t)
{
    return (vn_window_bits(t) & 3) == 3;
}

/* Checked mode at kernel end (called by the launcher): fail if any queue
 * buffer is not free, naming the call that last took it. */
void vn_queue_check_leaks(vn_core *core);

/* Mark written without checks (used by release-mode-agnostic helpers). */
void vn_shadow_mark(vn_core *core, const void *p, int64_t bytes);
void vn_shadow_clear(vn_core *core, const void *p, int64_t bytes);

/* The copy engine (xfer.c). vn_xfer_push records a copy (flushing first
 * when it overlaps a pending one or the table is full); vn_xfer_flush
 * executes every pending copy, interleaved; vn_xfer_finish also fences
 * non-temporal stores (block end). vn_xfer_sync is the check every
 * instruction makes before it touches memory. */
void vn_xfer_push(vn_core *core, void *dst, const void *src, int64_t bytes, bool stream);
void vn_xfer_flush(vn_core *core);
void vn_xfer_finish(vn_core *core);
bool vn_xfer_touches(const vn_core *core, const void *p, int64_t bytes);
bool vn_xfer_async_enabled(void); /* false when VINCI_ASYNC_COPY=0 */
static inline void vn_xfer_sync(vn_core *core)
{
    if (core->num_xfers) vn_xfer_flush(core);
}
/* Whether a copy between global memory and local `t` may be deferred: release
 * mode, and t is a buffer of a queue at `position` (VECIN for copy-in, VECOUT
 * for copy-out: the MTE2 / MTE3 ends of the pipe). */
static inline bool vn_xfer_deferrable(const vn_core *core, vn_local t, vn_position position)
{
    return core->xfer_async && t.owner >= 0 && t.owner < core->num_queues &&
           core->queues[t.owner].position == position;
}

/* memcpy with non-temporal stores (copy_stream.c): for VN_CACHE_STREAM outputs. */
void vn_copy_streaming(void *dst, const void *src, size_t bytes);

/* Copy-out to global memory honouring the tensor's cache hint. */
static inline void vn_gm_store(vn_gm g, void *dst, const void *src, size_t bytes)
{
    if (g.hint == VN_CACHE_STREAM)
        vn_copy_streaming(dst, src, bytes);
    else
        memcpy(dst, src, bytes);
}

#endif /* VINCI_KERNEL_CORE_INTERNAL_H */
