/*
 * test_tiles.c — shared tiles of a launch (vn_launch_desc.tiles,
 * vn_tile_next): every tile runs exactly once, whatever the tile and block
 * counts, synchronous or on a stream; a block runs its own share first, in
 * order; a slow block's tiles are taken by the others (release mode) and
 * never in checked mode; misuse fails with a message.
 */
#include <stdatomic.h>
#include <time.h>

#include "rt_util.h"
#include "vt.h"

#define MAX_TILES 5000

typedef struct tiles_ctx {
    atomic_int runs[MAX_TILES];
    atomic_int ran_by[MAX_TILES]; /* block that ran the tile */
    atomic_int order_bad;         /* a block's own tiles came out of order or late */
    int64_t slow_block;           /* this block sleeps per tile (-1: none) */
} tiles_ctx;

static void sleep_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* Records who ran each tile; checks that the tiles of the block's own share
 * come first and in increasing order from its start (others may have taken
 * its last ones). */
static void tiles_kernel(vn_core *core, const void *args)
{
    tiles_ctx *c = (tiles_ctx *)args; /* the test's counters: written through atomics */
    int64_t begin, end, want, t;
    bool foreign = false;
    vn_tile_home(core, &begin, &end);
    want = begin;
    while (vn_tile_next(core, &t)) {
        if (t >= begin && t < end) {
            if (foreign || t != want) atomic_store(&c->order_bad, 1);
            want = t + 1;
        } else {
            foreign = true;
        }
        atomic_fetch_add(&c->runs[t], 1);
        atomic_store(&c->ran_by[t], vn_block_idx(core));
        if (vn_block_idx(core) == c->slow_block) sleep_us(2000);
    }
}

static tiles_ctx *ctx_new(int64_t slow_block)
{
    tiles_ctx *c = calloc(1, sizeof *c);
    c->slow_block = slow_block;
    return c;
}

static int64_t bad_tiles(const tiles_ctx *c, int64_t tiles)
{
    int64_t bad = 0;
    for (int64_t t = 0; t < MAX_TILES; t++) bad += atomic_load(&c->runs[t]) != (t < tiles);
    return bad;
}

static vn_launch_desc tiles_desc(tiles_ctx *c, int32_t blocks, int64_t tiles, int32_t checked)
{
    vn_launch_desc d = {tiles_kernel, "tiles", blocks, c, checked, tiles};
    return d;
}

static void test_every_tile_once(void)
{
    vn_device *d = rt_device(4);
    const int64_t tiles[] = {1, 2, 3, 7, 64, 1000, MAX_TILES};
    const int32_t blocks[] = {1, 2, 3, 4, 7, 16, VN_MAX_TILE_SHARES};
    for (size_t i = 0; i < sizeof tiles / sizeof *tiles; i++)
        for (size_t j = 0; j < sizeof blocks / sizeof *blocks; j++) {
            tiles_ctx *c = ctx_new(-1);
            vn_launch_desc ld = tiles_desc(c, blocks[j], tiles[i], 0);
            VT_OK(vn_launch(d, &ld, NULL));
            VT_CHECK(bad_tiles(c, tiles[i]) == 0, "%lld tiles, %d blocks: %lld run not once",
                     (long long)tiles[i], blocks[j], (long long)bad_tiles(c, tiles[i]));
            VT_CHECK(!atomic_load(&c->order_bad), "%lld tiles, %d blocks: own share out of order",
                     (long long)tiles[i], blocks[j]);
            free(c);
        }
    vn_device_destroy(d);
}

static int64_t run_by(const tiles_ctx *c, int64_t from, int64_t to, int block)
{
    int64_t n = 0;
    for (int64_t t = from; t < to; t++) n += atomic_load(&c->ran_by[t]) == block;
    return n;
}

/* Block 0 sleeps 2 ms a tile: the three other blocks finish their shares at
 * once and take most of its 25 tiles. In checked mode it runs all 25. */
