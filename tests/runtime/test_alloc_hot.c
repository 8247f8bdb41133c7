/*
 * test_alloc_hot.c — the thread caches' hot blocks (the fastest tier of
 * vn_mem_alloc / vn_mem_free, allocator_tcache.c): one block per bin that a
 * thread allocates and frees again and again without counting each call. The
 * tests check what that must not change: exact statistics (counts, bytes,
 * request sizes, the peak) with no query in between, a hot block freed on
 * another thread or by a second free, a hot block given another stream's use,
 * a stream destroyed while its hot block is out, fault injection, and calls
 * whose (device, stream) arguments differ from the last call's.
 *
 * Worker threads never call VT_CHECK (the harness is single-threaded): they
 * record what they saw, and the main thread checks it.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "alloc_fixture.h"

#define CHECK_STATS(s, alloc_, req_, cached_, nallocs_, nfrees_)                                   \
    VT_CHECK((s).allocated == (alloc_) && (s).requested == (req_) && (s).cached == (cached_) &&    \
                 (s).num_allocs == (nallocs_) && (s).num_frees == (nfrees_),                       \
             "allocated %llu requested %llu cached %llu allocs %llu frees %llu",                   \
             (unsigned long long)(s).allocated, (unsigned long long)(s).requested,                 \
             (unsigned long long)(s).cached, (unsigned long long)(s).num_allocs,                   \
             (unsigned long long)(s).num_frees)

static void stream_free(vn_stream *s)
{
    VT_OK(vn_stream_synchronize(s, -1));
    vn_mem_on_stream_destroy(s);
    VT_OK(vn_stream_destroy(s));
}

/* alloc + free + alloc: the block is now the hot block, handed out. */
static void *warm(vn_device *d, vn_stream *s, size_t n)
{
    void *p = NULL, *q = NULL;
    VT_OK(vn_mem_alloc(d, s, n, &p));
    VT_OK(vn_mem_free(p));
    VT_OK(vn_mem_alloc(d, s, n, &q));
    VT_CHECK(q == p, "not reused: %p vs %p", q, p);
    return q;
}

/* ---- counting without counting ---------------------------------------------------- */

static void test_counts_and_bytes(void)
{
    vn_device *d = device_new();
    void *p = warm(d, NULL, 100), *q = NULL;
    VT_OK(vn_mem_free(p));
    for (int i = 0; i < 1000; i++) {
        VT_OK(vn_mem_alloc(d, NULL, 100, &q));
        VT_CHECK(q == p, "round %d: %p vs %p", i, q, p);
        VT_OK(vn_mem_free(q));
    }
    VT_OK(vn_mem_alloc(d, NULL, 100, &q)); /* out while the statistics are taken */
    vn_mem_stats s = stats_of(d);
    CHECK_STATS(s, 512, 100, 0, 1003, 1002);
    VT_CHECK(s.cache_hits == 1002 && s.cache_misses == 1 && s.reserved == 512, "hits, reserved");
    VT_OK(vn_mem_free(q));
    s = stats_of(d);
    CHECK_STATS(s, 0, 0, 512, 1003, 1003);
    device_free(d);
}

/* Requests of one size class but different sizes share the hot block; the
 * requested bytes follow the last request. */
static void test_request_changes(void)
{
    vn_device *d = device_new();
    void *p = warm(d, NULL, 100), *q = NULL;
    VT_OK(vn_mem_free(p));
    for (int i = 0; i < 200; i++) {
        size_t n = i % 3 == 0 ? 300 : i % 3 == 1 ? 100 : 512;
        VT_OK(vn_mem_alloc(d, NULL, n, &q));
        VT_CHECK(q == p, "round %d: %p vs %p", i, q, p);
        VT_OK(vn_mem_free(q));
    }
    VT_OK(vn_mem_alloc(d, NULL, 300, &q));
    vn_mem_stats s = stats_of(d);
    CHECK_STATS(s, 512, 300, 0, 203, 202);
    VT_OK(vn_mem_free(q));
    VT_OK(vn_mem_alloc(d, NULL, 7, &q));
    VT_OK(vn_mem_free(q));
    VT_OK(vn_mem_alloc(d, NULL, 9, &q));
    s = stats_of(d);
    CHECK_STATS(s, 512, 9, 0, 205, 204);
    VT_OK(vn_mem_free(q));
    device_free(d);
}

