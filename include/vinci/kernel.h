/*
 * vinci/kernel.h — the tile programming model ("Vinci C"), the seeds' Ascend C
 * model in C.
 *
 * A kernel is `void k(vn_core *core, const void *args)`. A launch runs it once
 * per block (SPMD), blocks spread over the device's workers. Inside a block the
 * kernel moves tiles from global memory (vn_gm, plain user memory) into local
 * tensors (vn_local) carved from the worker's scratch arenas, computes on them
 * with vector instructions, and writes them back:
 *
 *     Init:     q = vn_queue_new(core, VN_VECIN, 2, tile, VN_F32);  // 2 buffers: double buffering
 *     CopyIn:   x = vn_alloc(q); vn_copy_in(core, x, gm, off, tile); vn_enque(q, x);
 *     Compute:  x = vn_deque(q); ... vn_add(core, z, x, y, tile); ... vn_free(q, x);
 *     CopyOut:  z = vn_deque(qz); vn_copy_out(core, gm_z, off, z, tile); vn_free(qz, z);
 *
 * Every call that can be misused is a macro that passes its call site, so that
 * in checked mode (a launch option, a device option or VINCI_CHECKED=1) the first
 * bad call stops the block and the launch returns VN_ERR_KERNEL with a message
 * naming the kernel, block, loop index, the call and its file:line. In release
 * mode the per-tile calls do no checking beyond one predictable branch.
 *
 * Checked-mode failures leave the kernel through the launcher (longjmp), so a
 * kernel must not own heap memory or locks: everything it needs comes from the
 * arenas (queues, buffers) or from its args.
 *
 * Rules kept from the hardware (and enforced in checked mode):
 *   - local tensors start 32-byte aligned; lengths of queue buffers round up to 32 B;
 *   - vn_copy_in / vn_copy_out move whole 32-byte blocks: a length that is not a
 *     multiple of 32 bytes is rounded DOWN (the hardware's silent truncation) —
 *     use the _pad forms for tails;
 *   - vector instructions in repeat form process 256 bytes per repeat (8 blocks of
 *     32 B), with block and repeat strides in 32-byte units and a lane bit mask.
 *
 * Copies into VECIN and out of VECOUT queue buffers are asynchronous, as the
 * hardware's MTE2 / MTE3 pipes are: in release mode they may complete later,
 * interleaved with each other (which is how one core keeps several streams of
 * memory traffic in flight). Their data is there for vn_deque, for every vector
 * and cube instruction and for later copies (program order); scalar code that
 * reads such a buffer through vn_ptr must come after vn_deque or vn_pipe_barrier.
 */
#ifndef VINCI_KERNEL_H
#define VINCI_KERNEL_H

#include "vinci/base.h"
#include "vinci/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one data block and of one vector repeat. */
#define VN_BLOCK_BYTES   32
#define VN_REPEAT_BYTES  256
#define VN_REPEAT_BLOCKS 8
#define VN_MAX_REPEAT    255

typedef struct vn_core vn_core;
typedef void (*vn_kernel_fn)(vn_core *core, const void *args);

/* A call site, passed by the API macros. */
typedef struct vn_site {
    const char *file;
    int line;
} vn_site;
#define VN_HERE ((vn_site){__FILE__, __LINE__})

/* ---- block and core queries ---------------------------------------------- */

int32_t vn_block_idx(const vn_core *core);
int32_t vn_block_num(const vn_core *core);
/* Bytes of an arena available to this block. */
int64_t vn_core_arena_size(const vn_core *core, vn_arena arena);
/* Tell checked mode which tile / loop iteration is running (shown in errors). */
void vn_set_loop(vn_core *core, int64_t index);
/* ---- shared tiles (a launch whose vn_launch_desc.tiles > 0) ---------------
 * Tiles [0, tiles) start cut into block_dim contiguous shares, block b's
 * being [b * tiles / block_dim, (b + 1) * tiles / block_dim) (as even as
 * whole tiles allow). vn_tile_next hands a block its own share's tiles in
 * increasing order, then, once that is done, tiles taken one at a time from
 * the end of the share with the most left (in decreasing order): a worker
 * slowed by another process does fewer tiles instead of holding up the
 * launch. Every tile runs exactly once. In checked mode a block keeps to its
 * own share, so the failure reported is the same from run to run. */
#define VN_MAX_TILE_SHARES 4096 /* as many as a device has workers at most */
/* The next tile of this block into *tile (also its loop index for errors,
 * as vn_set_loop); false when none is left. */
bool vn_tile_next(vn_core *core, int64_t *tile);
/* Whether tile + 1 is probably this block's next tile (both lie in its own
 * share): for hints such as prefetching the next tile's data. */
bool vn_tile_followed(const vn_core *core, int64_t tile);
/* This block's share as the launch cut it: [*begin, *end). Tiles outside it
 * came from another share (a kernel's hints about the tiles it runs next
 * hold only inside). */
void vn_tile_home(const vn_core *core, int64_t *begin, int64_t *end);

/* Complete every pending copy of this block (the hardware's PipeBarrier): for
 * scalar code that reads or writes a queue buffer outside the queue protocol. */
void vn_pipe_barrier(vn_core *core);

/* ---- global tensors --------------------------------------------------------- */

/* Cache hints for a global tensor (Ascend GlobalTensor::SetL2CacheHint). */
typedef enum vn_cache_hint {
    VN_CACHE_NORMAL = 0, /* copies go through the caches */
    /* Copy-out writes around the caches (non-temporal stores): no read-for-
     * ownership traffic and no eviction of useful data. For outputs that will not
     * be read again soon, e.g. larger than the last-level cache. */
    VN_CACHE_STREAM = 1,
} vn_cache_hint;

/* A view of user memory: `len` elements of `dtype` at `data`. */
typedef struct vn_gm {
    void *data;
    int64_t len;
    vn_dtype dtype;
    vn_cache_hint hint;
} vn_gm;

static inline vn_gm vn_gm_make(void *data, vn_dtype dtype, int64_t len)
{
    vn_gm g = {data, len, dtype, VN_CACHE_NORMAL};
    return g;
}

static inline vn_gm vn_gm_with_hint(vn_gm g, vn_cache_hint hint)
{
    g.hint = hint;
    return g;
}

/* ---- local tensors, positions, queues ------------------------------------ */

/* Logical positions (Ascend TPosition); each lives in one arena. */
typedef enum vn_position {
    VN_VECIN = 0, /* UB: copied in, read by vector */
    VN_VECOUT,    /* UB: written by vector, copied out */
    VN_VECCALC,   /* UB: temporaries */
    VN_A1,        /* L1: left matrix staging */
    VN_B1,        /* L1: right matrix staging */
    VN_A2,        /* L0A */
    VN_B2,        /* L0B */
    VN_CO1,       /* L0C */
    VN_POSITION_COUNT
} vn_position;

