/*
 * launch.c — running a kernel over block_dim blocks on a device.
 *
 * Each worker keeps one vn_core (and, in checked mode, its shadow maps) in a
 * device worker slot, so a launch carves nothing from the heap per block.
 * Worker records are indexed by every worker index a block may get
 * (vn_device_num_worker_ids: the pool's, then the guest slots of threads that
 * run blocks of their own synchronous launch).
 * Before each block the pipe is reset (bump pointers, queues, counters,
 * failure); the kernel runs under setjmp so a failed check can leave it.
 *
 * Determinism of the reported error: blocks are handed out in increasing
 * order, and a block is skipped only when a LOWER block has already failed,
 * so every block below the lowest failing one runs; the reported failure is
 * therefore always the lowest failing block, whatever the thread timing.
 *
 * vn_launch_async packs the launch context, the worker records and a copy of
 * the args into one allocation that the stream task owns and frees.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/core_internal.h"
#include "runtime/device_internal.h"

typedef struct worker_record {
    vn_kernel_counters totals;
    vn_kernel_counters last; /* of the block last_block, the latest this worker ran */
    int32_t last_block;      /* -1: none yet */
    int32_t fail_block;      /* lowest failing block this worker ran, or INT32_MAX */
    vn_status status;
    char message[sizeof(((vn_core *)0)->message)];
} worker_record;

typedef struct launch_ctx {
    vn_device *device;
    const vn_launch_desc *desc;
    bool checked;
    atomic_int first_fail; /* lowest failing block so far, INT32_MAX if none */
    worker_record *records;
    vn_tile_share *shares; /* desc->tiles > 0: one per block (tiles.c) */
} launch_ctx;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The worker's shadow maps, one region per arena; NULL (with a message) if out of memory. */
static uint8_t *worker_shadow(launch_ctx *lc, int32_t worker)
{
    size_t total = 0;
    for (int a = 0; a < VN_ARENA_COUNT; a++)
        total += (size_t)vn_device_arena_size(lc->device, (vn_arena)a);
    return vn_device_worker_slot(lc->device, worker, VN_WORKER_SLOT_SHADOW, total);
}

/* The pipe reset: a block starts with empty arenas, no queues, fresh counters. */
static void reset_core(vn_core *core, launch_ctx *lc, int32_t worker, int32_t block,
                       uint8_t *shadow)
{
    core->block_idx = block;
    core->block_num = lc->desc->block_dim;
    core->checked = lc->checked;
    core->kernel_name = lc->desc->name ? lc->desc->name : "(unnamed)";
    core->loop = -1;
    core->shares = lc->shares;
    core->home_begin = core->home_end = 0;
    if (lc->shares)
        vn_tile_share_of(lc->desc->tiles, lc->desc->block_dim, block, &core->home_begin,
                         &core->home_end);
    core->tile_steal = !lc->checked;
    core->batch_next = core->batch_stop = 0;
    core->own_done = false;
    for (int a = 0; a < VN_ARENA_COUNT; a++) {
        core->arena[a] = vn_device_arena(lc->device, worker, (vn_arena)a);
        core->arena_size[a] = vn_device_arena_size(lc->device, (vn_arena)a);
        core->arena_used[a] = 0;
        core->shadow[a] = shadow;
        if (shadow) shadow += core->arena_size[a];
    }
    core->num_queues = 0;
    core->num_xfers = 0;
    core->xfer_async = !lc->checked && vn_xfer_async_enabled();
    core->xfer_streamed = false;
    memset(&core->counters, 0, sizeof core->counters);
    core->bail = NULL;
    core->status = VN_OK;
    core->message[0] = '\0';
}

/* Runs the kernel on a reset core; the core's status says how it went. */
static void run_kernel(vn_core *core, const vn_launch_desc *desc)
{
    jmp_buf bail;
    core->bail = &bail;
    if (setjmp(bail) == 0) {
        desc->kernel(core, desc->args);
        vn_xfer_finish(core);
        if (core->checked) vn_queue_check_leaks(core);
    }
    core->bail = NULL;
}

static void record_block(launch_ctx *lc, worker_record *r, int32_t block, vn_status status,
                         const char *message, const vn_kernel_counters *c)
{
    r->last = *c; /* for block_stats: a copy is cheaper than asking whether anyone profiles */
    r->last_block = block;
    vn_kernel_counters_add(&r->totals, c);
    if (status == VN_OK || block >= r->fail_block) return;
    r->fail_block = block;
    r->status = status;
    snprintf(r->message, sizeof r->message, "%s", message);
    int seen = atomic_load(&lc->first_fail);
    while (block < seen && !atomic_compare_exchange_weak(&lc->first_fail, &seen, block)) {
    }
}

