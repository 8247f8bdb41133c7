/*
 * test_device.c — the device: worker count, arenas, block hand-out, callers
 * from several threads, configuration errors.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "vinci/runtime.h"
#include "vt.h"

static void test_workers_from_options(void)
{
    vn_device_options o = {0};
    o.num_threads = 3;
    vn_device *d = NULL;
    VT_OK(vn_device_create(&o, &d));
    VT_CHECK(vn_device_num_workers(d) == 3, "workers %d", vn_device_num_workers(d));
    VT_CHECK(!vn_device_checked(d), "checked by default");
    vn_device_destroy(d);
}

static void test_workers_from_env(void)
{
    setenv("VINCI_NUM_THREADS", "5", 1);
    vn_device *d = NULL;
    VT_OK(vn_device_create(NULL, &d));
    VT_CHECK(vn_device_num_workers(d) == 5, "workers %d", vn_device_num_workers(d));
    vn_device_destroy(d);

    /* the options win over the environment */
    vn_device_options o = {0};
    o.num_threads = 2;
    VT_OK(vn_device_create(&o, &d));
    VT_CHECK(vn_device_num_workers(d) == 2, "workers %d", vn_device_num_workers(d));
    vn_device_destroy(d);

    setenv("VINCI_NUM_THREADS", "two", 1);
    d = NULL;
    VT_CHECK(vn_device_create(NULL, &d) == VN_ERR_INVALID_ARG, "bad env accepted");
    VT_CONTAINS(vn_last_error(), "VINCI_NUM_THREADS");
    VT_CHECK(d == NULL, "device returned on error");
    unsetenv("VINCI_NUM_THREADS");

    VT_OK(vn_device_create(NULL, &d));
    VT_CHECK(vn_device_num_workers(d) >= 1, "workers %d", vn_device_num_workers(d));
    vn_device_destroy(d);
}

static void test_arenas(void)
{
    vn_device_options o = {0};
    o.num_threads = 3;
    o.arena_bytes[VN_ARENA_UB] = 4096;
    setenv("VINCI_L0C_SIZE", "8192", 1);
    vn_device *d = NULL;
    VT_OK(vn_device_create(&o, &d));
    unsetenv("VINCI_L0C_SIZE");
    VT_CHECK(vn_device_arena_size(d, VN_ARENA_UB) == 4096, "UB");
    VT_CHECK(vn_device_arena_size(d, VN_ARENA_L0C) == 8192, "L0C from env");
    for (int a = VN_ARENA_L1; a <= VN_ARENA_L0B; a++)
        VT_CHECK(vn_device_arena_size(d, (vn_arena)a) == vn_arena_default_size((vn_arena)a),
                 "arena %s default", vn_arena_name((vn_arena)a));
    /* every arena of every worker distinct, aligned, writable over its whole size */
    uint8_t *seen[3 * VN_ARENA_COUNT];
    int64_t seen_size[3 * VN_ARENA_COUNT];
    int n = 0;
    for (int32_t w = 0; w < 3; w++) {
        for (int a = 0; a < VN_ARENA_COUNT; a++) {
            uint8_t *p = vn_device_arena(d, w, (vn_arena)a);
            int64_t size = vn_device_arena_size(d, (vn_arena)a);
            VT_CHECK(p && (uintptr_t)p % 64 == 0, "worker %d arena %d at %p", w, a, (void *)p);
            for (int k = 0; k < n; k++)
                VT_CHECK(p + size <= seen[k] || p >= seen[k] + seen_size[k], "arenas overlap");
            memset(p, w + 1, (size_t)size);
            seen_size[n] = size;
            seen[n++] = p;
        }
    }
    VT_CHECK(vn_device_num_worker_ids(d) > 3, "guest slots past the pool's workers");
    for (int32_t w = 3; w < vn_device_num_worker_ids(d); w++)
        VT_CHECK(vn_device_arena(d, w, VN_ARENA_UB) != NULL, "guest %d has arenas", (int)w);
    VT_CHECK(vn_device_arena(d, vn_device_num_worker_ids(d), VN_ARENA_UB) == NULL,
             "worker past the end");
    vn_device_destroy(d);

    o.arena_bytes[VN_ARENA_UB] = 100; /* not whole 32-byte blocks */
    VT_CHECK(vn_device_create(&o, &d) == VN_ERR_INVALID_ARG, "bad arena size accepted");
    VT_CONTAINS(vn_last_error(), "UB");
    VT_CHECK(strcmp(vn_arena_name(VN_ARENA_L0A), "L0A") == 0, "name");
    VT_CHECK(vn_arena_default_size(VN_ARENA_UB) == 192 * 1024, "UB default");
}

typedef struct count_ctx {
    atomic_int runs[4096];
    atomic_int concurrent[64]; /* per worker: blocks running now */
    atomic_int overlap;
} count_ctx;

static void count_block(void *ctx, int32_t worker, int32_t block)
{
    count_ctx *c = ctx;
    if (atomic_fetch_add(&c->concurrent[worker], 1) != 0) atomic_store(&c->overlap, 1);
    atomic_fetch_add(&c->runs[block], 1);
    atomic_fetch_sub(&c->concurrent[worker], 1);
}

