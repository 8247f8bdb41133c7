/*
 * test_allocator.c — the caching allocator: rounding and alignment, per-stream
 * reuse, exact statistics, random alloc/free from several threads (no two live
 * blocks overlap), the memory limit and its message, releasing the cache,
 * fault injection, and cross-stream reuse that waits for its event.
 *
 * Each test uses its own device so its statistics start at zero; the device's
 * allocator is torn down with the runtime hook before the device is destroyed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "alloc_fixture.h"

/* Until vn_stream_destroy calls the allocator's hook itself, call it here
 * (after the stream is idle); calling it twice is harmless. */
static void stream_free(vn_stream *s)
{
    VT_OK(vn_stream_synchronize(s, -1));
    vn_mem_on_stream_destroy(s);
    VT_OK(vn_stream_destroy(s));
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_round_size(void)
{
    VT_CHECK(vn_mem_round_size(0) == 0, "0");
    VT_CHECK(vn_mem_round_size(1) == 512, "1");
    VT_CHECK(vn_mem_round_size(512) == 512, "512");
    VT_CHECK(vn_mem_round_size(513) == 1024, "513");
    VT_CHECK(vn_mem_round_size(MiB) == MiB, "1 MiB stays small");
    VT_CHECK(vn_mem_round_size(MiB + 1) == 2 * MiB, "1 MiB + 1");
    VT_CHECK(vn_mem_round_size(5 * MiB) == 6 * MiB, "5 MiB");
    VT_CHECK(vn_mem_round_size(SIZE_MAX) == 0, "overflow");
}

static void test_alloc_reuse_and_stats(void)
{
    vn_device *d = device_new();
    void *p = NULL, *q = NULL;
    VT_OK(vn_mem_alloc(d, NULL, 100, &p));
    VT_CHECK(p && ((uintptr_t)p & 63) == 0, "64-byte aligned: %p", p);
    memset(p, 0xab, 100);
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.allocated == 512 && s.requested == 100 && s.reserved == 512, "after alloc");
    VT_CHECK(s.num_allocs == 1 && s.cache_misses == 1 && s.cache_hits == 0, "counts");
    VT_OK(vn_mem_free(p));
    s = stats_of(d);
    VT_CHECK(s.allocated == 0 && s.requested == 0 && s.cached == 512 && s.reserved == 512,
             "after free: allocated %llu cached %llu", (unsigned long long)s.allocated,
             (unsigned long long)s.cached);
    /* the same size class on the same stream reuses the block at once */
    VT_OK(vn_mem_alloc(d, vn_device_default_stream(d), 400, &q));
    VT_CHECK(q == p, "cached block reused: %p vs %p", q, p);
    s = stats_of(d);
    VT_CHECK(s.cache_hits == 1 && s.cache_misses == 1 && s.requested == 400, "hit");
    /* a large block: 2 MiB granularity */
    void *big = NULL;
    VT_OK(vn_mem_alloc(NULL, vn_device_default_stream(d), 3 * MiB, &big));
    VT_CHECK(big && ((uintptr_t)big & 63) == 0, "large aligned");
    memset(big, 1, 3 * MiB);
    s = stats_of(d);
    VT_CHECK(s.allocated == 512 + 4 * MiB && s.peak_allocated == s.allocated, "large stats");
    VT_OK(vn_mem_free(big));
    VT_OK(vn_mem_free(q));
    s = stats_of(d);
    VT_CHECK(s.allocated == 0 && s.peak_allocated == 512 + 4 * MiB, "peak kept");
    VT_CHECK(s.peak_reserved == 512 + 4 * MiB && s.num_frees == 3, "peak reserved, frees");
    VT_OK(vn_mem_reset_peak(d));
    s = stats_of(d);
    VT_CHECK(s.peak_allocated == 0 && s.peak_reserved == s.reserved, "reset peak");
    device_free(d);
}

