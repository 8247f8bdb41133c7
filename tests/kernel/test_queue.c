/*
 * test_queue.c — carving scratch and the queue protocol (alloc -> enque ->
 * deque -> free), double buffering, depth, pipe reset between blocks.
 */
#include "vinci/kernel.h"
#include "vt.h"

static vn_device *dev;

enum { MAX_OUT = 32 };
typedef struct rec_args {
    uintptr_t out[8][MAX_OUT];
} rec_args;

/* Buffers are carved in order, rounded up to 32 bytes, and the pipe starts
 * empty in every block. */
static void carve_kernel(vn_core *c, const void *p)
{
    uintptr_t *o = ((rec_args *)p)->out[vn_block_idx(c)];
    vn_queue *q1 = vn_queue_new(c, VN_VECIN, 2, 3, VN_F32);  /* 12 B -> 32 B each */
    vn_queue *q2 = vn_queue_new(c, VN_VECOUT, 1, 9, VN_F32); /* 36 B -> 64 B */
    vn_local b = vn_buf_new(c, VN_VECCALC, 1, VN_F16);       /* 2 B -> 32 B */
    vn_queue *q3 = vn_queue_new(c, VN_A1, 1, 64, VN_F32);    /* L1 */
    vn_local x = vn_alloc(c, q1), y = vn_alloc(c, q1), z = vn_alloc(c, q2), w = vn_alloc(c, q3);
    o[0] = (uintptr_t)x.data;
    o[1] = (uintptr_t)y.data;
    o[2] = (uintptr_t)z.data;
    o[3] = (uintptr_t)b.data;
    o[4] = (uintptr_t)w.data;
    o[5] = (uintptr_t)x.bytes;
    o[6] = (uintptr_t)z.bytes;
    o[7] = (uintptr_t)b.bytes;
    vn_free(c, q1, x);
    vn_free(c, q1, y);
    vn_free(c, q2, z);
    vn_free(c, q3, w);
}

static void test_carving(void)
{
    static rec_args a;
    vn_kernel_counters k;
    VT_OK(VN_LAUNCH(dev, carve_kernel, 4, &a, &k));
    for (int b = 0; b < 4; b++) {
        uintptr_t *o = a.out[b];
        VT_CHECK(o[0] % 64 == 0, "first buffer at the arena start (64-aligned)");
        VT_CHECK(o[1] == o[0] + 32 && o[2] == o[0] + 64 && o[3] == o[0] + 128,
                 "carved in order, rounded to 32 B: %lx %lx %lx %lx", (unsigned long)o[0],
                 (unsigned long)o[1], (unsigned long)o[2], (unsigned long)o[3]);
        VT_CHECK(o[5] == 32 && o[6] == 64 && o[7] == 32, "extents %lu %lu %lu", (unsigned long)o[5],
                 (unsigned long)o[6], (unsigned long)o[7]);
        int found = 0;
        for (int32_t w = 0; w < vn_device_num_worker_ids(dev); w++)
            found += o[0] == (uintptr_t)vn_device_arena(dev, w, VN_ARENA_UB) &&
                     o[4] == (uintptr_t)vn_device_arena(dev, w, VN_ARENA_L1);
        VT_CHECK(found == 1, "block %d: the pipe was not reset to a worker's arena start", b);
    }
    VT_CHECK(k.scratch_high_water[VN_ARENA_UB] == 160, "UB high water %lld",
             (long long)k.scratch_high_water[VN_ARENA_UB]);
    VT_CHECK(k.scratch_high_water[VN_ARENA_L1] == 256, "L1 high water %lld",
             (long long)k.scratch_high_water[VN_ARENA_L1]);
    VT_CHECK(k.scratch_high_water[VN_ARENA_L0A] == 0, "L0A untouched");
}

/* A freed buffer is handed out again at once (a small working set), two held
 * at once are the two buffers, deque is FIFO. */
static void reuse_kernel(vn_core *c, const void *p)
{
    uintptr_t *o = ((rec_args *)p)->out[vn_block_idx(c)];
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 8, VN_F32);
    for (int i = 0; i < 6; i++) {
        vn_set_loop(c, i);
        vn_local t = vn_alloc(c, q);
        vn_ptr(float, t)[0] = (float)i;
        vn_enque(c, q, t);
        vn_local u = vn_deque(c, q);
        o[i] = (uintptr_t)u.data;
        o[8 + i] = (uintptr_t)(vn_ptr(float, u)[0] == (float)i);
        vn_free(c, q, u);
    }
    /* two in flight: FIFO order */
    vn_local a = vn_alloc(c, q), b = vn_alloc(c, q);
    o[6] = (uintptr_t)a.data, o[7] = (uintptr_t)b.data;
    vn_enque(c, q, b);
    vn_enque(c, q, a);
    o[16] = (uintptr_t)vn_deque(c, q).data == (uintptr_t)b.data;
    o[17] = (uintptr_t)vn_deque(c, q).data == (uintptr_t)a.data;
    vn_free(c, q, a);
    vn_free(c, q, b);
    /* out-of-order free: the next alloc still gets the free buffer */
    a = vn_alloc(c, q);
    b = vn_alloc(c, q);
    vn_free(c, q, b);
    vn_local again = vn_alloc(c, q);
    o[18] = again.data == b.data;
    vn_free(c, q, a);
    vn_free(c, q, again);
}

