/*
 * gemm_plan.c — phase one of the GEMM API: validate a descriptor and choose
 * the tiling from the shapes, the device's arenas and the measured caches.
 *
 * Tiling rules (why):
 *   kc  the B micro-panel (kc x NR) takes about half the L1 data cache, so it
 *       stays there while the A micro-panels stream past it;
 *   mc  the packed A block (mc x kc) fills L0A;
 *   nb  the packed B block (kc x nb) fits L1 and half the measured L2 (it is
 *       re-read once per A micro-panel) and the accumulators (mc x nb) fit
 *       L0C; the larger nb, the fewer times A is packed (once per nb);
 *   grid columns split evenly into nt tiles of nb, rows into mt tiles so that
 *       the block count is a multiple of the workers where possible.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/gemm_internal.h"

static const char *const W = "vn_gemm_plan_create";

static int64_t rup(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}
static int64_t cdiv(int64_t x, int64_t m)
{
    return (x + m - 1) / m;
}
vn_gemm_desc vn_gemm_desc_default(int64_t M, int64_t N, int64_t K)
{
    vn_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.M = M, d.N = N, d.K = K;
    d.a_dtype = d.b_dtype = d.c_dtype = VN_F32;
    d.compute = VN_F32;
    d.batch = 1;
    d.epi.alpha = 1.0f;
    return d;
}

static vn_status check_dtypes(const vn_gemm_desc *d)
{
    bool af = d->a_dtype == VN_F32 || d->a_dtype == VN_BF16;
    bool bf = d->b_dtype == VN_F32 || d->b_dtype == VN_BF16;
    bool ai = d->a_dtype == VN_U8 || d->a_dtype == VN_I8;
    bool bi = d->b_dtype == VN_U8 || d->b_dtype == VN_I8;
    bool cf = d->c_dtype == VN_F32 || d->c_dtype == VN_F16 || d->c_dtype == VN_BF16;
    switch (d->compute) {
    case VN_F32:
        if (d->a_dtype == VN_F32 && d->b_dtype == VN_F32 && cf) return VN_OK;
        break;
    case VN_BF16:
        if (af && bf && cf) return VN_OK;
        break;
    case VN_I32:
        if (ai && bi && (cf || d->c_dtype == VN_I32 || d->c_dtype == VN_U8 || d->c_dtype == VN_I8))
            return VN_OK;
        break;
    default:
        break;
    }
    return vn_error(VN_ERR_DTYPE, W,
                    "no GEMM %s x %s -> %s computing in %s (f32 x f32 in f32; f32/bf16 in bf16; "
                    "u8/i8 x u8/i8 in i32)",
                    vn_dtype_name(d->a_dtype), vn_dtype_name(d->b_dtype), vn_dtype_name(d->c_dtype),
                    vn_dtype_name(d->compute));
}

static vn_status check_shape(const vn_gemm_desc *d)
{
    if (d->M < 0 || d->N < 0 || d->K < 0 || d->batch < 1)
        return vn_error(VN_ERR_SHAPE, W,
                        "M %lld, N %lld, K %lld, batch %lld: sizes must be >= 0 "
                        "and batch >= 1",
                        (long long)d->M, (long long)d->N, (long long)d->K, (long long)d->batch);
    if (d->M > INT32_MAX || d->N > INT32_MAX || d->K > INT32_MAX)
        return vn_error(VN_ERR_SHAPE, W, "M, N, K must be < 2^31");
    int64_t arows = d->trans_a ? d->K : d->M, acols = d->trans_a ? d->M : d->K;
    int64_t brows = d->trans_b ? d->N : d->K, bcols = d->trans_b ? d->K : d->N;
    if (d->lda && d->lda < acols)
        return vn_error(VN_ERR_SHAPE, W, "lda %lld < %lld columns of A as stored (%lld x %lld)",
                        (long long)d->lda, (long long)acols, (long long)arows, (long long)acols);
    if (d->ldb && d->ldb < bcols)
        return vn_error(VN_ERR_SHAPE, W, "ldb %lld < %lld columns of B as stored (%lld x %lld)",
                        (long long)d->ldb, (long long)bcols, (long long)brows, (long long)bcols);
    if (d->ldc && d->ldc < d->N)
        return vn_error(VN_ERR_SHAPE, W, "ldc %lld < N %lld", (long long)d->ldc, (long long)d->N);
    if (d->batch > 1 && d->stride_c < d->M * (d->ldc ? d->ldc : d->N) && d->M * d->N > 0)
        return vn_error(VN_ERR_SHAPE, W,
                        "stride_c %lld: batches of C would overlap (M x ldc = %lld)",
                        (long long)d->stride_c, (long long)(d->M * (d->ldc ? d->ldc : d->N)));
    if (d->stride_a < 0 || d->stride_b < 0 || d->stride_c_in < 0 || d->stride_residual < 0)
        return vn_error(VN_ERR_SHAPE, W, "batch strides must be >= 0");
    return VN_OK;
}

static vn_status check_epilogue(const vn_gemm_desc *d)
{
    const vn_gemm_epilogue *e = &d->epi;
    if ((unsigned)e->act >= VN_ACT_COUNT)
        return vn_error(VN_ERR_INVALID_ARG, W, "unknown activation %d", (int)e->act);
    if ((unsigned)e->bias_axis > VN_BIAS_ROW)
        return vn_error(VN_ERR_INVALID_ARG, W, "unknown bias axis %d", (int)e->bias_axis);
    if (e->act == VN_ACT_CLIP && !(e->clip_min <= e->clip_max))
        return vn_error(VN_ERR_INVALID_ARG, W, "clip_min %g > clip_max %g", e->clip_min,
                        e->clip_max);
    bool int_out = d->c_dtype == VN_I32;
    if (int_out && (e->act || e->bias_axis || e->has_c_in || e->has_residual ||
                    (e->alpha != 1.0f && e->alpha != 0.0f) || e->has_col_scale || e->scale))
        return vn_error(VN_ERR_UNSUPPORTED, W,
                        "an i32 C is the exact zero-point-corrected product: no float epilogue");
    if (d->compute != VN_I32 && (e->a_zero || e->b_zero || e->has_col_scale || e->y_scale))
        return vn_error(VN_ERR_INVALID_ARG, W, "zero points and scales need int8 compute");
    if (d->c_dtype == VN_U8 || d->c_dtype == VN_I8) {
        if (e->y_scale < 0 || e->y_zero < (d->c_dtype == VN_U8 ? 0 : -128) ||
            e->y_zero > (d->c_dtype == VN_U8 ? 255 : 127))
            return vn_error(VN_ERR_INVALID_ARG, W, "y_scale %g / y_zero %d do not fit %s",
                            e->y_scale, (int)e->y_zero, vn_dtype_name(d->c_dtype));
    }
    return VN_OK;
}

/* Operand dtypes in L1/L0 and the strides of op(A), op(B). */
static void set_operands(vn_gemm_plan *p)
{
    const vn_gemm_desc *d = &p->d;
    p->a_op = d->compute == VN_F32 ? VN_F32 : d->compute == VN_BF16 ? VN_BF16 : VN_U8;
    p->b_op = d->compute == VN_F32 ? VN_F32 : d->compute == VN_BF16 ? VN_BF16 : VN_I8;
    p->acc = d->compute == VN_I32 ? VN_I32 : VN_F32;
    p->s = vn_cube_shape_of(p->a_op);
    int64_t lda = d->lda ? d->lda : (d->trans_a ? d->M : d->K);
    int64_t ldb = d->ldb ? d->ldb : (d->trans_b ? d->K : d->N);
    p->a_rs = d->trans_a ? 1 : lda, p->a_cs = d->trans_a ? lda : 1;
    p->b_rs = d->trans_b ? 1 : ldb, p->b_cs = d->trans_b ? ldb : 1;
    p->ldc = d->ldc ? d->ldc : d->N;
    p->a_zero = d->epi.a_zero + (d->a_dtype == VN_I8 ? 128 : 0);
    p->b_zero = d->epi.b_zero - (d->b_dtype == VN_U8 ? 128 : 0);
    if (d->compute != VN_I32) p->a_zero = p->b_zero = 0;
}