static void test_bad_calls(void)
{
    vn_device *d = device_new();
    void *p = NULL;
    VT_CHECK(vn_mem_alloc(d, NULL, 0, &p) == VN_ERR_INVALID_ARG, "size 0");
    VT_CHECK(vn_mem_alloc(d, NULL, 8, NULL) == VN_ERR_INVALID_ARG, "out NULL");
    VT_CHECK(vn_mem_alloc(d, NULL, SIZE_MAX, &p) == VN_ERR_OUT_OF_MEMORY, "huge");
    VT_OK(vn_mem_alloc(d, NULL, 4096, &p));
    VT_CHECK(vn_mem_free((char *)p + 64) == VN_ERR_INVALID_ARG, "interior pointer");
    VT_CONTAINS(vn_last_error(), "not allocated by vn_mem_alloc");
    VT_OK(vn_mem_free(p));
    VT_CHECK(vn_mem_free(p) == VN_ERR_INVALID_ARG, "double free");
    VT_CONTAINS(vn_last_error(), "already freed");
    VT_CHECK(vn_mem_record_stream(p, NULL) == VN_ERR_INVALID_ARG, "record on a freed block");
    VT_OK(vn_mem_free(NULL));
    device_free(d);
}

/* ---- random alloc/free from several threads ------------------------------- */

#define THREADS  4
#define OPS      2500
#define MAX_LIVE 48

typedef struct span {
    uintptr_t lo, hi;
} span;

/* Every live block of the test, sorted by address: an insert that overlaps a
 * neighbour means the allocator handed out memory twice. */
static struct {
    pthread_mutex_t lock;
    span v[THREADS * MAX_LIVE];
    int n;
    atomic_int overlaps;
} live_set = {PTHREAD_MUTEX_INITIALIZER, {{0, 0}}, 0, 0};