static void test_reuse(void)
{
    static rec_args a;
    for (int checked = 0; checked <= 1; checked++) {
        memset(&a, 0, sizeof a);
        vn_launch_desc d = {reuse_kernel, "reuse", 2, &a, checked, 0};
        VT_OK(vn_launch(dev, &d, NULL));
        for (int b = 0; b < 2; b++) {
            uintptr_t *o = a.out[b];
            for (int i = 0; i < 6; i++) {
                VT_CHECK(o[i] == o[0], "alloc %d did not reuse the freed buffer", i);
                VT_CHECK(o[8 + i] == 1, "data through the queue %d", i);
            }
            VT_CHECK(o[6] == o[0] && o[7] == o[0] + 32, "two held: the second buffer follows");
            VT_CHECK(o[16] == 1 && o[17] == 1, "deque is FIFO");
            VT_CHECK(o[18] == 1, "alloc after out-of-order free");
        }
    }
}

/* Depth 2 with 2 buffers: two enqueues before a dequeue are fine. */
static void depth_kernel(vn_core *c, const void *p)
{
    uintptr_t *o = ((rec_args *)p)->out[vn_block_idx(c)];
    vn_queue *q = vn_queue_new(c, VN_VECOUT, 4, 8, VN_F32);
    vn_queue_set_depth(c, q, 2);
    for (int r = 0; r < 3; r++) {
        vn_local a = vn_alloc(c, q), b = vn_alloc(c, q);
        vn_enque(c, q, a);
        vn_enque(c, q, b);
        vn_local x = vn_deque(c, q), y = vn_deque(c, q);
        o[r] = x.data == a.data && y.data == b.data;
        vn_free(c, q, x);
        vn_free(c, q, y);
    }
}

static void test_depth(void)
{
    static rec_args a;
    vn_launch_desc d = {depth_kernel, "depth", 3, &a, 1, 0};
    VT_OK(vn_launch(dev, &d, NULL));
    for (int b = 0; b < 3; b++) VT_CHECK(a.out[b][0] && a.out[b][1] && a.out[b][2], "block %d", b);
}

/* Queue set-up overflow fails the block even in release mode. */
static int overflow_line;
static void overflow_kernel(vn_core *c, const void *p)
{
    (void)p;
    int64_t ub = vn_core_arena_size(c, VN_ARENA_UB);
    vn_queue_new(c, VN_VECIN, 1, ub / 8, VN_F32);           /* half the UB */
    if (vn_block_idx(c) == 0) overflow_line = __LINE__ + 1; /* one writer */
    vn_queue_new(c, VN_VECOUT, 2, ub / 8, VN_F32);          /* one more than fits */
}

static void test_overflow_in_release(void)
{
    vn_launch_desc d = {overflow_kernel, "overflow", 2, NULL, 0, 0};
    VT_CHECK(vn_launch(dev, &d, NULL) == VN_ERR_KERNEL, "overflow not reported");
    const char *e = vn_last_error();
    char line[64];
    snprintf(line, sizeof line, "test_queue.c:%d", overflow_line);
    VT_CONTAINS(e, "scratch overflow");
    VT_CONTAINS(e, "kernel overflow, block 0");
    VT_CONTAINS(e, "vn_queue_new");
    VT_CONTAINS(e, line);
}

static void test_launch_arguments(void)
{
    vn_launch_desc d = {carve_kernel, "bad", 0, NULL, -1, 0};
    VT_CHECK(vn_launch(dev, &d, NULL) == VN_ERR_INVALID_ARG, "block_dim 0");
    d.block_dim = 65536;
    VT_CHECK(vn_launch(dev, &d, NULL) == VN_ERR_INVALID_ARG, "block_dim 65536");
    d.block_dim = 1;
    d.kernel = NULL;
    VT_CHECK(vn_launch(dev, &d, NULL) == VN_ERR_INVALID_ARG, "NULL kernel");
    VT_CHECK(vn_launch(dev, NULL, NULL) == VN_ERR_INVALID_ARG, "NULL desc");
    VT_CONTAINS(vn_last_error(), "vn_launch");
}

int main(void)
{
    vn_device_options o = {0};
    o.num_threads = 2;
    if (vn_device_create(&o, &dev) != VN_OK) {
        fprintf(stderr, "%s\n", vn_last_error());
        return 1;
    }
    VT_RUN(test_carving);
    VT_RUN(test_reuse);
    VT_RUN(test_depth);
    VT_RUN(test_overflow_in_release);
    VT_RUN(test_launch_arguments);
    vn_device_destroy(dev);
    return vt_summary();
}
