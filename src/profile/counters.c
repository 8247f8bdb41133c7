/*
 * counters.c — perf counters per worker thread: the runtime's worker hook
 * (runtime/worker_hook.h) opens a thread's counters at its first counted
 * block and reads them around every block, adding the difference to the
 * thread's totals. Totals are atomics written only by their thread, so a
 * sample reads them without stopping anyone; only the owning thread touches
 * its perf descriptors but vn_counters_enable / disable, which switch every
 * thread's counters on and off (off, a counter costs nothing at context
 * switches). A thread's counters live as long as the thread (a key
 * destructor closes them), and are reopened on the thread's next block after
 * vn_counters_enable when the availability setting changed. A host thread
 * that ran blocks as the caller of its own launch (a guest) leaves its block
 * totals to `retired` when it exits, so a sample taken on another thread
 * still counts them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "profile/counters.h"
#include "profile/hook.h"
#include "profile/perf.h"
#include "runtime/worker_hook.h"

typedef struct ctr_thread {
    struct ctr_thread *next; /* registry (lock) */
    const vn_device *device;
    int32_t worker; /* -1: not a worker */
    uint64_t generation;
    vn_perf perf;
    bool supported[VN_CTR_COUNT];
    int64_t begin[VN_CTR_COUNT], begin_ns; /* the running block (owner only) */
    _Atomic int64_t total[VN_CTR_COUNT];
    _Atomic int64_t blocks, first_ns, last_ns;
    _Atomic uint64_t first_mark;
} ctr_thread;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ctr_thread *threads;
/* Block totals of guest threads that have exited (lock); unsupported counters
 * read 0 there, so the sum needs no flags. */
static int64_t retired[VN_CTR_COUNT];
static _Atomic(const vn_device *) enabled;
static _Atomic uint64_t generation = 1, mark = 1;
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static _Thread_local ctr_thread *self;

static void thread_gone(void *arg)
{
    ctr_thread *t = arg;
    pthread_mutex_lock(&lock);
    for (ctr_thread **at = &threads; *at; at = &(*at)->next)
        if (*at == t) {
            *at = t->next;
            break;
        }
    for (int32_t k = 0; t->worker < 0 && k < VN_CTR_COUNT; k++)
        retired[k] += atomic_load_explicit(&t->total[k], memory_order_relaxed);
    pthread_mutex_unlock(&lock);
    vn_perf_close(&t->perf);
    free(t);
}

static void make_key(void)
{
    pthread_key_create(&key, thread_gone);
}

/* Under the lock: vn_counters_enable / disable switch descriptors of every
 * thread, which must not be closed under them. */
static void reopen(ctr_thread *t)
{
    uint64_t g = atomic_load(&generation);
    if (t->generation == g) return;
    pthread_mutex_lock(&lock);
    vn_perf_close(&t->perf);
    vn_perf_open(&t->perf);
    vn_perf_supported(&t->perf, t->supported);
    pthread_mutex_unlock(&lock);
    t->generation = g;
}

/* Every thread's perf events on or off. Switching another thread's events
 * interrupts the CPU it last ran on (a cross-CPU call: 80-130 us for the
 * three threads of a 2-worker device on this VM, 2 % of a ResNet-18 run), so
 * events already on are left alone: vn_ctr_pause keeps them on between
 * profiled runs. Threads open their events on. */
static bool events_on;           /* lock */
static _Atomic int64_t switches; /* vn_ctr_switches */

static void switch_all(bool on)
{
    pthread_mutex_lock(&lock);
    if (on != events_on || !on) {
        for (const ctr_thread *t = threads; t; t = t->next) vn_perf_enable(&t->perf, on);
        atomic_fetch_add(&switches, 1);
    }
    events_on = on;
    pthread_mutex_unlock(&lock);
}

int64_t vn_ctr_switches(void)
{
    return atomic_load(&switches);
}