static int span_lower(uintptr_t lo)
{
    int a = 0, b = live_set.n;
    while (a < b) {
        int m = (a + b) / 2;
        if (live_set.v[m].lo < lo)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

static void span_insert(void *p, size_t n)
{
    span s = {(uintptr_t)p, (uintptr_t)p + n};
    pthread_mutex_lock(&live_set.lock);
    int i = span_lower(s.lo);
    if ((i > 0 && live_set.v[i - 1].hi > s.lo) || (i < live_set.n && live_set.v[i].lo < s.hi))
        atomic_fetch_add(&live_set.overlaps, 1);
    memmove(&live_set.v[i + 1], &live_set.v[i], (size_t)(live_set.n - i) * sizeof(span));
    live_set.v[i] = s;
    live_set.n++;
    pthread_mutex_unlock(&live_set.lock);
}

static void span_remove(void *p)
{
    pthread_mutex_lock(&live_set.lock);
    int i = span_lower((uintptr_t)p);
    if (i < live_set.n && live_set.v[i].lo == (uintptr_t)p) {
        memmove(&live_set.v[i], &live_set.v[i + 1], (size_t)(live_set.n - i - 1) * sizeof(span));
        live_set.n--;
    }
    pthread_mutex_unlock(&live_set.lock);
}

typedef struct live_block {
    unsigned char *p;
    size_t n;
    unsigned char tag;
} live_block;

typedef struct worker_arg {
    vn_device *dev;
    vn_stream *stream;
    int id;
    live_block live[MAX_LIVE];
    int n_live;
    int errors, corrupt;
} worker_arg;

static size_t random_size(vt_rng *r)
{
    uint64_t k = vt_next(r) % 100;
    if (k < 70) return 1 + vt_next(r) % (4 * KiB);
    if (k < 97) return 4 * KiB + vt_next(r) % (256 * KiB);
    return MiB + vt_next(r) % (3 * MiB);
}

/* Checks the block still holds its pattern at a few places (writing all of it
 * is the test of overlap by data; reading samples keeps the test fast). */
static bool pattern_ok(const live_block *b)
{
    size_t step = b->n / 16 + 1;
    for (size_t i = 0; i < b->n; i += step)
        if (b->p[i] != b->tag) return false;
    return b->p[b->n - 1] == b->tag;
}

static void worker_free_one(worker_arg *w, int i)
{
    live_block *b = &w->live[i];
    if (!pattern_ok(b)) w->corrupt++;
    span_remove(b->p);
    if (vn_mem_free(b->p) != VN_OK) w->errors++;
    w->live[i] = w->live[--w->n_live];
}

static void worker_alloc_one(worker_arg *w, vt_rng *r, int op)
{
    live_block b = {NULL, random_size(r), (unsigned char)(w->id * 64 + op)};
    void *p = NULL;
    if (vn_mem_alloc(w->dev, w->stream, b.n, &p) != VN_OK || ((uintptr_t)p & 63)) {
        w->errors++;
        return;
    }
    b.p = p;
    span_insert(p, b.n);
    memset(b.p, b.tag, b.n);
    w->live[w->n_live++] = b;
}

static void *worker_main(void *arg)
{
    worker_arg *w = arg;
    vt_rng r = {0x9e3779b97f4a7c15ull * (uint64_t)(w->id + 1)};
    for (int op = 0; op < OPS; op++) {
        bool do_free = w->n_live == MAX_LIVE || (w->n_live > 0 && vt_next(&r) % 100 < 48);
        if (do_free)
            worker_free_one(w, (int)(vt_next(&r) % (uint64_t)w->n_live));
        else
            worker_alloc_one(w, &r, op);
    }
    return NULL;
}

static void test_threads_random(void)
{
    vn_device *d = device_new();
    static worker_arg w[THREADS];
    pthread_t t[THREADS];
    memset(w, 0, sizeof w);
    for (int i = 0; i < THREADS; i++) {
        w[i].dev = d;
        w[i].id = i;
        /* half the threads share the default stream, half have their own */
        if (i % 2) VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &w[i].stream));
        pthread_create(&t[i], NULL, worker_main, &w[i]);
    }
    uint64_t live_rounded = 0, live_requested = 0, live_count = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        VT_CHECK(w[i].errors == 0 && w[i].corrupt == 0, "thread %d: %d errors, %d corrupt", i,
                 w[i].errors, w[i].corrupt);
        for (int k = 0; k < w[i].n_live; k++) {
            live_rounded += vn_mem_round_size(w[i].live[k].n);
            live_requested += w[i].live[k].n;
        }
        live_count += (uint64_t)w[i].n_live;
    }
    VT_CHECK(atomic_load(&live_set.overlaps) == 0, "%d overlapping blocks",
             atomic_load(&live_set.overlaps));
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.allocated == live_rounded && s.requested == live_requested,
             "allocated %llu vs %llu, requested %llu vs %llu", (unsigned long long)s.allocated,
             (unsigned long long)live_rounded, (unsigned long long)s.requested,
             (unsigned long long)live_requested);
    VT_CHECK(s.num_allocs - s.num_frees == live_count, "live count");
    VT_CHECK(s.cache_hits + s.cache_misses == s.num_allocs, "hits + misses = allocs");
    VT_CHECK(s.cache_hits > s.num_allocs / 2, "mostly hits: %llu of %llu",
             (unsigned long long)s.cache_hits, (unsigned long long)s.num_allocs);
    VT_CHECK(s.reserved == s.allocated + s.cached + s.pending, "reserved = live + cached");
    VT_CHECK(s.peak_allocated >= s.allocated && s.peak_reserved >= s.reserved, "peaks");

    /* release_cache drops reserved to the live amount */
    VT_OK(vn_mem_release_cache(d));
    s = stats_of(d);
    VT_CHECK(s.reserved == live_rounded && s.cached == 0, "after release: reserved %llu, live %llu",
             (unsigned long long)s.reserved, (unsigned long long)live_rounded);
    for (int i = 0; i < THREADS; i++) {
        while (w[i].n_live) worker_free_one(&w[i], 0);
        VT_CHECK(w[i].corrupt == 0 && w[i].errors == 0, "final frees of thread %d", i);
        if (w[i].stream) stream_free(w[i].stream);
    }
    s = stats_of(d);
    VT_CHECK(s.allocated == 0 && s.requested == 0 && s.num_allocs == s.num_frees, "all freed");
    VT_OK(vn_mem_release_cache(d));
    VT_CHECK(stats_of(d).reserved == 0, "nothing reserved");
    device_free(d);
}