vn_arena vn_position_arena(vn_position position);
const char *vn_position_name(vn_position position);

/* A view into scratch, or a window onto global memory (vn_gm_window). `bytes`
 * is what remains of the underlying buffer from `data` on (the extent checked
 * mode allows). `owner`/`slot` identify the queue buffer it came from (owner
 * -1: a vn_buf; VN_OWNER_GM: a window, its mode and cache hint encoded in a
 * negative slot). Pass by value; do not edit fields. */
typedef struct vn_local {
    void *data;
    int32_t bytes;
    vn_dtype dtype;
    int16_t owner;
    int16_t slot;
} vn_local;

/* Typed pointer to a local's data, for scalar access in kernel code. */
#define vn_ptr(T, t) ((T *)(t).data)

/* Element `offset` of t as a new view (same owner); checked mode verifies the
 * offset is inside and (unless t is a window, vn_gm_window) 32-byte aligned. */
#define vn_local_at(core, t, offset) vn_local_at_(core, t, offset, VN_HERE)
vn_local vn_local_at_(vn_core *core, vn_local t, int64_t offset, vn_site site);

/* The same bytes viewed as another dtype (Ascend ReinterpretCast). */
vn_local vn_local_as(vn_local t, vn_dtype dtype);

typedef struct vn_queue vn_queue;

/* A queue of `num` buffers of `count` elements of `dtype`, carved from the
 * arena of `position` (2 buffers = double buffering). Depth (how many tensors
 * may be enqueued before one is dequeued) defaults to `num`.
 * Scratch overflow fails the block in every mode. */
#define vn_queue_new(core, position, num, count, dtype)                                            \
    vn_queue_new_(core, position, num, count, dtype, VN_HERE)
vn_queue *vn_queue_new_(vn_core *core, vn_position position, int32_t num, int64_t count,
                        vn_dtype dtype, vn_site site);
#define vn_queue_set_depth(core, q, depth) vn_queue_set_depth_(core, q, depth, VN_HERE)
void vn_queue_set_depth_(vn_core *core, vn_queue *q, int32_t depth, vn_site site);

/* alloc -> (write) -> enque -> deque -> (read) -> free. */
#define vn_alloc(core, q)    vn_alloc_(core, q, VN_HERE)
#define vn_enque(core, q, t) vn_enque_(core, q, t, VN_HERE)
#define vn_deque(core, q)    vn_deque_(core, q, VN_HERE)
#define vn_free(core, q, t)  vn_free_(core, q, t, VN_HERE)
vn_local vn_alloc_(vn_core *core, vn_queue *q, vn_site site);
void vn_enque_(vn_core *core, vn_queue *q, vn_local t, vn_site site);
vn_local vn_deque_(vn_core *core, vn_queue *q, vn_site site);
void vn_free_(vn_core *core, vn_queue *q, vn_local t, vn_site site);

/* A plain scratch buffer (Ascend TBuf): no queue protocol. */
#define vn_buf_new(core, position, count, dtype) vn_buf_new_(core, position, count, dtype, VN_HERE)
vn_local vn_buf_new_(vn_core *core, vn_position position, int64_t count, vn_dtype dtype,
                     vn_site site);

/* A window onto `count` elements of global tensor g from element `offset` on,
 * usable where a vector instruction takes a local tensor (owner VN_OWNER_GM;
 * copies and cube instructions refuse windows). The CPU has no separate UB: a
 * tile that needs no layout change, cast or broadcast can be computed where
 * it lies, so an element-wise pass reads each input once and writes its
 * output once, with no VECIN / VECOUT copies (on one core those run as
 * separate read and write phases, at about half the bandwidth of a loop that
 * reads and writes together: docs/architecture.md).
 *   - mode VN_WINDOW_READ: instructions may only read it (checked mode reports
 *     a write); its bytes count as copied in. VN_WINDOW_WRITE: it may also be
 *     written; its bytes count as copied out. Counted once, when made.
 *   - a VN_WINDOW_WRITE window onto a VN_CACHE_STREAM tensor is written by
 *     vn_vunary / vn_vbinary / vn_vscalar with non-temporal stores (the block
 *     end fences them).
 *   - not a queue buffer (it cannot be enqueued or freed); needs no 32-byte
 *     alignment, only the dtype's. Instructions wait for this block's pending
 *     copies as always.
 * Fails the block for a negative count or a window over 2 GiB; checked mode
 * validates the extent against g. */
typedef enum vn_window_mode { VN_WINDOW_READ = 0, VN_WINDOW_WRITE = 1 } vn_window_mode;
#define VN_OWNER_GM (-2)
#define vn_gm_window(core, g, offset, count, mode)                                                 \
    vn_gm_window_(core, g, offset, count, mode, VN_HERE)
vn_local vn_gm_window_(vn_core *core, vn_gm g, int64_t offset, int64_t count, vn_window_mode mode,
                       vn_site site);

/* ---- copies between global memory and scratch ----------------------------- */

/* Contiguous: `count` elements; count * size is rounded DOWN to 32 bytes (checked
 * mode reports a length that would be truncated). Offsets are in elements. */
#define vn_copy_in(core, dst, src, src_off, count)                                                 \
    vn_copy_in_(core, dst, src, src_off, count, VN_HERE)
#define vn_copy_out(core, dst, dst_off, src, count)                                                \
    vn_copy_out_(core, dst, dst_off, src, count, VN_HERE)
void vn_copy_in_(vn_core *core, vn_local dst, vn_gm src, int64_t src_off, int64_t count,
                 vn_site site);
void vn_copy_out_(vn_core *core, vn_gm dst, int64_t dst_off, vn_local src, int64_t count,
                  vn_site site);

/* Hint that `count` elements at src_off will be copied in soon: their lines are
 * requested from memory now, so that the fetch overlaps the current tile's
 * compute (the CPU analogue of starting the next tile's MTE copy early, with
 * double buffering). No effect on results or counters; checked mode validates
 * the range as vn_copy_in would. Call it after copying in tile t, for t + 1. */
#define vn_prefetch(core, src, src_off, count) vn_prefetch_(core, src, src_off, count, VN_HERE)
void vn_prefetch_(vn_core *core, vn_gm src, int64_t src_off, int64_t count, vn_site site);

/* Strided (Ascend DataCopyParams): block_count blocks of block_len 32-byte units;
 * after each block skip src_gap units on the source and dst_gap on the destination. */