#define BLOCKS_PER_WORKER 4
#define MIN_SPLIT_ROWS    96

/* Column tiles of N cut into `tiles` tiles of whole nr panels. */
static int64_t tiles_of(int64_t N, int64_t tiles, int64_t nr)
{
    return cdiv(N, rup(cdiv(N, tiles), nr));
}

/* At least `from` (and at most twice as many) column tiles that cut N's
 * `panels` NR panels into tiles of one width, their count times `per` (the
 * other tiles of a column) a multiple of the workers; 0 if none. Equal
 * counts of unequal tiles still leave a worker with more columns: 768
 * columns in 10 tiles of 80 (9 x 5 panels and 3) gave one of 2 workers 25
 * panels and the other 23, so BERT's 128 x 768 x 768 waited 4 % on it. */
static int64_t even_column_tiles(int64_t panels, int64_t from, int64_t per, int32_t workers)
{
    for (int64_t t = from; t <= 2 * from && t <= panels; t++)
        if (panels % t == 0 && (per * t) % workers == 0) return t;
    return 0;
}

/* The grid: nt column tiles of nb and mt row tiles of mb per batch. At least
 * mt_min row tiles (so one tile's partial sums stay in L2); then, so that the
 * block count is a multiple of the workers, more column tiles when M is small
 * (every worker then packs only its own columns of B, and A is cheap to pack
 * twice; tiles of one width where some count gives that), else more row
 * tiles. */
