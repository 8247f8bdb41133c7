/*
 * cube_fixpipe.c — Fixpipe: L0C accumulators to global memory through the
 * epilogue (partial sums, dequantisation, alpha/beta, bias, residual,
 * activation, output cast or requantisation), one row piece at a time.
 *
 * The element-wise steps call the vector ISA's f32 array kernels (isa.h), so
 * GELU, SiLU, Sigmoid and tanh have the same bits here as in the vector
 * instructions. The common f32 epilogue (alpha, column bias, residual) is
 * one pass of the ISA's affine_row, written straight into an f32 dst, with
 * the bits of the steps run one pass each (test_fixpipe_row): it had been
 * 5 passes and a copy per row piece, about 6 % of the transformer model.
 * Invariant: a row piece is read from L0C into a row buffer once and written
 * to dst once; partial(i, j) is read before dst(i, j) is written, so partial
 * may be the same matrix as dst.
 */
#include <math.h>
#include <string.h>

#include "kernel/cube_internal.h"
#include "kernel/isa.h"

static int64_t rup(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

/* Row i, columns j0.. of a view as contiguous floats: the view itself when
 * its columns are contiguous, else gathered into buf. */
static const float *row_f32(vn_mat v, int64_t i, int64_t j0, int64_t n, float *buf)
{
    const float *p = (const float *)v.gm.data + v.off + i * v.rs + j0 * v.cs;
    if (v.cs == 1) return p;
    for (int64_t j = 0; j < n; j++) buf[j] = p[j * v.cs];
    return buf;
}

static void add_partial(vn_mat p, vn_dtype acc, void *v, int64_t i, int64_t j0, int64_t n,
                        float *buf)
{
    if (acc == VN_F32) {
        const vn_isa_table *t = vn_isa_table_get();
        t->binary[VN_VOP_ADD](v, v, row_f32(p, i, j0, n, buf), n);
        return;
    }
    const int32_t *s = (const int32_t *)p.gm.data + p.off + i * p.rs + j0 * p.cs;
    int32_t *iv = v;
    for (int64_t j = 0; j < n; j++) iv[j] = (int32_t)((uint32_t)iv[j] + (uint32_t)s[j * p.cs]);
}

static void store_raw(vn_mat d, vn_dtype acc, const void *v, int64_t i, int64_t j0, int64_t n)
{
    size_t es = 4;
    uint8_t *p = (uint8_t *)d.gm.data + (d.off + i * d.rs + j0 * d.cs) * (int64_t)es;
    if (d.cs == 1) {
        memcpy(p, v, (size_t)n * es);
        return;
    }
    for (int64_t j = 0; j < n; j++)
        memcpy(p + j * d.cs * (int64_t)es, (const uint8_t *)v + j * (int64_t)es, es);
    (void)acc;
}

/* The zero-point correction of row i's columns j0..j0+n of accumulators v
 * into out (may be v): v + k*a_zero*b_zero - b_zero*row_sum - a_zero*col_sum,
 * exact mod 2^32, so computed in wrapping u32 arithmetic (vectorises). */
static void int_correct(const vn_fixpipe *fp, const int32_t *v, int32_t *out, int64_t i, int64_t j0,
                        int64_t n)
{
    int64_t r = fp->row0 + i;
    int64_t base = fp->k * (int64_t)fp->a_zero * fp->b_zero;
    if (fp->b_zero && fp->row_sum.data)
        base -= (int64_t)fp->b_zero * ((const int32_t *)fp->row_sum.data)[r];
    uint32_t ub = (uint32_t)(uint64_t)base, az = (uint32_t)fp->a_zero;
    const int32_t *cs =
        fp->a_zero && fp->col_sum.data ? (const int32_t *)fp->col_sum.data + fp->col0 + j0 : NULL;
    if (cs)
        for (int64_t j = 0; j < n; j++)
            out[j] = (int32_t)((uint32_t)v[j] + ub - az * (uint32_t)cs[j]);
    else
        for (int64_t j = 0; j < n; j++) out[j] = (int32_t)((uint32_t)v[j] + ub);
}

/* i32 accumulators -> exact zero-point-corrected integers, then to f32
 * (unless dst is i32, which is stored here). Returns true when done. */
static bool int_stage(const vn_fixpipe *fp, int32_t *iv, float *f, int64_t i, int64_t j0, int64_t n,
                      vn_mat dst)
{
    int_correct(fp, iv, iv, i, j0, n);
    if (dst.gm.dtype == VN_I32) {
        store_raw(dst, VN_I32, iv, i, j0, n);
        return true;
    }
    float scale = fp->scale != 0.0f ? fp->scale : 1.0f;
    const float *col =
        fp->col_scale.data ? (const float *)fp->col_scale.data + fp->col0 + j0 : NULL;
    for (int64_t j = 0; j < n; j++) f[j] = (float)iv[j] * scale * (col ? col[j] : 1.0f);
    return false;
}

/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) with the ISA's tanh. */
static void gelu_tanh(const vn_isa_table *t, float *f, float *w, int64_t n)
{
    t->binary[VN_VOP_MUL](w, f, f, n);
    t->scalar[VN_VOP_MULS](w, w, 0.044715f, n);
    t->scalar[VN_VOP_ADDS](w, w, 1.0f, n);
    t->binary[VN_VOP_MUL](w, w, f, n);
    t->scalar[VN_VOP_MULS](w, w, 0.7978845608028654f, n);
    t->unary[VN_VOP_TANH](w, w, n);
    t->scalar[VN_VOP_ADDS](w, w, 1.0f, n);
    t->binary[VN_VOP_MUL](w, w, f, n);
    t->scalar[VN_VOP_MULS](f, w, 0.5f, n);
}

