/*
 * test_stream.c — streams: in-order execution, blocks, copies and fills,
 * asynchronous kernel launch with copied args, query, synchronize timeout,
 * concurrency between streams, the default stream.
 */
#include <pthread.h>
#include <stdlib.h>

#include "rt_util.h"
#include "vt.h"

typedef struct order_ctx {
    int *log;
    atomic_int *next;
    int index;
} order_ctx;

static vn_status log_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    order_ctx *o = ctx;
    o->log[atomic_fetch_add(o->next, 1)] = o->index;
    return VN_OK;
}

static void test_in_order(void)
{
    vn_device *d = rt_device(4);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &s));
    enum { N = 500 };
    static int log[N];
    static order_ctx ctx[N];
    atomic_int next = 0;
    for (int i = 0; i < N; i++) {
        ctx[i] = (order_ctx){log, &next, i};
        vn_task_desc t = {"log", 1, log_block, &ctx[i], NULL};
        VT_OK(vn_stream_submit(s, &t));
    }
    VT_OK(vn_stream_synchronize(s, 10000));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += log[i] != i;
    VT_CHECK(bad == 0 && atomic_load(&next) == N, "%d tasks out of order", bad);
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

typedef struct blocks_ctx {
    atomic_int runs[1000];
    atomic_int released;
} blocks_ctx;

static vn_status count_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker;
    atomic_fetch_add(&((blocks_ctx *)ctx)->runs[block], 1);
    return VN_OK;
}

static void count_release(void *ctx)
{
    atomic_fetch_add(&((blocks_ctx *)ctx)->released, 1);
}

static void test_blocks_and_release(void)
{
    vn_device *d = rt_device(3);
    static blocks_ctx c;
    vn_task_desc t = {"count", 1000, count_block, &c, count_release};
    VT_OK(vn_stream_submit(vn_device_default_stream(d), &t));
    VT_OK(vn_stream_synchronize(vn_device_default_stream(d), -1));
    int bad = 0;
    for (int b = 0; b < 1000; b++) bad += atomic_load(&c.runs[b]) != 1;
    VT_CHECK(bad == 0, "%d blocks did not run exactly once", bad);
    VT_CHECK(atomic_load(&c.released) == 1, "release ran %d times", atomic_load(&c.released));
    t.num_blocks = 0;
    VT_CHECK(vn_stream_submit(vn_device_default_stream(d), &t) == VN_ERR_INVALID_ARG, "0 blocks");
    VT_CHECK(vn_device_default_stream(d) != NULL && vn_stream_id(vn_device_default_stream(d)) == 0,
             "default stream id");
    VT_CHECK(vn_stream_destroy(vn_device_default_stream(d)) == VN_ERR_STATE, "destroyed default");
    vn_device_destroy(d);
}