static void choose_grid(vn_gemm_plan *p, int32_t workers, int64_t mt_min)
{
    const vn_gemm_desc *d = &p->d;
    int64_t M = d->M > 0 ? d->M : 1, N = d->N > 0 ? d->N : 1;
    int64_t max_mt = cdiv(M, p->s.mr), max_nt = cdiv(N, p->s.nr);
    int64_t nt = cdiv(N, p->nb), mt = min64(mt_min, max_mt);
    bool split_columns = workers > 1 && M <= 512;
    int64_t even = split_columns ? even_column_tiles(max_nt, cdiv(max_nt, p->nb / p->s.nr),
                                                     d->batch * mt, workers)
                                 : 0;
    if (even) {
        nt = even;
    } else if (split_columns && (d->batch * nt * mt) % workers != 0) {
        int64_t t = nt;
        /* the count after nb is rounded to whole panels (3072 columns in 40
         * tiles of 80 are 39: BERT's 128 x 3072 x 768 then split its rows
         * too, and each worker read all of B) */
        while (t < max_nt && (d->batch * tiles_of(N, t, p->s.nr) * mt) % workers != 0) t++;
        if ((d->batch * tiles_of(N, t, p->s.nr) * mt) % workers == 0) nt = t;
    }
    p->nb = rup(cdiv(N, nt), p->s.nr);
    p->nt = cdiv(N, p->nb);
    int64_t per = d->batch * p->nt, mt0 = mt;
    /* With several workers, BLOCKS_PER_WORKER blocks each while tiles keep
     * MIN_SPLIT_ROWS rows: a worker that starts late (its vCPU was busy, or
     * it was asleep) still takes a share instead of finding none left. */
    int64_t want = workers > 1 ? workers * BLOCKS_PER_WORKER : 1;
    while (mt < max_mt && per * mt < want && cdiv(M, mt + 1) >= MIN_SPLIT_ROWS) mt++;
    while (mt < max_mt && ((per * mt) % workers != 0 || per * mt < workers)) mt++;
    if ((per * mt) % workers != 0)
        mt = min64(max_mt, mt0 > cdiv(workers, per) ? mt0 : cdiv(workers, per));
    p->mb = rup(cdiv(M, mt), p->s.mr);
    p->mt = cdiv(M, p->mb);
    p->block_dim = (int32_t)min64(d->batch * p->nt * p->mt, 65535);
}

/* A row tile of at most this many rows reads an f32 B in place, with
 * micro-panels at least B_DIRECT_MIN_NR wide. */
#define B_DIRECT_MAX_ROWS 256
#define B_DIRECT_MIN_NR   32
/* Rows of B in flight in the micro-kernel (the current k and its prefetch
 * distance): a B whose rows crowd one L1 set is packed instead (a 2048 x 2048
 * B read in place, rows 8 KiB apart, cost 2048^3 10 % on Zen 4). */
#define B_DIRECT_ROWS_IN_FLIGHT 16

