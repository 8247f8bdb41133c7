/*
 * gemm_run.c — phase two of the GEMM API: pack B, run a plan.
 *
 * A run launches one kernel over the plan's blocks. Host-side work is only
 * what a block cannot do alone: the partial-sum buffer when C cannot hold
 * f32/i32 partial sums itself (a narrower C, or C_in / residual aliasing C),
 * and, for int8 with zero points, the row sums of A and column sums of B
 * (of the shifted, as-packed values).
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/gemm_internal.h"
#include "vinci/memory.h"

static const char *const W = "vn_gemm_run";

static int64_t rup(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

/* Elements a strided matrix view spans (0 for an empty one). */
static int64_t span(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    if (rows == 0 || cols == 0) return 0;
    return (rows - 1) * rs + (cols - 1) * cs + 1;
}

static int64_t batch_span(const vn_gemm_desc *d, int64_t stride, int64_t one)
{
    return one == 0 ? 0 : (d->batch - 1) * stride + one;
}

/* Sums of the shifted A rows (u8) per batch and row. */
static void row_sums(const vn_gemm_plan *p, const void *a, int32_t *out)
{
    const vn_gemm_desc *d = &p->d;
    uint8_t flip = d->a_dtype == VN_I8 ? 0x80 : 0;
    for (int64_t b = 0; b < d->batch; b++)
        for (int64_t i = 0; i < d->M; i++) {
            const uint8_t *r = (const uint8_t *)a + b * d->stride_a + i * p->a_rs;
            int32_t s = 0;
            for (int64_t k = 0; k < d->K; k++) s += (uint8_t)(r[k * p->a_cs] ^ flip);
            out[b * d->M + i] = s;
        }
}

/* Sums of the shifted B columns (i8) of one matrix; a row-major B is walked
 * row by row (its columns are strided: a column walk touches a line per k). */
static void col_sums(const vn_gemm_plan *p, const void *bm, int32_t *out)
{
    const vn_gemm_desc *d = &p->d;
    uint8_t flip = d->b_dtype == VN_U8 ? 0x80 : 0;
    if (p->b_cs == 1) {
        for (int64_t j = 0; j < d->N; j++) out[j] = 0;
        for (int64_t k = 0; k < d->K; k++) {
            const uint8_t *r = (const uint8_t *)bm + k * p->b_rs;
            for (int64_t j = 0; j < d->N; j++) out[j] += (int8_t)(uint8_t)(r[j] ^ flip);
        }
        return;
    }
    for (int64_t j = 0; j < d->N; j++) {
        const uint8_t *c = (const uint8_t *)bm + j * p->b_cs;
        int32_t s = 0;
        for (int64_t k = 0; k < d->K; k++) s += (int8_t)(uint8_t)(c[k * p->b_rs] ^ flip);
        out[j] = s;
    }
}

void vn_gemm_pack_columns(const vn_gemm_plan *p, void *packed, const void *b, int64_t m, int64_t n0,
                          int64_t n)
{
    const vn_gemm_desc *d = &p->d;
    int64_t nr = p->s.nr, kp = rup(d->K, p->s.kp);
    int64_t es = (int64_t)vn_dtype_size(p->b_op), ses = (int64_t)vn_dtype_size(d->b_dtype);
    uint8_t *dst = (uint8_t *)packed + m * p->packed_bytes + n0 * kp * es;
    const uint8_t *src = (const uint8_t *)b + (m * d->stride_b + n0 * p->b_cs) * ses;
    if (n % nr || kp != d->K) memset(dst, 0, (size_t)(rup(n, nr) * kp * es));
    vn_cube_pack_b(p->s, p->b_op, dst, d->b_dtype, src, p->b_rs, p->b_cs, d->K, n);
}

