/*
 * test_profile.c — the profiling hook: records per task with stream, worker,
 * timestamps, name and kernel counters; nothing recorded while off. Block
 * records: one per block of a profiled task (indices 0..n-1 once each, valid
 * workers, inside the task's times, counters summing to the task's) and of
 * a synchronous launch (summing to vn_launch's counters); none for a task
 * that ran no block.
 */
#include "rt_util.h"
#include "vt.h"

typedef struct sum_args {
    const float *x;
    float *y;
} sum_args;

/* Copies 64 floats per block through the UB: counts bytes in and out. */
static void copy_kernel(vn_core *core, const void *p)
{
    const sum_args *a = p;
    int b = vn_block_idx(core);
    vn_gm gx = vn_gm_make((void *)a->x, VN_F32, 256), gy = vn_gm_make(a->y, VN_F32, 256);
    vn_queue *q = vn_queue_new(core, VN_VECIN, 1, 64, VN_F32);
    vn_local t = vn_alloc(core, q);
    vn_copy_in(core, t, gx, b * 64, 64);
    vn_copy_out(core, gy, b * 64, t, 64);
    vn_free(core, q, t);
}

/* Block b copies (b + 1) * 8 floats at b * 64 through the UB: each block
 * counts different bytes and scratch (at most 8 blocks). */
static void ragged_kernel(vn_core *core, const void *p)
{
    const sum_args *a = p;
    int b = vn_block_idx(core), n = (b + 1) * 8;
    vn_gm gx = vn_gm_make((void *)a->x, VN_F32, 512), gy = vn_gm_make(a->y, VN_F32, 512);
    vn_queue *q = vn_queue_new(core, VN_VECIN, 1, n, VN_F32);
    vn_local t = vn_alloc(core, q);
    vn_copy_in(core, t, gx, b * 64, n);
    vn_vscalar(core, VN_VOP_ADDS, t, t, 1.0, n);
    vn_copy_out(core, gy, b * 64, t, n);
    vn_free(core, q, t);
}

static vn_status nop_block(void *ctx, int32_t worker, int32_t block)
{
    (void)ctx, (void)worker, (void)block;
    return VN_OK;
}

static void test_records(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_HIGH, &s));
    vn_task_desc nop = {"nop", 3, nop_block, NULL, NULL};
    VT_OK(vn_stream_submit(s, &nop)); /* profiling off: no record */
    VT_OK(vn_stream_synchronize(s, 10000));
    VT_OK(vn_device_set_profiling(d, true));
    static float x[256], y[256];
    sum_args a = {x, y};
    vn_launch_desc desc = {copy_kernel, "copy_kernel", 4, &a, -1, 0};
    VT_OK(vn_launch_async(s, &desc, sizeof a));
    VT_OK(vn_memset_async(s, y, 0, sizeof y));
    VT_OK(vn_stream_synchronize(s, 10000));
    VT_OK(vn_device_set_profiling(d, false));
    VT_OK(vn_stream_submit(s, &nop));
    VT_OK(vn_stream_synchronize(s, 10000));

    vn_profile_record rec[8];
    uint64_t dropped = 1;
    size_t n = vn_device_profile_drain(d, rec, 8, &dropped);
    VT_CHECK(n == 2 && dropped == 0, "%zu records, %llu dropped", n, (unsigned long long)dropped);
    if (n == 2) {
        VT_CHECK(strcmp(rec[0].name, "copy_kernel") == 0 && rec[0].kind == VN_TASK_KERNEL, "%s",
                 rec[0].name);
        VT_CHECK(rec[0].task == 2 && rec[0].stream_id == vn_stream_id(s), "task %llu stream %u",
                 (unsigned long long)rec[0].task, (unsigned)rec[0].stream_id);
        VT_CHECK(rec[0].bytes_in == 4 * 256 && rec[0].bytes_out == 4 * 256, "bytes %lld / %lld",
                 (long long)rec[0].bytes_in, (long long)rec[0].bytes_out);
        VT_CHECK(rec[0].start_ns > 0 && rec[0].end_ns >= rec[0].start_ns, "timestamps");
        VT_CHECK(rec[0].first_worker >= 0 && rec[0].first_worker < 2 && rec[0].last_worker >= 0 &&
                     rec[0].last_worker < 2,
                 "workers %d %d", rec[0].first_worker, rec[0].last_worker);
        VT_CHECK(rec[0].num_blocks == 4 && rec[0].status == VN_OK && !rec[0].skipped, "blocks");
        VT_CHECK(rec[0].priority == VN_PRIORITY_HIGH, "priority");
        VT_CHECK(rec[1].kind == VN_TASK_MEMSET && rec[1].start_ns >= rec[0].end_ns, "memset after");
    }
    VT_CHECK(vn_device_profile_drain(d, rec, 8, NULL) == 0, "drain did not empty the buffer");
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