/* Read a row-major f32 B in place when the row tiles are short: each B
 * element then feeds at most B_DIRECT_MAX_ROWS / MR micro-panels, so packing
 * it into L1 (about a quarter of a cycle per element) would cost several %
 * of the mmad (mb / 32 cycles per element), while the micro-kernel's own
 * prefetch reads the rows from L2 or L3 as fast as panels. Whole panels
 * only (N a multiple of NR). Not for 16-wide panels (AVX2): each k step
 * then reads one line of B's row, a row stride apart (4 KiB and up for
 * wide B), for only 12 FMAs, and the misses of those far-apart rows cost
 * more than the copy: on a Zen 3, 1 thread, unpacked B, in place / packed:
 * 128x768x768 42 / 77 GFLOP/s, 128x3072x768 33 / 77, 128x256x256 75-78 /
 * 84-85, 256^3 86-89 / 75-87. */
static void choose_b_direct(vn_gemm_plan *p)
{
    const vn_gemm_desc *d = &p->d;
    p->b_direct = !p->b_run_pack && d->compute == VN_F32 && p->b_cs == 1 && d->N % p->s.nr == 0 &&
                  p->mb <= B_DIRECT_MAX_ROWS && p->s.nr >= B_DIRECT_MIN_NR &&
                  !vn_rows_crowd_l1(p->b_rs * 4, B_DIRECT_ROWS_IN_FLIGHT);
    /* A row-major f32 A already is the L0A block (rows a_rs apart): loading
     * it would only copy it, once per column tile (3 % of a 128 x 3072 x 768
     * product). */
    p->a_direct = d->compute == VN_F32 && p->a_cs == 1;
}

/* A row tile runs in groups of mc rows, one mmad each. A last group of
 * fewer than MR rows costs a whole micro-panel per row and reads A past the
 * tile (so it is packed, not read in place): M = 128 with mc 18 ended in 2.
 * A smaller mc that leaves at least MR rows for the last group costs only
 * more mmad calls (the B block is re-read per micro-panel either way); with
 * 6-row kernels a last group of 8 runs as two 4-row panels (cube.c). */
static int64_t avoid_short_group(const vn_gemm_plan *p, int64_t mc)
{
    int64_t rows = p->d.M < p->mb ? p->d.M : p->mb, mr = p->s.mr;
    while (mc > mr && rows > mc && rows % mc != 0 && rows % mc < mr) mc -= mr;
    return mc;
}

/* Rows per mmad when A is read in place (a packed run, a_direct): no L0A
 * block bounds them, so groups grow until the accumulators (mc_direct x nb
 * f32) fill a quarter of the L1 data cache, where the fixpipe finds them.
 * Fewer, taller groups share out each mmad's and fixpipe's set-up: packed
 * 1024^3 runs in groups of 24 rows instead of 6. */
static void choose_direct_rows(vn_gemm_plan *p, int64_t l1d, int64_t l0c)
{
    int64_t mr = p->s.mr, rows = p->d.M > 0 ? rup(p->d.M, mr) : mr;
    int64_t fit = min64(l1d / 4, l0c) / (p->nb * 4) / mr * mr;
    p->mc_direct = p->mc; /* never fewer: the kernel sizes L0C's block by it */
    if (p->a_direct && fit > p->mc) {
        int64_t mc = avoid_short_group(p, min64(fit, rows));
        if (mc > p->mc) p->mc_direct = mc;
    }
}

/* kc: the A micro-panel (MR x kc) takes about half the L1 data cache (the
 * micro-kernel keeps it there while B micro-panels stream from L2), three
 * quarters when B comes pre-packed (its panels are contiguous, 128 bytes per
 * k step); a K up to 1.25x that (1.5x with B packed) is one chunk (no
 * partial sums at all), a longer K is split into equal chunks. The 1.5x:
 * on Zen 4 (32 KiB L1), K = 768 in one chunk of 36 KiB of A against a
 * packed B ran BERT's 128 x 768 x 768 and 128 x 3072 x 768 2-5 % faster
 * than in two (in-process A/B, 1 and 2 threads). Measured on BERT's 128 x 3072 x 768,
 * interleaved: packed B, K = 768 in one chunk (36 KiB of A in a 48 KiB L1)
 * 2.49-2.54 ms, in two 2.61-2.72 ms; B read in place from its rows (12 KiB
 * apart), one chunk 3.10-3.33 ms, two 2.88-2.99 ms. mc: the packed A block fills L0A. nb: the B
 * block (kc x nb) fits L1 and half of L2, the accumulators (mc x nb) L0C. When K takes several
 * chunks, a row tile is at most as tall as keeps its partial sums (mb x nb f32) within a quarter of
 * L2, so the passes over them do not go to memory. */