typedef struct vn_copy_params {
    uint16_t block_count; /* 0..4095 */
    uint16_t block_len;   /* in 32-byte units */
    uint16_t src_gap;     /* in 32-byte units */
    uint16_t dst_gap;     /* in 32-byte units */
} vn_copy_params;
#define vn_copy_in_strided(core, dst, src, src_off, params)                                        \
    vn_copy_in_strided_(core, dst, src, src_off, params, VN_HERE)
#define vn_copy_out_strided(core, dst, dst_off, src, params)                                       \
    vn_copy_out_strided_(core, dst, dst_off, src, params, VN_HERE)
void vn_copy_in_strided_(vn_core *core, vn_local dst, vn_gm src, int64_t src_off,
                         vn_copy_params params, vn_site site);
void vn_copy_out_strided_(vn_core *core, vn_gm dst, int64_t dst_off, vn_local src,
                          vn_copy_params params, vn_site site);

/* Padded (Ascend DataCopyPad): rows of any byte length. In scratch each row
 * starts on a 32-byte block and is padded up to a whole block. The global-memory
 * gap is in bytes, the scratch gap in 32-byte blocks. */
typedef struct vn_copy_pad_params {
    uint16_t block_count; /* rows */
    uint32_t block_len;   /* bytes per row, a multiple of the element size */
    int64_t gm_gap;       /* bytes between rows in global memory */
    uint32_t local_gap;   /* 32-byte blocks between padded rows in scratch */
} vn_copy_pad_params;
/* Filler for the padding of each row on copy-in: `left` and `right` elements
 * (each <= 32 bytes) of `value` around the data when `enable`, else the rest of
 * the last block is filled with `value`. */
typedef struct vn_pad {
    bool enable;
    uint8_t left, right;
    double value;
} vn_pad;
#define vn_copy_in_pad(core, dst, src, src_off, params, pad)                                       \
    vn_copy_in_pad_(core, dst, src, src_off, params, pad, VN_HERE)
#define vn_copy_out_pad(core, dst, dst_off, src, params)                                           \
    vn_copy_out_pad_(core, dst, dst_off, src, params, VN_HERE)
void vn_copy_in_pad_(vn_core *core, vn_local dst, vn_gm src, int64_t src_off,
                     vn_copy_pad_params params, vn_pad pad, vn_site site);
/* Writes only the real bytes of each row. */
void vn_copy_out_pad_(vn_core *core, vn_gm dst, int64_t dst_off, vn_local src,
                      vn_copy_pad_params params, vn_site site);

/* ---- vector instructions ----------------------------------------------------- */

/* Element-wise operations. One enum serves the vector instructions, the fused
 * element-wise kernel of the ops layer and the ISA tables. f32 is native; f16
 * and bf16 are computed in f32; i32 supports the integer-safe subset
 * (add sub mul max min abs neg relu and the scalar forms adds muls maxs mins). */
typedef enum vn_vop {
    /* unary: dst = f(a) */
    VN_VOP_ABS = 0,
    VN_VOP_EXP,
    VN_VOP_LN,
    VN_VOP_SQRT,
    VN_VOP_RSQRT,
    VN_VOP_RECIPROCAL,
    VN_VOP_RELU,
    VN_VOP_NEG,
    VN_VOP_SIGMOID,
    VN_VOP_TANH,
    VN_VOP_GELU, /* erf form */
    VN_VOP_SILU,
    /* binary: dst = f(a, b) */
    VN_VOP_ADD,
    VN_VOP_SUB,
    VN_VOP_MUL,
    VN_VOP_DIV,
    VN_VOP_MAX,
    VN_VOP_MIN,
    /* scalar: dst = f(a, s) */
    VN_VOP_ADDS,
    VN_VOP_MULS,
    VN_VOP_MAXS,
    VN_VOP_MINS,
    VN_VOP_LEAKY_RELU, /* a >= 0 ? a : s * a */
    VN_VOP_COUNT
} vn_vop;

#define VN_VOP_FIRST_UNARY  VN_VOP_ABS
#define VN_VOP_FIRST_BINARY VN_VOP_ADD
#define VN_VOP_FIRST_SCALAR VN_VOP_ADDS

typedef enum vn_vop_kind { VN_VOP_UNARY, VN_VOP_BINARY, VN_VOP_SCALAR } vn_vop_kind;
vn_vop_kind vn_vop_kind_of(vn_vop op);
const char *vn_vop_name(vn_vop op); /* "Add", "Exp", "LeakyRelu", ... */
/* True when `op` is defined for `dtype` as a vector instruction. */
bool vn_vop_supports(vn_vop op, vn_dtype dtype);

/* First-n form: the first `n` elements; all operands have the dst dtype. */
#define vn_vunary(core, op, dst, a, n)     vn_vunary_(core, op, dst, a, n, VN_HERE)
#define vn_vbinary(core, op, dst, a, b, n) vn_vbinary_(core, op, dst, a, b, n, VN_HERE)
#define vn_vscalar(core, op, dst, a, s, n) vn_vscalar_(core, op, dst, a, s, n, VN_HERE)
void vn_vunary_(vn_core *core, vn_vop op, vn_local dst, vn_local a, int64_t n, vn_site site);
void vn_vbinary_(vn_core *core, vn_vop op, vn_local dst, vn_local a, vn_local b, int64_t n,
                 vn_site site);
void vn_vscalar_(vn_core *core, vn_vop op, vn_local dst, vn_local a, double s, int64_t n,
                 vn_site site);

/* An element-wise program as one instruction (f32): registers 0 .. num_inputs
 * - 1 are `inputs`, instruction k writes register num_inputs + k (its sources
 * are earlier registers; src1 only for binary ops, scalar only for scalar
 * ops), and the last one's register is dst; every operand has n elements.
 * dst may be one of the inputs, else apart from them (checked mode reports a
 * partial overlap); inputs no instruction reads are not looked at. Run one
 * instruction at a time over a tile in global memory, a program reads its
 * inputs in one pass and writes its result in the next, and on one core those
 * passes do not overlap; this runs the whole program on 512-byte chunks
 * (intermediates in L1, a streamed dst written with non-temporal stores chunk
 * by chunk), so reads and writes do: a ReLU-Add over 64 Mi elements 4-7 %
 * faster; on cache-resident data the per-chunk calls cost 3-5 % (Zen 3). The
 * program's shape is checked in every mode, operands and extents in checked
 * mode. */
