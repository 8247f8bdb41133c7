/*
 * test_hosted.c — vn_device_run_hosted (pool.c), what the graph executor
 * runs a group of nodes with: its blocks are host functions that run at once
 * on different threads and launch kernels themselves (each thread the
 * caller of its own launch, with its own worker index); every kernel block
 * runs exactly once; a kernel block still may not launch (deadlock error);
 * with one worker the host blocks run in order on the caller.
 */
#include <stdatomic.h>
#include <string.h>

#include "runtime/device_internal.h"
#include "vt.h"

#define HOSTS  3
#define BLOCKS 97

typedef struct host_ctx {
    vn_device *device;
    atomic_int started;
    atomic_int running; /* host blocks between their start and end */
    atomic_int met;     /* host blocks that saw another one running */
    atomic_int runs[HOSTS][BLOCKS];
    atomic_int worker_of[HOSTS]; /* the worker index each host block ran as */
    atomic_int kernel_worker_bad;
    vn_status launch_st[HOSTS];
    vn_status nested_st[HOSTS];
    int order[HOSTS]; /* host blocks in the order they started */
    bool wait_for_peer;
} host_ctx;

typedef struct kernel_ctx {
    host_ctx *h;
    int host;
} kernel_ctx;

static void kernel_block(void *arg, int32_t worker, int32_t block)
{
    kernel_ctx *k = arg;
    atomic_fetch_add(&k->h->runs[k->host][block], 1);
    if (worker < 0 || worker >= vn_device_num_workers(k->h->device) + 8)
        atomic_store(&k->h->kernel_worker_bad, 1);
    for (volatile int i = 0; i < 2000; i++) {
    }
}

/* A kernel block that launches: refused, as from any block. */
static void launching_block(void *arg, int32_t worker, int32_t block)
{
    (void)worker, (void)block;
    kernel_ctx *k = arg;
    k->h->nested_st[k->host] = vn_device_run_blocks(k->h->device, 1, kernel_block, arg);
}

static void host_block(void *arg, int32_t worker, int32_t block)
{
    (void)worker;
    host_ctx *h = arg;
    h->order[atomic_fetch_add(&h->started, 1)] = block;
    atomic_fetch_add(&h->running, 1);
    if (h->wait_for_peer) { /* proves two host blocks overlap: wait (bounded) for a second */
        for (long i = 0; i < 500000000L && atomic_load(&h->running) < 2; i++) {
        }
        if (atomic_load(&h->running) >= 2) atomic_fetch_add(&h->met, 1);
    }
    kernel_ctx k = {h, block};
    h->launch_st[block] = vn_device_run_blocks(h->device, BLOCKS, kernel_block, &k);
    vn_device_run_blocks(h->device, 1, launching_block, &k);
    atomic_fetch_sub(&h->running, 1);
}

static void check_runs(host_ctx *h)
{
    for (int b = 0; b < HOSTS; b++) {
        VT_CHECK(h->launch_st[b] == VN_OK, "host %d: launch %s", b,
                 vn_status_name(h->launch_st[b]));
        VT_CHECK(h->nested_st[b] == VN_ERR_STATE, "host %d: a kernel block launched (%s)", b,
                 vn_status_name(h->nested_st[b]));
        for (int k = 0; k < BLOCKS; k++)
            VT_CHECK(atomic_load(&h->runs[b][k]) == 1, "host %d block %d ran %d times", b, k,
                     atomic_load(&h->runs[b][k]));
    }
    VT_CHECK(!atomic_load(&h->kernel_worker_bad), "a kernel block had a bad worker index");
}

static void test_concurrent(void)
{
    vn_device_options o = {.num_threads = 2};
    vn_device *d = NULL;
    VT_OK(vn_device_create(&o, &d));
    if (!d) return;
    for (int rep = 0; rep < 20; rep++) {
        host_ctx *h = calloc(1, sizeof *h);
        h->device = d;
        h->wait_for_peer = rep == 0;
        VT_OK(vn_device_run_hosted(d, HOSTS, host_block, h));
        VT_CHECK(atomic_load(&h->started) == HOSTS, "%d host blocks ran", atomic_load(&h->started));
        check_runs(h);
        if (rep == 0) VT_CHECK(atomic_load(&h->met) >= 1, "no two host blocks ran at once");
        free(h);
    }
    vn_device_destroy(d);
}

/* One worker: in order, on the caller. */
static void test_one_worker(void)
{
    vn_device_options o = {.num_threads = 1};
    vn_device *d = NULL;
    VT_OK(vn_device_create(&o, &d));
    if (!d) return;
    host_ctx *h = calloc(1, sizeof *h);
    h->device = d;
    VT_OK(vn_device_run_hosted(d, HOSTS, host_block, h));
    for (int b = 0; b < HOSTS; b++)
        VT_CHECK(h->order[b] == b, "host block %d ran %d-th", b, h->order[b]);
    check_runs(h);
    free(h);
    VT_CHECK(vn_device_run_hosted(d, -1, host_block, NULL) == VN_ERR_INVALID_ARG, "-1 blocks");
    VT_CHECK(vn_device_run_hosted(d, 0, host_block, NULL) == VN_OK, "0 blocks");
    vn_device_destroy(d);
}

int main(void)
{
    VT_RUN(test_concurrent);
    VT_RUN(test_one_worker);
    return vt_summary();
}