/* Two blocks of one size live at once: one is hot, the other on the list. */
static void test_two_live_blocks(void)
{
    vn_device *d = device_new();
    void *a = NULL, *b = NULL, *x = NULL, *y = NULL;
    VT_OK(vn_mem_alloc(d, NULL, 2000, &a));
    VT_OK(vn_mem_alloc(d, NULL, 2000, &b));
    for (int i = 0; i < 300; i++) {
        if (i % 2) {
            VT_OK(vn_mem_free(a));
            VT_OK(vn_mem_free(b));
        } else {
            VT_OK(vn_mem_free(b));
            VT_OK(vn_mem_free(a));
        }
        VT_OK(vn_mem_alloc(d, NULL, 2000, &x));
        VT_OK(vn_mem_alloc(d, NULL, 1900, &y));
        VT_CHECK(x != y && (x == a || x == b) && (y == a || y == b), "round %d: %p %p", i, x, y);
        a = x;
        b = y;
    }
    vn_mem_stats s = stats_of(d);
    CHECK_STATS(s, 4096, 3900, 0, 602, 600);
    VT_CHECK(s.cache_misses == 2 && s.reserved == 4096, "two blocks only");
    VT_OK(vn_mem_free(a));
    VT_OK(vn_mem_free(b));
    s = stats_of(d);
    CHECK_STATS(s, 0, 0, 4096, 602, 602);
    device_free(d);
}

/* A block that stays out (a long-lived buffer) while another of its size is
 * allocated and freed again and again: the other one takes over the slot. */
static void test_long_lived_hot_block(void)
{
    vn_device *d = device_new();
    void *keep = warm(d, NULL, 6000), *p = NULL, *q = NULL;
    memset(keep, 0x11, 6000);
    VT_OK(vn_mem_alloc(d, NULL, 6000, &p));
    for (int i = 0; i < 100; i++) {
        VT_OK(vn_mem_free(p));
        VT_OK(vn_mem_alloc(d, NULL, 5800, &q));
        VT_CHECK(q == p && q != keep, "round %d: %p (cycling %p, kept %p)", i, q, p, keep);
    }
    vn_mem_stats s = stats_of(d);
    CHECK_STATS(s, 12288, 11800, 0, 103, 101);
    VT_OK(vn_mem_free(keep));
    VT_OK(vn_mem_free(q));
    s = stats_of(d);
    CHECK_STATS(s, 0, 0, 12288, 103, 103);
    VT_CHECK(((unsigned char *)keep)[5999] == 0x11, "the kept block was never handed out");
    device_free(d);
}

/* A query folds the hot block's credit: the peak stays exact across it. */
static void test_peak(void)
{
    vn_device *d = device_new();
    void *p = warm(d, NULL, 1000), *q = NULL;
    VT_OK(vn_mem_free(p));
    VT_OK(vn_mem_reset_peak(d));
    VT_CHECK(stats_of(d).peak_allocated == 0, "reset to nothing live");
    VT_OK(vn_mem_alloc(d, NULL, 1000, &p));
    VT_CHECK(stats_of(d).peak_allocated == 1024, "peak %llu",
             (unsigned long long)stats_of(d).peak_allocated);
    VT_OK(vn_mem_free(p));
    for (int i = 0; i < 10; i++) { /* hot flips below the peak leave it */
        VT_OK(vn_mem_alloc(d, NULL, 1000, &p));
        VT_OK(vn_mem_free(p));
    }
    VT_OK(vn_mem_alloc(d, NULL, 1000, &p));
    VT_OK(vn_mem_alloc(d, NULL, 1000, &q)); /* a second block: the peak moves */
    VT_CHECK(stats_of(d).peak_allocated == 2048, "peak %llu",
             (unsigned long long)stats_of(d).peak_allocated);
    VT_OK(vn_mem_free(p));
    VT_OK(vn_mem_free(q));
    device_free(d);
}

