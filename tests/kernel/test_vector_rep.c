/*
 * test_vector_rep.c — the mask/repeat form: random masks, block strides 1 and
 * 2, repeat strides 8, 16 and 0, every dtype; disabled lanes stay untouched;
 * the full-mask contiguous fast path; checked-mode argument checks.
 */
#include "kernel/vec_kernel.h"
#include "kernel/vec_ref.h"

#define BUF_BYTES 8192
#define SENT16    0x7e5au /* f16 / bf16 NaN pattern nobody computes */
#define SENT32    0x7fa5a5a5u

typedef struct rep_case {
    vn_vop op;
    vn_dtype dtype;
    vn_mask mask;
    int32_t repeat;
    vn_binary_rep p; /* unary / scalar use dst_blk, src0_blk, dst_rep, src0_rep */
    double s;
} rep_case;

static vn_unary_rep as_unary(vn_binary_rep p)
{
    return (vn_unary_rep){p.dst_blk, p.src0_blk, p.dst_rep, p.src0_rep};
}

static void rep_body(vn_core *c, vn_local *l, const void *ctx)
{
    const rep_case *k = ctx;
    switch (vn_vop_kind_of(k->op)) {
    case VN_VOP_UNARY:
        vn_vunary_rep(c, k->op, l[0], l[1], k->mask, k->repeat, as_unary(k->p));
        break;
    case VN_VOP_BINARY:
        vn_vbinary_rep(c, k->op, l[0], l[1], l[2], k->mask, k->repeat, k->p);
        break;
    case VN_VOP_SCALAR:
        vn_vscalar_rep(c, k->op, l[0], l[1], k->s, k->mask, k->repeat, as_unary(k->p));
        break;
    }
}

static int64_t off_of(int32_t r, int32_t lane, int32_t blk, int32_t rep, size_t size)
{
    int32_t per = (int32_t)(32 / size);
    return ((int64_t)r * rep + (int64_t)(lane / per) * blk) * 32 + (lane % per) * (int64_t)size;
}

static int32_t ref_i32(vn_vop op, int32_t a, int32_t b)
{
    switch (op) {
    case VN_VOP_ABS:
        return a < 0 ? (int32_t)(0u - (uint32_t)a) : a;
    case VN_VOP_ADD:
        return (int32_t)((uint32_t)a + (uint32_t)b);
    case VN_VOP_MAXS:
        return a > b ? a : b;
    default:
        return a < b ? a : b;
    }
}

/* Expected dst bytes: the sentinel, overwritten lane by lane, repeat by repeat. */
static void expect(const rep_case *k, const uint8_t *a, const uint8_t *b, uint8_t *want,
                   bool *lane_set)
{
    size_t size = vn_dtype_size(k->dtype);
    int32_t lanes = (int32_t)(256 / size);
    const vt_op *o = &vt_ops[k->op];
    bool binary = vn_vop_kind_of(k->op) == VN_VOP_BINARY;
    double s = k->s;
    uint8_t cell[4];
    if (k->dtype == VN_I32)
        s = nearbyint(s);
    else
        vt_put(k->dtype, cell, 0, s), s = vt_get(k->dtype, cell, 0);
    for (int32_t r = 0; r < k->repeat; r++)
        for (int32_t lane = 0; lane < lanes; lane++) {
            if (!((k->mask.bits[lane / 64] >> (lane % 64)) & 1)) continue;
            int64_t od = off_of(r, lane, k->p.dst_blk, k->p.dst_rep, size);
            double x = vt_get(k->dtype, a + off_of(r, lane, k->p.src0_blk, k->p.src0_rep, size), 0);
            double y = binary ? vt_get(k->dtype,
                                       b + off_of(r, lane, k->p.src1_blk, k->p.src1_rep, size), 0)
                              : s;
            double v = k->dtype == VN_I32 ? ref_i32(k->op, (int32_t)x, (int32_t)y) : o->ref(x, y);
            vt_put(k->dtype, want + od, 0, v);
            lane_set[od / (int64_t)size] = true;
        }
}

static bool close_enough(const rep_case *k, const uint8_t *got, const uint8_t *want)
{
    switch (k->dtype) {
    case VN_F32:
        return vt_ulps(*(const float *)got, *(const float *)want) <= vt_ops[k->op].ulps;
    case VN_I32:
        return memcmp(got, want, 4) == 0;
    case VN_F16:
        return vt_ulps16(*(const uint16_t *)got, *(const uint16_t *)want, vt_f16_nan) <= 1;
    default:
        return vt_ulps16(*(const uint16_t *)got, *(const uint16_t *)want, vt_bf16_nan) <= 1;
    }
}