static void launch_block(void *ctx, int32_t worker, int32_t block)
{
    launch_ctx *lc = ctx;
    worker_record *r = &lc->records[worker];
    if (block > atomic_load_explicit(&lc->first_fail, memory_order_relaxed)) return;
    vn_core *core = vn_device_worker_slot(lc->device, worker, VN_WORKER_SLOT_CORE, sizeof *core);
    uint8_t *shadow = core && lc->checked ? worker_shadow(lc, worker) : NULL;
    if (!core || (lc->checked && !shadow)) {
        vn_kernel_counters none = {0};
        record_block(lc, r, block, VN_ERR_OUT_OF_MEMORY,
                     "cannot allocate the block context / shadow maps of a worker", &none);
        return;
    }
    reset_core(core, lc, worker, block, shadow);
    run_kernel(core, lc->desc);
    record_block(lc, r, block, core->status, core->message, &core->counters);
}

/* The runtime's block profile hook (vn_block_stats_fn): the block's counters,
 * none when a lower block's failure skipped it. */
static void block_stats(void *ctx, int32_t worker, int32_t block, vn_profile_block *rec)
{
    const worker_record *r = &((const launch_ctx *)ctx)->records[worker];
    if (r->last_block != block) return;
    const vn_kernel_counters *c = &r->last;
    rec->bytes_in = c->bytes_in;
    rec->bytes_out = c->bytes_out;
    rec->vector_elem_ops = c->vector_elem_ops;
    rec->cube_ops = c->cube_ops;
    memcpy(rec->scratch_high_water, c->scratch_high_water, sizeof rec->scratch_high_water);
}

/* Worker records of a launch, before its first block. */
static void init_records(worker_record *records, int32_t workers)
{
    for (int32_t w = 0; w < workers; w++) {
        records[w].fail_block = INT32_MAX;
        records[w].last_block = -1;
    }
}

#define LINE 64

static size_t round_line(size_t bytes)
{
    return (bytes + LINE - 1) / LINE * LINE;
}

/* Bytes of the shares of a launch's shared tiles (0: it shares none). */
static size_t shares_bytes(const vn_launch_desc *desc)
{
    return desc->tiles > 0 ? (size_t)desc->block_dim * sizeof(vn_tile_share) : 0;
}

/* The shares at `at` (64-byte aligned), cut for the launch; none without shared tiles. */
static void attach_shares(launch_ctx *lc, void *at)
{
    if (!shares_bytes(lc->desc)) return;
    lc->shares = at;
    vn_tile_shares_init(lc->shares, lc->desc->block_dim, lc->desc->tiles);
}

static vn_status validate(const vn_launch_desc *desc)
{
    if (!desc) return vn_error(VN_ERR_INVALID_ARG, "vn_launch", "desc is NULL");
    const char *name = desc->name ? desc->name : "(unnamed)";
    if (!desc->kernel)
        return vn_error(VN_ERR_INVALID_ARG, "vn_launch", "kernel %s: kernel function is NULL",
                        name);
    if (desc->block_dim < 1 || desc->block_dim > 65535)
        return vn_error(VN_ERR_INVALID_ARG, "vn_launch",
                        "kernel %s: block_dim %d is not in 1..65535", name, (int)desc->block_dim);
    if (desc->tiles < 0 || desc->tiles > INT32_MAX ||
        (desc->tiles > 0 && desc->block_dim > VN_MAX_TILE_SHARES))
        return vn_error(VN_ERR_INVALID_ARG, "vn_launch",
                        "kernel %s: tiles %lld is not in 0..%d, or block_dim %d of shared tiles "
                        "exceeds %d",
                        name, (long long)desc->tiles, INT32_MAX, (int)desc->block_dim,
                        VN_MAX_TILE_SHARES);
    if (desc->checked < -1 || desc->checked > 1)
        return vn_error(VN_ERR_INVALID_ARG, "vn_launch",
                        "kernel %s: checked %d is not -1 (device), 0 or 1", name,
                        (int)desc->checked);
    return VN_OK;
}

static vn_status finish(launch_ctx *lc, int32_t workers, double wall_ms,
                        vn_kernel_counters *counters)
{
    vn_kernel_counters sum = {0};
    const worker_record *fail = NULL;
    for (int32_t w = 0; w < workers; w++) {
        const worker_record *r = &lc->records[w];
        vn_kernel_counters_add(&sum, &r->totals);
        if (r->status != VN_OK && (!fail || r->fail_block < fail->fail_block)) fail = r;
    }
    sum.wall_ms = wall_ms;
    if (counters) *counters = sum;
    if (!fail) return VN_OK;
    return vn_error(fail->status, "vn_launch", "%s", fail->message);
}

vn_status vn_launch(vn_device *device, const vn_launch_desc *desc, vn_kernel_counters *counters)
{
    if (counters) memset(counters, 0, sizeof *counters);
    vn_status st = validate(desc);
    if (st == VN_OK && !device) st = vn_device_default(&device);
    if (st != VN_OK) return st;

    int32_t workers = vn_device_num_worker_ids(device);
    launch_ctx lc = {.device = device, .desc = desc};
    lc.checked = desc->checked == -1 ? vn_device_checked(device) : desc->checked == 1;
    atomic_init(&lc.first_fail, INT32_MAX);
    size_t records = round_line((size_t)workers * sizeof *lc.records);
    lc.records = vn_aligned_alloc(records + shares_bytes(desc), LINE);
    if (!lc.records)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_launch", "cannot allocate %d worker records",
                        (int)workers);
    memset(lc.records, 0, records);
    init_records(lc.records, workers);
    attach_shares(&lc, (char *)lc.records + records);

    double t0 = now_ms();
    st = vn_device_run_blocks_ex(device, desc->block_dim, launch_block, &lc, block_stats);
    double wall = now_ms() - t0;
    if (st == VN_OK) st = finish(&lc, workers, wall, counters);
    vn_aligned_free(lc.records);
    return st;
}