/* ---- limit, env, fault injection ------------------------------------------ */

static void test_limit(void)
{
    vn_device *d = device_new();
    VT_OK(vn_mem_set_limit(d, 4 * MiB));
    void *a = NULL, *b = NULL, *c = NULL;
    VT_OK(vn_mem_alloc(d, NULL, 3 * MiB, &a)); /* a 4 MiB block: the whole limit */
    VT_CHECK(vn_mem_alloc(d, NULL, 1000, &b) == VN_ERR_OUT_OF_MEMORY, "limit enforced");
    VT_CHECK(b == NULL, "no pointer on failure");
    const char *msg = vn_last_error();
    VT_CONTAINS(msg, "tried to allocate 1000 B");
    VT_CONTAINS(msg, "limit 4.00 MiB (4194304 B)");
    VT_CONTAINS(msg, "allocated 4.00 MiB (4194304 B)");
    VT_CONTAINS(msg, "reserved 4.00 MiB");
    VT_CONTAINS(msg, "peak allocated 4.00 MiB");
    VT_CONTAINS(msg, "peak reserved 4.00 MiB");
    VT_CONTAINS(msg, "1 allocations, 0 cache hits, 1 misses");
    /* the limit first releases idle cache: a cached 4 MiB block makes room */
    VT_OK(vn_mem_free(a));
    VT_OK(vn_mem_alloc(d, NULL, 1000, &b));
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.reserved == 1024 && s.num_ooms == 1 && s.limit == 4 * MiB, "released: %llu",
             (unsigned long long)s.reserved);
    VT_CHECK(vn_mem_alloc(d, NULL, 4 * MiB, &c) == VN_ERR_OUT_OF_MEMORY, "4 MiB + 1 KiB");
    VT_OK(vn_mem_set_limit(d, 0));
    VT_OK(vn_mem_alloc(d, NULL, 4 * MiB, &c));
    VT_OK(vn_mem_free(b));
    VT_OK(vn_mem_free(c));
    device_free(d);
}

static void test_limit_env(void)
{
    setenv("VINCI_MEM_LIMIT", "3M", 1);
    vn_device *d = device_new();
    VT_CHECK(stats_of(d).limit == 3 * MiB, "3M");
    device_free(d);
    setenv("VINCI_MEM_LIMIT", "2g", 1);
    d = device_new();
    VT_CHECK(stats_of(d).limit == ((uint64_t)2 << 30), "2g");
    device_free(d);
    setenv("VINCI_MEM_LIMIT", "12 MB", 1);
    d = device_new();
    void *p = NULL;
    VT_CHECK(vn_mem_alloc(d, NULL, 64, &p) == VN_ERR_INVALID_ARG, "malformed limit");
    VT_CONTAINS(vn_last_error(), "VINCI_MEM_LIMIT");
    unsetenv("VINCI_MEM_LIMIT");
    VT_OK(vn_mem_alloc(d, NULL, 64, &p));
    VT_OK(vn_mem_free(p));
    device_free(d);
}

static void test_fault_injection(void)
{
    vn_device *d = device_new();
    void *p[6] = {0};
    VT_OK(vn_mem_fault_inject(d, 3));
    for (int i = 0; i < 6; i++) {
        vn_status st = vn_mem_alloc(d, NULL, 256, &p[i]);
        VT_CHECK((i == 2) == (st == VN_ERR_OUT_OF_MEMORY), "allocation %d -> %s", i + 1,
                 vn_status_name(st));
        if (i == 2) VT_CONTAINS(vn_last_error(), "injected fault");
    }
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.num_allocs == 5 && s.num_ooms == 1, "5 allocations, 1 failure");
    VT_OK(vn_mem_fault_inject(d, 1));
    VT_OK(vn_mem_fault_inject(d, 0)); /* disarmed */
    void *q = NULL;
    VT_OK(vn_mem_alloc(d, NULL, 256, &q));
    for (int i = 0; i < 6; i++) VT_OK(vn_mem_free(p[i]));
    VT_OK(vn_mem_free(q));
    device_free(d);
}

