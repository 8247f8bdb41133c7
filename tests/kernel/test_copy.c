/*
 * test_copy.c — copies between global memory and scratch: contiguous (with the
 * hardware's silent truncation in release mode), strided, padded; counters.
 *
 * Each kernel fills its scratch with a sentinel first, copies, then dumps the
 * raw scratch bytes to host memory, so the test sees exactly which bytes a
 * copy touched.
 */
#include "vinci/kernel.h"
#include "vt.h"

static vn_device *dev;

#define SENT 0xAB
#define DUMP 1024

typedef struct copy_args {
    float gm_in[256];
    float gm_out[256];
    uint8_t scratch[DUMP]; /* raw scratch after the copy-in */
    int mode;
} copy_args;

/* A VECIN buffer full of the sentinel (not marked written: raw stores). */
static vn_local sentinel_buf(vn_core *c)
{
    vn_local t = vn_buf_new(c, VN_VECIN, DUMP / 4, VN_F32);
    memset(t.data, SENT, DUMP);
    return t;
}

static void fill_in(copy_args *a)
{
    for (int i = 0; i < 256; i++) a->gm_in[i] = (float)i + 0.5f;
    memset(a->gm_out, SENT, sizeof a->gm_out);
    memset(a->scratch, 0, sizeof a->scratch);
}

static bool is_sentinel(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != SENT) return false;
    return true;
}

/* ---- contiguous ------------------------------------------------------------ */

static void contiguous_kernel(vn_core *c, const void *p)
{
    copy_args *a = (copy_args *)p;
    vn_gm in = vn_gm_make(a->gm_in, VN_F32, 256), out = vn_gm_make(a->gm_out, VN_F32, 256);
    vn_local t = sentinel_buf(c);
    vn_copy_in(c, t, in, 4, 10); /* 40 bytes: rounded down to 32 (release mode) */
    memcpy(a->scratch, t.data, DUMP);
    vn_copy_out(c, out, 16, t, 10);
}

static void test_contiguous_truncates_in_release(void)
{
    static copy_args a;
    fill_in(&a);
    vn_kernel_counters k;
    vn_launch_desc d = {contiguous_kernel, "contiguous", 1, &a, 0, 0};
    VT_OK(vn_launch(dev, &d, &k));
    const float *s = (const float *)a.scratch;
    for (int i = 0; i < 8; i++) VT_CHECK(s[i] == a.gm_in[4 + i], "element %d", i);
    VT_CHECK(is_sentinel(a.scratch + 32, DUMP - 32), "bytes past 32 were written");
    for (int i = 0; i < 8; i++) VT_CHECK(a.gm_out[16 + i] == a.gm_in[4 + i], "out %d", i);
    VT_CHECK(is_sentinel(a.gm_out, 16 * 4), "GM before the copy touched");
    VT_CHECK(is_sentinel(a.gm_out + 24, (256 - 24) * 4), "GM after the copy touched");
    VT_CHECK(k.bytes_in == 32 && k.bytes_out == 32, "counters %lld %lld", (long long)k.bytes_in,
             (long long)k.bytes_out);
}

/* ---- strided --------------------------------------------------------------- */

static void strided_kernel(vn_core *c, const void *p)
{
    copy_args *a = (copy_args *)p;
    vn_gm in = vn_gm_make(a->gm_in, VN_F32, 256), out = vn_gm_make(a->gm_out, VN_F32, 256);
    vn_local t = sentinel_buf(c);
    /* 4 blocks of 1 unit: GM stride 3 units (gap 2), scratch stride 2 units (gap 1) */
    vn_copy_params in_p = {4, 1, 2, 1};
    vn_copy_in_strided(c, t, in, 8, in_p);
    memcpy(a->scratch, t.data, DUMP);
    /* back out: scratch stride 2 units (gap 1), GM stride 4 units (gap 3) */
    vn_copy_params out_p = {4, 1, 1, 3};
    vn_copy_out_strided(c, out, 0, t, out_p);
}