static void test_copy_and_fill(void)
{
    vn_device *d = rt_device(4);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    size_t n = (size_t)6 << 20;
    unsigned char *a = malloc(n), *b = malloc(n);
    for (size_t i = 0; i < n; i++) a[i] = (unsigned char)(i * 7 + 3);
    VT_OK(vn_memset_async(s, b, 0x5a, n));
    VT_OK(vn_stream_synchronize(s, -1));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += b[i] != 0x5a;
    VT_CHECK(bad == 0, "%zu bytes not filled", bad);
    VT_OK(vn_memcpy_async(s, b, a, n));
    VT_OK(vn_memcpy_async(s, b, a, 0));
    VT_OK(vn_stream_synchronize(s, -1));
    VT_CHECK(memcmp(a, b, n) == 0, "copy differs");
    VT_CHECK(vn_memcpy_async(s, NULL, a, 4) == VN_ERR_INVALID_ARG, "NULL dst");
    free(a);
    free(b);
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

typedef struct write_args {
    int *out;
    int value;
} write_args;

static void write_kernel(vn_core *core, const void *p)
{
    const write_args *a = p;
    a->out[vn_block_idx(core)] = a->value + vn_block_idx(core);
}

static void test_launch_async_copies_args(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    atomic_int gate = 0;
    VT_OK(rt_submit_gate(s, &gate)); /* the launch cannot run before its args die */
    static int out[8];
    for (int i = 0; i < 4; i++) {
        write_args a = {out, 100 * (i + 1)};
        vn_launch_desc desc = {write_kernel, "write_kernel", 8, &a, -1, 0};
        VT_OK(vn_launch_async(s, &desc, sizeof a));
        a.value = -1; /* the caller's copy changes: the task must not see it */
    }
    VT_CHECK(vn_stream_query(s) == VN_ERR_NOT_READY, "query while gated");
    atomic_store(&gate, 1);
    VT_OK(vn_stream_synchronize(s, -1));
    VT_CHECK(vn_stream_query(s) == VN_OK, "query after sync");
    int bad = 0;
    for (int b = 0; b < 8; b++) bad += out[b] != 400 + b;
    VT_CHECK(bad == 0, "%d wrong outputs (out[0] = %d)", bad, out[0]);
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

static void test_synchronize_timeout(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    atomic_int gate = 0;
    VT_OK(rt_submit_gate(s, &gate));
    VT_CHECK(vn_stream_synchronize(s, 20) == VN_ERR_TIMEOUT, "no timeout");
    VT_CONTAINS(vn_last_error(), "20 ms");
    VT_CHECK(vn_stream_synchronize(s, 0) == VN_ERR_TIMEOUT, "no timeout at 0 ms");
    atomic_store(&gate, 1);
    VT_OK(vn_stream_synchronize(s, 10000));
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

static vn_status set_flag_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    atomic_store((atomic_int *)ctx, 1);
    return VN_OK;
}

/* Stream A's task waits for a flag only stream B's task sets: it finishes
 * only if the two streams run at the same time. */
static void test_streams_concurrent(void)
{
    vn_device *d = rt_device(2);
    vn_stream *a = NULL, *b = NULL;
    VT_OK(vn_stream_create(d, 0, &a));
    VT_OK(vn_stream_create(d, 0, &b));
    atomic_int flag = 0;
    VT_OK(rt_submit_gate(a, &flag));
    vn_task_desc t = {"set", 1, set_flag_block, &flag, NULL};
    VT_OK(vn_stream_submit(b, &t));
    VT_OK(vn_stream_synchronize(a, 10000));
    VT_OK(vn_stream_synchronize(b, 10000));
    VT_OK(vn_stream_destroy(a));
    VT_OK(vn_stream_destroy(b));
    vn_device_destroy(d);
}

static void run_blocks_fn(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    atomic_fetch_add((atomic_int *)ctx, 1);
}

/* Synchronous run_blocks and vn_launch keep working next to streams. */
static void test_sync_calls_beside_streams(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    atomic_int gate = 0;
    VT_OK(rt_submit_gate(s, &gate));
    atomic_int n = 0;
    VT_OK(vn_device_run_blocks(d, 100, run_blocks_fn, &n));
    VT_CHECK(atomic_load(&n) == 100, "ran %d blocks", atomic_load(&n));
    static int out[4];
    write_args a = {out, 7};
    VT_OK(VN_LAUNCH(d, write_kernel, 4, &a, NULL));
    VT_CHECK(out[3] == 10, "out[3] = %d", out[3]);
    atomic_store(&gate, 1);
    VT_OK(vn_stream_destroy(s)); /* waits */
    vn_device_destroy(d);
}

/* Destroying a device with streams still holding work drains them first. */
static void test_device_destroy_drains(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_HIGH, &s));
    VT_CHECK(vn_stream_priority(s) == VN_PRIORITY_HIGH, "priority");
    static blocks_ctx c;
    memset(&c, 0, sizeof c);
    vn_task_desc t = {"count", 1000, count_block, &c, count_release};
    for (int i = 0; i < 10; i++) VT_OK(vn_stream_submit(s, &t));
    vn_device_destroy(d);
    VT_CHECK(atomic_load(&c.released) == 10, "released %d of 10", atomic_load(&c.released));
}

int main(void)
{
    VT_RUN(test_in_order);
    VT_RUN(test_blocks_and_release);
    VT_RUN(test_copy_and_fill);
    VT_RUN(test_launch_async_copies_args);
    VT_RUN(test_synchronize_timeout);
    VT_RUN(test_streams_concurrent);
    VT_RUN(test_sync_calls_beside_streams);
    VT_RUN(test_device_destroy_drains);
    return vt_summary();
}