static void fill_sentinel(uint8_t *p, size_t size)
{
    for (size_t i = 0; i < BUF_BYTES; i += size) {
        if (size == 2)
            *(uint16_t *)(p + i) = SENT16;
        else
            *(uint32_t *)(p + i) = SENT32;
    }
}

static void run_rep(const rep_case *k, vt_rng *rng, int checked)
{
    static uint8_t a[BUF_BYTES], b[BUF_BYTES], dst[BUF_BYTES], want[BUF_BYTES];
    static bool set[BUF_BYTES];
    size_t size = vn_dtype_size(k->dtype);
    const vt_op *o = &vt_ops[k->op];
    for (int64_t i = 0; i < BUF_BYTES / (int64_t)size; i++) {
        if (k->dtype == VN_I32) {
            ((int32_t *)a)[i] = (int32_t)(vt_next(rng) % 20001) - 10000;
            ((int32_t *)b)[i] = (int32_t)(vt_next(rng) % 20001) - 10000;
        } else {
            vt_put(k->dtype, a, i, vt_uniform(rng, o->lo, o->hi));
            vt_put(k->dtype, b, i,
                   vt_uniform(rng, o->blo, o->bhi) + (o->op == VN_VOP_DIV ? 200 : 0));
        }
    }
    fill_sentinel(dst, size);
    memcpy(want, dst, BUF_BYTES);
    memset(set, 0, sizeof set);
    expect(k, a, b, want, set);
    int64_t count = BUF_BYTES / (int64_t)size;
    vt_stage s = {
        3, {{dst, count, k->dtype}, {a, count, k->dtype}, {b, count, k->dtype}}, rep_body, k};
    VT_OK(vt_stage_run(&s, checked, NULL));
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < count; i++) {
        bool ok = set[i] ? close_enough(k, dst + i * size, want + i * size)
                         : memcmp(dst + i * size, want + i * size, size) == 0;
        if (!ok && bad++ == 0) first = i;
    }
    VT_CHECK(
        bad == 0,
        "%s %s rep=%d strides dst %d/%d a %d/%d b %d/%d mask %016llx%016llx: %lld wrong, first "
        "[%lld] (%s) got %g want %g",
        vn_vop_name(k->op), vn_dtype_name(k->dtype), k->repeat, k->p.dst_blk, k->p.dst_rep,
        k->p.src0_blk, k->p.src0_rep, k->p.src1_blk, k->p.src1_rep,
        (unsigned long long)k->mask.bits[1], (unsigned long long)k->mask.bits[0], (long long)bad,
        (long long)first, first >= 0 && set[first] ? "enabled" : "disabled",
        first >= 0 ? vt_get(k->dtype, dst, first) : 0,
        first >= 0 ? vt_get(k->dtype, want, first) : 0);
}

static void test_random_masks_and_strides(void)
{
    static const vn_vop fops[] = {VN_VOP_EXP, VN_VOP_RELU, VN_VOP_ADD,       VN_VOP_DIV,
                                  VN_VOP_MAX, VN_VOP_ADDS, VN_VOP_LEAKY_RELU};
    static const vn_vop iops[] = {VN_VOP_ABS, VN_VOP_ADD, VN_VOP_MAXS};
    static const vn_dtype ds[] = {VN_F32, VN_F16, VN_BF16, VN_I32};
    static const uint16_t blks[] = {1, 2}, reps[] = {8, 16, 0};
    vt_rng rng = {99};
    for (size_t di = 0; di < 4; di++) {
        const vn_vop *ops = ds[di] == VN_I32 ? iops : fops;
        size_t nops = ds[di] == VN_I32 ? 3 : 7;
        for (size_t oi = 0; oi < nops; oi++)
            for (int trial = 0; trial < 6; trial++) {
                uint16_t sb = blks[trial % 2], sr = reps[trial % 3];
                /* dst never recomputes (rep 0 would write one place) */
                uint16_t db = blks[(trial / 2) % 2], dr = trial % 2 ? 16 : (db == 2 ? 16 : 8);
                vn_mask m = {{vt_next(&rng), vt_next(&rng)}};
                if (trial == 5) m = vn_mask_first(ds[di] == VN_F32 || ds[di] == VN_I32 ? 64 : 128);
                rep_case k = {ops[oi],
                              ds[di],
                              m,
                              1 + trial,
                              {db, sb, blks[(trial + 1) % 2], dr, sr, reps[(trial + 1) % 3]},
                              0.5};
                run_rep(&k, &rng, trial & 1);
            }
    }
}