/* ---- streams ------------------------------------------------------------------ */

static void test_same_stream_reuse_while_busy(void)
{
    vn_device *d = device_new();
    vn_stream *a = NULL, *b = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &a));
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &b));
    gate g;
    gate_init(&g);
    VT_OK(vn_stream_add_callback(a, gate_wait, &g, true));
    void *p = NULL, *q = NULL, *r = NULL;
    VT_OK(vn_mem_alloc(d, a, 8 * KiB, &p));
    VT_OK(vn_memset_async(a, p, 7, 8 * KiB));
    VT_OK(vn_mem_free(p));
    /* another stream must not get it: a's queued memset still writes it */
    VT_OK(vn_mem_alloc(d, b, 8 * KiB, &q));
    VT_CHECK(q != p, "block of a busy stream handed to another stream");
    /* the same stream gets it back at once: its later work runs after the memset */
    VT_OK(vn_mem_alloc(d, a, 8 * KiB, &r));
    VT_CHECK(r == p, "same-stream reuse: %p vs %p", r, p);
    gate_open(&g);
    VT_OK(vn_stream_synchronize(a, -1));
    VT_OK(vn_mem_free(q));
    VT_OK(vn_mem_free(r));
    stream_free(a);
    stream_free(b);
    gate_destroy(&g);
    device_free(d);
}

static void test_cross_stream_waits_for_event(void)
{
    vn_device *d = device_new();
    vn_stream *a = NULL, *b = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &a));
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &b));
    gate g;
    gate_init(&g);
    void *p = NULL, *q = NULL, *r = NULL;
    VT_OK(vn_mem_alloc(d, a, 64 * KiB, &p));
    /* b is held by a callback, then writes p: a's reuse must wait for that */
    VT_OK(vn_stream_add_callback(b, gate_wait, &g, true));
    VT_OK(vn_memset_async(b, p, 0x5a, 64 * KiB));
    VT_OK(vn_mem_record_stream(p, b));
    VT_OK(vn_mem_record_stream(p, b)); /* twice is once */
    VT_OK(vn_mem_record_stream(p, a)); /* the owner: nothing to wait for */
    VT_OK(vn_mem_free(p));
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.pending == 64 * KiB && s.cached == 0, "pending %llu", (unsigned long long)s.pending);
    VT_OK(vn_mem_alloc(d, a, 64 * KiB, &q));
    VT_CHECK(q != p, "reused on a before b's event completed");
    gate_open(&g);
    VT_OK(vn_stream_synchronize(b, -1));
    /* b has passed the event: the next allocation on a polls it and reuses p */
    VT_OK(vn_mem_alloc(d, a, 64 * KiB, &r));
    VT_CHECK(r == p, "not reused after the event: %p vs %p", r, p);
    VT_CHECK(((unsigned char *)r)[64 * KiB - 1] == 0x5a, "b's memset finished before reuse");
    s = stats_of(d);
    VT_CHECK(s.pending == 0 && s.cache_hits == 1 && s.cache_misses == 2, "stats after reuse");
    VT_OK(vn_mem_free(q));
    VT_OK(vn_mem_free(r));
    stream_free(a);
    stream_free(b);
    gate_destroy(&g);
    device_free(d);
}

