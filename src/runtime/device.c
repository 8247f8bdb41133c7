/*
 * device.c — the device's life cycle and configuration: worker count, arena
 * sizes, checked flag, per-worker arenas and storage slots, the default device.
 *
 * Configuration precedence for each setting: the options, then the environment
 * (VINCI_NUM_THREADS, VINCI_UB_SIZE / _L1_ / _L0A_ / _L0B_ / _L0C_SIZE,
 * VINCI_CHECKED), then the default. A malformed environment value is an error,
 * not silently ignored, so a typo does not quietly change an experiment.
 *
 * Besides its pool workers a device has VN_GUEST_SLOTS guest slots (worker
 * indices num_workers and up, arenas allocated with the workers' and used
 * only when touched): a host thread holds one while it runs blocks of its own
 * synchronous job (pool.c).
 *
 * Destroying a device drains and destroys its streams, then stops the callback
 * thread, then the workers (device_struct.h has the locking rules).
 */
#include <errno.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/allocator.h"
#include "runtime/device_struct.h"

#define ARENA_ALIGN 64
#define MAX_WORKERS 4096
/* vn_local carries extents as int32: an arena must stay well below 2 GiB. */
#define MAX_ARENA_BYTES ((int64_t)1 << 30)

static const char *const arena_env[VN_ARENA_COUNT] = {
    [VN_ARENA_UB] = "VINCI_UB_SIZE",   [VN_ARENA_L1] = "VINCI_L1_SIZE",
    [VN_ARENA_L0A] = "VINCI_L0A_SIZE", [VN_ARENA_L0B] = "VINCI_L0B_SIZE",
    [VN_ARENA_L0C] = "VINCI_L0C_SIZE",
};

/* Parses a positive integer environment value; 0 when unset or empty. */
static vn_status env_int(const char *name, int64_t max, int64_t *out)
{
    *out = 0;
    const char *s = getenv(name);
    if (!s || !*s) return VN_OK;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end != '\0' || v <= 0 || v > max)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_create",
                        "%s=\"%s\" is not an integer in 1..%lld", name, s, (long long)max);
    *out = v;
    return VN_OK;
}

static vn_status pick_workers(const vn_device_options *o, int32_t *out)
{
    if (o && o->num_threads < 0)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_create", "num_threads %d < 0",
                        (int)o->num_threads);
    if (o && o->num_threads > MAX_WORKERS)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_create", "num_threads %d > %d",
                        (int)o->num_threads, MAX_WORKERS);
    if (o && o->num_threads > 0) {
        *out = o->num_threads;
        return VN_OK;
    }
    int64_t env = 0;
    vn_status st = env_int("VINCI_NUM_THREADS", MAX_WORKERS, &env);
    if (st != VN_OK) return st;
    *out = env > 0 ? (int32_t)env : vn_usable_cpus();
    return VN_OK;
}

/* Arena sizes must be whole 32-byte blocks: every local tensor starts on one. */
static vn_status pick_arena(const vn_device_options *o, vn_arena a, int64_t *out)
{
    int64_t v = o ? o->arena_bytes[a] : 0;
    const char *from = "options";
    if (v == 0) {
        vn_status st = env_int(arena_env[a], MAX_ARENA_BYTES, &v);
        if (st != VN_OK) return st;
        from = arena_env[a];
    }
    if (v == 0) {
        *out = vn_arena_default_size(a);
        return VN_OK;
    }
    if (v < 0 || v > MAX_ARENA_BYTES || v % 32 != 0)
        return vn_error(VN_ERR_INVALID_ARG, "vn_device_create",
                        "%s arena size %lld (from %s) must be a positive multiple of 32 up to %lld",
                        vn_arena_name(a), (long long)v, from, (long long)MAX_ARENA_BYTES);
    *out = v;
    return VN_OK;
}

static bool env_checked(void)
{
    const char *s = getenv("VINCI_CHECKED");
    return s && s[0] != '\0' && strcmp(s, "0") != 0;
}

