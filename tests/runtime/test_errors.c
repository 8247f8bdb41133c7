/*
 * test_errors.c — sticky stream errors: context, skipped work, reset, other
 * streams unaffected, stop-on-failure, kernel failures, fault injection.
 */
#include "rt_util.h"
#include "vt.h"

static vn_status fail_at_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker;
    if (block >= *(int *)ctx)
        return vn_error(VN_ERR_KERNEL, "my_op", "bad value at block %d", block);
    return VN_OK;
}

static vn_status bump_block(void *ctx, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    atomic_fetch_add((atomic_int *)ctx, 1);
    return VN_OK;
}

static atomic_int released;

static void count_release(void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&released, 1);
}

static void test_sticky_error_and_reset(void)
{
    vn_device *d = rt_device(3);
    vn_stream *s = NULL, *other = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    VT_OK(vn_stream_create(d, 0, &other));
    atomic_int ran = 0, other_ran = 0;
    int first_bad = 5;
    vn_task_desc ok = {"bump", 1, bump_block, &ran, count_release};
    vn_task_desc bad = {"failing_op", 64, fail_at_block, &first_bad, NULL};
    vn_task_desc ok_other = {"bump", 1, bump_block, &other_ran, NULL};
    atomic_store(&released, 0);
    VT_OK(vn_stream_submit(s, &ok));  /* task 1 */
    VT_OK(vn_stream_submit(s, &bad)); /* task 2: fails; submission still OK */
    VT_OK(vn_stream_submit(s, &ok));  /* task 3: skipped */
    VT_OK(vn_stream_submit(s, &ok));  /* task 4: skipped */
    VT_OK(vn_stream_submit(other, &ok_other));
    VT_CHECK(vn_stream_synchronize(s, 10000) == VN_ERR_KERNEL, "no error");
    const char *m = vn_last_error();
    VT_CONTAINS(m, "task 2, kernel failing_op, block 5: ");
    VT_CONTAINS(m, "bad value at block 5");
    VT_CHECK(atomic_load(&ran) == 1, "%d tasks ran; later tasks must be skipped",
             atomic_load(&ran));
    VT_CHECK(atomic_load(&released) == 3, "release ran %d times (skipped tasks release too)",
             atomic_load(&released));
    vn_stream_error_info info;
    VT_OK(vn_stream_get_error(s, &info));
    VT_CHECK(info.status == VN_ERR_KERNEL && info.task == 2 && info.block == 5, "info %s %llu %d",
             vn_status_name(info.status), (unsigned long long)info.task, (int)info.block);
    VT_CHECK(info.skipped == 2, "skipped %llu", (unsigned long long)info.skipped);
    VT_CONTAINS(info.last_skipped, "skipped: stream failed at task 2: ");
    VT_CHECK(vn_stream_synchronize(s, 10000) == VN_ERR_KERNEL, "error not sticky");
    VT_OK(vn_stream_synchronize(other, 10000));
    VT_CHECK(atomic_load(&other_ran) == 1, "other stream affected");

    VT_OK(vn_stream_reset(s));
    VT_OK(vn_stream_get_error(s, &info));
    VT_CHECK(info.status == VN_OK && info.skipped == 0, "reset kept the error");
    VT_OK(vn_stream_submit(s, &ok));
    VT_OK(vn_stream_synchronize(s, 10000));
    VT_CHECK(atomic_load(&ran) == 2, "work after reset did not run");
    VT_OK(vn_stream_destroy(s));
    VT_OK(vn_stream_destroy(other));
    vn_device_destroy(d);
}

