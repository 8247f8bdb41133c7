/*
 * cube_internal.h — what the cube files share: the per-ISA table of
 * micro-kernels, the packers and the fixpipe row step.
 *
 * A micro-kernel computes one MR x NR tile of C (rows ldc elements apart):
 *     c = (acc ? c : 0) + sum over kg < kgroups of A rows (kg) * B panel (kg)
 * with A as MR rows lda elements apart, B's k groups ldb elements apart (NR*KP
 * in a panel, the row stride of a row-major f32 B read in place), (KP consecutive k of a row
 * together, which row-major storage gives for free) and B as one micro-panel in the layout
 * documented in kernel.h (kgroups = Kp / KP). Invariants: it reads kgroups*KP elements of each of
 * the MR rows of a and kgroups*NR*KP of b, and writes exactly MR rows of NR elements of c; pointers
 * need only element alignment (the kernels use unaligned loads), but loads keep them 32-byte
 * aligned. The kernels also request the lines pf..pf+64*npf of the next
 * tile (the vn_prefetch queue), one every VN_UKR_PF_EVERY k groups. f32 kernels accumulate with one
 * fused multiply-add per k, in increasing k, so every f32 path gives results within K*eps of exact
 * and the same kernel always gives the same bits.
 */
#ifndef VINCI_KERNEL_CUBE_INTERNAL_H
#define VINCI_KERNEL_CUBE_INTERNAL_H

#include "kernel/core_internal.h"

/* Operand families: the index of a table row. */
typedef enum vn_cube_kind {
    VN_CUBE_F32 = 0,
    VN_CUBE_BF16,
    VN_CUBE_I8,
    VN_CUBE_KIND_COUNT
} vn_cube_kind;

/* How often a micro-kernel requests a queued line: every 4th k group. A
 * prefetch to L2 holds an L1 fill buffer until its line arrives, and a
 * queued next B block comes from memory, so one request per k group (every
 * 12 cycles of the AVX-512 f32 kernel) kept some 30 in flight, more than
 * the fill buffers, and the demand loads queued behind them. On the Xeon,
 * BERT's 128 x 3072 x 768 with B cold (packed copies cycled, 1 thread,
 * fastest of 100): 180-182 GFLOP/s requesting every group, 189-192 every
 * 4th (B warm in L3: 208-210 either way); BERT-base 1 thread 134-135 ->
 * 129-133 ms. */
#define VN_UKR_PF_EVERY 4

/* The queued lines a micro-kernel of kgroups k groups requests at most. */
static inline int64_t vn_ukr_pf_lines(int64_t kgroups)
{
    return (kgroups + VN_UKR_PF_EVERY - 1) / VN_UKR_PF_EVERY;
}

/* In a micro-kernel's k loop, at k group k: request the next queued line
 * when it is this group's turn (prefetcht1: to L2). */
static inline __attribute__((always_inline)) void vn_ukr_next_tile_pf(const char *pf, int64_t npf,
                                                                      int64_t k)
{
    uint64_t g = (uint64_t)k; /* >= 0: the modulo and division are a mask and a shift */
    if (g % VN_UKR_PF_EVERY == 0 && (int64_t)(g / VN_UKR_PF_EVERY) < npf)
        __builtin_prefetch(pf + 64 * (g / VN_UKR_PF_EVERY), 0, 2);
}

/* pf, npf: lines of the next tile to request (to L2), one every
 * VN_UKR_PF_EVERY k groups (npf <= vn_ukr_pf_lines(kgroups); vn_prefetch_take). */
typedef void (*vn_ukr_fn)(int64_t kgroups, const void *a, int64_t lda, const void *b, int64_t ldb,
                          void *c, int64_t ldc, int acc, const char *pf, int64_t npf);
/* GEMV rows: c[0..n) = (acc ? c : 0) + sum_k a[k] * b[k*ldb + j], fma in k order. */
typedef void (*vn_gemv_fn)(int64_t k, int64_t n, const float *a, const float *b, int64_t ldb,
                           float *c);

/* GEMV on a transposed B (column j at b + j*ldb, contiguous in k): c[j] = sum_k
 * a[k] * b[j*ldb + k], one fma chain in k order per column (gemv_rows' bits). */
typedef void (*vn_gemv_trans_fn)(int64_t k, int64_t n, const float *a, const float *b, int64_t ldb,
                                 float *c);

/* GEMV over `panels` whole packed panels (NR columns each: k rows of NR,
 * panel after panel): c[q*NR + j] = sum_k a[k] * panel q[k][j], with the
 * fma chain of gemv_rows per column (the same bits). */
typedef void (*vn_gemv_panels_fn)(int64_t k, int64_t panels, int64_t nr, const float *a,
                                  const float *b, float *c);

/* B panels of width W from a row-major source (element (k, c) at src + k*ds
 * + c in elements of sd), KP k per unit, depth padded to Kp (cube_pack_rows.inc). */