/* Alloc never blocks: under the limit it releases only provably idle cache. */
static void test_limit_skips_busy_stream(void)
{
    vn_device *d = device_new();
    vn_stream *a = NULL, *b = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &a));
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &b));
    VT_OK(vn_mem_set_limit(d, 4 * MiB));
    gate g;
    gate_init(&g);
    VT_OK(vn_stream_add_callback(a, gate_wait, &g, true));
    void *p = NULL, *q = NULL;
    VT_OK(vn_mem_alloc(d, a, 3 * MiB, &p));
    VT_OK(vn_mem_free(p)); /* cached on a, which is still busy */
    VT_CHECK(vn_mem_alloc(d, b, 3 * MiB, &q) == VN_ERR_OUT_OF_MEMORY, "busy cache not released");
    VT_CONTAINS(vn_last_error(), "cached 4.00 MiB");
    gate_open(&g);
    VT_OK(vn_stream_synchronize(a, -1));
    VT_OK(vn_mem_alloc(d, b, 3 * MiB, &q)); /* a is idle now: its cache goes */
    VT_CHECK(stats_of(d).reserved == 4 * MiB, "one block reserved");
    VT_OK(vn_mem_free(q));
    stream_free(a);
    stream_free(b);
    gate_destroy(&g);
    device_free(d);
}

typedef struct release_arg {
    vn_device *dev;
    atomic_int done;
} release_arg;

static void *release_main(void *arg)
{
    release_arg *r = arg;
    vn_mem_release_cache(r->dev);
    atomic_store(&r->done, 1);
    return NULL;
}

/* release_cache waits for a busy stream to pass the point of the call. */
static void test_release_waits_for_stream(void)
{
    vn_device *d = device_new();
    vn_stream *a = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &a));
    gate g;
    gate_init(&g);
    VT_OK(vn_stream_add_callback(a, gate_wait, &g, true));
    void *p = NULL;
    VT_OK(vn_mem_alloc(d, a, 2 * MiB, &p));
    VT_OK(vn_mem_free(p));
    release_arg r = {d, 0};
    pthread_t t;
    pthread_create(&t, NULL, release_main, &r);
    sleep_ms(30);
    VT_CHECK(atomic_load(&r.done) == 0, "release returned while the stream was busy");
    VT_CHECK(stats_of(d).reserved == 2 * MiB, "released under a busy stream");
    gate_open(&g);
    pthread_join(t, NULL);
    VT_CHECK(stats_of(d).reserved == 0, "released after the stream passed");
    stream_free(a);
    gate_destroy(&g);
    device_free(d);
}

/* A destroyed stream's cache becomes shared; its blocks free to any stream. */
static void test_stream_destroy_shares_cache(void)
{
    vn_device *d = device_new();
    vn_stream *a = NULL, *b = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &a));
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &b));
    void *p = NULL, *q = NULL, *r = NULL;
    VT_OK(vn_mem_alloc(d, a, 1000, &p));
    VT_OK(vn_mem_alloc(d, a, 2000, &q));
    VT_OK(vn_mem_free(p));
    stream_free(a);
    VT_OK(vn_mem_alloc(d, b, 1000, &r));
    VT_CHECK(r == p, "shared cache reused by b: %p vs %p", r, p);
    VT_OK(vn_mem_free(q)); /* owner gone: into the shared cache */
    VT_OK(vn_mem_alloc(d, NULL, 2000, &p));
    VT_CHECK(p == q, "orphan block reused by the default stream");
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.cache_hits == 2 && s.cache_misses == 2, "hits %llu",
             (unsigned long long)s.cache_hits);
    VT_OK(vn_mem_free(p));
    VT_OK(vn_mem_free(r));
    stream_free(b);
    device_free(d);
}

int main(void)
{
    VT_RUN(test_round_size);
    VT_RUN(test_alloc_reuse_and_stats);
    VT_RUN(test_bad_calls);
    VT_RUN(test_threads_random);
    VT_RUN(test_limit);
    VT_RUN(test_limit_env);
    VT_RUN(test_fault_injection);
    VT_RUN(test_same_stream_reuse_while_busy);
    VT_RUN(test_cross_stream_waits_for_event);
    VT_RUN(test_limit_skips_busy_stream);
    VT_RUN(test_release_waits_for_stream);
    VT_RUN(test_stream_destroy_shares_cache);
    return vt_summary();
}
