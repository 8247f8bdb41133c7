/*
 * cube.c — the cube instructions of kernel.h: loads into the micro-panel
 * layouts, mmad, and the checks that guard them.
 *
 * Release mode checks only what would otherwise compute garbage silently (an
 * operand dtype the cube does not take); checked mode validates positions,
 * alignment, extents, global-memory bounds and that mmad reads only bytes a
 * load (or an earlier mmad) wrote.
 */
#include <string.h>

#include "kernel/cube_internal.h"
#include "kernel/isa.h"

static int64_t rup(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

/* The arena a local must live in for an operand role. */
static void check_position(vn_core *core, vn_local t, vn_arena want1, vn_arena want2,
                           const char *what, const char *call, vn_site site)
{
    vn_check_scratch(core, t, call, site);
    int a = vn_core_arena_of(core, t.data);
    if (a != (int)want1 && a != (int)want2)
        vn_core_fail(core, site, call, "%s is in %s; it must be in %s or %s", what,
                     vn_arena_name((vn_arena)a), vn_arena_name(want1), vn_arena_name(want2));
}

/* Checked mode: every element the view touches for an r x c block is inside gm. */
static void check_mat(vn_core *core, vn_mat v, int64_t r, int64_t c, const char *what,
                      const char *call, vn_site site)
{
    if (r == 0 || c == 0) return;
    if (!v.gm.data || vn_dtype_size(v.gm.dtype) == 0)
        vn_core_fail(core, site, call, "%s: global tensor is not valid", what);
    int64_t lo = v.off, hi = v.off;
    int64_t dr = (r - 1) * v.rs, dc = (c - 1) * v.cs;
    lo += (dr < 0 ? dr : 0) + (dc < 0 ? dc : 0);
    hi += (dr > 0 ? dr : 0) + (dc > 0 ? dc : 0);
    if (lo < 0 || hi >= v.gm.len)
        vn_core_fail(core, site, call,
                     "%s: a %lld x %lld block at element %lld with strides (%lld, %lld) touches "
                     "elements [%lld, %lld] of a global tensor of %lld: out of bounds",
                     what, (long long)r, (long long)c, (long long)v.off, (long long)v.rs,
                     (long long)v.cs, (long long)lo, (long long)hi, (long long)v.gm.len);
}

static void check_dims(vn_core *core, int64_t a, int64_t b, int64_t c, const char *call,
                       vn_site site)
{
    if (a < 0 || b < 0 || c < 0)
        vn_core_fail(core, site, call, "negative extent (%lld, %lld, %lld)", (long long)a,
                     (long long)b, (long long)c);
}

/* Checked mode: the block of a whole pre-packed B that a load or an mmad reads. */
static void packed_block_check(vn_core *core, vn_gm packed, vn_cube_shape s, int64_t K, int64_t k0,
                               int64_t k, int64_t n0, int64_t n, const char *call, vn_site site)
{
    check_dims(core, K, k, n, call, site);
    if (k0 < 0 || k0 % s.kp || n0 < 0 || n0 % s.nr || k0 + k > K || (k % s.kp && k0 + k != K))
        vn_core_fail(core, site, call,
                     "block (k0 %lld, k %lld, n0 %lld) must start on a k group of %d and a "
                     "panel of %d columns, end on a k group or at K, inside K = %lld",
                     (long long)k0, (long long)k, (long long)n0, (int)s.kp, (int)s.nr,
                     (long long)K);
    int64_t need = ((n0 + n + s.nr - 1) / s.nr) * s.nr * rup(K, s.kp);
    if (n > 0 && need > packed.len)
        vn_core_fail(core, site, call,
                     "columns [%lld, %lld) need %lld packed elements; the packed B has %lld",
                     (long long)n0, (long long)(n0 + n), (long long)need, (long long)packed.len);
    if ((uintptr_t)packed.data % 32)
        vn_core_fail(core, site, call, "the packed B at %p is not 32-byte aligned", packed.data);
}

/* dst dtype of a load and the source dtypes it accepts. */
static bool load_types_ok(bool is_a, vn_dtype dst, vn_dtype src)
{
    switch (dst) {
    case VN_F32:
        return src == VN_F32;
    case VN_BF16:
        return src == VN_F32 || src == VN_BF16;
    case VN_U8:
        return is_a && (src == VN_U8 || src == VN_I8);
    case VN_I8:
        return !is_a && (src == VN_U8 || src == VN_I8);
    default:
        return false;
    }
}

/* The bytes [lo, hi) an r x c block of a view spans. */
static void mat_span(vn_mat v, int64_t r, int64_t c, const char **lo, const char **hi)
{
    int64_t es = (int64_t)vn_dtype_size(v.gm.dtype), dr = (r - 1) * v.rs, dc = (c - 1) * v.cs;
    int64_t l = v.off + (dr < 0 ? dr : 0) + (dc < 0 ? dc : 0);
    int64_t h = v.off + (dr > 0 ? dr : 0) + (dc > 0 ? dc : 0);
    *lo = (const char *)v.gm.data + l * es;
    *hi = (const char *)v.gm.data + (h + 1) * es;
}

typedef void (*prefetch_rows_fn)(const void *src, size_t row_bytes, int64_t rows, ptrdiff_t stride);

/* The block as rows along its unit-stride side (other strides are not worth
 * a hint), handed to `request`. */
static void prefetch_block(vn_core *core, vn_mat src, int64_t rows, int64_t cols,
                           prefetch_rows_fn request, const char *call, vn_site site)
{
    if (core->checked) {
        check_dims(core, rows, cols, 0, call, site);
        check_mat(core, src, rows, cols, "src", call, site);
    }
    if (rows <= 0 || cols <= 0 || !src.gm.data) return;
    int64_t es = (int64_t)vn_dtype_size(src.gm.dtype);
    const char *p = (const char *)src.gm.data + src.off * es;
    if (src.cs == 1)
        request(p, (size_t)(cols * es), rows, (ptrdiff_t)(src.rs * es));
    else if (src.rs == 1)
        request(p, (size_t)(rows * es), cols, (ptrdiff_t)(src.cs * es));
}

void vn_prefetch_mat_(vn_core *core, vn_mat src, int64_t rows, int64_t cols, vn_site site)
{
    prefetch_block(core, src, rows, cols, vn_prefetch_queue_rows, "vn_prefetch_mat", site);
}

void vn_prefetch_mat_now_(vn_core *core, vn_mat dst, int64_t rows, int64_t cols, vn_site site)
{
    prefetch_block(core, dst, rows, cols, vn_prefetch_rows_now, "vn_prefetch_mat_now", site);
}

static void load_common(vn_core *core, bool is_a, vn_local dst, vn_mat src, int64_t rows,
                        int64_t depth, vn_site site)
{
    const char *call = is_a ? "vn_cube_load_a" : "vn_cube_load_b";
    if (!load_types_ok(is_a, dst.dtype, src.gm.dtype))
        vn_core_fail(core, site, call, "cannot load %s into a %s %s operand",
                     vn_dtype_name(src.gm.dtype), vn_dtype_name(dst.dtype), is_a ? "A" : "B");
    vn_cube_shape s = vn_cube_shape_of(dst.dtype);
    int64_t elems =
        is_a ? vn_cube_a_elems(dst.dtype, rows, depth) : vn_cube_b_elems(dst.dtype, depth, rows);
    int64_t bytes = elems * (int64_t)vn_dtype_size(dst.dtype);
    if (core->checked) {
        check_dims(core, rows, depth, 0, call, site);
        if (is_a)
            check_position(core, dst, VN_ARENA_L1, VN_ARENA_L0A, "dst", call, site);
        else
            check_position(core, dst, VN_ARENA_L1, VN_ARENA_L0B, "dst", call, site);
        if (is_a)
            check_mat(core, src, rows, depth, "src", call, site);
        else
            check_mat(core, src, depth, rows, "src", call, site);
        vn_check_write(core, dst, 0, bytes, call, site);
    }
    if (elems == 0) return;
    const void *p = (const uint8_t *)src.gm.data + src.off * (int64_t)vn_dtype_size(src.gm.dtype);
    const char *lo, *hi;
    mat_span(src, is_a ? rows : depth, is_a ? depth : rows, &lo, &hi);
    vn_prefetch_drop_within(lo, hi); /* this copy fetches those lines now */
    if (is_a)
        vn_cube_pack_a(s, dst.dtype, dst.data, src.gm.dtype, p, src.rs, src.cs, rows, depth);
    else
        vn_cube_pack_b(s, dst.dtype, dst.data, src.gm.dtype, p, src.rs, src.cs, depth, rows);
    core->counters.bytes_in += rows * depth * (int64_t)vn_dtype_size(src.gm.dtype);
}

void vn_cube_load_a_(vn_core *core, vn_local dst, vn_mat src, int64_t m, int64_t k, vn_site site)
{
    vn_xfer_sync(core);
    load_common(core, true, dst, src, m, k, site);
}

void vn_cube_load_b_(vn_core *core, vn_local dst, vn_mat src, int64_t k, int64_t n, vn_site site)
{
    vn_xfer_sync(core);
    load_common(core, false, dst, src, n, k, site);
}

/* The pre-packed whole B is ceil(N/NR) panels of Kp(K) x NR; the block's
 * panel q' = n0/NR + q starts at q'*NR*Kp(K), and its rows from k0 on are
 * contiguous, so each panel of the block is one copy of Kp(k) x NR elements —
 * except the last k chunk, whose rows past K are the panel's zero padding. */
void vn_cube_load_b_packed_(vn_core *core, vn_local dst, vn_gm packed, int64_t K, int64_t k0,
                            int64_t k, int64_t n0, int64_t n, vn_site site)
{
    vn_xfer_sync(core);
    const char *call = "vn_cube_load_b_packed";
    vn_cube_shape s = vn_cube_shape_of(dst.dtype);
    if (s.mr == 0 || (dst.dtype == VN_U8) || packed.dtype != dst.dtype)
        vn_core_fail(core, site, call, "a packed %s B cannot load into a %s operand",
                     vn_dtype_name(packed.dtype), vn_dtype_name(dst.dtype));
    int64_t kpK = rup(K, s.kp), kpk = rup(k, s.kp);
    int64_t panels = (n + s.nr - 1) / s.nr, first = n0 / s.nr;
    int64_t bytes = vn_cube_b_elems(dst.dtype, k, n) * (int64_t)vn_dtype_size(dst.dtype);
    if (core->checked) {
        packed_block_check(core, packed, s, K, k0, k, n0, n, call, site);
        check_position(core, dst, VN_ARENA_L1, VN_ARENA_L0B, "dst", call, site);
        vn_check_write(core, dst, 0, bytes, call, site);
    }
    if (bytes == 0) return;
    size_t es = vn_dtype_size(dst.dtype);
    size_t run = (size_t)(kpk * s.nr) * es;
    for (int64_t q = 0; q < panels; q++) {
        const uint8_t *from =
            (const uint8_t *)packed.data + ((first + q) * s.nr * kpK + k0 * s.nr) * (int64_t)es;
        memcpy((uint8_t *)dst.data + (size_t)q * run, from, run);
    }
    core->counters.bytes_in += (int64_t)run * panels;
}

static bool mmad_types_ok(vn_dtype c, vn_dtype a, vn_dtype b)
{
    return (a == VN_F32 && b == VN_F32 && c == VN_F32) ||
           (a == VN_BF16 && b == VN_BF16 && c == VN_F32) ||
           (a == VN_U8 && b == VN_I8 && c == VN_I32);
}

/* Checked mode: the A and C operands of an mmad. */
static void mmad_check_c(vn_core *core, vn_local c, vn_dtype a_dtype, int64_t m, int64_t n,
                         int64_t k, bool init, const char *call, vn_site site)
{
    check_dims(core, m, n, k, call, site);
    check_position(core, c, VN_ARENA_L0C, VN_ARENA_L0C, "C", call, site);
    int64_t cb = vn_cube_c_elems(a_dtype, m, n) * 4;
    if (init)
        vn_check_write(core, c, 0, cb, call, site);
    else
        vn_check_read(core, c, 0, cb, call, site);
}

static void mmad_check_ac(vn_core *core, vn_local c, vn_local a, int64_t m, int64_t n, int64_t k,
                          bool init, const char *call, vn_site site)
{
    mmad_check_c(core, c, a.dtype, m, n, k, init, call, site);
    check_position(core, a, VN_ARENA_L1, VN_ARENA_L0A, "A", call, site);
    int64_t sz = (int64_t)vn_dtype_size(a.dtype);
    vn_check_read(core, a, 0, vn_cube_a_elems(a.dtype, m, k) * sz, call, site);
}

static void mmad_check(vn_core *core, vn_local c, vn_local a, vn_local b, int64_t m, int64_t n,
                       int64_t k, bool init, vn_site site)
{
    const char *call = "vn_cube_mmad";
    mmad_check_ac(core, c, a, m, n, k, init, call, site);
    check_position(core, b, VN_ARENA_L1, VN_ARENA_L0B, "B", call, site);
    int64_t sz = (int64_t)vn_dtype_size(a.dtype);
    vn_check_read(core, b, 0, vn_cube_b_elems(b.dtype, k, n) * sz, call, site);
}

/* The micro-kernel of a micro-panel with `rows` valid rows and the rows it
 * reads and writes (*height): MR, or 16 / 8 / 4 for a short last panel where
 * the table has those kernels. */
static vn_ukr_fn panel_kernel(const vn_cube_table *t, int kind, int64_t rows, int64_t *height)
{
    *height = t->shape[kind].mr;
    if (rows >= *height) return t->ukr[kind];
    if (rows <= 4 && t->ukr_le4[kind]) return *height = 4, t->ukr_le4[kind];
    if (rows <= 8 && t->ukr_le8[kind]) return *height = 8, t->ukr_le8[kind];
    if (rows <= 16 && t->ukr_le16[kind]) return *height = 16, t->ukr_le16[kind];
    return t->ukr[kind];
}

/* The kernel of the micro-panel with `left` rows still to go, and the rows it
 * covers: panel_kernel's, except where the last full panel and a remainder of
 * fewer than 4 rows together make whole 4-row panels (AVX2's 6-row kernels
 * and M = 128, every BERT-shaped product: 6 + 2 = 4 + 4). Those run as 4-row
 * panels, 8/6 of a 6-row panel's time instead of 1 + 4/6, reading no row
 * past M. */
static vn_ukr_fn next_panel(const vn_cube_table *t, int kind, int64_t left, int64_t *height)
{
    int64_t mr = t->shape[kind].mr;
    if (t->ukr_le4[kind] && left > mr && left < mr + 4 && left % 4 == 0)
        return *height = 4, t->ukr_le4[kind];
    return panel_kernel(t, kind, left, height);
}

int64_t vn_cube_rows_read(vn_dtype a_dtype, int64_t m)
{
    int kind = vn_cube_kind_of(a_dtype);
    if (kind < 0 || m <= 0) return 0;
    const vn_cube_table *t = vn_cube_table_get();
    int64_t r = 0, height;
    for (; r < m; r += height) next_panel(t, kind, m - r, &height);
    return r;
}

/* One A micro-panel (rows lda elements apart, kg k groups) times np B
 * panels bstep elements apart (es bytes an element), their k groups bld
 * apart, into C's micro-tiles (f32 / i32, ldc apart); acc: add to C. Each
 * call takes its share of the queued prefetch lines (vn_prefetch_take). */
static void run_panels(vn_ukr_fn ukr, vn_cube_shape s, size_t es, const void *a, int64_t lda,
                       const void *b, int64_t bstep, int64_t bld, int64_t kg, int64_t np, void *c,
                       int64_t ldc, bool acc)
{
    for (int64_t q = 0; q < np; q++) {
        const uint8_t *bp = (const uint8_t *)b + (size_t)(q * bstep) * es;
        const char *pf = NULL;
        int64_t npf = vn_prefetch_take(vn_ukr_pf_lines(kg), &pf);
        ukr(kg, a, lda, bp, bld, (uint8_t *)c + (size_t)(q * s.nr) * 4, ldc, acc, pf, npf);
    }
}

/* A k chunk of a widened A micro-panel: 16 KiB on the stack. */
#define WIDE_A_FLOATS 4096

/* One bf16 A micro-panel (MR rows lda apart, kp values each) times np B
 * panels through the table's ukr_bf16_wide: each k chunk of the rows is widened
 * to f32 once (a bf16 is the top half of an f32) and runs against every B
 * panel; later chunks add to C, which holds the f32 sums exactly, so the
 * bits are those of one call over all of k. */
static void panel_widened(const vn_cube_table *t, const uint16_t *a, int64_t lda, const void *b,
                          int64_t bstep, int64_t bld, int64_t kp, int64_t np, float *c, int64_t ldc,
                          bool init)
{
    vn_cube_shape s = t->shape[VN_CUBE_BF16];
    float wa[WIDE_A_FLOATS];
    int64_t step = WIDE_A_FLOATS / s.mr / s.kp * s.kp;
    for (int64_t k0 = 0; k0 < kp; k0 += step) {
        int64_t kl = kp - k0 < step ? kp - k0 : step;
        for (int64_t r = 0; r < s.mr; r++)
            vn_bf16_to_f32_array(a + r * lda + k0, wa + r * kl, (size_t)kl);
        run_panels(t->ukr_bf16_wide, s, 2, wa, kl, (const uint16_t *)b + k0 / s.kp * bld, bstep,
                   bld, kl / s.kp, np, c, ldc, !init || k0 > 0);
    }
}

/* The L1 data caches this runs on have 64 sets of 64-byte lines (32 KiB
 * 8-way on Zen 4, 48 KiB 12-way on recent Intel): lines 4 KiB apart share a
 * set. */
#define L1_SET_SPAN 4096
#define L1_LINE     64
/* panel_copied moves A rows in chunks of A_COPY_CHUNK bytes to rows
 * A_COPY_STRIDE (33 lines) apart, which puts consecutive rows in distinct
 * sets. */
#define A_COPY_CHUNK  2048
#define A_COPY_STRIDE (A_COPY_CHUNK + L1_LINE)

/* A micro-kernel reads one line of each of its rows at a time, so rows whose
 * stride is a multiple of 4 KiB (A read in place with K = 1024, 2048, 3072;
 * a row-major B 1024 columns wide) all need ways of one set, more than an
 * 8-way L1 has, and evict each other and the other operand's lines. True when
 * `rows` rows row_bytes apart stack more than 4 deep in some set. */
bool vn_rows_crowd_l1(int64_t row_bytes, int64_t rows)
{
    uint64_t sets = 0;
    for (int64_t i = 0; i < rows; i++)
        sets |= 1ull << (((uint64_t)(i * row_bytes) % L1_SET_SPAN) / L1_LINE);
    return rows > 4 * __builtin_popcountll(sets);
}

/* One micro-panel of `height` rows lda elements apart (es bytes each) times
 * np B panels, its rows copied chunk by chunk into a buffer whose row stride
 * (A_COPY_STRIDE, 33 lines) puts them in distinct sets. Later chunks add to
 * C, which holds each f32 / i32 sum exactly, so the bits are those of one
 * call over all of k. */
static void panel_copied(vn_ukr_fn ukr, vn_cube_shape s, size_t es, const uint8_t *a, int64_t lda,
                         int64_t height, const uint8_t *b, int64_t bstep, int64_t bld, int64_t kp,
                         int64_t np, uint8_t *c, int64_t ldc, bool init)
{
    _Alignas(64) uint8_t buf[VN_CUBE_MAX_COPY_ROWS * A_COPY_STRIDE];
    int64_t step = A_COPY_CHUNK / (int64_t)es; /* elements per row chunk, a multiple of KP */
    for (int64_t k0 = 0; k0 < kp; k0 += step) {
        int64_t kl = kp - k0 < step ? kp - k0 : step;
        for (int64_t r = 0; r < height; r++)
            memcpy(buf + r * A_COPY_STRIDE, a + (size_t)(r * lda + k0) * es, (size_t)kl * es);
        run_panels(ukr, s, es, buf, A_COPY_STRIDE / (int64_t)es, b + (size_t)(k0 / s.kp * bld) * es,
                   bstep, bld, kl / s.kp, np, c, ldc, !init || k0 > 0);
    }
}

/* The micro-tiles of C (m x n) from the A rows `lda` elements apart (the L0A
 * block: Kp(k); A read in place: its row stride) and B panels `bstep`
 * elements apart (NR x Kp(k) in L1; NR x Kp(K) in a whole pre-packed B; NR
 * in a row-major B), their k groups `bld` elements apart. */
static void mmad_rows(vn_local c, const void *a, vn_dtype a_dtype, int64_t lda, const void *b,
                      int64_t bstep, int64_t bld, int64_t m, int64_t n, int64_t k, bool init)
{
    int kind = vn_cube_kind_of(a_dtype);
    const vn_cube_table *t = vn_cube_table_get();
    vn_cube_shape s = t->shape[kind];
    int64_t mp = (m + s.mr - 1) / s.mr, np = (n + s.nr - 1) / s.nr, kp = rup(k, s.kp);
    int64_t ldc = np * s.nr;
    size_t es = vn_dtype_size(a_dtype);
    if (k <= 0) {
        if (init) memset(c.data, 0, (size_t)(mp * s.mr * ldc) * 4);
        return;
    }
    /* A rows outer: the MR x kc rows (MR*KP*4 bytes per k group, the smaller
     * operand) stay in the L1 data cache while the B micro-panels stream past
     * them from L2; that lets the K chunk be about twice as long as with B
     * resident, halving the passes of partial sums through C. */
    bool crowded = vn_rows_crowd_l1(lda * (int64_t)es, s.mr);
    int64_t height;
    for (int64_t r0 = 0; r0 < m; r0 += height) {
        if (kind == VN_CUBE_BF16 && t->ukr_bf16_wide) {
            panel_widened(t, (const uint16_t *)a + r0 * lda, lda, b, bstep, bld, kp, np,
                          (float *)c.data + r0 * ldc, ldc, init);
            height = s.mr;
            continue;
        }
        vn_ukr_fn ukr = next_panel(t, kind, m - r0, &height);
        const uint8_t *ap = (const uint8_t *)a + (size_t)(r0 * lda) * es;
        uint8_t *cp = (uint8_t *)c.data + (size_t)(r0 * ldc) * 4;
        if (crowded && height <= VN_CUBE_MAX_COPY_ROWS) {
            panel_copied(ukr, s, es, ap, lda, height, b, bstep, bld, kp, np, cp, ldc, init);
            continue;
        }
        run_panels(ukr, s, es, ap, lda, b, bstep, bld, kp / s.kp, np, cp, ldc, !init);
    }
}

static void mmad_tiles(vn_local c, vn_local a, const void *b, int64_t bstep, int64_t bld, int64_t m,
                       int64_t n, int64_t k, bool init)
{
    vn_cube_shape s = vn_cube_shape_of(a.dtype);
    mmad_rows(c, a.data, a.dtype, rup(k, s.kp), b, bstep, bld, m, n, k, init);
}

void vn_cube_mmad_(vn_core *core, vn_local c, vn_local a, vn_local b, int64_t m, int64_t n,
                   int64_t k, bool init, vn_site site)
{
    vn_xfer_sync(core);
    if (!mmad_types_ok(c.dtype, a.dtype, b.dtype))
        vn_core_fail(core, site, "vn_cube_mmad", "no cube operation %s x %s -> %s",
                     vn_dtype_name(a.dtype), vn_dtype_name(b.dtype), vn_dtype_name(c.dtype));
    if (core->checked) mmad_check(core, c, a, b, m, n, k, init, site);
    if (m <= 0 || n <= 0) return;
    vn_cube_shape s = vn_cube_shape_of(a.dtype);
    mmad_tiles(c, a, b.data, s.nr * rup(k, s.kp), s.nr * s.kp, m, n, k, init);
    vn_core_count_macs(core, a.dtype, m * n * k);
}

/* The packed B is read where it lies: panel q' = n0/NR + q starts at
 * q'*NR*Kp(K), its rows from k0 on are contiguous, and the rows of the last
 * chunk past K are the panel's zero padding — the same bytes
 * vn_cube_load_b_packed would copy into B1, so the results are the same bits. */
void vn_cube_mmad_packed_(vn_core *core, vn_local c, vn_local a, vn_gm packed, int64_t K, int64_t m,
                          int64_t k0, int64_t k, int64_t n0, int64_t n, bool init, vn_site site)
{
    vn_xfer_sync(core);
    const char *call = "vn_cube_mmad_packed";
    if (!mmad_types_ok(c.dtype, a.dtype, packed.dtype))
        vn_core_fail(core, site, call, "no cube operation %s x packed %s -> %s",
                     vn_dtype_name(a.dtype), vn_dtype_name(packed.dtype), vn_dtype_name(c.dtype));
    vn_cube_shape s = vn_cube_shape_of(a.dtype);
    if (core->checked) {
        packed_block_check(core, packed, s, K, k0, k, n0, n, call, site);
        mmad_check_ac(core, c, a, m, n, k, init, call, site);
    }
    if (m <= 0 || n <= 0) return;
    int64_t kpK = rup(K, s.kp), es = (int64_t)vn_dtype_size(packed.dtype);
    const uint8_t *b = (const uint8_t *)packed.data + ((n0 / s.nr) * s.nr * kpK + k0 * s.nr) * es;
    mmad_tiles(c, a, b, s.nr * kpK, s.nr * s.kp, m, n, k, init);
    vn_core_count_macs(core, a.dtype, m * n * k);
    core->counters.bytes_in += rup(k, s.kp) * ((n + s.nr - 1) / s.nr * s.nr) * es;
}

/* An f32 A whose rows are contiguous (a.cs == 1) is the L0A block as it
 * lies, its rows a.rs apart instead of Kp(k), so the mmads below read it in
 * place. The kernels read vn_cube_rows_read(m) rows of A (the short last
 * panel rounded up to its kernel's height), so those must exist; the rows
 * past m only feed accumulator rows the fixpipe does not store. */
static void a_in_place_check(vn_core *core, vn_local c, vn_mat a, vn_dtype b_dtype, int64_t m,
                             int64_t n, int64_t k, bool init, const char *call, vn_site site)
{
    if (a.gm.dtype != VN_F32 || c.dtype != VN_F32 || b_dtype != VN_F32 || a.cs != 1)
        vn_core_fail(core, site, call,
                     "needs an f32 A with contiguous rows, an f32 B and C (has %s x %s -> %s, A "
                     "column stride %lld)",
                     vn_dtype_name(a.gm.dtype), vn_dtype_name(b_dtype), vn_dtype_name(c.dtype),
                     (long long)a.cs);
    if (core->checked) {
        mmad_check_c(core, c, VN_F32, m, n, k, init, call, site);
        check_mat(core, a, vn_cube_rows_read(VN_F32, m), k, "A", call, site);
    }
}

/* A read in place, B pre-packed in global memory: neither operand copied. */
void vn_cube_mmad_packed_direct_(vn_core *core, vn_local c, vn_mat a, vn_gm packed, int64_t K,
                                 int64_t m, int64_t k0, int64_t k, int64_t n0, int64_t n, bool init,
                                 vn_site site)
{
    const char *call = "vn_cube_mmad_packed_direct";
    a_in_place_check(core, c, a, packed.dtype, m, n, k, init, call, site);
    vn_cube_shape s = vn_cube_shape_of(VN_F32);
    if (core->checked) packed_block_check(core, packed, s, K, k0, k, n0, n, call, site);
    if (m <= 0 || n <= 0) return;
    vn_xfer_sync(core); /* A is read in global memory: pending copy-outs land first */
    int64_t kpK = rup(K, s.kp);
    const float *b = (const float *)packed.data + (n0 / s.nr) * s.nr * kpK + k0 * s.nr;
    mmad_rows(c, (const float *)a.gm.data + a.off, VN_F32, a.rs, b, s.nr * kpK, s.nr * s.kp, m, n,
              k, init);
    vn_core_count_macs(core, VN_F32, m * n * k);
    core->counters.bytes_in += (k * ((n + s.nr - 1) / s.nr * s.nr) + m * k) * 4;
}

/* A read in place, B in L1 / L0B as vn_cube_load_b wrote it: a short A
 * (every B block feeds few micro-panels) is not copied once per column tile. */
void vn_cube_mmad_a_gm_(vn_core *core, vn_local c, vn_mat a, vn_local b, int64_t m, int64_t n,
                        int64_t k, bool init, vn_site site)
{
    const char *call = "vn_cube_mmad_a_gm";
    a_in_place_check(core, c, a, b.dtype, m, n, k, init, call, site);
    if (core->checked) {
        check_position(core, b, VN_ARENA_L1, VN_ARENA_L0B, "B", call, site);
        vn_check_read(core, b, 0, vn_cube_b_elems(VN_F32, k, n) * 4, call, site);
    }
    if (m <= 0 || n <= 0) return;
    vn_xfer_sync(core); /* A is read in global memory: pending copy-outs land first */
    vn_cube_shape s = vn_cube_shape_of(VN_F32);
    mmad_rows(c, (const float *)a.gm.data + a.off, VN_F32, a.rs, b.data, s.nr * rup(k, s.kp),
              s.nr * s.kp, m, n, k, init);
    vn_core_count_macs(core, VN_F32, m * n * k);
    core->counters.bytes_in += m * k * 4;
}

/* An f32 B whose columns are contiguous is a B fractal as it lies (KP = 1:
 * panel q is columns q*NR.., its k rows b.rs apart), so the micro-kernels
 * can read it in place: for a short A (few micro-panels per B element) the
 * copy into L1 would cost as much as the mmad's own reads. n must be whole
 * panels, because a micro-kernel reads NR columns. */
void vn_cube_mmad_gm_(vn_core *core, vn_local c, vn_local a, vn_mat b, int64_t m, int64_t n,
                      int64_t k, bool init, vn_site site)
{
    const char *call = "vn_cube_mmad_gm";
    vn_cube_shape s = vn_cube_shape_of(VN_F32);
    if (a.dtype != VN_F32 || c.dtype != VN_F32 || b.gm.dtype != VN_F32 || b.cs != 1)
        vn_core_fail(core, site, call,
                     "needs f32 A, C and an f32 B with contiguous columns (has %s x %s -> %s, "
                     "column stride %lld)",
                     vn_dtype_name(a.dtype), vn_dtype_name(b.gm.dtype), vn_dtype_name(c.dtype),
                     (long long)b.cs);
    if (n % s.nr)
        vn_core_fail(core, site, call, "n %lld is not a multiple of the panel width %d",
                     (long long)n, (int)s.nr);
    if (core->checked) {
        mmad_check_ac(core, c, a, m, n, k, init, call, site);
        check_mat(core, b, k, n, "B", call, site);
    }
    if (m <= 0 || n <= 0) return;
    vn_xfer_sync(core); /* B is read in global memory: pending copy-outs land first */
    const float *bp = (const float *)b.gm.data + b.off;
    mmad_tiles(c, a, bp, s.nr, b.rs, m, n, k, init);
    vn_core_count_macs(core, VN_F32, m * n * k);
    core->counters.bytes_in += k * n * 4;
}