static void activate(const vn_fixpipe *fp, float *f, float *w, int64_t n)
{
    const vn_isa_table *t = vn_isa_table_get();
    switch (fp->act) {
    case VN_ACT_RELU:
        t->unary[VN_VOP_RELU](f, f, n);
        break;
    case VN_ACT_CLIP:
        t->scalar[VN_VOP_MAXS](f, f, fp->clip_min, n);
        t->scalar[VN_VOP_MINS](f, f, fp->clip_max, n);
        break;
    case VN_ACT_GELU_ERF:
        t->unary[VN_VOP_GELU](f, f, n);
        break;
    case VN_ACT_GELU_TANH:
        gelu_tanh(t, f, w, n);
        break;
    case VN_ACT_SILU:
        t->unary[VN_VOP_SILU](f, f, n);
        break;
    case VN_ACT_SIGMOID:
        t->unary[VN_VOP_SIGMOID](f, f, n);
        break;
    default:
        break;
    }
}

static void float_stage(const vn_fixpipe *fp, float *f, float *w, int64_t i, int64_t j0, int64_t n)
{
    const vn_isa_table *t = vn_isa_table_get();
    if (fp->alpha_zero)
        t->scalar[VN_VOP_MULS](f, f, 0.0f, n);
    else if (fp->alpha != 0.0f && fp->alpha != 1.0f)
        t->scalar[VN_VOP_MULS](f, f, fp->alpha, n);
    if (fp->beta != 0.0f && fp->c_in.gm.data) {
        const float *c = row_f32(fp->c_in, i, j0, n, w);
        t->scalar[VN_VOP_MULS](w, c, fp->beta, n);
        t->binary[VN_VOP_ADD](f, f, w, n);
    }
    if (fp->bias_axis == VN_BIAS_COL && fp->bias.data)
        t->binary[VN_VOP_ADD](f, f, (const float *)fp->bias.data + fp->col0 + j0, n);
    else if (fp->bias_axis == VN_BIAS_ROW && fp->bias.data)
        t->scalar[VN_VOP_ADDS](f, f, ((const float *)fp->bias.data)[fp->row0 + i], n);
    if (fp->residual.gm.data) t->binary[VN_VOP_ADD](f, f, row_f32(fp->residual, i, j0, n, w), n);
    activate(fp, f, w, n);
}