/* VINCI_CALLER_RUNS=0 turns caller-runs off (pool.c): synchronous launches
 * then sleep while the pool runs every block, as before. For A/B runs, and
 * for machines so oversubscribed that a thread that never sleeps is starved
 * next to ones that sleep and wake often. */
static bool env_caller_runs(void)
{
    const char *s = getenv("VINCI_CALLER_RUNS");
    return !s || strcmp(s, "0") != 0;
}

static vn_status configure(vn_device *d, const vn_device_options *o)
{
    vn_status st = pick_workers(o, &d->num_workers);
    int32_t cpus = vn_usable_cpus();
    d->busy_max = cpus < d->num_workers ? cpus : d->num_workers;
    for (int a = 0; a < VN_ARENA_COUNT && st == VN_OK; a++)
        st = pick_arena(o, (vn_arena)a, &d->arena_size[a]);
    d->checked = (o && o->checked) || env_checked();
    d->keep_denormals = o && o->keep_denormals;
    d->caller_runs = env_caller_runs();
    atomic_init(&d->profiling, o && o->profiling);
    d->cb_batching = true;
    return st;
}

static vn_status alloc_arenas(vn_device *d, vn_worker *w)
{
    for (int a = 0; a < VN_ARENA_COUNT; a++) {
        w->arena[a] = vn_aligned_alloc((size_t)d->arena_size[a], ARENA_ALIGN);
        if (!w->arena[a])
            return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_device_create",
                            "cannot allocate the %lld-byte %s arena of worker %d",
                            (long long)d->arena_size[a], vn_arena_name((vn_arena)a), (int)w->index);
    }
    return VN_OK;
}

static int32_t num_ids(const vn_device *d)
{
    return d->num_workers + VN_GUEST_SLOTS;
}

/* Guest slots: a worker record and arenas, no thread. */
static vn_status init_guests(vn_device *d)
{
    for (int32_t i = d->num_workers; i < num_ids(d); i++) {
        vn_worker *w = &d->workers[i];
        w->device = d;
        w->index = i;
        vn_status st = alloc_arenas(d, w);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

static vn_status start_workers(vn_device *d)
{
    for (int32_t i = 0; i < d->num_workers; i++) {
        vn_worker *w = &d->workers[i];
        w->device = d;
        w->index = i;
        vn_status st = alloc_arenas(d, w);
        if (st != VN_OK) return st;
        int rc = pthread_create(&w->thread, NULL, vn_worker_main, w);
        if (rc != 0)
            return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_device_create",
                            "cannot start worker thread %d of %d: %s", (int)i, (int)d->num_workers,
                            strerror(rc));
        w->started = true;
    }
    return VN_OK;
}

/* Workers drain the ready list before they exit (see scheduler.c). */
static void stop_workers(vn_device *d)
{
    pthread_mutex_lock(&d->lock);
    d->stop = true;
    pthread_cond_broadcast(&d->work_cv);
    pthread_mutex_unlock(&d->lock);
    for (int32_t i = 0; i < d->num_workers; i++)
        if (d->workers[i].started) pthread_join(d->workers[i].thread, NULL);
}

static void free_workers(vn_device *d)
{
    for (int32_t i = 0; d->workers && i < num_ids(d); i++) {
        vn_worker *w = &d->workers[i];
        for (int a = 0; a < VN_ARENA_COUNT; a++) vn_aligned_free(w->arena[a]);
        for (int s = 0; s < VN_WORKER_SLOT_COUNT; s++) vn_aligned_free(w->slot[s]);
    }
    free(d->workers);
}

vn_status vn_device_create(const vn_device_options *options, vn_device **out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_device_create", "out is NULL");
    *out = NULL;
    vn_device *d = calloc(1, sizeof *d);
    if (!d) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_device_create", "cannot allocate a device");
    vn_status st = configure(d, options);
    if (st != VN_OK) {
        free(d);
        return st;
    }
    d->workers = calloc((size_t)num_ids(d), sizeof *d->workers);
    if (!d->workers) {
        int32_t n = d->num_workers;
        free(d);
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_device_create",
                        "cannot allocate %d worker records", (int)n);
    }
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->work_cv, NULL);
    pthread_cond_init(&d->cb_cv, NULL);
    atomic_init(&d->ready_count, 0);
    atomic_init(&d->spinners, 0);
    atomic_init(&d->progress, 0);
    atomic_init(&d->guests_busy, 0);
    atomic_init(&d->callers_running, 0);
    atomic_init(&d->helpers_on, 0);
    d->initialised = true;
    st = vn_streams_init(d);
    if (st == VN_OK) st = init_guests(d);
    if (st == VN_OK) st = start_workers(d);
    if (st != VN_OK) {
        vn_device_destroy(d);
        return st;
    }
    *out = d;
    return VN_OK;
}

