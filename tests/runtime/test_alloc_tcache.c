/*
 * test_alloc_tcache.c — the caching allocator's per-thread caches (its
 * lock-free fast path): a hit and a miss, a block allocated on one thread and
 * freed on another, exact statistics (peak included) after multi-thread
 * sequences with cross-thread frees, the memory limit and release_cache
 * reaching memory that sits in another live thread's cache, and a thread's
 * cache returned when it exits.
 *
 * Worker threads never call VT_CHECK (the harness is single-threaded): they
 * record what they saw, and the main thread checks it.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "alloc_fixture.h"

/* A thread running one function; join returns what it recorded. */
typedef struct job {
    vn_device *dev;
    vn_stream *stream;
    void *p;
    size_t n;
    vn_status st;
    atomic_int phase; /* handshakes with the main thread */
} job;

static void wait_phase(job *j, int phase)
{
    while (atomic_load(&j->phase) < phase) sched_yield();
}

static void *alloc_then_exit(void *arg)
{
    job *j = arg;
    j->st = vn_mem_alloc(j->dev, j->stream, j->n, &j->p);
    return NULL;
}

static void *free_then_exit(void *arg)
{
    job *j = arg;
    j->st = vn_mem_free(j->p);
    return NULL;
}

static void run_thread(void *(*fn)(void *), job *j)
{
    pthread_t t;
    pthread_create(&t, NULL, fn, j);
    pthread_join(t, NULL);
}

/* ---- hit and miss ------------------------------------------------------------- */

static void test_hit_and_miss(void)
{
    vn_device *d = device_new();
    void *p = NULL, *q = NULL, *r = NULL;
    VT_OK(vn_mem_alloc(d, NULL, 3000, &p)); /* miss: new memory */
    VT_OK(vn_mem_free(p));                  /* into this thread's cache */
    for (int i = 0; i < 100; i++) {         /* hits, none of them locked */
        VT_OK(vn_mem_alloc(d, NULL, 2600 + i, &q));
        VT_CHECK(q == p, "round %d: cached block not reused: %p vs %p", i, q, p);
        VT_OK(vn_mem_free(q));
    }
    VT_OK(vn_mem_alloc(d, NULL, 5000, &r)); /* another size class: a miss */
    VT_CHECK(r != p, "a 5000-byte request got the 3072-byte block");
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.num_allocs == 102 && s.cache_hits == 100 && s.cache_misses == 2,
             "allocs %llu hits %llu misses %llu", (unsigned long long)s.num_allocs,
             (unsigned long long)s.cache_hits, (unsigned long long)s.cache_misses);
    VT_CHECK(s.allocated == 5120 && s.requested == 5000 && s.cached == 3072, "bytes");
    VT_CHECK(s.reserved == 5120 + 3072 && s.num_frees == 101, "reserved, frees");
    VT_CHECK(s.peak_allocated == 5120, "peak %llu", (unsigned long long)s.peak_allocated);
    VT_OK(vn_mem_free(r));
    VT_OK(vn_mem_release_cache(d));
    s = stats_of(d);
    VT_CHECK(s.reserved == 0 && s.cached == 0 && s.allocated == 0, "released");
    device_free(d);
}

/* ---- across threads ----------------------------------------------------------- */

static void test_alloc_on_a_free_on_b(void)
{
    vn_device *d = device_new();
    job j = {.dev = d, .n = 4 * KiB};
    run_thread(alloc_then_exit, &j);
    VT_OK(j.st);
    memset(j.p, 0x3c, j.n);
    void *p = j.p;
    run_thread(free_then_exit, &j); /* freed by a third thread */
    VT_OK(j.st);
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.allocated == 0 && s.cached == 4 * KiB && s.num_frees == 1, "after free");
    /* the allocating thread is gone and the block is in the shared cache */
    void *q = NULL;
    VT_OK(vn_mem_alloc(d, NULL, 4 * KiB, &q));
    VT_CHECK(q == p, "freed block not reused: %p vs %p", q, p);

    /* main allocates, a thread frees: main's stale table entry must not let
     * it free the block a second time */
    j.p = q;
    run_thread(free_then_exit, &j);
    VT_OK(j.st);
    VT_CHECK(vn_mem_free(q) == VN_ERR_INVALID_ARG, "double free through a stale entry");
    VT_CONTAINS(vn_last_error(), "already freed");
    s = stats_of(d);
    VT_CHECK(s.allocated == 0 && s.num_allocs == 2 && s.num_frees == 2, "exact after both");
    device_free(d);
}

/* Threads allocate, and free a random mix of their own blocks and blocks
 * other threads handed over through a shared exchange. */
#define XTHREADS 4
#define XOPS     3000
#define XSLOTS   64

static struct {
    pthread_mutex_t lock;
    void *slot[XSLOTS];
    size_t size[XSLOTS];
} exchange = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}};