static void test_strided(void)
{
    static copy_args a;
    fill_in(&a);
    for (int checked = 0; checked <= 1; checked++) {
        vn_kernel_counters k;
        vn_launch_desc d = {strided_kernel, "strided", 1, &a, checked, 0};
        VT_OK(vn_launch(dev, &d, &k));
        for (int b = 0; b < 4; b++) {
            const float *row = (const float *)(a.scratch + b * 64);
            for (int i = 0; i < 8; i++)
                VT_CHECK(row[i] == a.gm_in[8 + b * 24 + i], "block %d element %d", b, i);
            VT_CHECK(is_sentinel(a.scratch + b * 64 + 32, 32), "scratch gap %d written", b);
            for (int i = 0; i < 8; i++)
                VT_CHECK(a.gm_out[b * 32 + i] == a.gm_in[8 + b * 24 + i], "out %d %d", b, i);
            VT_CHECK(is_sentinel(a.gm_out + b * 32 + 8, 24 * 4), "GM gap %d written", b);
        }
        VT_CHECK(k.bytes_in == 128 && k.bytes_out == 128, "counters");
    }
}

/* ---- padded ---------------------------------------------------------------------- */

static void pad_kernel(vn_core *c, const void *p)
{
    copy_args *a = (copy_args *)p;
    vn_gm in = vn_gm_make(a->gm_in, VN_F32, 256), out = vn_gm_make(a->gm_out, VN_F32, 256);
    vn_local t = sentinel_buf(c);
    /* 3 rows of 5 floats, 2 floats apart in GM; scratch rows 1 block apart */
    vn_copy_pad_params rp = {3, 20, 8, 1};
    vn_pad pad = {a->mode == 1, 1, 1, 7.0};
    vn_copy_in_pad(c, t, in, 1, rp, pad);
    memcpy(a->scratch, t.data, DUMP);
    if (a->mode == 0) {
        /* rows back out to GM 3 floats apart: only the 20 real bytes per row */
        vn_copy_pad_params wp = {3, 20, 12, 1};
        vn_copy_out_pad(c, out, 2, t, wp);
    }
}

static void test_pad_in_fills_the_block(void)
{
    static copy_args a;
    for (int checked = 0; checked <= 1; checked++) {
        fill_in(&a);
        a.mode = 0; /* no explicit padding: the rest of the block gets the value */
        vn_kernel_counters k;
        vn_launch_desc d = {pad_kernel, "pad", 1, &a, checked, 0};
        VT_OK(vn_launch(dev, &d, &k));
        for (int r = 0; r < 3; r++) {
            const float *row = (const float *)(a.scratch + r * 64);
            for (int i = 0; i < 5; i++)
                VT_CHECK(row[i] == a.gm_in[1 + r * 7 + i], "row %d element %d", r, i);
            for (int i = 5; i < 8; i++) VT_CHECK(row[i] == 7.0f, "row %d filler %d", r, i);
            VT_CHECK(is_sentinel(a.scratch + r * 64 + 32, 32), "local gap of row %d", r);
        }
        /* copy-out-pad wrote exactly the real bytes */
        for (int r = 0; r < 3; r++) {
            for (int i = 0; i < 5; i++)
                VT_CHECK(a.gm_out[2 + r * 8 + i] == a.gm_in[1 + r * 7 + i], "out %d %d", r, i);
            VT_CHECK(is_sentinel(a.gm_out + 2 + r * 8 + 5, 12), "GM gap after row %d", r);
        }
        VT_CHECK(is_sentinel(a.gm_out, 8), "GM before the rows");
        VT_CHECK(is_sentinel(a.gm_out + 2 + 3 * 8, (256 - 26) * 4), "GM after the rows");
        VT_CHECK(k.bytes_in == 60 && k.bytes_out == 60, "counters %lld %lld", (long long)k.bytes_in,
                 (long long)k.bytes_out);
    }
}