/* Runs that read A in place copy it once to rows off the 4 KiB multiple
 * (gemm_run.c) where its rows crowd an L1 set and the kernels would copy
 * them per column tile: one matrix of one row tile (all that was
 * measured), several column tiles. 1 thread, fastest runs: BERT's
 * 128 x 768 x 3072 with B cold 3.41-3.43 -> 3.21-3.23 ms; 1024^3 with B
 * packed by the run 10.78-11.30 -> 10.53-10.70 ms (5 of 5 pairs). */
static void choose_a_pad(vn_gemm_plan *p)
{
    const vn_gemm_desc *d = &p->d;
    p->a_run_pad = p->a_direct && d->batch == 1 && p->mt == 1 && p->nt >= 2 &&
                   vn_rows_crowd_l1(p->a_rs * (int64_t)sizeof(float), p->s.mr);
    p->a_pad_rs = rup(d->K, 16) + 16; /* 64 bytes past a multiple of 64: rows in distinct sets */
}

static vn_status choose_tiling(vn_gemm_plan *p)
{
    const vn_cpu_features *f = vn_cpu_features_get();
    int64_t l1d = f->l1d_bytes > 0 ? f->l1d_bytes : 32768;
    int64_t l2 = f->l2_bytes > 0 ? f->l2_bytes : 1 << 20;
    int64_t es = (int64_t)vn_dtype_size(p->a_op);
    int64_t l0a = vn_device_arena_size(p->device, VN_ARENA_L0A);
    int64_t l1 = vn_device_arena_size(p->device, VN_ARENA_L1);
    int64_t l0c = vn_device_arena_size(p->device, VN_ARENA_L0C);
    vn_cube_shape s = p->s;
    int64_t K = rup(p->d.K > 0 ? p->d.K : 1, s.kp);
    bool packed = p->d.b_prepacked || p->b_run_pack || p->a_with_b1;
    int64_t kmax = l1d * (packed ? 3 : 2) / 4 / (s.mr * es) / 16 * 16;
    if (kmax < 16) kmax = 16;
    int64_t one_chunk = kmax + kmax / (packed ? 2 : 4);
    int64_t kc = K <= one_chunk ? K : rup(cdiv(K, cdiv(K, kmax)), 16);
    kc = rup(kc, s.kp);
    /* L1 must hold a B block at least NR wide */
    kc = min64(kc, l1 / (s.nr * es) / s.kp * s.kp);
    int64_t mc =
        min64(l0a / (kc * es), min64(rup(p->d.M > 0 ? p->d.M : 1, s.mr), l0c / (4 * s.nr)));
    mc = mc / s.mr * s.mr;
    /* The B block is re-read once per A micro-panel, so it must stay in L2
     * with room for the A and C blocks beside it: at most half of the
     * measured L2 (binds where L2 is smaller than twice the L1 arena, e.g.
     * 512 KiB on Zen 3: 128 x 3072 x 768 from 47 to 52-67 GFLOP/s). */
    /* A run that packs B itself reads the packed copy where it lies, not from
     * the L1 arena, so only L2 bounds its block: 1 MiB on a 2 MiB-L2 Xeon,
     * twice the arena, and half the passes over A (1 thread, B unpacked:
     * 1024^3 190 -> 197 GFLOP/s, 2048^3 173 -> 186). A plan for a
     * pre-packed B keeps the arena's bound: its runs may still pass B
     * unpacked, through B1. */
    int64_t b_bytes = p->b_run_pack ? l2 / 2 : min64(l1, l2 / 2);
    int64_t nb_l1 = b_bytes / (kc * es), nb_c = mc > 0 ? l0c / (mc * 4) : 0;
    if (nb_l1 < s.nr) nb_l1 = l1 / (kc * es) < s.nr ? 0 : s.nr; /* a tiny L2: one panel */
    int64_t nb = min64(nb_l1, nb_c) / s.nr * s.nr;
    if (kc < s.kp || mc < s.mr || nb < s.nr)
        return vn_error(VN_ERR_UNSUPPORTED, W,
                        "the device's arenas (L0A %lld, L1 %lld, L0C %lld bytes) cannot hold one "
                        "%d x %d micro-tile with k chunk %lld",
                        (long long)l0a, (long long)l1, (long long)l0c, (int)s.mr, (int)s.nr,
                        (long long)kc);
    nb = min64(nb, rup(p->d.N > 0 ? p->d.N : 1, s.nr));
    p->kc = kc, p->mc = mc, p->nb = nb;
    int64_t mt_min = 1;
    if (K > kc) {
        int64_t mb_max = rup(l2 / 4 / (nb * 4), s.mr);
        mt_min = cdiv(p->d.M > 0 ? p->d.M : 1, mb_max > s.mr ? mb_max : s.mr);
    }
    choose_grid(p, vn_device_num_workers(p->device), mt_min);
    /* Two B blocks and the tile's A block within 3/4 of L2: then a tile can
     * fetch the next B block into L2 while it computes (gemm_kernel.c). */
    int64_t b_block = kc * nb * es, a_block = min64(p->mb, p->d.M) * kc * es;
    p->b_next_pf = 2 * b_block + a_block <= l2 * 3 / 4;
    p->mc = avoid_short_group(p, p->mc);
    choose_b_direct(p);
    choose_direct_rows(p, l1d, l0c);
    return VN_OK;
}