static void test_slow_block_helped(void)
{
    vn_device *d = rt_device(4);
    for (int32_t checked = 0; checked <= 1; checked++) {
        tiles_ctx *c = ctx_new(0);
        vn_launch_desc ld = tiles_desc(c, 4, 100, checked);
        VT_OK(vn_launch(d, &ld, NULL));
        VT_CHECK(bad_tiles(c, 100) == 0, "checked %d: every tile once", checked);
        int64_t own = run_by(c, 0, 25, 0);
        if (checked)
            VT_CHECK(own == 25, "checked: block 0 ran %lld of its 25 tiles", (long long)own);
        else
            VT_CHECK(own < 25, "release: block 0 still ran all its 25 tiles");
        /* what the others took came off the end of block 0's share */
        int64_t first_taken = 25;
        while (first_taken > 0 && atomic_load(&c->ran_by[first_taken - 1]) != 0) first_taken--;
        VT_CHECK(run_by(c, 0, first_taken, 0) == first_taken,
                 "checked %d: block 0 ran a prefix of its share", checked);
        free(c);
    }
    vn_device_destroy(d);
}

static void test_on_stream(void)
{
    vn_device *d = rt_device(3);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    tiles_ctx *c = ctx_new(1);
    vn_launch_desc ld = tiles_desc(c, 3, 60, 0);
    VT_OK(vn_launch_async(s, &ld, 0));
    VT_OK(vn_stream_synchronize(s, -1));
    VT_CHECK(bad_tiles(c, 60) == 0, "async: every tile once");
    VT_CHECK(run_by(c, 20, 40, 1) < 20, "async: block 1's slow share was helped");
    free(c);
    vn_stream_destroy(s);
    vn_device_destroy(d);
}

static void no_tiles_kernel(vn_core *core, const void *args)
{
    (void)args;
    int64_t t;
    vn_tile_next(core, &t);
}

static void fail_on_5_kernel(vn_core *core, const void *args)
{
    (void)args;
    for (int64_t t; vn_tile_next(core, &t);)
        if (t == 5) vn_kernel_fail(core, "tile five");
}

/* The failing tile is named as the loop of the error, in checked mode (its
 * own block) and release mode alike. */
static void test_error_names_tile(void)
{
    vn_device *d = rt_device(2);
    for (int32_t checked = 0; checked <= 1; checked++) {
        vn_launch_desc ld = {fail_on_5_kernel, "fail5", 2, NULL, checked, 8};
        VT_CHECK(vn_launch(d, &ld, NULL) == VN_ERR_KERNEL, "checked %d: the tile fails", checked);
        VT_CHECK(strstr(vn_last_error(), "loop 5") != NULL, "checked %d: %s", checked,
                 vn_last_error());
    }
    vn_device_destroy(d);
}

static void test_misuse(void)
{
    vn_device *d = rt_device(2);
    vn_launch_desc ld = {no_tiles_kernel, "no_tiles", 2, NULL, 0, 0};
    vn_status st = vn_launch(d, &ld, NULL);
    VT_CHECK(st == VN_ERR_KERNEL, "vn_tile_next without shared tiles fails the block (%d)", st);
    VT_CHECK(strstr(vn_last_error(), "shares no tiles") != NULL, "message: %s", vn_last_error());
    tiles_ctx *c = ctx_new(-1);
    ld = tiles_desc(c, VN_MAX_TILE_SHARES + 1, 1000, 0);
    VT_CHECK(vn_launch(d, &ld, NULL) == VN_ERR_INVALID_ARG, "too many blocks for shared tiles");
    ld = tiles_desc(c, 2, -1, 0);
    VT_CHECK(vn_launch(d, &ld, NULL) == VN_ERR_INVALID_ARG, "negative tiles");
    VT_CHECK(strstr(vn_last_error(), "tiles -1") != NULL, "message: %s", vn_last_error());
    VT_CHECK(bad_tiles(c, 0) == 0, "a refused launch ran nothing");
    free(c);
    vn_device_destroy(d);
}

int main(void)
{
    unsetenv("VINCI_TILES_ONE_SHARE"); /* these tests check the even cut */
    VT_RUN(test_every_tile_once);
    VT_RUN(test_slow_block_helped);
    VT_RUN(test_on_stream);
    VT_RUN(test_error_names_tile);
    VT_RUN(test_misuse);
    return vt_summary();
}