/* ---- a hot block that leaves --------------------------------------------------- */

static void test_double_free(void)
{
    vn_device *d = device_new();
    void *p = warm(d, NULL, 64);
    VT_OK(vn_mem_free(p));
    VT_CHECK(vn_mem_free(p) == VN_ERR_INVALID_ARG, "second free of the hot block");
    VT_CONTAINS(vn_last_error(), "already freed");
    VT_OK(vn_mem_alloc(d, NULL, 64, &p));
    vn_mem_stats s = stats_of(d);
    CHECK_STATS(s, 512, 64, 0, 3, 2);
    VT_OK(vn_mem_free(p));
    device_free(d);
}

typedef struct job {
    void *p;
    size_t n;
    vn_device *dev;
    vn_status st, st2;
    atomic_int phase;
} job;

static void *free_then_exit(void *arg)
{
    job *j = arg;
    j->st = vn_mem_free(j->p);
    return NULL;
}

/* The owner's slot still names the block after another thread freed it: the
 * owner must neither free it again nor hand it out from the slot. */
static void test_freed_on_another_thread(void)
{
    vn_device *d = device_new();
    void *p = warm(d, NULL, 3000), *q = NULL;
    job j = {.p = p};
    pthread_t t;
    pthread_create(&t, NULL, free_then_exit, &j);
    pthread_join(t, NULL);
    VT_OK(j.st);
    VT_CHECK(vn_mem_free(p) == VN_ERR_INVALID_ARG, "freed twice through the owner's slot");
    VT_CONTAINS(vn_last_error(), "already freed");
    VT_OK(vn_mem_alloc(d, NULL, 3000, &q)); /* from the shared cache the thread left it in */
    VT_CHECK(q == p, "the block did not come back: %p vs %p", q, p);
    vn_mem_stats s = stats_of(d);
    CHECK_STATS(s, 3072, 3000, 0, 3, 2);
    VT_OK(vn_mem_free(q));
    VT_OK(vn_mem_alloc(d, NULL, 3000, &q));
    VT_CHECK(q == p, "hot again: %p vs %p", q, p);
    VT_OK(vn_mem_free(q));
    s = stats_of(d);
    CHECK_STATS(s, 0, 0, 3072, 4, 4);
    device_free(d);
}

/* A live thread frees the owner's hot block and keeps it in its own cache. */
static void *free_reuse_wait(void *arg)
{
    job *j = arg;
    void *q = NULL;
    j->st = vn_mem_free(j->p);
    j->st2 = vn_mem_alloc(j->dev, NULL, j->n, &q);
    if (j->st2 == VN_OK && q != j->p) j->st2 = VN_ERR_INTERNAL;
    if (j->st2 == VN_OK) j->st2 = vn_mem_free(q);
    atomic_store(&j->phase, 1);
    while (atomic_load(&j->phase) < 2) sched_yield();
    return NULL;
}

static void test_freed_into_a_live_thread(void)
{
    vn_device *d = device_new();
    void *p = warm(d, NULL, 5000), *q = NULL, *r = NULL;
    job j = {.p = p, .n = 5000, .dev = d};
    pthread_t t;
    pthread_create(&t, NULL, free_reuse_wait, &j);
    while (atomic_load(&j.phase) < 1) sched_yield();
    VT_OK(j.st);
    VT_OK(j.st2);
    VT_OK(vn_mem_alloc(d, NULL, 5000, &q));
    VT_CHECK(q != p, "got the block another thread caches");
    VT_OK(vn_mem_free(q));
    VT_OK(vn_mem_alloc(d, NULL, 5000, &r));
    VT_CHECK(r == q, "own block not reused");
    vn_mem_stats s = stats_of(d);
    CHECK_STATS(s, 5120, 5000, 5120, 5, 4);
    VT_CHECK(s.reserved == 10240, "reserved %llu", (unsigned long long)s.reserved);
    VT_OK(vn_mem_free(r));
    atomic_store(&j.phase, 2);
    pthread_join(t, NULL);
    device_free(d);
}