/* GEMV: one f32 row with a contiguous A row and B as stored row-major (or
 * packed): streamed without packing, columns split over the workers. A
 * transposed B (a classifier's Gemm, transB = 1, weights [N, K]) only when
 * runs will pass it pre-packed (the hint; the packed panels are the same
 * either way): its as-stored form has only a slow kernel (gemv_trans, one
 * fma chain per column for the packed path's bits), and the tiled path,
 * which would read it well, sums a K longer than kc in chunks (other bits). */
static void choose_gemv(vn_gemm_plan *p)
{
    const vn_gemm_desc *d = &p->d;
    p->gemv = d->compute == VN_F32 && d->M == 1 && d->K > 0 && d->N > 0 && p->a_cs == 1 &&
              (!d->trans_b || d->b_prepacked);
    if (!p->gemv) return;
    int32_t workers = vn_device_num_workers(p->device);
    int64_t per = rup(cdiv(d->N, workers), p->s.nr);
    p->gv_nb = min64(per, VN_FIXPIPE_CHUNK * 8);
    p->gv_nt = cdiv(d->N, p->gv_nb);
}

/* An unpacked f32 B whose column blocks each feed one row tile (M within
 * one tile, and no B shared by several batches) is packed tile by tile into
 * B1 anyway, never twice, and the packed block stays in L2; A, read in
 * place against it (vn_cube_mmad_a_gm), is not copied once per column tile.
 * That beats packing all of B once per run (b_run_pack), whose packed copy
 * goes out to memory and back: 9.4 MB for BERT's 128 x 768 x 3072. */
static bool tile_pack_pays(const vn_gemm_plan *p)
{
    const vn_gemm_desc *d = &p->d;
    return !d->b_prepacked && !p->b_direct && !p->gemv && p->a_direct && p->mt == 1 &&
           (d->batch == 1 || d->stride_b != 0);
}

/* Products of at least this many flops pack an unpacked B once per run. */
#define RUN_PACK_MIN_FLOPS (2.0 * 128 * 128 * 128)

/* Pack an unpacked B once per run (one launch over all workers) and read it
 * as pre-packed, instead of packing each tile's kc x nb block of it per K
 * chunk: tiles pack the same columns again for each of the mt row tiles,
 * copy A rows for each of the nt column tiles (a packed run reads them in
 * place: a_direct), and a kc sized for a B block in L1 splits K sooner
 * (partial sums). Not for a B read in place (b_direct), GEMV, int8 (its
 * packed B carries column sums) or products too small to pay for the second
 * launch. Zen 3, 1 thread, unpacked B, GFLOP/s before / after: 2048^3 73-75
 * / 84-89, 1024^3 77 / 86-87, 784 x 128 x 1152 81 / 90, 3136 x 64 x 576
 * 83-86 / 89-94, 128^3 55-79 / 86; M = 128 products unchanged (one row
 * tile packed B once already). */
static bool run_pack_pays(const vn_gemm_plan *p)
{
    const vn_gemm_desc *d = &p->d;
    return !d->b_prepacked && !p->b_direct && !p->gemv && d->compute != VN_I32 &&
           2.0 * (double)d->batch * (double)d->M * (double)d->N * (double)d->K >=
               RUN_PACK_MIN_FLOPS;
}