typedef struct xworker {
    vn_device *dev;
    vn_stream *stream;
    int id, errors;
} xworker;

static void *xworker_main(void *arg)
{
    xworker *w = arg;
    vt_rng r = {0x2545F4914F6CDD1Dull * (uint64_t)(w->id + 1)};
    for (int op = 0; op < XOPS; op++) {
        size_t k = vt_next(&r) % XSLOTS;
        void *mine = NULL;
        size_t n = vt_next(&r) % 3 ? 1 + vt_next(&r) % (8 * KiB) : 1 + vt_next(&r) % (2 * MiB);
        if (vn_mem_alloc(w->dev, w->stream, n, &mine) != VN_OK) w->errors++;
        ((unsigned char *)mine)[n - 1] = (unsigned char)op;
        pthread_mutex_lock(&exchange.lock);
        void *old = exchange.slot[k];
        exchange.slot[k] = mine;
        exchange.size[k] = n;
        pthread_mutex_unlock(&exchange.lock);
        if (old && vn_mem_free(old) != VN_OK) w->errors++; /* often another thread's */
    }
    return NULL;
}

static void test_threads_cross_free_stats(void)
{
    vn_device *d = device_new();
    xworker w[XTHREADS];
    pthread_t t[XTHREADS];
    vn_stream *extra = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &extra));
    for (int i = 0; i < XTHREADS; i++) {
        w[i] = (xworker){d, i % 2 ? extra : NULL, i, 0};
        pthread_create(&t[i], NULL, xworker_main, &w[i]);
    }
    vn_mem_stats mid = stats_of(d); /* while they run: stops their caches */
    VT_CHECK(mid.reserved == mid.allocated + mid.cached + mid.pending,
             "snapshot: reserved %llu != %llu + %llu + %llu", (unsigned long long)mid.reserved,
             (unsigned long long)mid.allocated, (unsigned long long)mid.cached,
             (unsigned long long)mid.pending);
    for (int i = 0; i < XTHREADS; i++) {
        pthread_join(t[i], NULL);
        VT_CHECK(w[i].errors == 0, "thread %d: %d errors", i, w[i].errors);
    }
    uint64_t live = 0, rounded = 0, requested = 0;
    for (int k = 0; k < XSLOTS; k++)
        if (exchange.slot[k]) {
            live++;
            rounded += vn_mem_round_size(exchange.size[k]);
            requested += exchange.size[k];
        }
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.allocated == rounded && s.requested == requested,
             "allocated %llu vs %llu, requested %llu vs %llu", (unsigned long long)s.allocated,
             (unsigned long long)rounded, (unsigned long long)s.requested,
             (unsigned long long)requested);
    VT_CHECK(s.num_allocs == XTHREADS * XOPS && s.num_allocs - s.num_frees == live, "counts");
    VT_CHECK(s.cache_hits + s.cache_misses == s.num_allocs, "hits + misses");
    VT_CHECK(s.reserved == s.allocated + s.cached + s.pending, "reserved = live + cached");
    VT_CHECK(s.peak_allocated >= s.allocated && s.peak_allocated <= s.peak_reserved, "peak");
    for (int k = 0; k < XSLOTS; k++) {
        VT_OK(vn_mem_free(exchange.slot[k]));
        exchange.slot[k] = NULL;
    }
    VT_OK(vn_mem_release_cache(d));
    s = stats_of(d);
    VT_CHECK(s.allocated == 0 && s.reserved == 0 && s.num_allocs == s.num_frees, "all back");
    VT_OK(vn_stream_synchronize(extra, -1));
    vn_mem_on_stream_destroy(extra);
    VT_OK(vn_stream_destroy(extra));
    device_free(d);
}

/* Peak allocated stays exact although a fast hit never looks at the other
 * threads: main caches 4 KiB, another thread allocates 8 KiB and keeps it,
 * then main takes its cached block back: 12 KiB were live at once. */
static void test_peak_across_threads(void)
{
    vn_device *d = device_new();
    void *p = NULL;
    VT_OK(vn_mem_alloc(d, NULL, 4 * KiB, &p));
    VT_OK(vn_mem_free(p));
    job j = {.dev = d, .n = 8 * KiB};
    run_thread(alloc_then_exit, &j);
    VT_OK(j.st);
    VT_CHECK(stats_of(d).peak_allocated == 8 * KiB, "peak %llu after the 8 KiB",
             (unsigned long long)stats_of(d).peak_allocated);
    VT_OK(vn_mem_alloc(d, NULL, 4 * KiB, &p));
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.allocated == 12 * KiB && s.peak_allocated == 12 * KiB, "peak %llu, allocated %llu",
             (unsigned long long)s.peak_allocated, (unsigned long long)s.allocated);
    VT_OK(vn_mem_free(p));
    VT_OK(vn_mem_free(j.p));
    VT_OK(vn_mem_alloc(d, NULL, 4 * KiB, &p)); /* a hit below the peak leaves it */
    VT_OK(vn_mem_free(p));
    VT_CHECK(stats_of(d).peak_allocated == 12 * KiB, "peak kept");
    VT_OK(vn_mem_reset_peak(d));
    VT_CHECK(stats_of(d).peak_allocated == 0, "reset");
    device_free(d);
}

