/*
 * bench_runtime.c — the asynchronous runtime's overheads: empty-kernel launch
 * + synchronize latency, task throughput on one and on four streams, host
 * callback latency and throughput with batching on and off, and the caching
 * allocator's alloc + free pair against malloc/free (interleaved repetitions,
 * the ratio is the median of the per-repetition ratios).
 *
 * Usage: bench_runtime [tasks]   (default 20000 per throughput run)
 * Figures are medians of several repetitions (bench_util.h).
 */
#include <sys/resource.h>

#include "bench_pairs.h"
#include "vinci/kernel.h"

#define REPS 5

static void empty_kernel(vn_core *core, const void *args)
{
    (void)core, (void)args;
}

static vn_launch_desc empty_desc(void)
{
    vn_launch_desc d = {empty_kernel, "empty", 1, NULL, -1, 0};
    return d;
}

/* The 10th and 90th percentiles of the last latency run: the spread says
 * how noisy the machine was. */
static double last_p10, last_p90;

static double median_spread(double *us, int n)
{
    double m = bench_median(us, n); /* sorts */
    last_p10 = us[n / 10];
    last_p90 = us[n - 1 - n / 10];
    return m;
}

/* Median microseconds of one launch + synchronize. */
static double launch_latency_us(vn_stream *s, int n)
{
    vn_launch_desc d = empty_desc();
    double *us = malloc((size_t)n * sizeof *us);
    for (int i = 0; i < n; i++) {
        double t0 = bench_now_ms();
        vn_launch_async(s, &d, 0);
        vn_stream_synchronize(s, -1);
        us[i] = (bench_now_ms() - t0) * 1e3;
    }
    double m = median_spread(us, n);
    free(us);
    return m;
}

/* Median tasks per second: `tasks` empty kernels over `nstreams` streams. */
static double launch_rate(vn_stream **s, int nstreams, int tasks)
{
    vn_launch_desc d = empty_desc();
    double rate[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now_ms();
        for (int i = 0; i < tasks; i++) vn_launch_async(s[i % nstreams], &d, 0);
        for (int k = 0; k < nstreams; k++) vn_stream_synchronize(s[k], -1);
        rate[r] = tasks / ((bench_now_ms() - t0) * 1e-3);
    }
    return bench_median(rate, REPS);
}

static void nop_cb(void *user, vn_status status)
{
    (void)user, (void)status;
}

static double callback_latency_us(vn_stream *s, int n)
{
    double *us = malloc((size_t)n * sizeof *us);
    for (int i = 0; i < n; i++) {
        double t0 = bench_now_ms();
        vn_stream_add_callback(s, nop_cb, NULL, false);
        vn_stream_synchronize(s, -1);
        us[i] = (bench_now_ms() - t0) * 1e3;
    }
    double m = median_spread(us, n);
    free(us);
    return m;
}

/* Median callbacks per second, each after an empty kernel, over 4 streams. */
static double callback_rate(vn_device *dev, vn_stream **s, int n, double *per_wakeup)
{
    vn_launch_desc d = empty_desc();
    double rate[REPS];
    vn_callback_stats a, b;
    vn_device_callback_stats(dev, &a);
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now_ms();
        for (int i = 0; i < n; i++) {
            if (i % 8 == 0) vn_launch_async(s[i % 4], &d, 0);
            vn_stream_add_callback(s[i % 4], nop_cb, NULL, false);
        }
        for (int k = 0; k < 4; k++) vn_stream_synchronize(s[k], -1);
        rate[r] = n / ((bench_now_ms() - t0) * 1e-3);
    }
    vn_device_callback_stats(dev, &b);
    *per_wakeup = (double)(b.delivered - a.delivered) / (double)(b.wakeups - a.wakeups + 1e-9);
    return bench_median(rate, REPS);
}

/* ---- allocator: vn_mem_alloc/vn_mem_free vs malloc/free, same sizes ------ */

#define PAIRS 4000

static void alloc_table(void)
{
    enum { R = 41 };
    static const size_t sizes[] = {64, 4096, 256u << 10, 4u << 20, 64u << 20};
    static const pair_peer peers[2] = {PAIR_VINCI, PAIR_MALLOC};
    static double ns[2][BENCH_PAIR_MAX_REPS];
    printf("alloc + free pair (ns, median of %d interleaved reps of %d pairs):\n", R, PAIRS);
    printf("  %-8s %9s %9s %9s\n", "size", "vn_mem", "malloc", "x malloc");
    for (int k = 0; k < 5; k++) {
        char label[32];
        bench_size_label(label, sizes[k]);
        if (!bench_pair_reps(peers, 2, sizes[k], PAIRS, R, false, ns)) {
            printf("  %-8s allocation failed\n", label);
            continue;
        }
        double x[R];
        for (int r = 0; r < R; r++) x[r] = ns[1][r] / ns[0][r];
        printf("  %-8s %9.1f %9.1f %8.1fx\n", label, bench_median(ns[0], R), bench_median(ns[1], R),
               bench_median(x, R));
    }
}

int main(int argc, char **argv)
{
    int tasks = argc > 1 ? atoi(argv[1]) : 20000;
    if (tasks < 100) tasks = 100;
    vn_device *dev = NULL;
    if (vn_device_create(NULL, &dev) != VN_OK) {
        fprintf(stderr, "bench_runtime: %s\n", vn_last_error());
        return 1;
    }
    vn_stream *s[4];
    for (int i = 0; i < 4; i++) vn_stream_create(dev, VN_PRIORITY_NORMAL, &s[i]);
    printf("bench_runtime: %d workers, %d tasks per throughput run, medians of %d\n",
           (int)vn_device_num_workers(dev), tasks, REPS);
    launch_latency_us(s[0], 200); /* warm-up */
    double lat = launch_latency_us(s[0], 2000);
    printf("empty kernel launch + synchronize latency:   %8.2f us (p10 %.2f, p90 %.2f)\n", lat,
           last_p10, last_p90);
    printf("empty kernel throughput, 1 stream:           %8.0f tasks/s\n",
           launch_rate(s, 1, tasks));
    printf("empty kernel throughput, 4 streams:          %8.0f tasks/s\n",
           launch_rate(s, 4, tasks));
    for (int batching = 1; batching >= 0; batching--) {
        vn_device_set_callback_batching(dev, batching);
        const char *label = batching ? "on " : "off";
        double cb_lat = callback_latency_us(s[0], 2000), per = 0;
        double rate = callback_rate(dev, s, tasks, &per);
        printf("callback latency, batching %s:               %8.2f us (p10 %.2f, p90 %.2f)\n",
               label, cb_lat, last_p10, last_p90);
        printf(
            "callback throughput, batching %s (4 streams): %8.0f callbacks/s (%.1f per wake-up)\n",
            label, rate, per);
    }
    for (int i = 0; i < 4; i++) vn_stream_destroy(s[i]);
    vn_device_destroy(dev);
    alloc_table();
    return 0;
}