#define VN_VPROGRAM_MAX_INSTRS 32
#define VN_VPROGRAM_MAX_INPUTS 16
typedef struct vn_vinstr {
    vn_vop op;
    int16_t src0, src1; /* src1 only for binary ops */
    double scalar;      /* for scalar ops */
} vn_vinstr;
#define vn_vprogram(core, dst, inputs, num_inputs, instrs, num_instrs, n)                          \
    vn_vprogram_(core, dst, inputs, num_inputs, instrs, num_instrs, n, VN_HERE)
void vn_vprogram_(vn_core *core, vn_local dst, const vn_local *inputs, int32_t num_inputs,
                  const vn_vinstr *instrs, int32_t num_instrs, int64_t n, vn_site site);

#define vn_abs(c, d, a, n)           vn_vunary_(c, VN_VOP_ABS, d, a, n, VN_HERE)
#define vn_exp(c, d, a, n)           vn_vunary_(c, VN_VOP_EXP, d, a, n, VN_HERE)
#define vn_ln(c, d, a, n)            vn_vunary_(c, VN_VOP_LN, d, a, n, VN_HERE)
#define vn_sqrt(c, d, a, n)          vn_vunary_(c, VN_VOP_SQRT, d, a, n, VN_HERE)
#define vn_rsqrt(c, d, a, n)         vn_vunary_(c, VN_VOP_RSQRT, d, a, n, VN_HERE)
#define vn_reciprocal(c, d, a, n)    vn_vunary_(c, VN_VOP_RECIPROCAL, d, a, n, VN_HERE)
#define vn_relu(c, d, a, n)          vn_vunary_(c, VN_VOP_RELU, d, a, n, VN_HERE)
#define vn_neg(c, d, a, n)           vn_vunary_(c, VN_VOP_NEG, d, a, n, VN_HERE)
#define vn_add(c, d, a, b, n)        vn_vbinary_(c, VN_VOP_ADD, d, a, b, n, VN_HERE)
#define vn_sub(c, d, a, b, n)        vn_vbinary_(c, VN_VOP_SUB, d, a, b, n, VN_HERE)
#define vn_mul(c, d, a, b, n)        vn_vbinary_(c, VN_VOP_MUL, d, a, b, n, VN_HERE)
#define vn_div(c, d, a, b, n)        vn_vbinary_(c, VN_VOP_DIV, d, a, b, n, VN_HERE)
#define vn_max(c, d, a, b, n)        vn_vbinary_(c, VN_VOP_MAX, d, a, b, n, VN_HERE)
#define vn_min(c, d, a, b, n)        vn_vbinary_(c, VN_VOP_MIN, d, a, b, n, VN_HERE)
#define vn_adds(c, d, a, s, n)       vn_vscalar_(c, VN_VOP_ADDS, d, a, s, n, VN_HERE)
#define vn_muls(c, d, a, s, n)       vn_vscalar_(c, VN_VOP_MULS, d, a, s, n, VN_HERE)
#define vn_maxs(c, d, a, s, n)       vn_vscalar_(c, VN_VOP_MAXS, d, a, s, n, VN_HERE)
#define vn_mins(c, d, a, s, n)       vn_vscalar_(c, VN_VOP_MINS, d, a, s, n, VN_HERE)
#define vn_leaky_relu(c, d, a, s, n) vn_vscalar_(c, VN_VOP_LEAKY_RELU, d, a, s, n, VN_HERE)

/* Mask/repeat form (the ISA form). One repeat covers 256 bytes = 8 blocks of
 * 32 B; lane i of a repeat is enabled by bit i of the mask (bits[0] = lanes
 * 0..63, bits[1] = lanes 64..127; 16-bit types have 128 lanes, 32-bit 64).
 * Block stride: blocks between the 8 blocks of one repeat (1 = contiguous).
 * Repeat stride: blocks between the starts of consecutive repeats (8 = contiguous). */
typedef struct vn_mask {
    uint64_t bits[2];
} vn_mask;
/* The first `k` lanes enabled (k <= 128). */
vn_mask vn_mask_first(int32_t k);

typedef struct vn_unary_rep {
    uint16_t dst_blk, src_blk, dst_rep, src_rep;
} vn_unary_rep;
typedef struct vn_binary_rep {
    uint16_t dst_blk, src0_blk, src1_blk, dst_rep, src0_rep, src1_rep;
} vn_binary_rep;
#define VN_UNARY_REP_CONTIGUOUS  ((vn_unary_rep){1, 1, 8, 8})
#define VN_BINARY_REP_CONTIGUOUS ((vn_binary_rep){1, 1, 1, 8, 8, 8})

#define vn_vunary_rep(core, op, dst, a, mask, repeat, p)                                           \
    vn_vunary_rep_(core, op, dst, a, mask, repeat, p, VN_HERE)
#define vn_vbinary_rep(core, op, dst, a, b, mask, repeat, p)                                       \
    vn_vbinary_rep_(core, op, dst, a, b, mask, repeat, p, VN_HERE)
#define vn_vscalar_rep(core, op, dst, a, s, mask, repeat, p)                                       \
    vn_vscalar_rep_(core, op, dst, a, s, mask, repeat, p, VN_HERE)
void vn_vunary_rep_(vn_core *core, vn_vop op, vn_local dst, vn_local a, vn_mask mask,
                    int32_t repeat, vn_unary_rep p, vn_site site);
void vn_vbinary_rep_(vn_core *core, vn_vop op, vn_local dst, vn_local a, vn_local b, vn_mask mask,
                     int32_t repeat, vn_binary_rep p, vn_site site);
void vn_vscalar_rep_(vn_core *core, vn_vop op, vn_local dst, vn_local a, double s, vn_mask mask,
                     int32_t repeat, vn_unary_rep p, vn_site site);

/* Fill the first n elements with `value` (converted to dst's dtype). */
#define vn_duplicate(core, dst, value, n) vn_duplicate_(core, dst, value, n, VN_HERE)
void vn_duplicate_(vn_core *core, vn_local dst, double value, int64_t n, vn_site site);

/* Cast with a rounding mode (Ascend RoundMode). NONE: exact where exact, else
 * RINT. ODD: round to odd (von Neumann), for f32 -> f16 / bf16. */
typedef enum vn_round {
    VN_ROUND_NONE = 0,
    VN_ROUND_RINT,  /* to nearest, ties to even */
    VN_ROUND_FLOOR, /* toward -inf */
    VN_ROUND_CEIL,  /* toward +inf */
    VN_ROUND_ROUND, /* to nearest, ties away from zero */
    VN_ROUND_TRUNC, /* toward zero */
    VN_ROUND_ODD,
    VN_ROUND_COUNT
} vn_round;
/* Supported pairs: f32 <-> f16, f32 <-> bf16, f32 <-> i32, f16 -> i32, i32 -> f16,
 * f16 <-> bf16 (through f32), u8 / i8 -> f32 / f16, f32 / f16 -> u8 / i8 (saturating).
 * Float -> integer rounds by `mode` (NONE = RINT) and saturates. */