/* ---- asynchronous launch ------------------------------------------------------ */

typedef struct async_launch {
    launch_ctx lc;
    vn_launch_desc desc; /* desc.args points into this allocation when copied */
    char name[64];
} async_launch;

/* "kernel K, block B, loop L: call ..." -> "loop L: call ...": the stream's
 * error already names the task, kernel and block. */
static const char *strip_block_prefix(const char *m)
{
    const char *b = strncmp(m, "kernel ", 7) == 0 ? strstr(m, ", block ") : NULL;
    if (!b) return m;
    b += 8;
    while (*b >= '0' && *b <= '9') b++;
    if (b[0] == ',' || b[0] == ':') b++;
    while (*b == ' ') b++;
    return b;
}

static vn_status async_block(void *ctx, int32_t worker, int32_t block)
{
    async_launch *al = ctx;
    launch_block(&al->lc, worker, block);
    const worker_record *r = &al->lc.records[worker];
    if (r->status == VN_OK || r->fail_block != block) return VN_OK;
    vn_task_set_block_message(strip_block_prefix(r->message));
    return r->status;
}

static void async_stats(void *ctx, int32_t worker, int32_t block, vn_profile_block *rec)
{
    block_stats(&((async_launch *)ctx)->lc, worker, block, rec);
}

static void async_release(void *ctx)
{
    vn_aligned_free(ctx);
}

static async_launch *async_new(vn_device *device, const vn_launch_desc *desc, size_t args_size)
{
    int32_t workers = vn_device_num_worker_ids(device);
    size_t records = sizeof(async_launch) + (size_t)workers * sizeof(worker_record);
    size_t args_at = round_line(records), shares_at = round_line(args_at + args_size);
    async_launch *al = vn_aligned_alloc(shares_at + shares_bytes(desc), LINE);
    if (!al) return NULL;
    memset(al, 0, records);
    al->desc = *desc;
    snprintf(al->name, sizeof al->name, "%s", desc->name ? desc->name : "(unnamed)");
    al->desc.name = al->name;
    if (args_size) {
        memcpy((char *)al + args_at, desc->args, args_size);
        al->desc.args = (char *)al + args_at;
    }
    al->lc.device = device;
    al->lc.desc = &al->desc;
    al->lc.checked = desc->checked == -1 ? vn_device_checked(device) : desc->checked == 1;
    atomic_init(&al->lc.first_fail, INT32_MAX);
    al->lc.records = (worker_record *)(al + 1);
    init_records(al->lc.records, workers);
    attach_shares(&al->lc, (char *)al + shares_at);
    return al;
}

vn_status vn_launch_async(vn_stream *stream, const vn_launch_desc *desc, size_t args_size)
{
    vn_status st = validate(desc);
    if (st != VN_OK) return st;
    if (args_size && !desc->args)
        return vn_error(VN_ERR_INVALID_ARG, "vn_launch_async", "kernel %s: args is NULL",
                        desc->name ? desc->name : "(unnamed)");
    if (!stream) stream = vn_device_default_stream(NULL);
    vn_device *device = vn_stream_device(stream);
    if (!device) return vn_error(VN_ERR_INVALID_ARG, "vn_launch_async", "no stream");
    async_launch *al = async_new(device, desc, args_size);
    if (!al)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_launch_async",
                        "kernel %s: cannot allocate the task (%zu bytes of args)",
                        desc->name ? desc->name : "(unnamed)", args_size);
    vn_task_desc task = {al->name, desc->block_dim, async_block, al, async_release};
    st = vn_stream_submit_ex(stream, &task, VN_TASK_KERNEL, async_stats);
    if (st != VN_OK) vn_aligned_free(al);
    return st;
}

void vn_kernel_counters_add(vn_kernel_counters *sum, const vn_kernel_counters *c)
{
    sum->bytes_in += c->bytes_in;
    sum->bytes_out += c->bytes_out;
    sum->vector_elem_ops += c->vector_elem_ops;
    sum->cube_ops += c->cube_ops;
    sum->cube_ops_bf16 += c->cube_ops_bf16;
    sum->cube_ops_int8 += c->cube_ops_int8;
    sum->wall_ms += c->wall_ms;
    for (int a = 0; a < VN_ARENA_COUNT; a++)
        if (c->scratch_high_water[a] > sum->scratch_high_water[a])
            sum->scratch_high_water[a] = c->scratch_high_water[a];
}