typedef void (*vn_pack_rows_fn)(int W, int KP, vn_dtype dd, void *dst, vn_dtype sd, const void *src,
                                int64_t ds, int64_t cols, int64_t depth);

typedef struct vn_cube_table {
    vn_isa isa;
    vn_cube_shape shape[VN_CUBE_KIND_COUNT];
    vn_ukr_fn ukr[VN_CUBE_KIND_COUNT];
    /* Kernels for a last micro-panel of at most 16 / 8 / 4 valid rows: the
     * contract of ukr with MR = 16 / 8 / 4 (rows past them are left alone).
     * NULL: the full kernel computes the padding rows too. */
    vn_ukr_fn ukr_le16[VN_CUBE_KIND_COUNT];
    vn_ukr_fn ukr_le8[VN_CUBE_KIND_COUNT], ukr_le4[VN_CUBE_KIND_COUNT];
    /* The bf16 MR x NR kernel on an A widened to f32 (each k pair's two
     * values in k order, rows lda floats apart), for an ISA with no bf16
     * product: mmad widens each A micro-panel once for all its B panels
     * instead of every call converting it again. NULL: ukr. */
    vn_ukr_fn ukr_bf16_wide;
    vn_gemv_fn gemv_rows;          /* B row-major (k x n, ldb); c overwritten */
    vn_gemv_panels_fn gemv_panels; /* B pre-packed; c overwritten */
    vn_gemv_trans_fn gemv_trans;   /* B transposed, as stored; c overwritten */
    vn_pack_rows_fn pack_b_rows;   /* the B packer of a row-major B */
} vn_cube_table;

/* The table of the active ISA (chosen once, thread-safe). Never NULL. */
const vn_cube_table *vn_cube_table_get(void);
extern const vn_cube_table vn_cube_table_scalar;
extern const vn_cube_table vn_cube_table_avx2;
extern const vn_cube_table vn_cube_table_avx512;
/* AMX (cube_amx.c): the AVX-512 table with its bf16 and int8 rows on tiles
 * (MR = 32, same packed B layouts), used where vn_amx_usable(). */
vn_cube_table vn_cube_table_amx_from(const vn_cube_table *avx512);

/* The family of an operand dtype (F32, BF16, U8/I8), or -1. */
int vn_cube_kind_of(vn_dtype dtype);

/* Generic micro-kernels of any shape (plain C), the fallback of every ISA. */
/* Packers (cube_pack.c): write the whole padded A block (rup(m, MR) rows of
 * Kp(k) elements) or the padded panels of a k x n B block from a strided
 * source (element (i, j) at src + i*rs + j*cs, in elements of src_dtype). */
/* Bytes transposed: dst[r*ld + c] = src[r + c*cs] ^ flip for r < m, c < k
 * (16 x 16 SSE2 blocks where whole); the int8 A load of a transposed A,
 * also used by operators that store a [pixels][channels] byte tile into
 * NCHW planes. */
void vn_bytes_transpose(uint8_t *dst, int64_t ld, const uint8_t *src, int64_t cs, int64_t m,
                        int64_t k, uint8_t flip);
void vn_cube_pack_a(vn_cube_shape s, vn_dtype dst_dtype, void *dst, vn_dtype src_dtype,
                    const void *src, int64_t rs, int64_t cs, int64_t m, int64_t k);
void vn_cube_pack_b(vn_cube_shape s, vn_dtype dst_dtype, void *dst, vn_dtype src_dtype,
                    const void *src, int64_t rs, int64_t cs, int64_t k, int64_t n);

/* Fixpipe of one row piece (cube_fixpipe.c): v[0..n) are the accumulators of
 * tile row i, columns j0..j0+n (f32 or i32 by acc_dtype); writes them through
 * the epilogue to dst(i, j0 + j). `tmp` has room for 2*n floats; n <=
 * VN_FIXPIPE_CHUNK. v is clobbered. dst by pointer: called once per row piece,
 * a by-value copy of the matrix was rebuilt on the stack for every call (and
 * its piecewise stores read back whole stalled store forwarding). */
void vn_fixpipe_row(const vn_fixpipe *fp, vn_dtype acc_dtype, void *v, int64_t i, int64_t j0,
                    int64_t n, const vn_mat *dst, float *tmp);

#define VN_CUBE_MAX_MR 32
#define VN_CUBE_MAX_NR 64
/* Whether `rows` rows row_bytes apart stack more than 4 deep in one set of
 * the L1 data cache (cube.c). */
bool vn_rows_crowd_l1(int64_t row_bytes, int64_t rows);

/* Tallest micro-panel whose A rows cube.c copies apart when they crowd L1. */
#define VN_CUBE_MAX_COPY_ROWS 12
/* Columns one fixpipe row step handles at a time. */
#define VN_FIXPIPE_CHUNK 256

#endif /* VINCI_KERNEL_CUBE_INTERNAL_H */