#define vn_cast(core, dst, src, mode, n) vn_cast_(core, dst, src, mode, n, VN_HERE)
void vn_cast_(vn_core *core, vn_local dst, vn_local src, vn_round mode, int64_t n, vn_site site);

/* Compare to a bit mask: bit i of dst (u8, little-endian) = a[i] CMP b[i].
 * n * element size must be a multiple of 256 bytes (the hardware rule). */
typedef enum vn_cmp { VN_CMP_LT = 0, VN_CMP_GT, VN_CMP_GE, VN_CMP_LE, VN_CMP_EQ, VN_CMP_NE } vn_cmp;
#define vn_compare(core, dst, a, b, cmp, n) vn_compare_(core, dst, a, b, cmp, n, VN_HERE)
#define vn_compare_scalar(core, dst, a, s, cmp, n)                                                 \
    vn_compare_scalar_(core, dst, a, s, cmp, n, VN_HERE)
void vn_compare_(vn_core *core, vn_local dst, vn_local a, vn_local b, vn_cmp cmp, int64_t n,
                 vn_site site);
void vn_compare_scalar_(vn_core *core, vn_local dst, vn_local a, double s, vn_cmp cmp, int64_t n,
                        vn_site site);
/* dst[i] = bit i of mask ? a[i] : b[i]   (or : s for the scalar form). */
#define vn_select(core, dst, mask, a, b, n) vn_select_(core, dst, mask, a, b, n, VN_HERE)
#define vn_select_scalar(core, dst, mask, a, s, n)                                                 \
    vn_select_scalar_(core, dst, mask, a, s, n, VN_HERE)
void vn_select_(vn_core *core, vn_local dst, vn_local mask, vn_local a, vn_local b, int64_t n,
                vn_site site);
void vn_select_scalar_(vn_core *core, vn_local dst, vn_local mask, vn_local a, double s, int64_t n,
                       vn_site site);

/* Reductions (f32 accumulation for f16 / bf16 inputs; result in dst's dtype).
 * Whole tensor: dst[0] = reduce(src[0..n)). */
typedef enum vn_reduce { VN_REDUCE_SUM = 0, VN_REDUCE_MAX, VN_REDUCE_MIN } vn_reduce;
#define vn_reduce(core, kind, dst, src, n) vn_reduce_(core, kind, dst, src, n, VN_HERE)
void vn_reduce_(vn_core *core, vn_reduce kind, vn_local dst, vn_local src, int64_t n, vn_site site);
#define vn_reduce_sum(c, d, s, n) vn_reduce_(c, VN_REDUCE_SUM, d, s, n, VN_HERE)
#define vn_reduce_max(c, d, s, n) vn_reduce_(c, VN_REDUCE_MAX, d, s, n, VN_HERE)
#define vn_reduce_min(c, d, s, n) vn_reduce_(c, VN_REDUCE_MIN, d, s, n, VN_HERE)
/* Per 32-byte block (Ascend BlockReduce): for each repeat r and block j,
 * dst[r*8 + j] = reduce of the masked lanes of that block. */
#define vn_block_reduce(core, kind, dst, src, mask, repeat, src_blk, src_rep)                      \
    vn_block_reduce_(core, kind, dst, src, mask, repeat, src_blk, src_rep, VN_HERE)
void vn_block_reduce_(vn_core *core, vn_reduce kind, vn_local dst, vn_local src, vn_mask mask,
                      int32_t repeat, uint16_t src_blk, uint16_t src_rep, vn_site site);
/* Per repeat (Ascend WholeReduce): dst[r] = reduce of the masked lanes of repeat r. */
#define vn_repeat_reduce(core, kind, dst, src, mask, repeat, src_blk, src_rep)                     \
    vn_repeat_reduce_(core, kind, dst, src, mask, repeat, src_blk, src_rep, VN_HERE)
void vn_repeat_reduce_(vn_core *core, vn_reduce kind, vn_local dst, vn_local src, vn_mask mask,
                       int32_t repeat, uint16_t src_blk, uint16_t src_rep, vn_site site);

/* ---- high-level vector APIs (Ascend C lib/: LayerNorm, SoftMax) ------------ *
 *
 * Fused row instructions: each is one call that makes the minimum number of
 * passes over every row, the row staying in L1 between passes (the composed
 * form made 5 to 9 passes, each a full instruction over the row).
 *
 * Operands: `rows` rows of `n` elements; row r starts at element r * row_pitch
 * of src and of dst (row_pitch >= n). src and dst have the same dtype, f32,
 * f16 or bf16, and are the same tensor (in place) or disjoint. Statistics and
 * arithmetic are in f32 (16-bit rows are converted per block of the row and the
 * result rounded to nearest even once); per-row totals are added in double.
 * Checked mode validates the operands and every row's bytes read and written.
 * vector_elem_ops counts rows * n per pass. */

typedef enum vn_norm_mode {
    VN_NORM_LAYER = 0, /* (x - mean) / sqrt(var + eps) * gamma + beta */
    VN_NORM_RMS        /* x / sqrt(mean(x^2) + eps) * gamma + beta */
} vn_norm_mode;

/* Row normalisation, per row:
 *   pass 1 (LAYER): m = mean(x), rounded to f32;
 *   pass 2: d = x - m (m = 0 for RMS); delta = mean(d) (LAYER; 0 for RMS),
 *           var = mean(d^2) - delta^2 (the corrected two-pass variance: exact
 *           near the mean, no cancellation for a large common offset);
 *           rstd = 1 / sqrt(max(var, 0) + eps);
 *   pass 3: y = ((x - m) - delta) * rstd * gamma + beta.
 * gamma (and beta) are f32 locals of at least n elements; beta.data == NULL
 * (e.g. (vn_local){0}) means no shift. */
#define vn_layernorm_rows(core, dst, src, gamma, beta, rows, n, row_pitch, eps, mode)              \
    vn_layernorm_rows_(core, dst, src, gamma, beta, rows, n, row_pitch, eps, mode, VN_HERE)
void vn_layernorm_rows_(vn_core *core, vn_local dst, vn_local src, vn_local gamma, vn_local beta,
                        int64_t rows, int64_t n, int64_t row_pitch, double eps, vn_norm_mode mode,
                        vn_site site);

