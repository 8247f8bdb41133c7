/*
 * vector_internal.h — what the vector-instruction files share: the dtype
 * generic compute step, scalar conversions, operand checks and the walk over
 * the lanes of the mask/repeat form.
 */
#ifndef VINCI_KERNEL_VECTOR_INTERNAL_H
#define VINCI_KERNEL_VECTOR_INTERNAL_H

#include "kernel/core_internal.h"
#include "kernel/isa.h"

/* Elements converted per step when f16/bf16 are computed in f32 (stack use:
 * three f32 chunks = 6 KiB). */
#define VN_VEC_CHUNK 512

/* One call of the kernel of op from the given per-kind arrays (the table's
 * plain or streamed ones). */
static inline void vn_f32_dispatch(const vn_f32_unary_fn *unary, const vn_f32_binary_fn *binary,
                                   const vn_f32_scalar_fn *scalar, vn_vop_kind kind, vn_vop op,
                                   float *dst, const float *a, const float *b, float s, int64_t n)
{
    switch (kind) {
    case VN_VOP_UNARY:
        unary[op](dst, a, n);
        break;
    case VN_VOP_BINARY:
        binary[op](dst, a, b, n);
        break;
    case VN_VOP_SCALAR:
        scalar[op](dst, a, s, n);
        break;
    }
}

/* One f32 ISA kernel call; kind is vn_vop_kind_of(op), looked up once per
 * instruction by the callers (it is out of line, and they loop over chunks). */
static inline void vn_f32_kernel(const vn_isa_table *t, vn_vop_kind kind, vn_vop op, float *dst,
                                 const float *a, const float *b, float s, int64_t n)
{
    vn_f32_dispatch(t->unary, t->binary, t->scalar, kind, op, dst, a, b, s, n);
}

/* Whether an op has a streamed kernel (isa.h *_nt: non-temporal stores
 * from registers). */
static inline bool vn_f32_has_nt(const vn_isa_table *t, vn_vop_kind kind, vn_vop op)
{
    return kind == VN_VOP_UNARY    ? t->unary_nt[op] != NULL
           : kind == VN_VOP_BINARY ? t->binary_nt[op] != NULL
                                   : t->scalar_nt[op] != NULL;
}

/* vn_f32_kernel through the streamed kernel; the op must have one. */
static inline void vn_f32_kernel_nt(const vn_isa_table *t, vn_vop_kind kind, vn_vop op, float *dst,
                                    const float *a, const float *b, float s, int64_t n)
{
    vn_f32_dispatch(t->unary_nt, t->binary_nt, t->scalar_nt, kind, op, dst, a, b, s, n);
}

/* A streamed dst is computed in chunks of this many bytes into L1 and each is
 * written out with non-temporal stores at once, so that reads and writes are
 * in flight together. Computing a whole tile and then streaming it out runs
 * as two phases: on the Zen 3 host a raw f32 Add over 64 Mi elements did
 * 22 GB/s that way against 28-29 GB/s in 512-byte chunks (256 B: 26, 1 KiB:
 * 23). */
#define VN_VEC_STREAM_BYTES 512

/* Elements of the streamed chunk that starts at `at` (size-byte elements,
 * `left` remaining): the first chunk ends on a 64-byte line, so no later chunk
 * shares a line between its plain head or tail stores and another chunk's
 * non-temporal ones. */
static inline int64_t vn_stream_chunk(uintptr_t at, int64_t size, int64_t left)
{
    int64_t m = (VN_VEC_STREAM_BYTES - (int64_t)(at & 63)) / size;
    return m < left ? m : left;
}

/* dst[i] = op(a[i], b[i] or s) for i < n on raw arrays of `dtype`, which must
 * be supported by op (vn_vop_supports). b is ignored by unary and scalar ops,
 * s by the others. dst may equal a or b. stream: dst is global memory past the
 * caches, written with non-temporal stores (the caller sees to the fence). */
void vn_vec_compute(vn_vop op, vn_dtype dtype, void *dst, const void *a, const void *b, double s,
                    int64_t n, bool stream);
/* The i32 part of vn_vec_compute (vector_i32.c). */
void vn_vec_compute_i32(vn_vop op, int32_t *dst, const int32_t *a, const int32_t *b, int32_t s,
                        int64_t n);

/* A double stored as one element of dtype (float types round to nearest even,
 * integer types round to nearest and saturate, NaN -> 0) and read back. */
void vn_scalar_store(vn_dtype dtype, void *p, double v);
double vn_scalar_load(vn_dtype dtype, const void *p);

/* Checked mode: t is a well-formed local of dtype `want`. */
void vn_vec_check_operand(vn_core *core, vn_local t, vn_dtype want, const char *what,
                          const char *call, vn_site site);
/* Checked mode: reads of the first n elements of t. */
void vn_vec_check_read_n(vn_core *core, vn_local t, int64_t n, const char *call, vn_site site);
void vn_vec_check_write_n(vn_core *core, vn_local t, int64_t n, const char *call, vn_site site);

/* Lanes per repeat of a dtype in the mask/repeat form (256 bytes / size). */
static inline int32_t vn_rep_lanes(vn_dtype dtype)
{
    return (int32_t)(VN_REPEAT_BYTES / vn_dtype_size(dtype));
}
static inline bool vn_mask_lane(vn_mask m, int32_t lane)
{
    return (m.bits[lane >> 6] >> (lane & 63)) & 1u;
}
/* Enabled lanes of one repeat for `lanes` lanes per repeat. */
int32_t vn_mask_count(vn_mask m, int32_t lanes);

/* Checked mode: every run of enabled lanes of every repeat of an operand with
 * block stride `blk` and repeat stride `rep` (32-byte units), merged where
 * contiguous, is checked as read (write = false) or marked written. */
void vn_rep_check(vn_core *core, vn_local t, vn_mask mask, int32_t repeat, int32_t blk, int32_t rep,
                  bool write, const char *call, vn_site site);
/* Checked mode: repeat count within 0..255 and dtype usable in repeat form. */
void vn_rep_check_args(vn_core *core, vn_dtype dtype, int32_t repeat, const char *call,
                       vn_site site);

/* Byte offset of lane `lane` of repeat r for block stride blk / repeat stride rep. */
static inline int64_t vn_rep_offset(int32_t r, int32_t lane, int32_t blk, int32_t rep, size_t size)
{
    int32_t per_block = (int32_t)(VN_BLOCK_BYTES / size);
    int32_t j = lane / per_block, l = lane % per_block;
    return ((int64_t)r * rep + (int64_t)j * blk) * VN_BLOCK_BYTES + (int64_t)l * (int64_t)size;
}

#endif /* VINCI_KERNEL_VECTOR_INTERNAL_H */