/* The block records of task `task` on stream `stream_id` among blk[0..n):
 * each index below num_blocks exactly once, valid workers, start <= end;
 * their counters summed into *sum, their span into [*t0, *t1]. */
static void check_blocks(const vn_profile_block *blk, size_t n, uint32_t stream_id, uint64_t task,
                         int32_t num_blocks, int32_t max_worker, vn_profile_block *sum)
{
    int seen[64] = {0};
    memset(sum, 0, sizeof *sum);
    sum->start_ns = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        const vn_profile_block *b = &blk[i];
        if (b->stream_id != stream_id || b->task != task) continue;
        VT_CHECK(b->block >= 0 && b->block < num_blocks && b->block < 64, "block %d", b->block);
        if (b->block >= 0 && b->block < 64) seen[b->block]++;
        VT_CHECK(b->worker >= 0 && b->worker < max_worker, "worker %d", b->worker);
        VT_CHECK(b->start_ns > 0 && b->start_ns <= b->end_ns, "block %d times", b->block);
        sum->start_ns = b->start_ns < sum->start_ns ? b->start_ns : sum->start_ns;
        sum->end_ns = b->end_ns > sum->end_ns ? b->end_ns : sum->end_ns;
        sum->bytes_in += b->bytes_in;
        sum->bytes_out += b->bytes_out;
        sum->vector_elem_ops += b->vector_elem_ops;
        sum->cube_ops += b->cube_ops;
        for (int a = 0; a < VN_ARENA_COUNT; a++)
            if (b->scratch_high_water[a] > sum->scratch_high_water[a])
                sum->scratch_high_water[a] = b->scratch_high_water[a];
    }
    for (int32_t i = 0; i < num_blocks && i < 64; i++)
        VT_CHECK(seen[i] == 1, "task %llu block %d recorded %d times", (unsigned long long)task,
                 (int)i, seen[i]);
}