static void test_pad_in_left_right(void)
{
    static copy_args a;
    fill_in(&a);
    a.mode = 1; /* one element of 7 on each side: 7 d0..d4 7 | 7 (rest of the block) */
    vn_launch_desc d = {pad_kernel, "pad", 1, &a, 1, 0};
    VT_OK(vn_launch(dev, &d, NULL));
    for (int r = 0; r < 3; r++) {
        const float *row = (const float *)(a.scratch + r * 64);
        VT_CHECK(row[0] == 7.0f, "left pad of row %d", r);
        for (int i = 0; i < 5; i++)
            VT_CHECK(row[1 + i] == a.gm_in[1 + r * 7 + i], "row %d element %d", r, i);
        VT_CHECK(row[6] == 7.0f && row[7] == 7.0f, "right pad of row %d", r);
        VT_CHECK(is_sentinel(a.scratch + r * 64 + 32, 32), "local gap of row %d", r);
    }
}

/* Padding values are converted to the element type. */
static void pad_f16_kernel(vn_core *c, const void *p)
{
    copy_args *a = (copy_args *)p;
    vn_gm in = vn_gm_make(a->gm_in, VN_F16, 512);
    vn_local t = vn_local_as(sentinel_buf(c), VN_F16);
    vn_copy_pad_params rp = {1, 6, 0, 0}; /* 3 halves */
    vn_pad pad = {true, 2, 0, -1.5};
    vn_copy_in_pad(c, t, in, 0, rp, pad);
    memcpy(a->scratch, t.data, DUMP);
}

static void test_pad_f16_value(void)
{
    static copy_args a;
    fill_in(&a);
    vn_launch_desc d = {pad_f16_kernel, "pad_f16", 1, &a, 1, 0};
    VT_OK(vn_launch(dev, &d, NULL));
    const uint16_t *h = (const uint16_t *)a.scratch, *src = (const uint16_t *)a.gm_in;
    uint16_t v = vn_f32_to_f16(-1.5f);
    VT_CHECK(h[0] == v && h[1] == v, "left padding");
    for (int i = 0; i < 3; i++) VT_CHECK(h[2 + i] == src[i], "data %d", i);
    for (int i = 5; i < 16; i++) VT_CHECK(h[i] == v, "filler %d", i);
    VT_CHECK(is_sentinel(a.scratch + 32, 32), "past the row");
}

/* The wider dtypes get their padding value in their own encoding too
 * (a->mode holds the dtype; the row is 8 bytes of data after 2 pad elements). */
static void pad_wide_kernel(vn_core *c, const void *p)
{
    copy_args *a = (copy_args *)p;
    vn_dtype dt = (vn_dtype)a->mode;
    vn_gm in = vn_gm_make(a->gm_in, dt, 64);
    vn_local t = vn_local_as(sentinel_buf(c), dt);
    vn_copy_pad_params rp = {1, 8, 0, 0};
    vn_pad pad = {true, 2, 0, -3.0};
    vn_copy_in_pad(c, t, in, 0, rp, pad);
    memcpy(a->scratch, t.data, DUMP);
}

static void test_pad_wide_values(void)
{
    static copy_args a;
    const vn_dtype dts[] = {VN_I16, VN_U16, VN_U32, VN_F64, VN_U64};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        fill_in(&a);
        a.mode = (int)dts[k];
        vn_launch_desc d = {pad_wide_kernel, "pad_wide", 1, &a, 1, 0};
        VT_OK(vn_launch(dev, &d, NULL));
        size_t es = vn_dtype_size(dts[k]);
        uint8_t want[8];
        int16_t i16 = -3;
        uint32_t u32 = (uint32_t)-3;
        double f64 = -3.0;
        uint64_t u64 = (uint64_t)-3;
        memcpy(want,
               es == 2            ? (void *)&i16
               : es == 4          ? (void *)&u32
               : dts[k] == VN_F64 ? (void *)&f64
                                  : (void *)&u64,
               es);
        const uint8_t *got = a.scratch;
        VT_CHECK(!memcmp(got, want, es) && !memcmp(got + es, want, es), "%s: left padding",
                 vn_dtype_name(dts[k]));
        VT_CHECK(!memcmp(got + 2 * es, a.gm_in, 8), "%s: data", vn_dtype_name(dts[k]));
    }
}

/* ---- counters over blocks --------------------------------------------------------- */