static void store_float(const vn_fixpipe *fp, vn_mat d, float *f, int64_t i, int64_t j0, int64_t n)
{
    int64_t at = d.off + i * d.rs + j0 * d.cs;
    switch (d.gm.dtype) {
    case VN_F32:
        store_raw(d, VN_F32, f, i, j0, n);
        return;
    case VN_F16:
    case VN_BF16: {
        uint16_t buf[VN_FIXPIPE_CHUNK];
        uint16_t *o = (uint16_t *)d.gm.data + at, *u = d.cs == 1 ? o : buf;
        if (d.gm.dtype == VN_F16)
            vn_f32_to_f16_array(f, u, (size_t)n);
        else
            vn_f32_to_bf16_array(f, u, (size_t)n);
        if (u != o)
            for (int64_t j = 0; j < n; j++) o[j * d.cs] = u[j];
        return;
    }
    default: { /* u8 / i8: saturate(round_half_even(v / y_scale) + y_zero) */
        float ys = fp->y_scale != 0.0f ? fp->y_scale : 1.0f;
        float lo = d.gm.dtype == VN_U8 ? 0.0f : -128.0f, hi = d.gm.dtype == VN_U8 ? 255.0f : 127.0f;
        uint8_t *o = (uint8_t *)d.gm.data + at;
        for (int64_t j = 0; j < n; j++) {
            float q = nearbyintf(f[j] / ys) + (float)fp->y_zero;
            q = q < lo ? lo : (q > hi ? hi : q);
            if (q != q) q = (float)fp->y_zero;
            int32_t qi = (int32_t)q;
            o[j * d.cs] = (uint8_t)qi;
        }
        return;
    }
    }
}

/* The f32 stage in one pass (vn_affine_row: the same bits as float_stage's
 * passes) where it has no beta term or row bias: GEMM epilogues with bias
 * and residual, attention's scaled and masked scores. Its result goes
 * straight to an f32 dst with contiguous columns. Returns false when the
 * epilogue needs float_stage. */
static bool affine_stage(const vn_fixpipe *fp, const float *v, float *f, float *w, int64_t i,
                         int64_t j0, int64_t n, vn_mat dst)
{
    if ((fp->beta != 0.0f && fp->c_in.gm.data) || (fp->bias_axis == VN_BIAS_ROW && fp->bias.data))
        return false;
    vn_affine_row t = {.mul = fp->alpha_zero || (fp->alpha != 0.0f && fp->alpha != 1.0f),
                       .alpha = fp->alpha_zero ? 0.0f : fp->alpha};
    if (fp->bias_axis == VN_BIAS_COL && fp->bias.data)
        t.bias = (const float *)fp->bias.data + fp->col0 + j0;
    if (fp->residual.gm.data) t.res = row_f32(fp->residual, i, j0, n, w);
    bool direct = dst.gm.dtype == VN_F32 && dst.cs == 1;
    float *out = direct ? (float *)dst.gm.data + dst.off + i * dst.rs + j0 : f;
    vn_isa_table_get()->affine_row(out, v, &t, n);
    activate(fp, out, w, n);
    if (!direct) store_float(fp, dst, f, i, j0, n);
    return true;
}

void vn_fixpipe_row(const vn_fixpipe *fp, vn_dtype acc_dtype, void *v, int64_t i, int64_t j0,
                    int64_t n, const vn_mat *dst_, float *tmp)
{
    const vn_mat dst = *dst_;
    float *w = tmp, *f = tmp + VN_FIXPIPE_CHUNK;
    if (fp->partial.gm.data) add_partial(fp->partial, acc_dtype, v, i, j0, n, w);
    if (fp->raw) {
        store_raw(dst, acc_dtype, v, i, j0, n);
        return;
    }
    if (acc_dtype == VN_I32) {
        if (int_stage(fp, v, f, i, j0, n, dst)) return;
    } else {
        if (affine_stage(fp, v, f, w, i, j0, n, dst)) return;
        memcpy(f, v, (size_t)n * sizeof(float));
    }
    float_stage(fp, f, w, i, j0, n);
    store_float(fp, dst, f, i, j0, n);
}

/* ---- the instruction ------------------------------------------------------- */

/* The epilogue is at most "+ partial" into a row-contiguous C of the
 * accumulator dtype: raw partial sums, or f32 with nothing else to apply. */
static bool fixpipe_direct(const vn_fixpipe *fp, vn_dtype acc, vn_mat dst)
{
    if (dst.gm.dtype != acc || dst.cs != 1) return false;
    if (fp->partial.gm.data && fp->partial.cs != 1) return false;
    if (fp->raw) return true;
    return acc == VN_F32 && !fp->alpha_zero && (fp->alpha == 1.0f || fp->alpha == 0.0f) &&
           !(fp->beta != 0.0f && fp->c_in.gm.data) && !fp->bias.data && !fp->residual.gm.data &&
           fp->act == VN_ACT_NONE;
}