static void check_each_once(vn_device *d, int32_t blocks)
{
    static count_ctx c;
    memset(&c, 0, sizeof c);
    VT_OK(vn_device_run_blocks(d, blocks, count_block, &c));
    int bad = 0;
    for (int32_t b = 0; b < blocks; b++) bad += atomic_load(&c.runs[b]) != 1;
    VT_CHECK(bad == 0, "%d of %d blocks did not run exactly once", bad, blocks);
    VT_CHECK(atomic_load(&c.overlap) == 0, "two blocks at once on one worker");
}

static void test_run_blocks(void)
{
    vn_device_options o = {0};
    o.num_threads = 4;
    vn_device *d = NULL;
    VT_OK(vn_device_create(&o, &d));
    check_each_once(d, 4096);
    check_each_once(d, 1);
    check_each_once(d, 3);
    for (int i = 0; i < 50; i++) check_each_once(d, 17); /* many short calls: no lost wake-up */
    VT_OK(vn_device_run_blocks(d, 0, count_block, NULL));
    VT_CHECK(vn_device_run_blocks(d, 1, NULL, NULL) == VN_ERR_INVALID_ARG, "NULL fn");
    VT_CHECK(vn_device_run_blocks(NULL, 1, count_block, NULL) == VN_ERR_INVALID_ARG, "NULL dev");
    vn_device_destroy(d);
    vn_device_destroy(NULL);
}

typedef struct caller_arg {
    vn_device *device;
    atomic_int total;
    int failures;
} caller_arg;

static void add_block(void *ctx, int32_t worker, int32_t block)
{
    caller_arg *a = ctx;
    (void)worker;
    atomic_fetch_add(&a->total, block + 1);
}

static void *caller(void *p)
{
    caller_arg *a = p;
    for (int i = 0; i < 40; i++) {
        atomic_store(&a->total, 0);
        if (vn_device_run_blocks(a->device, 64, add_block, a) != VN_OK) a->failures++;
        if (atomic_load(&a->total) != 64 * 65 / 2) a->failures++;
    }
    return NULL;
}

static void test_concurrent_callers(void)
{
    vn_device_options o = {0};
    o.num_threads = 3;
    vn_device *d = NULL;
    VT_OK(vn_device_create(&o, &d));
    pthread_t t[4];
    caller_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i].device = d;
        atomic_init(&args[i].total, 0);
        args[i].failures = 0;
        pthread_create(&t[i], NULL, caller, &args[i]);
    }
    int failures = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        failures += args[i].failures;
    }
    VT_CHECK(failures == 0, "%d calls returned before their blocks finished", failures);
    vn_device_destroy(d);
}

static vn_device *reentrant_device;
static vn_status reentrant_status = VN_OK;

static void reenter_block(void *ctx, int32_t worker, int32_t block)
{
    (void)ctx, (void)worker, (void)block;
    reentrant_status = vn_device_run_blocks(reentrant_device, 1, reenter_block, NULL);
}

static void test_reentrant_call_is_an_error(void)
{
    vn_device_options o = {0};
    o.num_threads = 1;
    VT_OK(vn_device_create(&o, &reentrant_device));
    VT_OK(vn_device_run_blocks(reentrant_device, 1, reenter_block, NULL));
    VT_CHECK(reentrant_status == VN_ERR_STATE, "nested call gave %s",
             vn_status_name(reentrant_status));
    vn_device_destroy(reentrant_device);
}

static void test_default_and_checked(void)
{
    vn_device *a = NULL, *b = NULL;
    VT_OK(vn_device_default(&a));
    VT_OK(vn_device_default(&b));
    VT_CHECK(a && a == b, "one default device");
    setenv("VINCI_CHECKED", "1", 1);
    vn_device_options o = {0};
    o.num_threads = 1;
    vn_device *d = NULL;
    VT_OK(vn_device_create(&o, &d));
    VT_CHECK(vn_device_checked(d), "VINCI_CHECKED=1 ignored");
    vn_device_destroy(d);
    unsetenv("VINCI_CHECKED");
    o.checked = true;
    VT_OK(vn_device_create(&o, &d));
    VT_CHECK(vn_device_checked(d), "checked option ignored");
    vn_device_destroy(d);
    o.num_threads = -1;
    VT_CHECK(vn_device_create(&o, &d) == VN_ERR_INVALID_ARG, "negative threads");
}

int main(void)
{
    /* the tests set what they need; the caller's environment must not leak in */
    static const char *const env[] = {"VINCI_CHECKED", "VINCI_NUM_THREADS", "VINCI_UB_SIZE",
                                      "VINCI_L1_SIZE", "VINCI_L0A_SIZE",    "VINCI_L0B_SIZE",
                                      "VINCI_L0C_SIZE"};
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++) unsetenv(env[i]);
    VT_RUN(test_workers_from_options);
    VT_RUN(test_workers_from_env);
    VT_RUN(test_arenas);
    VT_RUN(test_run_blocks);
    VT_RUN(test_concurrent_callers);
    VT_RUN(test_reentrant_call_is_an_error);
    VT_RUN(test_default_and_checked);
    return vt_summary();
}
