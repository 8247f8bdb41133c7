/*
 * isa.h — the f32 array kernels of every vector operation, one table per ISA.
 *
 * The same source (isa_f32.inc) is compiled three times, for baseline x86-64
 * (isa_scalar.c), AVX2+FMA (isa_avx2.c) and AVX-512 (isa_avx512.c); the table
 * matching vn_isa_active() is chosen once, at first use, and never changes.
 *
 * Invariants of every kernel:
 *   - it touches exactly dst[0..n), reads a[0..n) (and b[0..n)); n >= 0;
 *   - dst may equal a or b (in place); other overlaps are not allowed;
 *   - results do not depend on n or on alignment (no reassociation across
 *     lanes for element-wise ops), so every ISA gives the same bits up to the
 *     documented ulp bounds of the transcendental functions.
 */
#ifndef VINCI_KERNEL_ISA_H
#define VINCI_KERNEL_ISA_H

#include "vinci/kernel.h"

typedef void (*vn_f32_unary_fn)(float *dst, const float *a, int64_t n);
typedef void (*vn_f32_binary_fn)(float *dst, const float *a, const float *b, int64_t n);
typedef void (*vn_f32_scalar_fn)(float *dst, const float *a, float s, int64_t n);
/* Reduction of a[0..n) (n >= 1): sum (multi-accumulator, then pairwise), max or min. */
typedef float (*vn_f32_reduce_fn)(const float *a, int64_t n);

/* The rows of a fused row instruction (see vn_layernorm_rows / vn_softmax_rows
 * in vinci/kernel.h): `rows` rows of n elements of `dtype` (f32, f16, bf16),
 * row r at element r * pitch of src and dst; dst == src or disjoint; n >= 1. */
typedef struct vn_rows_io {
    void *dst;
    const void *src;
    vn_dtype dtype;
    int64_t rows, n, pitch;
    bool stream; /* dst is a global tensor past the caches: non-temporal stores where the ISA has
                    them */
    /* Softmax f32 rows read in place from global memory (vn_softmax_rows_gm):
     * the exponentials go to this scratch row of n floats instead of dst, and
     * the next rows are prefetched into L1. NULL: kept in dst. */
    float *scratch;
} vn_rows_io;
/* gamma (beta, or NULL) hold n f32. */
typedef void (*vn_f32_norm_rows_fn)(const vn_rows_io *io, const float *gamma, const float *beta,
                                    double eps, vn_norm_mode mode);
typedef void (*vn_f32_softmax_rows_fn)(const vn_rows_io *io, bool log_softmax);
/* The fixpipe's f32 epilogue of one row piece in one pass (cube_fixpipe.c):
 * dst[j] = ((v[j] * alpha) + bias[j]) + res[j], each step rounded as an
 * instruction of its own (no contraction), a step skipped where its
 * operand is absent (mul false, bias or res NULL): the bits of the steps
 * run one pass each. dst may be v or res. */
typedef struct vn_affine_row {
    bool mul;
    float alpha;
    const float *bias, *res;
} vn_affine_row;
typedef void (*vn_f32_affine_row_fn)(float *dst, const float *v, const vn_affine_row *t, int64_t n);
/* memcpy with non-temporal stores (the caller fences). */
typedef void (*vn_stream_store_fn)(void *dst, const void *src, size_t bytes);

typedef struct vn_isa_table {
    vn_isa isa;
    /* Indexed by vn_vop; an entry is NULL when the op is not of that kind. */
    vn_f32_unary_fn unary[VN_VOP_COUNT];
    vn_f32_binary_fn binary[VN_VOP_COUNT];
    vn_f32_scalar_fn scalar[VN_VOP_COUNT];
    /* The same results written with non-temporal stores (dst 4-byte aligned,
     * plain stores before its first 64-byte line and after the last whole
     * vector); NULL where an op has none (callers stage and stream_store). */
    vn_f32_unary_fn unary_nt[VN_VOP_COUNT];
    vn_f32_binary_fn binary_nt[VN_VOP_COUNT];
    vn_f32_scalar_fn scalar_nt[VN_VOP_COUNT];
    /* Streamed binary ops followed by a ReLU: dst = relu(op(a, b)), the bits
     * of the two kernels run one after the other. */
    vn_f32_binary_fn binary_relu_nt[VN_VOP_COUNT];
    /* Indexed by vn_reduce. */
    vn_f32_reduce_fn reduce[3];
    /* High-level fused row instructions. */
    vn_f32_norm_rows_fn norm_rows;
    vn_f32_softmax_rows_fn softmax_rows;
    vn_f32_affine_row_fn affine_row;
    vn_stream_store_fn stream_store;
} vn_isa_table;

/* Requests up to `lines` cache lines queued by vn_prefetch (copy_stream.c).
 * The row instructions call it between blocks of a pass, so that the next
 * tile streams in while this one is computed, a few lines at a time (a burst
 * would hold the line-fill buffers and stall the compute). */
void vn_prefetch_issue(int64_t lines);
/* The same into L1, for row instructions reading the next rows in place. */
void vn_prefetch_issue_l1(int64_t lines);
/* Queue `rows` rows of row_bytes, `stride` bytes apart (vn_prefetch_mat). */
void vn_prefetch_queue_rows(const void *src, size_t row_bytes, int64_t rows, ptrdiff_t stride);
/* Request the lines of `rows` rows now, all at once (vn_prefetch_mat_now). */
void vn_prefetch_rows_now(const void *src, size_t row_bytes, int64_t rows, ptrdiff_t stride);
/* Up to max_lines queued lines that are contiguous from *p, newest range
 * first, taken off the queue: the cube micro-kernel requests one every 4th k step,
 * so the next tile streams in spread over the whole mmad. */
int64_t vn_prefetch_take(int64_t max_lines, const char **p);
/* Drop the queued ranges whose next line lies in [lo, hi): a load is copying
 * that tile now. */
void vn_prefetch_drop_within(const void *lo, const void *hi);

/* The table of the active ISA (thread-safe, chosen once). Never NULL. */
const vn_isa_table *vn_isa_table_get(void);
/* The table of a given ISA, for tests and benchmarks; the caller must know the
 * CPU supports it (see vn_isa_detected()). NULL for an invalid ISA. */
const vn_isa_table *vn_isa_table_for(vn_isa isa);

/* The one of a family's three per-ISA tables that the active ISA selects.
 * vn_isa_active() is fixed after its first call, so callers need no cache. */
static inline const void *vn_isa_pick(const void *avx512, const void *avx2, const void *scalar)
{
    vn_isa isa = vn_isa_active();
    return isa == VN_ISA_AVX512 ? avx512 : isa == VN_ISA_AVX2 ? avx2 : scalar;
}

/* Per-ISA tables, defined by isa_scalar.c, isa_avx2.c and isa_avx512.c. */
extern const vn_isa_table vn_isa_table_scalar;
extern const vn_isa_table vn_isa_table_avx2;
extern const vn_isa_table vn_isa_table_avx512;

#endif /* VINCI_KERNEL_ISA_H */
