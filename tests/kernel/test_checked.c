/*
 * test_checked.c — one negative test per checked-mode rule.
 *
 * Each kernel plants its bug only in block `bug_block` (2 of 4 for most) and
 * records the source line of the bad call; the test asserts the launch fails
 * with VN_ERR_KERNEL and a message naming the kernel, the block, the loop
 * (where set), the call and "test_checked.c:<line>". The same kernel with
 * bug_block = -1 must run clean in checked mode.
 */
#include "vinci/kernel.h"
#include "vt.h"

static vn_device *dev;

typedef struct bug_args {
    int bug_block; /* the block that misbehaves; -1: none */
    float gm[256];
    float out[256];
} bug_args;

/* Line of the planted bad call; written only by the buggy block. */
static int bad_line;
#define BUGGY(c, a) (vn_block_idx(c) == (a)->bug_block)
#define MARK()      (bad_line = __LINE__ + 1)

/* ---- kernels ----------------------------------------------------------------- */

static void setup_overflow(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_queue_new(c, VN_VECIN, 2, vn_core_arena_size(c, VN_ARENA_UB) / 8 - 8, VN_F32);
    if (BUGGY(c, a)) {
        MARK();
        vn_buf_new(c, VN_VECCALC, 64, VN_F32);
    }
}

static void misaligned_view(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_local t = vn_buf_new(c, VN_VECCALC, 64, VN_F32);
    if (BUGGY(c, a)) MARK();
    vn_local_at(c, t, BUGGY(c, a) ? 3 : 8);
}

static void gm_out_of_bounds(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_gm g = vn_gm_make((void *)a->gm, VN_F32, 64);
    vn_local t = vn_buf_new(c, VN_VECIN, 8, VN_F32);
    if (BUGGY(c, a)) MARK();
    vn_copy_in(c, t, g, BUGGY(c, a) ? 60 : 56, 8);
}

static void truncated_copy(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_gm g = vn_gm_make((void *)a->gm, VN_F32, 256);
    vn_local t = vn_buf_new(c, VN_VECIN, 16, VN_F32);
    for (int i = 0; i < 4; i++) {
        vn_set_loop(c, i);
        bool bug = BUGGY(c, a) && i == 3;
        if (bug) MARK();
        vn_copy_in(c, t, g, i * 16, bug ? 10 : 16);
    }
}

static void local_extent(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_gm g = vn_gm_make((void *)a->gm, VN_F32, 256);
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 8, VN_F32);
    vn_local t = vn_alloc(c, q);
    if (BUGGY(c, a)) MARK();
    vn_copy_in(c, t, g, 0, BUGGY(c, a) ? 16 : 8);
    vn_free(c, q, t);
}

static void alloc_past_buffers(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 8, VN_F32);
    vn_local x = vn_alloc(c, q), y = vn_alloc(c, q);
    if (BUGGY(c, a)) {
        MARK();
        vn_alloc(c, q);
    }
    vn_free(c, q, x);
    vn_free(c, q, y);
}

static void deque_empty(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 8, VN_F32);
    vn_local x = vn_alloc(c, q);
    if (!BUGGY(c, a)) vn_enque(c, q, x);
    if (BUGGY(c, a)) MARK();
    x = vn_deque(c, q);
    vn_free(c, q, x);
}

static void enque_foreign(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_queue *q1 = vn_queue_new(c, VN_VECIN, 2, 8, VN_F32);
    vn_queue *q2 = vn_queue_new(c, VN_VECIN, 2, 8, VN_F32);
    vn_local x = vn_alloc(c, q1);
    if (BUGGY(c, a)) MARK();
    vn_enque(c, BUGGY(c, a) ? q2 : q1, x);
    vn_free(c, q1, vn_deque(c, q1));
}

static void free_foreign(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_queue *q1 = vn_queue_new(c, VN_VECOUT, 1, 8, VN_F32);
    vn_queue *q2 = vn_queue_new(c, VN_VECOUT, 1, 8, VN_F32);
    vn_local x = vn_alloc(c, q1);
    if (BUGGY(c, a)) MARK();
    vn_free(c, BUGGY(c, a) ? q2 : q1, x);
}

static void free_view(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 64, VN_F32);
    vn_local x = vn_alloc(c, q);
    if (BUGGY(c, a)) MARK();
    vn_free(c, q, BUGGY(c, a) ? vn_local_at(c, x, 8) : x);
}