/* Straight from the accumulator rows to dst, adding the partial sums: the
 * same single f32 add (or wrapping i32 add) per element as the row path. */
static void copy_direct(const vn_fixpipe *fp, vn_local src, int64_t ldc, int64_t m, int64_t n,
                        vn_mat dst)
{
    bool has_p = fp->partial.gm.data != NULL;
    for (int64_t i = 0; i < m; i++) {
        int64_t at = dst.off + i * dst.rs, pat = has_p ? fp->partial.off + i * fp->partial.rs : 0;
        if (src.dtype == VN_F32) {
            const float *restrict v = (const float *)src.data + i * ldc;
            float *d = (float *)dst.gm.data + at; /* partial may be dst itself */
            if (has_p) {
                const float *pp = (const float *)fp->partial.gm.data + pat;
                for (int64_t j = 0; j < n; j++) d[j] = v[j] + pp[j];
            } else {
                memcpy(d, v, (size_t)n * 4);
            }
        } else {
            const int32_t *restrict v = (const int32_t *)src.data + i * ldc;
            int32_t *d = (int32_t *)dst.gm.data + at;
            if (has_p) {
                const int32_t *pp = (const int32_t *)fp->partial.gm.data + pat;
                for (int64_t j = 0; j < n; j++) d[j] = (int32_t)((uint32_t)v[j] + (uint32_t)pp[j]);
            } else {
                memcpy(d, v, (size_t)n * 4);
            }
        }
    }
}

/* An i32 C with nothing but the zero-point correction: straight from the
 * accumulator rows to dst (the same arithmetic as int_stage). */
static bool fixpipe_int_direct(const vn_fixpipe *fp, vn_dtype acc, vn_mat dst)
{
    return acc == VN_I32 && dst.gm.dtype == VN_I32 && dst.cs == 1 && !fp->raw &&
           !fp->partial.gm.data;
}

static void copy_int_direct(const vn_fixpipe *fp, vn_local src, int64_t ldc, int64_t m, int64_t n,
                            vn_mat dst)
{
    for (int64_t i = 0; i < m; i++)
        int_correct(fp, (const int32_t *)src.data + i * ldc,
                    (int32_t *)dst.gm.data + dst.off + i * dst.rs, i, 0, n);
}

static bool out_ok(vn_dtype acc, vn_dtype out, bool raw)
{
    if (raw) return out == acc;
    if (out == VN_F32 || out == VN_F16 || out == VN_BF16) return true;
    return acc == VN_I32 && (out == VN_I32 || out == VN_U8 || out == VN_I8);
}

static void check_vec(vn_core *core, vn_gm g, int64_t need, vn_dtype dt, const char *what,
                      vn_site site)
{
    if (!g.data) return;
    if (g.dtype != dt || g.len < need)
        vn_core_fail(core, site, "vn_cube_fixpipe",
                     "%s must be %s with at least %lld elements (has %s, %lld)", what,
                     vn_dtype_name(dt), (long long)need, vn_dtype_name(g.dtype), (long long)g.len);
}

static void check_view(vn_core *core, vn_mat v, vn_dtype dt, int64_t m, int64_t n, const char *what,
                       vn_site site)
{
    if (!v.gm.data) return;
    if (v.gm.dtype != dt)
        vn_core_fail(core, site, "vn_cube_fixpipe", "%s is %s; it must be %s", what,
                     vn_dtype_name(v.gm.dtype), vn_dtype_name(dt));
    int64_t lo = v.off, hi = v.off, dr = (m - 1) * v.rs, dc = (n - 1) * v.cs;
    lo += (dr < 0 ? dr : 0) + (dc < 0 ? dc : 0);
    hi += (dr > 0 ? dr : 0) + (dc > 0 ? dc : 0);
    if (lo < 0 || hi >= v.gm.len)
        vn_core_fail(core, site, "vn_cube_fixpipe",
                     "%s: a %lld x %lld block touches elements [%lld, %lld] of a global tensor "
                     "of %lld: out of bounds",
                     what, (long long)m, (long long)n, (long long)lo, (long long)hi,
                     (long long)v.gm.len);
}

