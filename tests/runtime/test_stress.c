/*
 * test_stress.c — 16 streams x VINCI_STRESS_TASKS (default 20 000) tasks
 * mixing kernels, memset / memcpy, event records and waits across streams,
 * and host callbacks (blocking, non-blocking, chained).
 *
 * Cross-stream dependencies are checked by data: stream s writes a value that
 * names (s, iteration) into one of R slots, records an event; its peer t waits
 * on it, clears its receive buffer, copies the slot and verifies it with a
 * kernel. s reuses a slot only after waiting on the event t recorded after
 * copying it. A wrong order shows up as a wrong value, whatever the timing.
 * Every callback checks it runs exactly once and in its stream's order.
 * A watchdog (alarm) fails the test instead of letting it hang.
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "rt_util.h"
#include "vt.h"

enum { STREAMS = 16, GROUP = 4, R = 4, N = 64, TASKS_PER_ITER = 9 };

static vn_device *dev;
static vn_stream *streams[STREAMS];
static vn_event *produced[STREAMS], *consumed[STREAMS][R];
static int prod[STREAMS][R][N], recv_buf[STREAMS][N];
static atomic_int data_errors;
static int iterations;
/* touched only by the callback thread, read after synchronize */
static int cb_next[STREAMS], cb_order_errors, chained_ran;
static int chained_expected[STREAMS];

typedef struct write_args {
    int *buf;
    int value;
} write_args;

static void write_kernel(vn_core *core, const void *p)
{
    const write_args *a = p;
    int half = N / 2, b = vn_block_idx(core);
    for (int i = b * half; i < (b + 1) * half; i++) a->buf[i] = a->value + i;
}

typedef struct verify_args {
    const int *buf;
    int value;
    atomic_int *errors;
} verify_args;

static void verify_kernel(vn_core *core, const void *p)
{
    (void)core;
    const verify_args *a = p;
    for (int i = 0; i < N; i++)
        if (a->buf[i] != a->value + i) {
            atomic_fetch_add(a->errors, 1);
            return;
        }
}

static void chained_cb(void *user, vn_status status)
{
    (void)user, (void)status;
    chained_ran++;
}

static void order_cb(void *user, vn_status status)
{
    uintptr_t u = (uintptr_t)user;
    int s = (int)(u >> 24), n = (int)(u & 0xffffff);
    if (status != VN_OK || cb_next[s] != n) cb_order_errors++;
    cb_next[s] = n + 1;
    if (n % 64 == 0) vn_stream_add_callback(streams[s], chained_cb, NULL, false);
}

static vn_status submit_iteration(int s, int t, int j)
{
    int slot = j % R, value = s * 1000000 + j * 100;
    vn_status st = VN_OK;
    if (j >= R) st = vn_stream_wait_event(streams[s], consumed[s][slot]);
    write_args w = {prod[s][slot], value};
    vn_launch_desc wd = {write_kernel, "write", 2, &w, -1, 0};
    if (st == VN_OK) st = vn_launch_async(streams[s], &wd, sizeof w);
    if (st == VN_OK) st = vn_event_record(produced[s], streams[s]);
    if (st == VN_OK) st = vn_stream_wait_event(streams[t], produced[s]);
    if (st == VN_OK) st = vn_memset_async(streams[t], recv_buf[t], 0, sizeof recv_buf[t]);
    if (st == VN_OK)
        st = vn_memcpy_async(streams[t], recv_buf[t], prod[s][slot], sizeof recv_buf[t]);
    verify_args v = {recv_buf[t], value, &data_errors};
    vn_launch_desc vd = {verify_kernel, "verify", 1, &v, -1, 0};
    if (st == VN_OK) st = vn_launch_async(streams[t], &vd, sizeof v);
    if (st == VN_OK) st = vn_event_record(consumed[s][slot], streams[t]);
    void *user = (void *)(((uintptr_t)t << 24) | (uintptr_t)j);
    if (st == VN_OK) st = vn_stream_add_callback(streams[t], order_cb, user, j % 2 == 0);
    return st;
}

static void *submitter(void *arg)
{
    int g = (int)(intptr_t)arg;
    for (int j = 0; j < iterations; j++)
        for (int k = 0; k < GROUP; k++) {
            int s = g * GROUP + k, t = g * GROUP + (k + 1) % GROUP;
            if (submit_iteration(s, t, j) != VN_OK) {
                fprintf(stderr, "submission failed: %s\n", vn_last_error());
                return (void *)1;
            }
        }
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_stress: watchdog expired (hang?)\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(2);
    _exit(2);
}

static void test_stress(void)
{
    const char *env = getenv("VINCI_STRESS_TASKS");
    int tasks = env && atoi(env) > 0 ? atoi(env) : 20000;
    iterations = tasks / TASKS_PER_ITER;
    signal(SIGALRM, on_alarm);
    alarm(300);
    dev = rt_device(0);
    for (int s = 0; s < STREAMS; s++) {
        VT_OK(vn_stream_create(dev, s % 3 - 1, &streams[s]));
        VT_OK(vn_event_create(dev, &produced[s]));
        for (int r = 0; r < R; r++) VT_OK(vn_event_create(dev, &consumed[s][r]));
        chained_expected[s] = (iterations + 63) / 64;
    }
    double t0 = rt_cpu_ms();
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    pthread_t th[STREAMS / GROUP];
    for (int g = 0; g < STREAMS / GROUP; g++)
        pthread_create(&th[g], NULL, submitter, (void *)(intptr_t)g);
    int failed = 0;
    for (int g = 0; g < STREAMS / GROUP; g++) {
        void *r = NULL;
        pthread_join(th[g], &r);
        failed += r != NULL;
    }
    VT_CHECK(failed == 0, "%d submitters failed", failed);
    /* Chained callbacks extend the streams: synchronize twice. */
    for (int pass = 0; pass < 2; pass++)
        for (int s = 0; s < STREAMS; s++) VT_OK(vn_stream_synchronize(streams[s], 120000));
    clock_gettime(CLOCK_MONOTONIC, &w1);
    int chained_want = 0, short_streams = 0;
    for (int s = 0; s < STREAMS; s++) {
        chained_want += chained_expected[s];
        short_streams += cb_next[s] != iterations;
    }
    VT_CHECK(atomic_load(&data_errors) == 0, "%d verifications saw wrong data",
             atomic_load(&data_errors));
    VT_CHECK(cb_order_errors == 0, "%d callbacks out of order", cb_order_errors);
    VT_CHECK(short_streams == 0, "%d streams ran the wrong number of callbacks", short_streams);
    VT_CHECK(chained_ran == chained_want, "chained callbacks ran %d, want %d", chained_ran,
             chained_want);
    double wall = (double)(w1.tv_sec - w0.tv_sec) * 1e3 + (double)(w1.tv_nsec - w0.tv_nsec) * 1e-6;
    printf("       %d streams x %d tasks on %d workers: %.0f ms wall, %.0f ms CPU\n", STREAMS,
           iterations * TASKS_PER_ITER, (int)vn_device_num_workers(dev), wall, rt_cpu_ms() - t0);
    for (int s = 0; s < STREAMS; s++) {
        VT_OK(vn_stream_destroy(streams[s]));
        vn_event_destroy(produced[s]);
        for (int r = 0; r < R; r++) vn_event_destroy(consumed[s][r]);
    }
    vn_device_destroy(dev);
    alarm(0);
}

int main(void)
{
    VT_RUN(test_stress);
    return vt_summary();
}