/* The calling thread's record, registered on first use; NULL on no memory. */
static ctr_thread *this_thread(const vn_device *device, int32_t worker)
{
    if (self) return (reopen(self), self);
    ctr_thread *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_once(&key_once, make_key);
    t->device = device;
    /* A guest index (a host thread running blocks of its own launch) names a
     * slot, not a thread: the thread's blocks are its own (vn_ctr_snapshot's
     * `self_blocks`), never a worker's. */
    t->worker = device && worker < vn_device_num_workers(device) ? worker : -1;
    for (int32_t k = 0; k < VN_CTR_NUM_HW; k++) t->perf.hw[k] = -1;
    for (int32_t k = 0; k < 3; k++) t->perf.sw[k] = -1;
    reopen(t);
    pthread_setspecific(key, t);
    pthread_mutex_lock(&lock);
    t->next = threads;
    threads = t;
    pthread_mutex_unlock(&lock);
    return self = t;
}

static void *block_begin(const vn_device *device, int32_t worker)
{
    if (device != atomic_load_explicit(&enabled, memory_order_relaxed)) return NULL;
    ctr_thread *t = this_thread(device, worker);
    if (!t) return NULL;
    int64_t now = vn_prof_now_ns();
    uint64_t m = atomic_load_explicit(&mark, memory_order_relaxed);
    if (atomic_load_explicit(&t->first_mark, memory_order_relaxed) != m) {
        atomic_store_explicit(&t->first_ns, now, memory_order_relaxed);
        atomic_store_explicit(&t->first_mark, m, memory_order_relaxed);
    }
    vn_perf_read(&t->perf, t->begin);
    t->begin_ns = now;
    return t;
}

static void block_end(void *state)
{
    ctr_thread *t = state;
    if (!t) return;
    int64_t now[VN_CTR_COUNT];
    vn_perf_read(&t->perf, now);
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) {
        int64_t v = atomic_load_explicit(&t->total[k], memory_order_relaxed);
        atomic_store_explicit(&t->total[k], v + now[k] - t->begin[k], memory_order_relaxed);
    }
    atomic_store_explicit(&t->last_ns, vn_prof_now_ns(), memory_order_relaxed);
    int64_t b = atomic_load_explicit(&t->blocks, memory_order_relaxed);
    atomic_store_explicit(&t->blocks, b + 1, memory_order_release);
}

static const vn_worker_hook hook = {block_begin, block_end};

vn_status vn_counters_enable(vn_device *device)
{
    if (!device) return vn_error(VN_ERR_INVALID_ARG, "vn_counters_enable", "device is NULL");
    static atomic_int was_unavailable = -1;
    int now = vn_perf_unavailable();
    if (atomic_exchange(&was_unavailable, now) != now)
        atomic_fetch_add(&generation, 1); /* threads reopen with the new availability */
    atomic_store(&enabled, device);
    if (!this_thread(NULL, -1))
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_counters_enable", "no memory");
    switch_all(true);
    vn_worker_hook_set(&hook);
    return VN_OK;
}

void vn_counters_disable(void)
{
    vn_ctr_pause();
    switch_all(false);
}

void vn_ctr_pause(void)
{
    vn_worker_hook_set(NULL);
    atomic_store(&enabled, NULL);
}

void vn_ctr_release(void)
{
    if (!atomic_load(&enabled)) switch_all(false);
}

int32_t vn_ctr_num_workers(void)
{
    const vn_device *d = atomic_load(&enabled);
    return d ? vn_device_num_workers(d) : 0;
}

void vn_ctr_mark(void)
{
    atomic_fetch_add_explicit(&mark, 1, memory_order_relaxed);
}

static void read_worker(const ctr_thread *t, uint64_t m, vn_ctr_worker *w)
{
    w->blocks = atomic_load_explicit(&t->blocks, memory_order_acquire);
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) {
        w->ctr.value[k] = atomic_load_explicit(&t->total[k], memory_order_relaxed);
        w->ctr.supported[k] = t->supported[k];
    }
    bool spanned = atomic_load_explicit(&t->first_mark, memory_order_relaxed) == m;
    w->first_ns = spanned ? atomic_load_explicit(&t->first_ns, memory_order_relaxed) : 0;
    w->last_ns = atomic_load_explicit(&t->last_ns, memory_order_relaxed);
}