static void test_stop_on_failure(void)
{
    vn_device *d = rt_device(2);
    VT_OK(vn_device_set_stop_on_failure(d, true));
    vn_stream *a = NULL, *b = NULL;
    VT_OK(vn_stream_create(d, 0, &a));
    VT_OK(vn_stream_create(d, 0, &b));
    atomic_int gate = 0, ran = 0;
    int first_bad = 0;
    vn_task_desc bad = {"boom", 1, fail_at_block, &first_bad, NULL};
    vn_task_desc ok = {"bump", 1, bump_block, &ran, NULL};
    VT_OK(rt_submit_gate(b, &gate));
    VT_OK(vn_stream_submit(b, &ok)); /* behind the gate: must be skipped */
    VT_OK(vn_stream_submit(a, &bad));
    VT_CHECK(vn_stream_synchronize(a, 10000) == VN_ERR_KERNEL, "a: no error");
    atomic_store(&gate, 1);
    VT_CHECK(vn_stream_synchronize(b, 10000) == VN_ERR_KERNEL, "b was not stopped");
    VT_CONTAINS(vn_last_error(), "stopped: stream");
    VT_CHECK(atomic_load(&ran) == 0, "b's work ran after the stop");
    VT_CHECK(vn_stream_synchronize(vn_device_default_stream(d), 100) == VN_ERR_KERNEL,
             "default stream not stopped");
    VT_OK(vn_stream_reset(b));
    VT_OK(vn_stream_submit(b, &ok));
    VT_OK(vn_stream_synchronize(b, 10000));
    VT_CHECK(atomic_load(&ran) == 1, "b did not run after reset");
    VT_OK(vn_stream_destroy(a));
    VT_OK(vn_stream_destroy(b));
    vn_device_destroy(d);
}

typedef struct kargs {
    int *out;
    int fail_block;
} kargs;

static void maybe_fail_kernel(vn_core *core, const void *p)
{
    const kargs *a = p;
    int b = vn_block_idx(core);
    if (b == a->fail_block) vn_kernel_fail(core, "negative input %d", -b);
    a->out[b] = b;
}

static void test_kernel_failure_context(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = vn_device_default_stream(d);
    static int out[16];
    kargs a = {out, 9};
    vn_launch_desc desc = {maybe_fail_kernel, "maybe_fail", 16, &a, -1, 0};
    VT_OK(vn_memset_async(s, out, 0, sizeof out)); /* task 1 */
    VT_OK(vn_launch_async(s, &desc, sizeof a));    /* task 2 */
    VT_CHECK(vn_stream_synchronize(s, 10000) == VN_ERR_KERNEL, "no error");
    VT_CONTAINS(vn_last_error(), "task 2, kernel maybe_fail, block 9: ");
    VT_CONTAINS(vn_last_error(), "negative input -9");
    VT_OK(vn_stream_reset(s));
    vn_device_destroy(d);
}

static void test_fault_injection(void)
{
    vn_device *d = rt_device(2);
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d, 0, &s));
    atomic_int ran = 0;
    vn_task_desc ok = {"bump", 1, bump_block, &ran, NULL};
    VT_OK(vn_stream_inject_fault(s, 3, VN_ERR_OUT_OF_MEMORY));
    for (int i = 0; i < 5; i++) VT_OK(vn_stream_submit(s, &ok));
    VT_CHECK(vn_stream_synchronize(s, 10000) == VN_ERR_OUT_OF_MEMORY, "no injected error");
    VT_CONTAINS(vn_last_error(), "task 3, kernel bump: injected fault");
    VT_CHECK(atomic_load(&ran) == 2, "ran %d tasks, want 2", atomic_load(&ran));
    VT_OK(vn_stream_inject_fault(s, 0, VN_OK));
    VT_OK(vn_stream_reset(s));
    VT_OK(vn_stream_submit(s, &ok));
    VT_OK(vn_stream_synchronize(s, 10000));
    VT_CHECK(vn_stream_inject_fault(s, 1, VN_OK) == VN_ERR_INVALID_ARG, "VN_OK fault accepted");
    VT_OK(vn_stream_destroy(s));
    vn_device_destroy(d);
}

int main(void)
{
    VT_RUN(test_sticky_error_and_reset);
    VT_RUN(test_stop_on_failure);
    VT_RUN(test_kernel_failure_context);
    VT_RUN(test_fault_injection);
    return vt_summary();
}