static void test_fast_path_and_zero_repeat(void)
{
    vt_rng rng = {5};
    rep_case k = {VN_VOP_EXP, VN_F32, vn_mask_first(64), 30, {1, 1, 1, 8, 8, 8}, 0};
    run_rep(&k, &rng, 0);
    run_rep(&k, &rng, 1);
    k.op = VN_VOP_ADD, k.dtype = VN_F16, k.mask = vn_mask_first(128), k.repeat = 31;
    run_rep(&k, &rng, 1);
    k.repeat = 0; /* no-op: everything stays the sentinel */
    run_rep(&k, &rng, 1);
    k.mask = vn_mask_first(37), k.repeat = 3;
    run_rep(&k, &rng, 1);
}

static void test_mask_first(void)
{
    vn_mask m = vn_mask_first(0);
    VT_CHECK(m.bits[0] == 0 && m.bits[1] == 0, "0");
    m = vn_mask_first(5);
    VT_CHECK(m.bits[0] == 31 && m.bits[1] == 0, "5");
    m = vn_mask_first(64);
    VT_CHECK(m.bits[0] == ~0ull && m.bits[1] == 0, "64");
    m = vn_mask_first(70);
    VT_CHECK(m.bits[0] == ~0ull && m.bits[1] == 63, "70");
    m = vn_mask_first(128);
    VT_CHECK(m.bits[0] == ~0ull && m.bits[1] == ~0ull, "128");
}

static int bad_line;
static void too_many_repeats(vn_core *c, vn_local *l, const void *p)
{
    bad_line = __LINE__ + 1;
    vn_vbinary_rep(c, VN_VOP_ADD, l[0], l[1], l[2], vn_mask_first(64), 256,
                   VN_BINARY_REP_CONTIGUOUS);
}
static void dtype_mismatch(vn_core *c, vn_local *l, const void *p)
{
    bad_line = __LINE__ + 1;
    vn_vunary_rep(c, VN_VOP_EXP, l[0], vn_local_as(l[1], VN_F16), vn_mask_first(64), 1,
                  VN_UNARY_REP_CONTIGUOUS);
}
static void past_the_end(vn_core *c, vn_local *l, const void *p)
{
    bad_line = __LINE__ + 1;
    vn_vscalar_rep(c, VN_VOP_ADDS, l[0], l[1], 1.0, vn_mask_first(64), 40, VN_UNARY_REP_CONTIGUOUS);
}
static void disabled_lanes_unwritten_ok(vn_core *c, vn_local *l, const void *p)
{
    /* only the first 8 lanes of each repeat were written: a mask of 8 reads nothing else */
    vn_local t = vn_buf_new(c, VN_VECCALC, 256, VN_F32);
    vn_vbinary_rep(c, VN_VOP_ADD, t, l[1], l[2], vn_mask_first(8), 4, VN_BINARY_REP_CONTIGUOUS);
    vn_vunary_rep(c, VN_VOP_RELU, l[0], t, vn_mask_first(8), 4, VN_UNARY_REP_CONTIGUOUS);
    bad_line = __LINE__ + 1;
    vn_vunary_rep(c, VN_VOP_RELU, l[0], t, vn_mask_first(9), 4, VN_UNARY_REP_CONTIGUOUS);
}

static void test_checked_errors(void)
{
    static float x[2048], y[2048], z[2048];
    struct {
        vt_body_fn body;
        const char *call;
    } cases[] = {{too_many_repeats, "vn_vbinary_rep"},
                 {dtype_mismatch, "vn_vunary_rep"},
                 {past_the_end, "vn_vscalar_rep"},
                 {disabled_lanes_unwritten_ok, "vn_vunary_rep"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        vt_stage s = {
            3, {{x, 2048, VN_F32}, {y, 2048, VN_F32}, {z, 2048, VN_F32}}, cases[k].body, NULL};
        vn_status st = vt_stage_run(&s, 1, NULL);
        printf("  expected error: %s\n", vn_last_error());
        VT_FAILS_AT(st, cases[k].call, "test_vector_rep.c", bad_line);
    }
}

int main(void)
{
    VT_RUN(test_mask_first);
    VT_RUN(test_random_masks_and_strides);
    VT_RUN(test_fast_path_and_zero_repeat);
    VT_RUN(test_checked_errors);
    return vt_summary();
}