/* ---- streams ------------------------------------------------------------------- */

/* record_stream on a hot block: its free must wait for the other stream. */
static void test_record_stream(void)
{
    vn_device *d = device_new();
    vn_stream *a = NULL, *b = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &a));
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &b));
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    void *p = warm(d, a, 32 * KiB), *q = NULL, *r = NULL;
    VT_OK(vn_stream_add_callback(b, gate_wait, &g, true));
    VT_OK(vn_memset_async(b, p, 0x6b, 32 * KiB));
    VT_OK(vn_mem_record_stream(p, b));
    VT_OK(vn_mem_free(p));
    VT_OK(vn_mem_alloc(d, a, 32 * KiB, &q));
    VT_CHECK(q != p, "reused on a before b's event completed");
    gate_open(&g);
    VT_OK(vn_stream_synchronize(b, -1));
    VT_OK(vn_mem_alloc(d, a, 32 * KiB, &r));
    VT_CHECK(r == p, "not reused after the event: %p vs %p", r, p);
    VT_CHECK(((unsigned char *)r)[32 * KiB - 1] == 0x6b, "b's memset finished before reuse");
    VT_OK(vn_mem_free(q));
    VT_OK(vn_mem_free(r));
    stream_free(a);
    stream_free(b);
    device_free(d);
}

static void test_stream_destroyed_while_out(void)
{
    vn_device *d = device_new();
    vn_stream *a = NULL, *b = NULL;
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &a));
    VT_OK(vn_stream_create(d, VN_PRIORITY_NORMAL, &b));
    void *p = warm(d, a, 700), *q = NULL;
    stream_free(a);
    VT_OK(vn_mem_free(p)); /* into the shared cache */
    vn_mem_stats s = stats_of(d);
    CHECK_STATS(s, 0, 0, 1024, 2, 2);
    VT_OK(vn_mem_alloc(d, b, 700, &q));
    VT_CHECK(q == p, "shared block not reused: %p vs %p", q, p);
    VT_OK(vn_mem_free(q));
    stream_free(b);
    device_free(d);
}

/* The last call's (device, stream) arguments select the hot block: other
 * arguments must reach their own stream's cache, or their error. */
static void test_other_arguments(void)
{
    vn_device *d1 = device_new(), *d2 = device_new();
    vn_stream *s = NULL;
    VT_OK(vn_stream_create(d1, VN_PRIORITY_NORMAL, &s));
    void *p = warm(d1, NULL, 1000), *q = NULL, *r = NULL;
    VT_OK(vn_mem_free(p));
    VT_OK(vn_mem_alloc(d2, NULL, 1000, &q));
    VT_CHECK(q != p, "another device got d1's block");
    VT_OK(vn_mem_alloc(NULL, s, 1000, &r));
    VT_CHECK(r != p && r != q, "stream s got the default stream's block without an event");
    VT_OK(vn_mem_free(r));
    VT_CHECK(vn_mem_alloc(d2, s, 1000, &r) == VN_ERR_INVALID_ARG, "stream of another device");
    VT_CONTAINS(vn_last_error(), "another device");
    VT_OK(vn_mem_alloc(d1, NULL, 1000, &r));
    VT_CHECK(r == p, "d1's hot block: %p vs %p", r, p);
    VT_OK(vn_mem_free(r));
    VT_OK(vn_mem_free(q));
    vn_mem_stats s1 = stats_of(d1), s2 = stats_of(d2);
    CHECK_STATS(s1, 0, 0, 2048, 4, 4);
    CHECK_STATS(s2, 0, 0, 1024, 1, 1);
    stream_free(s);
    device_free(d1);
    device_free(d2);
}