vn_status vn_gemm_pack_b(const vn_gemm_plan *p, const void *b, void *packed)
{
    if (!p || !b || !packed) return vn_error(VN_ERR_INVALID_ARG, "vn_gemm_pack_b", "NULL argument");
    if ((uintptr_t)packed % 64)
        return vn_error(VN_ERR_INVALID_ARG, "vn_gemm_pack_b",
                        "packed buffer is not 64-byte aligned");
    const vn_gemm_desc *d = &p->d;
    int64_t n = d->stride_b ? d->batch : 1;
    size_t in_es = vn_dtype_size(d->b_dtype);
    int64_t panel_bytes = p->packed_elems * (int64_t)vn_dtype_size(p->b_op);
    for (int64_t i = 0; i < n; i++) {
        uint8_t *dst = (uint8_t *)packed + i * p->packed_bytes;
        const uint8_t *src = (const uint8_t *)b + i * d->stride_b * (int64_t)in_es;
        vn_gemm_pack_columns(p, packed, b, i, 0, d->N); /* the panels, with their padding */
        memset(dst + panel_bytes, 0, (size_t)(p->packed_bytes - panel_bytes)); /* the rest */
        if (d->compute == VN_I32) col_sums(p, src, (int32_t *)(dst + rup(p->packed_elems, 4)));
    }
    return VN_OK;
}

static vn_status check_args(const vn_gemm_plan *p, const vn_gemm_args *a)
{
    const vn_gemm_epilogue *e = &p->d.epi;
    if (!a || (!a->a && p->d.M * p->d.K != 0) || (!a->b && p->d.K * p->d.N != 0) ||
        (!a->c && p->d.M * p->d.N != 0))
        return vn_error(VN_ERR_INVALID_ARG, W, "args, A, B or C is NULL");
    if (e->has_c_in && !a->c_in)
        return vn_error(VN_ERR_INVALID_ARG, W, "epi.has_c_in but c_in is NULL");
    if (e->bias_axis && !a->bias)
        return vn_error(VN_ERR_INVALID_ARG, W, "epi.bias_axis set but bias is NULL");
    if (e->has_residual && !a->residual)
        return vn_error(VN_ERR_INVALID_ARG, W, "epi.has_residual but residual is NULL");
    if (e->has_col_scale && !a->col_scale)
        return vn_error(VN_ERR_INVALID_ARG, W, "epi.has_col_scale but col_scale is NULL");
    if (a->b_packed && (uintptr_t)a->b % 64)
        return vn_error(VN_ERR_INVALID_ARG, W, "packed B is not 64-byte aligned");
    return VN_OK;
}

/* The global tensors of a run, sized to what the views reach. */
static void make_gms(const vn_gemm_plan *p, const vn_gemm_args *a, vn_gemm_kargs *g)
{
    const vn_gemm_desc *d = &p->d;
    const vn_gemm_epilogue *e = &d->epi;
    int64_t as = span(d->M, d->K, p->a_rs, p->a_cs), bs = span(d->K, d->N, p->b_rs, p->b_cs);
    int64_t cs = span(d->M, d->N, p->ldc, 1);
    g->a = vn_gm_make((void *)a->a, d->a_dtype, batch_span(d, d->stride_a, as));
    g->a_rs = p->a_rs;
    if (a->b_packed)
        g->b = vn_gm_make((void *)a->b, VN_U8, (int64_t)vn_gemm_packed_b_size(p));
    else
        g->b = vn_gm_make((void *)a->b, d->b_dtype, batch_span(d, d->stride_b, bs));
    g->c = vn_gm_make(a->c, d->c_dtype, batch_span(d, d->stride_c, cs));
    if (e->has_c_in)
        g->c_in =
            vn_gm_make((void *)a->c_in, VN_F32,
                       batch_span(d, d->stride_c_in, span(d->M, d->N, e->c_in_rs, e->c_in_cs)));
    if (e->has_residual)
        g->res = vn_gm_make(
            (void *)a->residual, VN_F32,
            batch_span(d, d->stride_residual, span(d->M, d->N, e->ldr ? e->ldr : d->N, 1)));
    if (e->bias_axis)
        g->bias = vn_gm_make((void *)a->bias, VN_F32, e->bias_axis == VN_BIAS_ROW ? d->M : d->N);
    if (e->has_col_scale) g->col_scale = vn_gm_make((void *)a->col_scale, VN_F32, d->N);
    g->b_packed = a->b_packed;
}