static void read_self(vn_counter_values *out)
{
    ctr_thread *t = this_thread(NULL, -1);
    memset(out, 0, sizeof *out);
    if (!t) return;
    vn_perf_read(&t->perf, out->value);
    memcpy(out->supported, t->supported, sizeof out->supported);
}

void vn_ctr_snapshot(vn_ctr_worker *workers, int32_t num_workers, vn_counter_values *self_out,
                     vn_ctr_worker *self_blocks)
{
    const vn_device *d = atomic_load(&enabled);
    uint64_t m = atomic_load_explicit(&mark, memory_order_relaxed);
    for (int32_t w = 0; w < num_workers; w++) {
        memset(&workers[w], 0, sizeof workers[w]);
        for (int32_t k = 0; k < VN_CTR_COUNT; k++) workers[w].ctr.supported[k] = true;
    }
    pthread_mutex_lock(&lock);
    for (const ctr_thread *t = threads; t; t = t->next)
        if (t->device == d && d && t->worker >= 0 && t->worker < num_workers)
            read_worker(t, m, &workers[t->worker]);
    pthread_mutex_unlock(&lock);
    if (self_out) read_self(self_out);
    if (self_blocks) {
        memset(self_blocks, 0, sizeof *self_blocks);
        if (self) read_worker(self, m, self_blocks);
    }
}

vn_status vn_counters_sample_worker(int32_t worker, vn_counter_values *out)
{
    int32_t n = vn_ctr_num_workers();
    if (!out || worker < 0 || worker >= n)
        return vn_error(VN_ERR_INVALID_ARG, "vn_counters_sample_worker",
                        "worker %d of %d (counters enabled?), out %p", (int)worker, (int)n,
                        (void *)out);
    vn_ctr_worker *all = calloc((size_t)n, sizeof *all);
    if (!all) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_counters_sample_worker", "no memory");
    vn_ctr_snapshot(all, n, NULL, NULL);
    *out = all[worker].ctr;
    free(all);
    return VN_OK;
}

vn_status vn_counters_sample(vn_counter_values *out)
{
    int32_t n = vn_ctr_num_workers();
    if (!out || !n)
        return vn_error(VN_ERR_INVALID_ARG, "vn_counters_sample",
                        out ? "counters are not enabled" : "out is NULL");
    vn_ctr_worker *all = calloc((size_t)n, sizeof *all);
    if (!all) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_counters_sample", "no memory");
    vn_ctr_snapshot(all, n, out, NULL);
    for (int32_t w = 0; w < n; w++)
        for (int32_t k = 0; k < VN_CTR_COUNT; k++) {
            out->value[k] += all[w].ctr.value[k];
            out->supported[k] &= all[w].blocks == 0 || all[w].ctr.supported[k];
        }
    free(all);
    /* Blocks other host threads ran as callers of their own launches (the
     * calling thread's are in its own counts already). Only blocks of the
     * enabled device are ever counted, so every guest's totals are its. */
    pthread_mutex_lock(&lock);
    for (const ctr_thread *t = threads; t; t = t->next) {
        if (t->worker >= 0 || t == self || !atomic_load(&t->blocks)) continue;
        for (int32_t k = 0; k < VN_CTR_COUNT; k++) {
            out->value[k] += atomic_load_explicit(&t->total[k], memory_order_relaxed);
            out->supported[k] &= t->supported[k];
        }
    }
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) out->value[k] += retired[k];
    pthread_mutex_unlock(&lock);
    return VN_OK;
}

void vn_counters_diff(const vn_counter_values *a, const vn_counter_values *b,
                      vn_counter_values *out)
{
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) {
        out->supported[k] = a->supported[k] && b->supported[k];
        out->value[k] = out->supported[k] ? b->value[k] - a->value[k] : 0;
    }
}
