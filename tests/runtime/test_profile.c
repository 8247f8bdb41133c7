/*
 * test_profile.c — the profiling hook: records per task with stream, worker,
 * timestamps, name and kernel counters; nothing recorded while off.
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
    vn_launch_desc desc = {copy_kernel, "copy_kernel", 4, &a, -1};
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

int main(void)
{
    VT_RUN(test_records);
    return vt_summary();
}