/* ---- memory held in another live thread's cache -------------------------------- */

/* Allocates and frees j->n bytes (leaving the block in this thread's cache),
 * then stays alive until the main thread says phase 2. */
static void *cache_and_wait(void *arg)
{
    job *j = arg;
    j->st = vn_mem_alloc(j->dev, j->stream, j->n, &j->p);
    if (j->st == VN_OK) j->st = vn_mem_free(j->p);
    atomic_store(&j->phase, 1);
    wait_phase(j, 2);
    return NULL;
}

static void test_limit_flushes_thread_caches(void)
{
    vn_device *d = device_new();
    VT_OK(vn_mem_set_limit(d, 4 * MiB));
    job j = {.dev = d, .n = 3 * MiB};
    pthread_t t;
    pthread_create(&t, NULL, cache_and_wait, &j);
    wait_phase(&j, 1);
    VT_OK(j.st);
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.cached == 4 * MiB && s.reserved == 4 * MiB, "the 4 MiB block is cached");
    void *p = NULL;
    VT_OK(vn_mem_alloc(d, NULL, 1000, &p)); /* only fits once that cache is flushed */
    s = stats_of(d);
    VT_CHECK(s.reserved == 1024 && s.num_ooms == 0, "reserved %llu",
             (unsigned long long)s.reserved);
    void *q = NULL;
    VT_CHECK(vn_mem_alloc(d, NULL, 4 * MiB, &q) == VN_ERR_OUT_OF_MEMORY, "limit still holds");
    VT_OK(vn_mem_free(p));
    atomic_store(&j.phase, 2);
    pthread_join(t, NULL);
    device_free(d);
}

static void test_release_reaches_thread_caches(void)
{
    vn_device *d = device_new();
    job j = {.dev = d, .n = 64 * KiB};
    pthread_t t;
    pthread_create(&t, NULL, cache_and_wait, &j);
    wait_phase(&j, 1);
    VT_OK(j.st);
    VT_CHECK(stats_of(d).reserved == 64 * KiB, "cached in the thread");
    VT_OK(vn_mem_release_cache(d));
    VT_CHECK(stats_of(d).reserved == 0, "released from a live thread's cache");
    atomic_store(&j.phase, 2);
    pthread_join(t, NULL);
    device_free(d);
}

static void test_thread_exit_returns_cache(void)
{
    vn_device *d = device_new();
    job j = {.dev = d, .n = 40 * KiB};
    pthread_t t;
    pthread_create(&t, NULL, cache_and_wait, &j);
    wait_phase(&j, 1);
    VT_OK(j.st);
    atomic_store(&j.phase, 2);
    pthread_join(t, NULL);
    void *p = NULL;
    VT_OK(vn_mem_alloc(d, NULL, 40 * KiB, &p));
    VT_CHECK(p == j.p, "the exited thread's cached block is reused: %p vs %p", p, j.p);
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.cache_hits == 1 && s.cache_misses == 1 && s.reserved == 40 * KiB, "one block");
    VT_OK(vn_mem_free(p));
    device_free(d);
}

/* A stream destroyed while its blocks sit in a thread cache: they become
 * shared, so another stream reuses them. */
static void test_stream_destroy_flushes_thread_caches(void)
{
    vn_device *d = device_new();
    vn_stream *a = NULL, *b = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &a));
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &b));
    void *p = NULL, *q = NULL;
    VT_OK(vn_mem_alloc(d, a, 10 * KiB, &p));
    VT_OK(vn_mem_free(p));
    VT_OK(vn_stream_destroy(a));
    VT_OK(vn_mem_alloc(d, b, 10 * KiB, &q));
    VT_CHECK(q == p, "block cached for a destroyed stream not shared: %p vs %p", q, p);
    VT_OK(vn_mem_free(q));
    VT_OK(vn_stream_destroy(b));
    device_free(d);
}

int main(void)
{
    VT_RUN(test_hit_and_miss);
    VT_RUN(test_alloc_on_a_free_on_b);
    VT_RUN(test_threads_cross_free_stats);
    VT_RUN(test_peak_across_threads);
    VT_RUN(test_limit_flushes_thread_caches);
    VT_RUN(test_release_reaches_thread_caches);
    VT_RUN(test_thread_exit_returns_cache);
    VT_RUN(test_stream_destroy_flushes_thread_caches);
    return vt_summary();
}