static void double_free(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 8, VN_F32);
    vn_local x = vn_alloc(c, q);
    vn_free(c, q, x);
    if (BUGGY(c, a)) {
        MARK();
        vn_free(c, q, x);
    }
}

static void enque_past_depth(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 8, VN_F32);
    vn_queue_set_depth(c, q, 1);
    vn_local x = vn_alloc(c, q), y = vn_alloc(c, q);
    vn_enque(c, q, x);
    if (!BUGGY(c, a)) x = vn_deque(c, q);
    if (BUGGY(c, a)) MARK();
    vn_enque(c, q, y);
    y = vn_deque(c, q);
    vn_free(c, q, x);
    vn_free(c, q, y);
}

static void leak(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 8, VN_F32);
    vn_local keep = vn_alloc(c, q);
    vn_free(c, q, keep);
    if (BUGGY(c, a)) MARK();
    vn_local x = vn_alloc(c, q); /* the buggy block never frees it */
    if (!BUGGY(c, a)) vn_free(c, q, x);
}

static void read_unwritten(vn_core *c, const void *p)
{
    bug_args *a = (bug_args *)p;
    vn_gm in = vn_gm_make(a->gm, VN_F32, 256), out = vn_gm_make(a->out, VN_F32, 256);
    vn_queue *q = vn_queue_new(c, VN_VECOUT, 2, 16, VN_F32);
    for (int i = 0; i < 3; i++) {
        vn_set_loop(c, i);
        vn_local t = vn_alloc(c, q);
        bool bug = BUGGY(c, a) && i == 1;
        vn_copy_in(c, t, in, 16 * i, bug ? 8 : 16); /* half of the tile written */
        vn_enque(c, q, t);
        t = vn_deque(c, q);
        if (bug) MARK();
        vn_copy_out(c, out, 48 * vn_block_idx(c) + 16 * i, t, 16); /* own region */
        vn_free(c, q, t);
    }
}

/* The vector instructions check their inputs against the same shadow map. */
static void vector_reads_unwritten(vn_core *c, const void *p)
{
    const bug_args *a = p;
    vn_gm in = vn_gm_make((void *)a->gm, VN_F32, 256);
    vn_queue *qx = vn_queue_new(c, VN_VECIN, 1, 64, VN_F32);
    vn_queue *qz = vn_queue_new(c, VN_VECOUT, 1, 64, VN_F32);
    vn_local x = vn_alloc(c, qx), z = vn_alloc(c, qz);
    vn_copy_in(c, x, in, 0, BUGGY(c, a) ? 32 : 64);
    if (BUGGY(c, a)) MARK();
    vn_add(c, z, x, x, 64);
    vn_free(c, qx, x);
    vn_free(c, qz, z);
}

static void kernel_fail(vn_core *c, const void *p)
{
    const bug_args *a = p;
    if (BUGGY(c, a)) {
        MARK();
        vn_kernel_fail(c, "tile %d has a bad shape", 7);
    }
}

/* ---- the check ------------------------------------------------------------------- */

static void expect_bug(vn_kernel_fn k, const char *name, int bug_block, int loop, const char *call,
                       const char *what)
{
    static bug_args a;
    for (int i = 0; i < 256; i++) a.gm[i] = (float)i;
    a.bug_block = bug_block;
    bad_line = -1;
    vn_launch_desc d = {k, name, 4, &a, 1, 0};
    vn_status st = vn_launch(dev, &d, NULL);
    VT_CHECK(st == VN_ERR_KERNEL, "%s: got %s", name, vn_status_name(st));
    const char *e = vn_last_error();
    printf("       %s\n", e);
    char s[128];
    snprintf(s, sizeof s, "kernel %s, block %d%s", name, bug_block, loop >= 0 ? ", loop" : ":");
    VT_CONTAINS(e, s);
    if (loop >= 0) {
        snprintf(s, sizeof s, "block %d, loop %d: ", bug_block, loop);
        VT_CONTAINS(e, s);
    }
    snprintf(s, sizeof s, ": %s at test_checked.c:%d: ", call, bad_line);
    VT_CONTAINS(e, s);
    VT_CONTAINS(e, what);

    /* without the bug the same kernel runs clean in checked mode */
    a.bug_block = -1;
    VT_OK(vn_launch(dev, &d, NULL));
}