/* Partial sums go to C itself when it is f32/i32 and no epilogue input aliases it. */
static bool partial_in_c(const vn_gemm_plan *p, const vn_gemm_args *a)
{
    const vn_gemm_desc *d = &p->d;
    if (d->c_dtype != p->acc) return false;
    if (d->epi.has_c_in && a->c_in == a->c) return false;
    if (d->epi.has_residual && a->residual == a->c) return false;
    return d->K > p->kc;
}

/* The operands' own traffic, for the roofline: A, B (packed or not), C_in
 * and the residual read once, C written once. The cube instructions count
 * what each of them reads, and a tile re-reads its B block from cache for
 * every row block (a BERT FFN MatMul counted 10x its bytes, 177 % of the
 * memory roof); conv_direct.c counts its tensors the same way. */
static void count_operand_bytes(const vn_gemm_plan *p, const vn_gemm_args *args,
                                vn_kernel_counters *c)
{
    const vn_gemm_desc *d = &p->d;
    int64_t mats_a = d->stride_a ? d->batch : 1, mats_b = d->stride_b ? d->batch : 1;
    int64_t b_bytes = args->b_packed ? mats_b * p->packed_bytes
                                     : mats_b * d->K * d->N * (int64_t)vn_dtype_size(d->b_dtype);
    const vn_gemm_epilogue *e = &d->epi;
    int64_t mn =
        d->batch * d->M * d->N; /* C_in (f32) may be broadcast: a row, a column, one value */
    int64_t c_in =
        (d->stride_c_in ? d->batch : 1) * (e->c_in_rs ? d->M : 1) * (e->c_in_cs ? d->N : 1);
    c->bytes_in = mats_a * d->M * d->K * (int64_t)vn_dtype_size(d->a_dtype) + b_bytes +
                  (e->has_c_in ? c_in * 4 : 0) + (e->has_residual ? mn * 4 : 0);
    c->bytes_out = mn * (int64_t)vn_dtype_size(d->c_dtype);
}

/* A b_run_pack plan's first launch: B packed into *packed, which the
 * product then reads as a pre-packed B. The buffer comes from the device's
 * caching allocator: a fresh mapping each run would cost a page fault per
 * 4 KiB (128 x 768 x 768, 1 thread: 2.6 ms a run instead of 1.7). Without
 * it (the memory limit, exhausted memory) the product packs B in its tiles
 * as a smaller one does: slower, not wrong. */
static vn_status pack_b_for_run(const vn_gemm_plan *p, vn_gemm_kargs *g, void **packed)
{
    size_t bytes = vn_gemm_packed_b_size(p);
    if (vn_mem_alloc(p->device, NULL, bytes, packed) != VN_OK) {
        *packed = NULL;
        return VN_OK;
    }
    g->b_src = g->b;
    g->b = vn_gm_make(*packed, VN_U8, (int64_t)bytes);
    g->b_packed = true;
    int64_t mats = p->d.stride_b ? p->d.batch : 1;
    int32_t blocks = (int32_t)min64(mats * p->pk_nt, 65535);
    vn_launch_desc ld = {vn_gemm_pack_kernel, "vn_gemm_pack", blocks, g, -1, 0};
    return vn_launch(p->device, &ld, NULL);
}

/* An A read in place whose rows lie a multiple of 4 KiB apart crowds one
 * L1 set, so the kernels copied each micro-panel's rows again for every B
 * block and K chunk (cube.c; 3.9 % of a 1024^3 product, 5 % of BERT's
 * 128 x 768 x 3072). A run that reads A in place copies it once instead, to
 * rows a_pad_rs apart, and reads that. Without the buffer (memory limit)
 * the kernels copy per panel as before: slower, not wrong. */