/* vn_layernorm_rows on rows that stay in global memory (element dst_off /
 * src_off on, row_pitch apart; dst == src or disjoint): the kernel reads and
 * writes them in place instead of through VECIN / VECOUT, the way the conv
 * kernels read their inputs. Rows queued with vn_prefetch stream in during the
 * passes; a dst with the VN_CACHE_STREAM hint gets non-temporal stores.
 * Counts bytes_in / bytes_out as the copies would. Checked mode validates
 * both extents against their tensors and gamma / beta as vn_layernorm_rows. */
#define vn_layernorm_rows_gm(core, dst, dst_off, src, src_off, gamma, beta, rows, n, row_pitch,    \
                             eps, mode)                                                            \
    vn_layernorm_rows_gm_(core, dst, dst_off, src, src_off, gamma, beta, rows, n, row_pitch, eps,  \
                          mode, VN_HERE)
void vn_layernorm_rows_gm_(vn_core *core, vn_gm dst, int64_t dst_off, vn_gm src, int64_t src_off,
                           vn_local gamma, vn_local beta, int64_t rows, int64_t n,
                           int64_t row_pitch, double eps, vn_norm_mode mode, vn_site site);

/* Softmax (log_softmax false) or LogSoftmax of each row, numerically stable:
 *   pass 1: m = max(x);
 *   pass 2: e = exp(x - m), s = sum(e) (f32 Softmax keeps e in dst);
 *   pass 3: y = e * (1 / s), or y = (x - m) - log(s).
 * 16-bit Softmax recomputes e in pass 3 rather than keep it rounded. */
#define vn_softmax_rows(core, dst, src, rows, n, row_pitch, log_softmax)                           \
    vn_softmax_rows_(core, dst, src, rows, n, row_pitch, log_softmax, VN_HERE)
void vn_softmax_rows_(vn_core *core, vn_local dst, vn_local src, int64_t rows, int64_t n,
                      int64_t row_pitch, bool log_softmax, vn_site site);
/* vn_softmax_rows on rows in place in global memory, as vn_layernorm_rows_gm;
 * `scratch` (f32, at least n elements, any position) holds an f32 Softmax
 * row's exponentials so dst is written once. */
#define vn_softmax_rows_gm(core, dst, dst_off, src, src_off, scratch, rows, n, row_pitch,          \
                           log_softmax)                                                            \
    vn_softmax_rows_gm_(core, dst, dst_off, src, src_off, scratch, rows, n, row_pitch,             \
                        log_softmax, VN_HERE)
void vn_softmax_rows_gm_(vn_core *core, vn_gm dst, int64_t dst_off, vn_gm src, int64_t src_off,
                         vn_local scratch, int64_t rows, int64_t n, int64_t row_pitch,
                         bool log_softmax, vn_site site);

/* ---- cube instructions ([C]) ------------------------------------------------ *
 *
 * The matrix path GM -> L1 (A1/B1) or L0A/L0B (A2/B2) -> mmad into L0C (CO1) ->
 * fixpipe -> GM. On a CPU the cube is a register-blocked micro-kernel and the
 * Ascend fractal becomes the micro-panel ("the CPU fractal"), whose shape the
 * active ISA decides (vn_cube_shape_of):
 *
 *   A (m x k, in A1 or A2): row-major, rup(m, MR) rows of Kp elements, Kp = k
 *     rounded up to KP; element (r, c) at r*Kp + c. KP consecutive k of a row
 *     are thus together: bf16 pairs (KP = 2, for vdpbf16ps), int8 quads (KP =
 *     4, for vpdpbusd); the micro-kernel broadcasts them from MR rows at once,
 *     so a row-major source loads with one copy per row.
 *   B (k x n, in B1 or B2): ceil(n/NR) panels of NR columns, each Kp x NR:
 *       q*NR*Kp + (r/KP)*NR*KP + (c%NR)*KP + r%KP           (c = q*NR + c%NR)
 *   C (m x n, in CO1, f32 or i32): row-major, rup(m, MR) rows of rup(n, NR)
 *     elements.
 * Rows past m, columns past n and k past k are zero in A and B (the loads pad
 * them), so a micro-kernel always runs whole tiles; fixpipe writes only m x n.
 *
 * Types: A f32 x B f32 -> f32; A bf16 x B bf16 -> f32; A u8 x B i8 -> i32. The
 * loads convert: f32 -> bf16 (round to nearest even), i8 A -> u8 by adding 128,
 * u8 B -> i8 by subtracting 128 (fixpipe's zero points undo the shifts).
 * Checked mode validates positions (A in L1/L0A, B in L1/L0B, C in L0C),
 * dtypes, 32-byte alignment, extents, global-memory bounds, and that mmad reads
 * only what loads wrote. cube_ops counts multiply-accumulates (m*n*k), and
 * cube_ops_bf16 / cube_ops_int8 the part of them on bf16 / int8 operands. */

typedef struct vn_cube_shape {
    int32_t mr, nr, kp; /* micro-tile rows, columns, k packing (1, 2 or 4) */
} vn_cube_shape;

/* The micro-panel shape of the active ISA for operands of `dtype` (VN_F32,
 * VN_BF16, VN_U8 / VN_I8); {0,0,0} for another dtype. Fixed for the process. */
vn_cube_shape vn_cube_shape_of(vn_dtype dtype);

/* True when the active ISA multiplies int8 faster than f32: a native u8 x s8
 * dot product (AVX-512 VNNI, AMX tiles). AVX2 has none that is exact (its
 * int8 kernel widens to 16 bits and runs at about the f32 FMA rate) and
 * AVX-512 without VNNI uses a generic loop, so the graph engine keeps QDQ
 * groups in f32 there (pass_fuse_qdq.c). */
bool vn_cube_int8_native(void);
/* Elements of a packed A (m x k), packed B (k x n) and C tile (m x n). */
int64_t vn_cube_a_elems(vn_dtype dtype, int64_t m, int64_t k);
int64_t vn_cube_b_elems(vn_dtype dtype, int64_t k, int64_t n);
int64_t vn_cube_c_elems(vn_dtype dtype, int64_t m, int64_t n);

/* A matrix in global memory: element (i, j) at gm element off + i*rs + j*cs.
 * Any strides (a transposed operand swaps rs and cs; 0 broadcasts). */
typedef struct vn_mat {
    vn_gm gm;
    int64_t off, rs, cs;
} vn_mat;
static inline vn_mat vn_mat_make(vn_gm gm, int64_t off, int64_t rs, int64_t cs)
{
    vn_mat m = {gm, off, rs, cs};
    return m;
}

/* Pack an m x k block of A (element (i, j) = src(i, j)) into dst (A1 or A2,
 * dtype F32, BF16 or U8; src F32 -> F32/BF16, BF16 -> BF16, U8/I8 -> U8). */
