/*
 * tiles.c — the shared tiles of a launch (vn_launch_desc.tiles, kernel.h).
 *
 * Why: a launch's blocks are as many as the workers, each a contiguous
 * share of the tiles, so the launch lasts as long as its slowest worker. On
 * a shared machine one core often runs 30-40 % slower than the other for
 * seconds at a time (another process on it or on its sibling thread): a
 * 2-worker ResNet-50 1x1 conv ran its halves in 0.51 and 0.74 ms. Taking
 * the slow worker's last tiles lets the fast one finish the launch.
 *
 * How: each share is [front, end) in one 64-bit word. The owner claims a
 * batch of k tiles with an atomic add of k to front: the old word says
 * which, [front, min(front + k, end)); a block whose share is empty takes
 * end - 1 of the share with the most tiles left by compare-and-swap. Front
 * only grows, end only shrinks, so a tile is claimed by exactly one of them:
 * both change the same word, and tiles at or past end belong to whoever
 * moved end. An owner stops claiming once a claim finds its share empty,
 * so front ends at most one batch (an eighth of the share) past end:
 * below 1.125 * tiles < 2^32 (tiles <= INT32_MAX, checked at launch), and
 * it never carries into end.
 *
 * Order: claims need no ordering with anything else (relaxed): each tile's
 * work is independent, and the launch's completion publishes the results.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"

static uint64_t pack(uint64_t front, uint64_t end)
{
    return front | end << 32;
}

static uint32_t front_of(uint64_t r)
{
    return (uint32_t)r;
}

static uint32_t end_of(uint64_t r)
{
    return (uint32_t)(r >> 32);
}

/* Test hook: VINCI_TILES_ONE_SHARE=1 puts every tile in the last block's
 * share, so that the other blocks run only tiles they take from its end
 * (blocks start in increasing order: block 0 steals at once). Every
 * kernel's results must not change: its tiles are independent of their
 * order and of the block that runs them. */
static bool one_share(void)
{
    static atomic_int on = -1;
    int v = atomic_load_explicit(&on, memory_order_relaxed);
    if (v < 0) {
        const char *e = getenv("VINCI_TILES_ONE_SHARE");
        v = e && strcmp(e, "1") == 0;
        atomic_store_explicit(&on, v, memory_order_relaxed);
    }
    return v;
}

/* Block b's share of `tiles` tiles cut into `blocks`: [*begin, *end). */
void vn_tile_share_of(int64_t tiles, int32_t blocks, int32_t b, int64_t *begin, int64_t *end)
{
    if (one_share()) { /* the last block: all; the others: none */
        *begin = b == blocks - 1 ? 0 : tiles;
        *end = tiles;
        return;
    }
    *begin = tiles * b / blocks;
    *end = tiles * (b + 1) / blocks;
}

void vn_tile_shares_init(vn_tile_share *shares, int32_t blocks, int64_t tiles)
{
    for (int32_t b = 0; b < blocks; b++) {
        int64_t begin, end;
        vn_tile_share_of(tiles, blocks, b, &begin, &end);
        atomic_init(&shares[b].range, pack((uint64_t)begin, (uint64_t)end));
    }
}

void vn_tile_home(const vn_core *core, int64_t *begin, int64_t *end)
{
    *begin = core->home_begin;
    *end = core->home_end;
}

/* A batch of the block's own share into [core->batch_next, batch_stop):
 * an eighth of what is left, at least one tile, so claims are few (each
 * locked add drains the store buffer: claiming tile by tile cost a
 * LayerNorm of 1-row tiles 15-20 %) and the last ones small, for the
 * blocks that take tiles from the end. False when the share is empty. */
static bool take_front(vn_core *core)
{
    vn_tile_share *s = &core->shares[core->block_idx];
    uint64_t seen = atomic_load_explicit(&s->range, memory_order_relaxed);
    uint32_t k = front_of(seen) < end_of(seen) ? (end_of(seen) - front_of(seen)) / 8 : 0;
    if (k == 0) k = 1;
    uint64_t r = atomic_fetch_add_explicit(&s->range, k, memory_order_relaxed);
    if (front_of(r) >= end_of(r)) return false;
    core->batch_next = front_of(r);
    core->batch_stop = front_of(r) + k < end_of(r) ? front_of(r) + k : end_of(r);
    return true;
}

/* The last tile of share s, unless it has none left (false). */
static bool take_back(vn_tile_share *s, int64_t *tile)
{
    uint64_t r = atomic_load_explicit(&s->range, memory_order_relaxed);
    while (front_of(r) < end_of(r)) {
        uint64_t taken = pack(front_of(r), end_of(r) - 1u);
        if (atomic_compare_exchange_weak_explicit(&s->range, &r, taken, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *tile = end_of(r) - 1u;
            return true;
        }
    }
    return false;
}

/* The share with the most tiles left, or -1 when every share is empty. */
static int32_t fullest_share(const vn_core *core)
{
    int32_t best = -1;
    uint32_t most = 0;
    for (int32_t b = 0; b < core->block_num; b++) {
        uint64_t r = atomic_load_explicit(&core->shares[b].range, memory_order_relaxed);
        uint32_t left = front_of(r) < end_of(r) ? end_of(r) - front_of(r) : 0;
        if (left > most) most = left, best = b;
    }
    return best;
}

static bool next_tile(vn_core *core, int64_t *tile)
{
    if (core->batch_next < core->batch_stop || (!core->own_done && take_front(core))) {
        *tile = core->batch_next++;
        return true;
    }
    core->own_done = true;
    if (!core->tile_steal) return false;
    for (int32_t victim; (victim = fullest_share(core)) >= 0;)
        if (take_back(&core->shares[victim], tile)) return true;
    return false;
}

bool vn_tile_next(vn_core *core, int64_t *tile)
{
    if (!core->shares)
        vn_core_fail(core, VN_HERE, "vn_tile_next",
                     "the launch shares no tiles (vn_launch_desc.tiles is 0)");
    if (!next_tile(core, tile)) return false;
    core->loop = *tile; /* errors name the tile (vn_set_loop) */
    return true;
}

bool vn_tile_followed(const vn_core *core, int64_t tile)
{
    return tile >= core->home_begin && tile + 1 < core->home_end;
}