static void blocks_kernel(vn_core *c, const void *p)
{
    copy_args *a = (copy_args *)p;
    int64_t off = 32 * vn_block_idx(c);
    vn_gm in = vn_gm_make(a->gm_in, VN_F32, 256), out = vn_gm_make(a->gm_out, VN_F32, 256);
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 32, VN_F32);
    vn_local t = vn_alloc(c, q);
    vn_copy_in(c, t, in, off, 32);
    vn_enque(c, q, t);
    t = vn_deque(c, q);
    vn_copy_out(c, out, off, t, 32);
    vn_free(c, q, t);
}

static void test_counters_over_blocks(void)
{
    static copy_args a;
    fill_in(&a);
    vn_kernel_counters k;
    vn_launch_desc d = {blocks_kernel, "blocks", 8, &a, 1, 0};
    VT_OK(vn_launch(dev, &d, &k));
    VT_CHECK(memcmp(a.gm_in, a.gm_out, sizeof a.gm_in) == 0, "copy through 8 blocks");
    VT_CHECK(k.bytes_in == 1024 && k.bytes_out == 1024, "counters %lld %lld", (long long)k.bytes_in,
             (long long)k.bytes_out);
    VT_CHECK(k.scratch_high_water[VN_ARENA_UB] == 256, "high water %lld",
             (long long)k.scratch_high_water[VN_ARENA_UB]);
    VT_CHECK(k.wall_ms >= 0.0, "wall time");
}

/* ---- prefetch --------------------------------------------------------------- */

/* Tile loop with vn_prefetch of the next tile, a copy-out in between (which
 * issues the queued lines) and a prefetch range `extra` elements too long. */
static void prefetch_kernel(vn_core *c, const void *p)
{
    copy_args *a = (copy_args *)p;
    vn_gm in = vn_gm_make(a->gm_in, VN_F32, 256), out = vn_gm_make(a->gm_out, VN_F32, 256);
    vn_local t = vn_buf_new(c, VN_VECIN, 64, VN_F32);
    for (int tile = 0; tile < 4; tile++) {
        vn_set_loop(c, tile);
        vn_copy_in(c, t, in, tile * 64, 64);
        if (tile + 1 < 4) vn_prefetch(c, in, (tile + 1) * 64, 64 + (tile == 2 ? a->mode : 0));
        vn_copy_out(c, out, tile * 64, t, 64);
    }
}

static void test_prefetch(void)
{
    static copy_args a;
    for (int checked = 0; checked <= 1; checked++) {
        fill_in(&a);
        a.mode = 0;
        vn_kernel_counters k;
        vn_launch_desc d = {prefetch_kernel, "prefetch", 1, &a, checked, 0};
        VT_OK(vn_launch(dev, &d, &k));
        VT_CHECK(memcmp(a.gm_in, a.gm_out, sizeof a.gm_in) == 0, "copy with prefetch");
        VT_CHECK(k.bytes_in == 1024 && k.bytes_out == 1024, "prefetch is not counted: %lld",
                 (long long)k.bytes_in);
    }
    /* past the end: release ignores it (a hint), checked mode names it */
    a.mode = 1;
    vn_launch_desc d = {prefetch_kernel, "prefetch", 1, &a, 0, 0};
    VT_OK(vn_launch(dev, &d, NULL));
    d.checked = 1;
    VT_CHECK(vn_launch(dev, &d, NULL) == VN_ERR_KERNEL, "out-of-bounds prefetch accepted");
    VT_CHECK(strstr(vn_last_error(), "vn_prefetch") && strstr(vn_last_error(), "loop 2") &&
                 strstr(vn_last_error(), "out of bounds"),
             "message: %s", vn_last_error());
}

int main(void)
{
    vn_device_options o = {0};
    o.num_threads = 2;
    if (vn_device_create(&o, &dev) != VN_OK) {
        fprintf(stderr, "%s\n", vn_last_error());
        return 1;
    }
    VT_RUN(test_contiguous_truncates_in_release);
    VT_RUN(test_strided);
    VT_RUN(test_pad_in_fills_the_block);
    VT_RUN(test_pad_in_left_right);
    VT_RUN(test_pad_f16_value);
    VT_RUN(test_pad_wide_values);
    VT_RUN(test_counters_over_blocks);
    VT_RUN(test_prefetch);
    vn_device_destroy(dev);
    return vt_summary();
}