static vn_status pad_a_for_run(const vn_gemm_plan *p, vn_gemm_kargs *g, void **padded)
{
    const vn_gemm_desc *d = &p->d;
    size_t bytes = (size_t)(d->M * p->a_pad_rs) * sizeof(float);
    if (vn_mem_alloc(p->device, NULL, bytes, padded) != VN_OK) {
        *padded = NULL;
        return VN_OK;
    }
    g->a_src = g->a;
    g->a = vn_gm_make(*padded, VN_F32, d->M * p->a_pad_rs);
    g->a_rs = p->a_pad_rs;
    int32_t blocks = (int32_t)min64(d->M, vn_device_num_workers(p->device));
    vn_launch_desc ld = {vn_gemm_pad_a_kernel, "vn_gemm_pad_a", blocks, g, -1, d->M};
    return vn_launch(p->device, &ld, NULL);
}

vn_status vn_gemm_run(const vn_gemm_plan *p, const vn_gemm_args *args)
{
    if (!p) return vn_error(VN_ERR_INVALID_ARG, W, "plan is NULL");
    const vn_gemm_desc *d = &p->d;
    vn_status st = check_args(p, args);
    if (st != VN_OK) return st;
    if (args->counters) memset(args->counters, 0, sizeof *args->counters);
    if (d->M == 0 || d->N == 0) return VN_OK;
    vn_gemm_kargs g;
    memset(&g, 0, sizeof g);
    g.p = p;
    make_gms(p, args, &g);
    bool gemv = p->gemv;
    void *work = NULL, *sums = NULL;
    if (!gemv && d->K > p->kc) {
        if (partial_in_c(p, args)) {
            g.part = g.c, g.ldp = p->ldc, g.part_stride = d->stride_c;
        } else {
            work = vn_aligned_alloc((size_t)(d->batch * d->M * d->N) * 4, 64);
            if (!work) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "cannot allocate partial sums");
            g.part = vn_gm_make(work, p->acc, d->batch * d->M * d->N), g.ldp = d->N;
            g.part_stride = d->M * d->N;
        }
    }
    if (d->compute == VN_I32 && (p->a_zero || p->b_zero)) {
        sums = malloc((size_t)(d->batch * (d->M + d->N) + 1) * 4);
        if (!sums) {
            vn_aligned_free(work);
            return vn_error(VN_ERR_OUT_OF_MEMORY, W, "cannot allocate row / column sums");
        }
        int32_t *rs = sums, *cs = rs + d->batch * d->M;
        if (p->b_zero) {
            row_sums(p, args->a, rs);
            g.row_sum = vn_gm_make(rs, VN_I32, d->batch * d->M);
        }
        if (p->a_zero && !args->b_packed) {
            size_t es = vn_dtype_size(d->b_dtype);
            for (int64_t b = 0; b < d->batch; b++)
                col_sums(p, (const uint8_t *)args->b + b * d->stride_b * (int64_t)es,
                         cs + b * d->N);
            g.col_sum = vn_gm_make(cs, VN_I32, d->batch * d->N);
        }
    }
    void *packed = NULL, *padded = NULL;
    if (p->b_run_pack && !args->b_packed) st = pack_b_for_run(p, &g, &packed);
    if (st == VN_OK && p->a_run_pad && vn_gemm_reads_a_in_place(&g))
        st = pad_a_for_run(p, &g, &padded);
    if (st == VN_OK) {
        int64_t tiles = gemv ? d->batch * p->gv_nt : d->batch * p->mt * p->nt;
        vn_kernel_fn kernel = gemv ? vn_gemv_kernel : vn_gemm_kernel;
        const char *name = gemv ? "vn_gemv" : "vn_gemm";
        vn_launch_desc ld = {kernel, name, (int32_t)min64(tiles, 65535), &g, -1, 0};
        st = vn_launch(p->device, &ld, args->counters);
    }
    if (st == VN_OK && args->counters) count_operand_bytes(p, args, args->counters);
    vn_mem_free(packed);
    vn_mem_free(padded);
    vn_aligned_free(work);
    free(sums);
    return st;
}