static void test_block_records(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &s));
    static float x[512], y[512];
    sum_args a = {x, y};
    vn_launch_desc desc = {ragged_kernel, "ragged_kernel", 7, &a, -1, 0};
    vn_task_desc nop = {"nop", 3, nop_block, NULL, NULL};
    VT_OK(vn_launch_async(s, &desc, sizeof a)); /* off: no blocks */
    VT_OK(vn_stream_synchronize(s, 10000));
    VT_OK(vn_device_set_profiling(d, true));
    VT_OK(vn_launch_async(s, &desc, sizeof a)); /* task 2 */
    VT_OK(vn_stream_submit(s, &nop));           /* task 3 */
    VT_OK(vn_stream_inject_fault(s, 4, VN_ERR_KERNEL));
    VT_OK(vn_stream_submit(s, &nop)); /* task 4: injected, runs no block */
    (void)vn_stream_synchronize(s, 10000);
    VT_OK(vn_stream_reset(s));
    VT_OK(vn_device_set_profiling(d, false));

    vn_profile_record rec[8];
    vn_profile_block blk[64];
    uint64_t dropped = 1;
    size_t nr = vn_device_profile_drain(d, rec, 8, NULL);
    size_t nb = vn_device_profile_drain_blocks(d, blk, 64, &dropped);
    VT_CHECK(nr == 3 && nb == 7 + 3 && dropped == 0, "%zu records, %zu blocks, %llu dropped", nr,
             nb, (unsigned long long)dropped);
    uint32_t sid = vn_stream_id(s);
    for (size_t r = 0; r < nr; r++) {
        vn_profile_block sum;
        check_blocks(blk, nb, sid, rec[r].task, rec[r].num_blocks, 2, &sum);
        if (!rec[r].num_blocks) continue;
        VT_CHECK(rec[r].start_ns == sum.start_ns && rec[r].end_ns == sum.end_ns,
                 "task %llu: blocks span its record", (unsigned long long)rec[r].task);
        VT_CHECK(rec[r].bytes_in == sum.bytes_in && rec[r].bytes_out == sum.bytes_out &&
                     rec[r].vector_elem_ops == sum.vector_elem_ops &&
                     rec[r].cube_ops == sum.cube_ops,
                 "task %llu: block counters sum to the task's", (unsigned long long)rec[r].task);
        VT_CHECK(!memcmp(rec[r].scratch_high_water, sum.scratch_high_water,
                         sizeof sum.scratch_high_water),
                 "task %llu: high-water marks", (unsigned long long)rec[r].task);
    }
    /* 8 + 16 + ... + 56 floats in and out, 4 bytes each; UB high water: block 6's 56 floats */
    VT_CHECK(nr >= 1 && rec[0].bytes_in == 4 * 8 * 28 && rec[0].bytes_out == 4 * 8 * 28 &&
                 rec[0].vector_elem_ops == 8 * 28,
             "ragged kernel counters %lld %lld %lld", (long long)rec[0].bytes_in,
             (long long)rec[0].bytes_out, (long long)rec[0].vector_elem_ops);
    VT_CHECK(nr >= 1 && rec[0].scratch_high_water[VN_ARENA_UB] >= 56 * 4, "UB high water %lld",
             (long long)rec[0].scratch_high_water[VN_ARENA_UB]);
    for (size_t i = 0; i < nb; i++)
        if (blk[i].task == 2 && blk[i].stream_id == sid)
            VT_CHECK(blk[i].bytes_in == 4 * 8 * (blk[i].block + 1), "block %d bytes in %lld",
                     blk[i].block, (long long)blk[i].bytes_in);
    VT_CHECK(nr == 3 && rec[2].num_blocks == 0 && rec[2].start_ns <= rec[2].end_ns,
             "the injected task has a record, no blocks");
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

/* Synchronous launches while profiling is on: blocks on VN_PROFILE_SYNC,
 * numbered per launch, summing to the counters vn_launch returns. */
static void test_sync_block_records(void)
{
    vn_device *d = rt_device(2);
    static float x[512], y[512];
    sum_args a = {x, y};
    vn_launch_desc desc = {ragged_kernel, "ragged_kernel", 5, &a, -1, 0};
    vn_kernel_counters c[2];
    VT_OK(vn_launch(d, &desc, &c[0])); /* off: no blocks */
    VT_OK(vn_device_set_profiling(d, true));
    VT_OK(vn_launch(d, &desc, &c[0]));
    desc.block_dim = 1; /* run by the caller alone */
    VT_OK(vn_launch(d, &desc, &c[1]));
    VT_OK(vn_device_set_profiling(d, false));
    vn_profile_block blk[64];
    size_t nb = vn_device_profile_drain_blocks(d, blk, 64, NULL);
    VT_CHECK(nb == 6, "%zu blocks", nb);
    for (uint64_t task = 1; task <= 2; task++) {
        vn_profile_block sum;
        const vn_kernel_counters *k = &c[task - 1];
        check_blocks(blk, nb, VN_PROFILE_SYNC, task, task == 1 ? 5 : 1, vn_device_num_worker_ids(d),
                     &sum);
        VT_CHECK(sum.bytes_in == k->bytes_in && sum.bytes_out == k->bytes_out &&
                     sum.vector_elem_ops == k->vector_elem_ops && sum.cube_ops == k->cube_ops &&
                     !memcmp(sum.scratch_high_water, k->scratch_high_water,
                             sizeof sum.scratch_high_water),
                 "launch %llu: block counters sum to vn_launch's", (unsigned long long)task);
    }
    VT_CHECK(vn_device_profile_drain_blocks(d, blk, 64, NULL) == 0, "drained");
    vn_device_destroy(d);
}

int main(void)
{
    VT_RUN(test_records);
    VT_RUN(test_block_records);
    VT_RUN(test_sync_block_records);
    return vt_summary();
}