static void fixpipe_check(vn_core *core, vn_mat dst, vn_local src, int64_t m, int64_t n,
                          const vn_fixpipe *fp, vn_site site)
{
    const char *call = "vn_cube_fixpipe";
    vn_check_scratch(core, src, call, site);
    if (vn_core_arena_of(core, src.data) != VN_ARENA_L0C)
        vn_core_fail(core, site, call, "src is in %s; it must be in L0C (VN_CO1)",
                     vn_arena_name((vn_arena)vn_core_arena_of(core, src.data)));
    if (m < 0 || n < 0)
        vn_core_fail(core, site, call, "negative extent %lld x %lld", (long long)m, (long long)n);
    vn_dtype op = src.dtype == VN_F32 ? VN_F32 : VN_U8;
    vn_check_read(core, src, 0, vn_cube_c_elems(op, m, n) * 4, call, site);
    if (m == 0 || n == 0) return;
    check_view(core, dst, dst.gm.dtype, m, n, "dst", site);
    check_view(core, fp->partial, src.dtype, m, n, "partial", site);
    if (fp->beta != 0.0f) check_view(core, fp->c_in, VN_F32, m, n, "c_in", site);
    check_view(core, fp->residual, VN_F32, m, n, "residual", site);
    int64_t rows = fp->row0 + m, cols = fp->col0 + n;
    check_vec(core, fp->bias, fp->bias_axis == VN_BIAS_ROW ? rows : cols, VN_F32, "bias", site);
    check_vec(core, fp->col_scale, cols, VN_F32, "col_scale", site);
    check_vec(core, fp->col_sum, cols, VN_I32, "col_sum", site);
    check_vec(core, fp->row_sum, rows, VN_I32, "row_sum", site);
}

void vn_cube_fixpipe_(vn_core *core, vn_mat dst, vn_local src, int64_t m, int64_t n,
                      const vn_fixpipe *fp, vn_site site)
{
    vn_xfer_sync(core);
    static const vn_fixpipe plain = {.alpha = 1.0f};
    if (!fp) fp = &plain;
    if ((src.dtype != VN_F32 && src.dtype != VN_I32) || !out_ok(src.dtype, dst.gm.dtype, fp->raw))
        vn_core_fail(core, site, "vn_cube_fixpipe", "cannot write %s accumulators as %s%s",
                     vn_dtype_name(src.dtype), vn_dtype_name(dst.gm.dtype),
                     fp->raw ? " (raw)" : "");
    if (core->checked) fixpipe_check(core, dst, src, m, n, fp, site);
    if (m <= 0 || n <= 0) return;
    vn_cube_shape s = vn_cube_shape_of(src.dtype == VN_F32 ? VN_F32 : VN_U8);
    int64_t ldc = rup(n, s.nr); /* the accumulator rows, as mmad wrote them */
    if (fixpipe_direct(fp, src.dtype, dst)) {
        copy_direct(fp, src, ldc, m, n, dst);
        core->counters.bytes_out += m * n * 4;
        return;
    }
    if (fixpipe_int_direct(fp, src.dtype, dst)) {
        copy_int_direct(fp, src, ldc, m, n, dst);
        core->counters.bytes_out += m * n * 4;
        return;
    }
    union {
        float f[VN_FIXPIPE_CHUNK];
        int32_t i[VN_FIXPIPE_CHUNK];
    } row;
    float tmp[2 * VN_FIXPIPE_CHUNK];
    void *rowp = src.dtype == VN_F32 ? (void *)row.f : (void *)row.i;
    /* the row step changes its f32 row only to add partial sums (and i32
     * rows always): otherwise it reads L0C in place */
    bool read_only = src.dtype == VN_F32 && !fp->partial.gm.data;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j0 = 0; j0 < n; j0 += VN_FIXPIPE_CHUNK) {
            int64_t w = n - j0 < VN_FIXPIPE_CHUNK ? n - j0 : VN_FIXPIPE_CHUNK;
            uint8_t *at = (uint8_t *)src.data + (size_t)(i * ldc + j0) * 4;
            /* else a copy, so that L0C stays as mmad left it */
            if (!read_only) memcpy(rowp, at, (size_t)w * 4);
            vn_fixpipe_row(fp, src.dtype, read_only ? (void *)at : rowp, i, j0, w, &dst, tmp);
        }
    core->counters.bytes_out += m * n * (int64_t)vn_dtype_size(dst.gm.dtype);
}