#define EXPECT(k, block, loop, call, what) expect_bug(k, #k, block, loop, call, what)

static void test_setup_overflow(void)
{
    EXPECT(setup_overflow, 2, -1, "vn_buf_new", "scratch overflow");
}
static void test_misaligned_view(void)
{
    EXPECT(misaligned_view, 2, -1, "vn_local_at", "not 32-byte aligned");
}
static void test_gm_out_of_bounds(void)
{
    EXPECT(gm_out_of_bounds, 3, -1, "vn_copy_in", "global tensor of 256 bytes");
}
static void test_truncated_copy(void)
{
    EXPECT(truncated_copy, 2, 3, "vn_copy_in", "not a multiple of 32 bytes");
}
static void test_local_extent(void)
{
    EXPECT(local_extent, 2, -1, "vn_copy_in",
           "writes bytes [0, 64) of a local tensor with 32 bytes");
}
static void test_alloc_past_buffers(void)
{
    EXPECT(alloc_past_buffers, 2, -1, "vn_alloc", "all 2 buffers");
}
static void test_deque_empty(void)
{
    EXPECT(deque_empty, 2, -1, "vn_deque", "empty");
}
static void test_enque_foreign(void)
{
    EXPECT(enque_foreign, 2, -1, "vn_enque", "does not belong");
}
static void test_free_foreign(void)
{
    EXPECT(free_foreign, 1, -1, "vn_free", "does not belong");
}
static void test_free_view(void)
{
    EXPECT(free_view, 2, -1, "vn_free", "a view at byte 32");
}
static void test_double_free(void)
{
    EXPECT(double_free, 2, -1, "vn_free", "double free");
}
static void test_enque_past_depth(void)
{
    EXPECT(enque_past_depth, 2, -1, "vn_enque", "past depth 1");
}
static void test_leak(void)
{
    EXPECT(leak, 2, -1, "vn_alloc", "buffers still held at kernel end");
}
static void test_read_unwritten(void)
{
    EXPECT(read_unwritten, 2, 1, "vn_copy_out", "reads byte 32 of a local tensor");
}
static void test_vector_reads_unwritten(void)
{
    EXPECT(vector_reads_unwritten, 2, -1, "vn_vbinary", "nothing wrote");
}
static void test_kernel_fail(void)
{
    EXPECT(kernel_fail, 0, -1, "vn_kernel_fail", "tile 7 has a bad shape");
}

/* Several failing blocks: the lowest is reported, whatever the timing. */
static void every_block_fails(vn_core *c, const void *p)
{
    (void)p;
    if (vn_block_idx(c) >= 5) vn_kernel_fail(c, "block %d fails", (int)vn_block_idx(c));
}

static void test_lowest_failing_block_is_reported(void)
{
    for (int i = 0; i < 20; i++) {
        vn_launch_desc d = {every_block_fails, "every_block_fails", 64, NULL, 1, 0};
        VT_CHECK(vn_launch(dev, &d, NULL) == VN_ERR_KERNEL, "no failure");
        VT_CONTAINS(vn_last_error(), "block 5 fails");
    }
}

int main(void)
{
    vn_device_options o = {0};
    o.num_threads = 3;
    if (vn_device_create(&o, &dev) != VN_OK) {
        fprintf(stderr, "%s\n", vn_last_error());
        return 1;
    }
    VT_RUN(test_setup_overflow);
    VT_RUN(test_misaligned_view);
    VT_RUN(test_gm_out_of_bounds);
    VT_RUN(test_truncated_copy);
    VT_RUN(test_local_extent);
    VT_RUN(test_alloc_past_buffers);
    VT_RUN(test_deque_empty);
    VT_RUN(test_enque_foreign);
    VT_RUN(test_free_foreign);
    VT_RUN(test_free_view);
    VT_RUN(test_double_free);
    VT_RUN(test_enque_past_depth);
    VT_RUN(test_leak);
    VT_RUN(test_read_unwritten);
    VT_RUN(test_vector_reads_unwritten);
    VT_RUN(test_kernel_fail);
    VT_RUN(test_lowest_failing_block_is_reported);
    vn_device_destroy(dev);
    return vt_summary();
}