#define vn_cube_load_a(core, dst, src, m, k) vn_cube_load_a_(core, dst, src, m, k, VN_HERE)
void vn_cube_load_a_(vn_core *core, vn_local dst, vn_mat src, int64_t m, int64_t k, vn_site site);
/* Pack a k x n block of B into dst (B1 or B2, dtype F32, BF16 or I8; src F32
 * -> F32/BF16, BF16 -> BF16, I8/U8 -> I8). */
#define vn_cube_load_b(core, dst, src, k, n) vn_cube_load_b_(core, dst, src, k, n, VN_HERE)
void vn_cube_load_b_(vn_core *core, vn_local dst, vn_mat src, int64_t k, int64_t n, vn_site site);
/* Hint that the rows x cols block of src will be loaded soon (the next tile's
 * vn_cube_load_a / _b): its lines are requested while the current mmads run,
 * one every 4th k step of the micro-kernel, the newest hint first, so the load
 * finds them in L2 (the analogue of the MTE2 copy of tile t + 1 running
 * during the mmad of tile t). A load drops the hints it covers. No effect on
 * results or counters; checked mode validates the block as a load would. */
#define vn_prefetch_mat(core, src, rows, cols) vn_prefetch_mat_(core, src, rows, cols, VN_HERE)
void vn_prefetch_mat_(vn_core *core, vn_mat src, int64_t rows, int64_t cols, vn_site site);
/* Request the lines of a small rows x cols block now, all at once: the block
 * the fixpipe after the next mmad writes (a tile of C), so that its stores
 * find their lines in cache instead of each store miss waiting in turn for
 * memory (the store buffer drains in order). Keep it to a few KiB (the
 * GEMM's blocks are at most a quarter of L1d, 128 lines): the burst holds
 * line-fill buffers the next mmad needs, and the lines must still be in
 * cache when the fixpipe comes. No effect on results or counters; checked
 * mode validates the block as vn_prefetch_mat. */
#define vn_prefetch_mat_now(core, dst, rows, cols)                                                 \
    vn_prefetch_mat_now_(core, dst, rows, cols, VN_HERE)
void vn_prefetch_mat_now_(vn_core *core, vn_mat dst, int64_t rows, int64_t cols, vn_site site);
/* Copy rows [k0, k0+k) x columns [n0, n0+n) of a whole pre-packed B (the
 * layout above for all K x N, as vn_gemm_pack_b writes it: `packed` holds
 * ceil(N/NR) panels of Kp(K) x NR) into dst; k0 a multiple of KP, n0 of NR.
 * dst then holds exactly what vn_cube_load_b of the same block would. */
#define vn_cube_load_b_packed(core, dst, packed, K, k0, k, n0, n)                                  \
    vn_cube_load_b_packed_(core, dst, packed, K, k0, k, n0, n, VN_HERE)
void vn_cube_load_b_packed_(vn_core *core, vn_local dst, vn_gm packed, int64_t K, int64_t k0,
                            int64_t k, int64_t n0, int64_t n, vn_site site);

/* C (m x n, CO1) = (init ? 0 : C) + A (m x k) * B (k x n). m, n, k = 0: no-op. */
#define vn_cube_mmad(core, c, a, b, m, n, k, init)                                                 \
    vn_cube_mmad_(core, c, a, b, m, n, k, init, VN_HERE)
void vn_cube_mmad_(vn_core *core, vn_local c, vn_local a, vn_local b, int64_t m, int64_t n,
                   int64_t k, bool init, vn_site site);

/* C (m x n, CO1) = (init ? 0 : C) + A (m x k) * rows [k0, k0+k) x columns
 * [n0, n0+n) of a whole pre-packed B in global memory (vn_gemm_pack_b's
 * layout, as vn_cube_load_b_packed takes it). The analogue of an mmad whose B
 * is already resident in L1 in the fractal format (weights converted offline):
 * the micro-kernels read the packed panels where they lie, nothing is copied.
 * Same results as vn_cube_load_b_packed into B1 followed by vn_cube_mmad.
 * Checked mode validates A and C as mmad does, and the B block as
 * vn_cube_load_b_packed does (k0 on a k group, n0 on a panel, inside K and the
 * packed tensor, 32-byte aligned). */
#define vn_cube_mmad_packed(core, c, a, packed, K, m, k0, k, n0, n, init)                          \
    vn_cube_mmad_packed_(core, c, a, packed, K, m, k0, k, n0, n, init, VN_HERE)
void vn_cube_mmad_packed_(vn_core *core, vn_local c, vn_local a, vn_gm packed, int64_t K, int64_t m,
                          int64_t k0, int64_t k, int64_t n0, int64_t n, bool init, vn_site site);

/* vn_cube_mmad_packed with an f32 A read where it lies in global memory (rows
 * a.rs apart, a.cs == 1), not loaded into L0A: for an A whose rows are
 * already k-contiguous, the load would only copy them. The micro-kernels
 * read vn_cube_rows_read(F32, m) rows of A (m rounded up to a kernel's
 * height), which must lie inside the tensor; checked mode validates that,
 * C as mmad does and B as vn_cube_mmad_packed does. */
#define vn_cube_mmad_packed_direct(core, c, a, packed, K, m, k0, k, n0, n, init)                   \
    vn_cube_mmad_packed_direct_(core, c, a, packed, K, m, k0, k, n0, n, init, VN_HERE)
void vn_cube_mmad_packed_direct_(vn_core *core, vn_local c, vn_mat a, vn_gm packed, int64_t K,
                                 int64_t m, int64_t k0, int64_t k, int64_t n0, int64_t n, bool init,
                                 vn_site site);
/* C (m x n, CO1) = (init ? 0 : C) + A (m x k, f32, read in place as
 * mmad_packed_direct reads it) * B (k x n in B1 / B2, as vn_cube_load_b wrote
 * it): a short A is not copied into L0A once per column block. Checked mode
 * validates A as mmad_packed_direct does, B and C as mmad does. */
#define vn_cube_mmad_a_gm(core, c, a, b, m, n, k, init)                                            \
    vn_cube_mmad_a_gm_(core, c, a, b, m, n, k, init, VN_HERE)
void vn_cube_mmad_a_gm_(vn_core *core, vn_local c, vn_mat a, vn_local b, int64_t m, int64_t n,
                        int64_t k, bool init, vn_site site);
/* Rows of A the micro-kernels read for an m-row mmad (>= m). */
int64_t vn_cube_rows_read(vn_dtype a_dtype, int64_t m);