/* The packing launch: about one block per worker, whole panels each. */
static void choose_pack_grid(vn_gemm_plan *p)
{
    const vn_gemm_desc *d = &p->d;
    int64_t mats = d->stride_b ? d->batch : 1, panels = cdiv(d->N, p->s.nr);
    int64_t per = cdiv(vn_device_num_workers(p->device), mats);
    p->pk_np = cdiv(panels, min64(per, panels));
    p->pk_nt = cdiv(panels, p->pk_np);
}

static void set_packed(vn_gemm_plan *p)
{
    int64_t kp = rup(p->d.K, p->s.kp);
    p->packed_elems = rup(p->d.N, p->s.nr) * kp;
    int64_t bytes = p->packed_elems * (int64_t)vn_dtype_size(p->b_op);
    if (p->d.compute == VN_I32) bytes = rup(bytes, 4) + rup(p->d.N, p->s.nr) * 4; /* column sums */
    p->packed_bytes = rup(bytes, 64);
    snprintf(p->layout, sizeof p->layout, "%s.k%d.nr%d.%s", vn_dtype_name(p->b_op), (int)p->s.kp,
             (int)p->s.nr, vn_isa_name(vn_cube_table_get()->isa));
}

vn_status vn_gemm_plan_create(vn_device *device, const vn_gemm_desc *desc, vn_gemm_plan **out)
{
    if (!desc || !out) return vn_error(VN_ERR_INVALID_ARG, W, "desc or out is NULL");
    *out = NULL;
    vn_status st = check_dtypes(desc);
    if (st == VN_OK) st = check_shape(desc);
    if (st == VN_OK) st = check_epilogue(desc);
    if (st == VN_OK && !device) st = vn_device_default(&device);
    if (st != VN_OK) return st;
    vn_gemm_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "cannot allocate a plan");
    p->device = device;
    p->d = *desc;
    set_operands(p);
    st = choose_tiling(p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    choose_gemv(p);
    if (tile_pack_pays(p)) {
        p->a_with_b1 = true;
        st = choose_tiling(p); /* K chunks as long as for panels read in place */
        if (st == VN_OK && p->mt != 1) p->a_with_b1 = false, st = choose_tiling(p);
        if (st != VN_OK) {
            free(p);
            return st;
        }
    }
    if (!p->a_with_b1 && run_pack_pays(p)) {
        p->b_run_pack = true;
        st = choose_tiling(p); /* now the pre-packed tiling */
        if (st != VN_OK) {
            free(p);
            return st;
        }
        choose_pack_grid(p);
    }
    choose_a_pad(p);
    set_packed(p);
    *out = p;
    return VN_OK;
}

void vn_gemm_plan_destroy(vn_gemm_plan *plan)
{
    free(plan);
}

vn_gemm_tiling vn_gemm_plan_tiling(const vn_gemm_plan *p)
{
    vn_gemm_tiling t = {0};
    if (!p) return t;
    t.mr = p->s.mr, t.nr = p->s.nr, t.kp = p->s.kp;
    t.mc = p->mc, t.nc = p->nb, t.kc = p->kc, t.mb = p->mb, t.mc_direct = p->mc_direct;
    t.block_dim = p->block_dim;
    t.gemv = p->gemv;
    t.a_padded = p->a_run_pad;
    return t;
}

size_t vn_gemm_packed_b_size(const vn_gemm_plan *p)
{
    if (!p) return 0;
    return (size_t)p->packed_bytes * (size_t)(p->d.stride_b ? p->d.batch : 1);
}

const char *vn_gemm_packed_b_layout(const vn_gemm_plan *p)
{
    return p ? p->layout : "";
}

vn_fixpipe vn_gemm_fixpipe_base(const vn_gemm_plan *p)
{
    const vn_gemm_epilogue *e = &p->d.epi;
    vn_fixpipe fp;
    memset(&fp, 0, sizeof fp);
    fp.a_zero = p->a_zero, fp.b_zero = p->b_zero, fp.k = p->d.K;
    fp.scale = e->scale;
    fp.alpha = e->alpha, fp.alpha_zero = e->alpha == 0.0f;
    fp.beta = e->has_c_in ? e->beta : 0.0f;
    fp.bias_axis = e->bias_axis;
    fp.act = e->act, fp.clip_min = e->clip_min, fp.clip_max = e->clip_max;
    fp.y_scale = e->y_scale, fp.y_zero = e->y_zero;
    return fp;
}