static void test_fault_injection(void)
{
    vn_device *d = device_new(), *other = device_new();
    void *p = warm(d, NULL, 256), *q = NULL;
    VT_OK(vn_mem_free(p));
    VT_OK(vn_mem_fault_inject(d, 1));
    VT_CHECK(vn_mem_alloc(d, NULL, 256, &q) == VN_ERR_OUT_OF_MEMORY, "hot hit skipped the fault");
    VT_CONTAINS(vn_last_error(), "injected fault");
    VT_OK(vn_mem_alloc(d, NULL, 256, &q));
    VT_CHECK(q == p, "after the fault: %p vs %p", q, p);
    VT_OK(vn_mem_free(q));
    VT_OK(vn_mem_fault_inject(other, 5)); /* armed elsewhere: no effect here */
    for (int i = 0; i < 10; i++) {
        VT_OK(vn_mem_alloc(d, NULL, 256, &q));
        VT_OK(vn_mem_free(q));
    }
    VT_OK(vn_mem_fault_inject(other, 0));
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.num_ooms == 1 && s.num_allocs == 13 && s.num_frees == 13, "counts");
    device_free(other);
    device_free(d);
}

/* ---- threads hammering hot blocks while the statistics are taken ------------------ */

#ifdef VINCI_SANITIZED
#define HAMMER_PAIRS 20000
#else
#define HAMMER_PAIRS 300000
#endif
#define HAMMER_THREADS 3

typedef struct hammer {
    vn_device *dev;
    atomic_int done;
    int errors;
} hammer;

static void *hammer_main(void *arg)
{
    hammer *h = arg;
    for (int i = 0; i < HAMMER_PAIRS; i++) {
        void *p = NULL;
        if (vn_mem_alloc(h->dev, NULL, 100, &p) != VN_OK) {
            h->errors++;
            continue;
        }
        ((volatile char *)p)[99] = (char)i;
        if (vn_mem_free(p) != VN_OK) h->errors++;
    }
    atomic_store(&h->done, 1);
    return NULL;
}

/* Each thread holds at most one 512-byte block, so every snapshot must show
 * allocated = 512 x (allocations - frees) and requested = 100 x the same. */
static void test_snapshots_while_hammering(void)
{
    vn_device *d = device_new();
    hammer h[HAMMER_THREADS];
    pthread_t t[HAMMER_THREADS];
    for (int i = 0; i < HAMMER_THREADS; i++) {
        h[i] = (hammer){.dev = d};
        pthread_create(&t[i], NULL, hammer_main, &h[i]);
    }
    int bad = 0, snaps = 0;
    for (bool running = true; running; snaps++) {
        vn_mem_stats s = stats_of(d);
        uint64_t live = s.num_allocs - s.num_frees;
        if (live > HAMMER_THREADS || s.allocated != 512 * live || s.requested != 100 * live ||
            s.reserved != s.allocated + s.cached + s.pending)
            bad++;
        if (snaps % 16 == 15) VT_OK(vn_mem_release_cache(d));
        running = false;
        for (int i = 0; i < HAMMER_THREADS; i++) running |= !atomic_load(&h[i].done);
    }
    for (int i = 0; i < HAMMER_THREADS; i++) {
        pthread_join(t[i], NULL);
        VT_CHECK(h[i].errors == 0, "thread %d: %d errors", i, h[i].errors);
    }
    VT_CHECK(bad == 0, "%d of %d snapshots inconsistent", bad, snaps);
    vn_mem_stats s = stats_of(d);
    VT_CHECK(s.num_allocs == (uint64_t)HAMMER_THREADS * HAMMER_PAIRS &&
                 s.num_frees == s.num_allocs && s.allocated == 0 && s.requested == 0,
             "final counts");
    device_free(d);
}

int main(void)
{
    VT_RUN(test_counts_and_bytes);
    VT_RUN(test_request_changes);
    VT_RUN(test_two_live_blocks);
    VT_RUN(test_long_lived_hot_block);
    VT_RUN(test_peak);
    VT_RUN(test_double_free);
    VT_RUN(test_freed_on_another_thread);
    VT_RUN(test_freed_into_a_live_thread);
    VT_RUN(test_record_stream);
    VT_RUN(test_stream_destroyed_while_out);
    VT_RUN(test_other_arguments);
    VT_RUN(test_fault_injection);
    VT_RUN(test_snapshots_while_hammering);
    return vt_summary();
}