/* C (m x n, CO1) = (init ? 0 : C) + A (m x k, f32) * the k x n block of an
 * f32 B in global memory whose columns are contiguous (b.cs == 1), read in
 * place: with KP = 1 a row-major B already is the B fractal, its k rows b.rs
 * apart. For a short A (each B element feeds few micro-panels) this saves
 * the load's copy. n must be a multiple of NR (the micro-kernels read whole
 * panels); checked mode validates A and C as mmad does and B's bounds. */
#define vn_cube_mmad_gm(core, c, a, b, m, n, k, init)                                              \
    vn_cube_mmad_gm_(core, c, a, b, m, n, k, init, VN_HERE)
void vn_cube_mmad_gm_(vn_core *core, vn_local c, vn_local a, vn_mat b, int64_t m, int64_t n,
                      int64_t k, bool init, vn_site site);

/* Fixpipe epilogue, applied in this order to each accumulator v of C(i, j):
 *   v += partial(i, j)                               if partial.gm.data
 *   raw: write v (f32 / i32) and stop                (a K chunk that is not the last)
 *   int: v = scale * col_scale[j] * (v - a_zero*col_sum[j] - b_zero*row_sum[i] + k*a_zero*b_zero)
 *   v = alpha*v + beta*c_in(i, j) + bias[j or i] + residual(i, j)
 *   v = act(v)
 *   store as dst's dtype: f32, f16, bf16 (RNE), i32 (raw only), or u8 / i8:
 *     q = saturate(round_half_even(v / y_scale) + y_zero).
 * Global indices (row0 + i, col0 + j) address bias, col_scale, col_sum, row_sum;
 * tile-relative (i, j) address partial, c_in and residual (views with their own
 * strides; stride 0 broadcasts). */
typedef enum vn_act {
    VN_ACT_NONE = 0,
    VN_ACT_RELU,
    VN_ACT_CLIP, /* min(max(v, clip_min), clip_max) */
    VN_ACT_GELU_ERF,
    VN_ACT_GELU_TANH,
    VN_ACT_SILU,
    VN_ACT_SIGMOID,
    VN_ACT_COUNT
} vn_act;
typedef enum vn_bias_axis { VN_BIAS_NONE = 0, VN_BIAS_COL, VN_BIAS_ROW } vn_bias_axis;

typedef struct vn_fixpipe {
    vn_mat partial; /* accumulators (C's dtype) of earlier K chunks; gm.data NULL: none */
    bool raw;
    int64_t row0, col0;
    /* int8 only (C is i32) */
    int32_t a_zero, b_zero; /* effective zero points after the loads' shifts */
    int64_t k;              /* the full K of the product */
    vn_gm row_sum, col_sum; /* i32 sums of A's rows / B's columns (as packed); data NULL: unused */
    float scale;            /* 0 means 1 */
    vn_gm col_scale;        /* f32 per column; data NULL: none */
    /* every dtype */
    float alpha; /* 0 means 1: use alpha_zero for a real 0 */
    bool alpha_zero;
    float beta;
    vn_mat c_in; /* f32; used when beta != 0 */
    vn_bias_axis bias_axis;
    vn_gm bias;      /* f32 */
    vn_mat residual; /* f32; gm.data NULL: none */
    vn_act act;
    float clip_min, clip_max;
    float y_scale; /* u8 / i8 output; 0 means 1 */
    int32_t y_zero;
} vn_fixpipe;

/* Write C (m x n from CO1 `src`) to `dst` through the epilogue `fp` (NULL: plain). */
#define vn_cube_fixpipe(core, dst, src, m, n, fp)                                                  \
    vn_cube_fixpipe_(core, dst, src, m, n, fp, VN_HERE)
void vn_cube_fixpipe_(vn_core *core, vn_mat dst, vn_local src, int64_t m, int64_t n,
                      const vn_fixpipe *fp, vn_site site);

/* ---- launch ---------------------------------------------------------------------- */

/* Counters of one launch, summed over blocks; cheap enough to stay on. */
typedef struct vn_kernel_counters {
    int64_t bytes_in;        /* global -> scratch */
    int64_t bytes_out;       /* scratch -> global */
    int64_t vector_elem_ops; /* elements processed by vector instructions */
    int64_t cube_ops;        /* multiply-accumulates by cube instructions ([C]) */
    int64_t cube_ops_bf16;   /* the part of cube_ops on bf16 operands */
    int64_t cube_ops_int8;   /* the part on u8 x i8 operands (what the profiler's roof follows) */
    int64_t scratch_high_water[VN_ARENA_COUNT]; /* max bytes carved by one block */
    double wall_ms;
} vn_kernel_counters;

typedef struct vn_launch_desc {
    vn_kernel_fn kernel;
    const char *name; /* shown in errors and profiles */
    int32_t block_dim;
    const void *args; /* read-only for the kernel; must outlive the launch */
    /* -1: the device's mode (and VINCI_CHECKED); 0: release; 1: checked. */
    int32_t checked;
    /* > 0: the blocks share tiles [0, tiles) (vn_tile_next); block_dim is
     * then at most VN_MAX_TILE_SHARES. 0: no shared tiles. */
    int64_t tiles;
} vn_launch_desc;

/* sum += c: byte and operation counts and wall time add up, scratch high-water
 * marks take the maximum. For operators that launch several kernels. */
void vn_kernel_counters_add(vn_kernel_counters *sum, const vn_kernel_counters *c);

/* Run all blocks and wait. VN_ERR_KERNEL when a block failed; the message
 * names the kernel, block, loop, call and file:line of the first failure.
 * `counters` may be NULL. */
vn_status vn_launch(vn_device *device, const vn_launch_desc *desc, vn_kernel_counters *counters);

/* Asynchronous launch on `stream` (NULL: the default device's default stream).
 * `args_size` bytes of desc->args are copied into the task, so the caller's
 * args may die after the call (0: desc->args is used as is and must outlive
 * the task). The device is the stream's. Returns only submission errors; a
 * failure of the kernel becomes the stream's sticky error, with the context
 * "task N, kernel K, block B: message" (see vn_stream_synchronize). */
vn_status vn_launch_async(vn_stream *stream, const vn_launch_desc *desc, size_t args_size);

/* Convenience: VN_LAUNCH(dev, my_kernel, 8, &args, &counters). */
#define VN_LAUNCH(device, kernel_fn, block_dim, args, counters)                                    \
    vn_launch(device, &(vn_launch_desc){kernel_fn, #kernel_fn, block_dim, args, -1, 0}, counters)

/* Fail the block from kernel code with a message (an operator's runtime error). */
#define vn_kernel_fail(core, ...) vn_kernel_fail_(core, VN_HERE, __VA_ARGS__)
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4), noreturn))
#endif
void vn_kernel_fail_(vn_core *core, vn_site site, const char *fmt, ...);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_KERNEL_H */