void vn_device_destroy(vn_device *device)
{
    if (!device) return;
    if (device->initialised) {
        /* Order: streams drain (their work needs workers and the callback
         * thread), then the callback thread stops, then the workers. */
        vn_streams_shutdown(device);
        vn_mem_on_device_destroy(device); /* device memory dies with its device */
        vn_callback_shutdown(device);
        stop_workers(device);
        vn_profile_shutdown(device);
        pthread_cond_destroy(&device->cb_cv);
        pthread_cond_destroy(&device->work_cv);
        pthread_mutex_destroy(&device->lock);
    }
    free_workers(device);
    free(device);
}

/* ---- the default device --------------------------------------------------- */

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static vn_device *default_device;
static vn_status default_status;
static char default_message[512];

static void create_default(void)
{
    default_status = vn_device_create(NULL, &default_device);
    if (default_status != VN_OK)
        snprintf(default_message, sizeof default_message, "%s", vn_last_error());
}

vn_status vn_device_default(vn_device **out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_device_default", "out is NULL");
    pthread_once(&default_once, create_default);
    *out = default_device;
    if (default_status != VN_OK)
        return vn_error(default_status, "vn_device_default", "%s", default_message);
    return VN_OK;
}

/* ---- queries ---------------------------------------------------------------- */

int32_t vn_device_num_workers(const vn_device *device)
{
    return device ? device->num_workers : 0;
}

int32_t vn_device_num_worker_ids(const vn_device *device)
{
    return device ? num_ids(device) : 0;
}

int64_t vn_device_arena_size(const vn_device *device, vn_arena arena)
{
    if (!device || (unsigned)arena >= VN_ARENA_COUNT) return 0;
    return device->arena_size[arena];
}

bool vn_device_checked(const vn_device *device)
{
    return device && device->checked;
}

void *vn_device_arena(vn_device *device, int32_t worker, vn_arena arena)
{
    if (!device || worker < 0 || worker >= num_ids(device) || (unsigned)arena >= VN_ARENA_COUNT)
        return NULL;
    return device->workers[worker].arena[arena];
}

void *vn_device_worker_slot(vn_device *device, int32_t worker, int key, size_t bytes)
{
    if (!device || worker < 0 || worker >= num_ids(device) || key < 0 ||
        key >= VN_WORKER_SLOT_COUNT) {
        vn_error(VN_ERR_INTERNAL, "vn_device_worker_slot", "bad worker %d or key %d", (int)worker,
                 key);
        return NULL;
    }
    vn_worker *w = &device->workers[worker];
    if (w->slot[key] && w->slot_bytes[key] >= bytes) return w->slot[key];
    vn_aligned_free(w->slot[key]);
    w->slot_bytes[key] = 0;
    w->slot[key] = vn_aligned_alloc(bytes, ARENA_ALIGN);
    if (!w->slot[key]) return NULL;
    memset(w->slot[key], 0, bytes);
    w->slot_bytes[key] = bytes;
    return w->slot[key];
}
