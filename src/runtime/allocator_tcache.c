/*
 * allocator_tcache.c — per-thread caches: the caching allocator's fast path.
 *
 * An alloc + free pair through the locked path costs a lock round trip, two
 * hash probes and a bin search, about as much as malloc itself. Each thread
 * therefore keeps its own small cache: bins keyed by (stream, size), each a
 * LIFO list of blocks that thread freed, and a direct-mapped table of the
 * blocks it handed out (so a free finds its record without the global
 * pointer table). A hit or a free touches only the thread's own cache: no
 * lock and no atomic read-modify-write.
 *
 * Other threads still need those blocks now and then: release_cache, a limit
 * failure, a stream or device destroy, exact statistics. They "stop" the
 * caches: under the allocator lock, set each cache's `flush_req`, then one
 * membarrier(PRIVATE_EXPEDITED) makes every running thread execute a full
 * barrier, then wait until each `busy` is 0. An owner marks `busy` before it
 * reads `flush_req` (only a compiler barrier between them: the membarrier is
 * the other half of this Dekker handshake), so either the stopper sees busy
 * and waits, or the owner sees the request and takes the locked path. Where
 * membarrier is unavailable the owner marks busy with a sequentially
 * consistent exchange instead (slower).
 *
 * Stale table entries are harmless: a record is reused only after its
 * `holder` was cleared, and records are never freed, so an entry is trusted
 * only when the record's holder is this cache (ids are never reused).
 *
 * Peak allocated stays exact with credits: a bin earns credit for the bytes
 * its thread freed into it, and a fast allocation must spend credit. With
 * commit = allocated + all credits, fast operations leave commit unchanged
 * and commit <= peak, so they never raise the peak; locked allocations raise
 * commit and, when it passes the peak, first fold the credits (stopping the
 * caches if other threads hold any), so the peak is set from the true value.
 */
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/allocator_internal.h"
#include "runtime/stream_internal.h"

#define TC_BINS      64  /* bins per thread, open addressing */
#define TC_PROBES    4   /* a bin lives within this many slots of its home */
#define TC_LIVE      256 /* direct-mapped table of blocks handed out */
#define TC_BIN_BYTES ((size_t)32 << 20)
#define TC_BIN_MAX   32 /* blocks per bin at most (and TC_BIN_BYTES) */

/* Counts are in blocks: every block of a bin has the bin's size, so the
 * fast paths update two counters, and bytes are derived when folding. */
typedef struct tc_bin {
    vn_stream *stream; /* NULL: slot empty */
    size_t size;
    mem_alloc *alloc;
    mem_block *free;
    uint32_t credit;     /* blocks on `free` the fast path may hand out */
    uint32_t uncredited; /* blocks on `free` only the locked path hands out */
    uint32_t cap;        /* credit + uncredited stays <= cap */
    /* counters not yet folded into alloc->stats (every fast alloc is a hit) */
    uint64_t d_allocs, d_frees;
    int64_t d_requested;
} tc_bin;

struct mem_tcache {
    atomic_int busy;      /* the owner is in a fast path */
    atomic_int flush_req; /* a stopper holds the lock and may touch the bins */
    uint64_t id;
    mem_tcache *next; /* all caches (allocator lock) */
    tc_bin *last;     /* the bin of the last fast allocation: loops reuse one size */
    tc_bin bins[TC_BINS];
    mem_block *live[TC_LIVE];
};

/* initial-exec: a plain %fs-relative load even in the shared library. */
static _Thread_local mem_tcache *tc_self __attribute__((tls_model("initial-exec")));
/* The default device's default stream (the device lives for the process). */
static _Atomic(vn_stream *) default_stream;
static mem_tcache *tc_all; /* allocator lock */
static uint64_t tc_next_id = 1;
static bool tc_membarrier; /* set once, before the first cache exists */
static pthread_key_t tc_key;

/* ---- the handshake ---------------------------------------------------------- */

static inline bool tc_enter(mem_tcache *tc)
{
    if (tc_membarrier) {
        atomic_store_explicit(&tc->busy, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst); /* the compiler keeps the order */
    } else {
        atomic_exchange_explicit(&tc->busy, 1, memory_order_seq_cst); /* a full barrier */
    }
    if (!atomic_load_explicit(&tc->flush_req, memory_order_seq_cst)) return true;
    atomic_store_explicit(&tc->busy, 0, memory_order_release);
    return false;
}

static inline void tc_leave(mem_tcache *tc)
{
    atomic_store_explicit(&tc->busy, 0, memory_order_release);
}

static int tc_stop_depth; /* allocator lock; stops nest */

/* Caller holds the lock. After it, no owner is or will be in a fast path
 * until the matching tc_resume. */
static void tc_stop(void)
{
    if (tc_stop_depth++) return;
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        atomic_store_explicit(&tc->flush_req, 1, memory_order_seq_cst);
    if (tc_membarrier) syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        while (atomic_load_explicit(&tc->busy, memory_order_seq_cst)) sched_yield();
}

static void tc_resume(void)
{
    if (--tc_stop_depth) return;
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        atomic_store_explicit(&tc->flush_req, 0, memory_order_release);
}

/* ---- bins ---------------------------------------------------------------- */

static inline size_t tc_home(const vn_stream *s, size_t size)
{
    uint64_t h = ((uint64_t)(uintptr_t)s >> 4) * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)size >> 9) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h >> 40) & (TC_BINS - 1);
}

static inline tc_bin *tc_find(mem_tcache *tc, const vn_stream *s, size_t size)
{
    size_t home = tc_home(s, size);
    for (size_t k = 0; k < TC_PROBES; k++) {
        tc_bin *bin = &tc->bins[(home + k) & (TC_BINS - 1)];
        if (bin->stream == s && bin->size == size) return bin;
    }
    return NULL;
}

static inline size_t tc_live_slot(const void *ptr)
{
    /* Shifts and xor only (no multiply on the hot path): small blocks differ
     * above bit 6, large ones (2 MiB aligned) above bit 21. */
    uintptr_t p = (uintptr_t)ptr;
    return (size_t)((p >> 6) ^ (p >> 14) ^ (p >> 21)) & (TC_LIVE - 1);
}

/* Folds a bin's counters and credit into its allocator. Lock held, and the
 * bin is the caller's own or the caches are stopped. */
static void bin_fold(tc_bin *bin)
{
    mem_alloc *a = bin->alloc;
    a->stats.allocated += (bin->d_allocs - bin->d_frees) * bin->size; /* modulo 2^64 */
    a->stats.requested += (uint64_t)bin->d_requested;
    a->stats.num_allocs += bin->d_allocs;
    a->stats.cache_hits += bin->d_allocs;
    a->stats.num_frees += bin->d_frees;
    a->commit -= (uint64_t)bin->credit * bin->size;
    bin->uncredited += bin->credit;
    bin->credit = 0;
    bin->d_allocs = bin->d_frees = 0;
    bin->d_requested = 0;
}

/* Empties a bin into the shared structures (or forgets its blocks) and frees
 * the slot. */
static void bin_flush(tc_bin *bin, bool drop)
{
    mem_alloc *a = bin->alloc;
    bin_fold(bin);
    while (bin->free) {
        mem_block *b = bin->free;
        bin->free = b->next;
        b->next = NULL;
        if (drop) continue; /* device destroy releases it through the table */
        b->free_seq = ++a->seq;
        mem_block_cache(a, b);
    }
    bin->uncredited = 0;
    bin->stream = NULL;
    bin->alloc = NULL;
}

/* The caller's bin for (s, size), made if needed; evicts a neighbour when its
 * probe window is full. Lock held. */
static tc_bin *tc_bin_get(mem_tcache *tc, mem_alloc *a, vn_stream *s, size_t size)
{
    tc_bin *bin = tc_find(tc, s, size);
    if (bin) return bin;
    size_t home = tc_home(s, size);
    for (size_t k = 0; k < TC_PROBES && !bin; k++)
        if (!tc->bins[(home + k) & (TC_BINS - 1)].stream)
            bin = &tc->bins[(home + k) & (TC_BINS - 1)];
    if (!bin) {
        bin = &tc->bins[home];
        bin_flush(bin, false);
    }
    size_t cap = TC_BIN_BYTES / size;
    bin->stream = s;
    bin->size = size;
    bin->alloc = a;
    bin->cap = cap < 2 ? 2 : cap > TC_BIN_MAX ? TC_BIN_MAX : (uint32_t)cap;
    return bin;
}

/* ---- the fast paths -------------------------------------------------------------- */

/* The stream an allocation is for; NULL when the locked path must decide. */
static inline vn_stream *fast_stream(vn_device *dev, vn_stream *s)
{
    if (s) return !dev || s->device == dev ? s : NULL; /* mismatch: the locked path reports it */
    if (dev) return dev->default_stream;
    s = atomic_load_explicit(&default_stream, memory_order_relaxed);
    if (s || vn_device_default(&dev) != VN_OK) return s;
    atomic_store_explicit(&default_stream, dev->default_stream, memory_order_relaxed);
    return dev->default_stream;
}

static inline bool tc_alloc(vn_device *dev, vn_stream *s, size_t bytes, size_t size, void **out)
{
    mem_tcache *tc = tc_self;
    if (!tc || !(s = fast_stream(dev, s))) return false;
    if (!tc_enter(tc)) return false;
    tc_bin *bin = tc->last;
    if (!bin || bin->stream != s || bin->size != size) bin = tc->last = tc_find(tc, s, size);
    /* Credited blocks are at the head: a credit is earned by a push. */
    if (!bin || !bin->credit ||
        atomic_load_explicit(&bin->alloc->fault_armed, memory_order_relaxed)) {
        tc_leave(tc);
        return false;
    }
    mem_block *b = bin->free;
    bin->free = b->next;
    bin->credit--;
    bin->d_allocs++;
    bin->d_requested += (int64_t)bytes;
    b->state = BLOCK_LIVE; /* b->next is stale while live: nothing reads it */
    b->request = bytes;
    atomic_store_explicit(&b->holder, tc->id, memory_order_relaxed);
    tc->live[tc_live_slot(b->ptr)] = b;
    tc_leave(tc);
    *out = b->ptr;
    return true;
}

static inline bool tc_free(void *ptr)
{
    mem_tcache *tc = tc_self;
    if (!tc) return false;
    mem_block **slot = &tc->live[tc_live_slot(ptr)];
    mem_block *b = *slot;
    /* holder == us: we handed it out and nobody freed it since, so its ptr
     * is stable (records are reused only after holder is cleared). */
    if (!b || atomic_load_explicit(&b->holder, memory_order_relaxed) != tc->id || b->ptr != ptr)
        return false;
    if (!tc_enter(tc)) return false;
    /* owner and uses may change under a stop (stream destroy): read them now */
    tc_bin *bin = b->tc_hint;
    if (!bin || bin->stream != b->owner || bin->size != b->size)
        bin = b->owner ? tc_find(tc, b->owner, b->size) : NULL;
    if (b->num_uses) bin = NULL;
    if (!bin || bin->credit + bin->uncredited >= bin->cap) {
        tc_leave(tc);
        return false;
    }
    /* The table entry stays: holder 0 makes it stale. */
    atomic_store_explicit(&b->holder, 0, memory_order_relaxed);
    b->state = BLOCK_CACHED;
    b->tc_hint = bin;
    b->next = bin->free;
    bin->free = b;
    bin->credit++;
    bin->d_frees++;
    bin->d_requested -= (int64_t)b->request;
    tc_leave(tc);
    return true;
}

vn_status vn_mem_alloc(vn_device *device, vn_stream *stream, size_t bytes, void **out)
{
    size_t size = mem_round(bytes);
    if (out && size && tc_alloc(device, stream, bytes, size, out)) return VN_OK;
    return mem_alloc_locked(device, stream, bytes, out);
}

vn_status vn_mem_free(void *ptr)
{
    if (!ptr || tc_free(ptr)) return VN_OK;
    return mem_free_locked(ptr);
}

/* ---- the calling thread's cache on the locked path ---------------------------- */

static void tc_exit(void *arg);

static void tc_key_init(void)
{
    tc_membarrier = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    pthread_key_create(&tc_key, tc_exit);
}

mem_tcache *mem_tc_self(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (tc_self) return tc_self;
    pthread_once(&once, tc_key_init);
    mem_tcache *tc = calloc(1, sizeof *tc);
    if (!tc) return NULL;
    tc->id = tc_next_id++;
    /* A stop in progress (we hold the lock, so none is) would not know us. */
    tc->next = tc_all;
    tc_all = tc;
    pthread_setspecific(tc_key, tc);
    tc_self = tc;
    return tc;
}

mem_block *mem_tc_pop_own(mem_tcache *tc, mem_alloc *a, vn_stream *s, size_t size)
{
    tc_bin *bin = tc ? tc_find(tc, s, size) : NULL;
    mem_block *b = bin ? bin->free : NULL;
    if (!b) return NULL;
    bin_fold(bin); /* the locked path counts in a->stats; all blocks uncredited */
    bin->free = b->next;
    bin->uncredited--;
    b->next = NULL;
    return b;
}

bool mem_tc_push_own(mem_tcache *tc, mem_alloc *a, mem_block *b)
{
    if (!tc || !b->owner) return false;
    tc_bin *bin = tc_bin_get(tc, a, b->owner, b->size);
    if (bin->credit + bin->uncredited >= bin->cap) return false;
    b->state = BLOCK_CACHED;
    b->tc_hint = bin;
    b->next = bin->free;
    bin->free = b;
    /* The caller took the bytes off allocated and commit: turn them into
     * credit instead, so the next fast hit may use the block. */
    bin->credit++;
    a->commit += b->size;
    return true;
}

void mem_tc_note_live(mem_tcache *tc, mem_block *b)
{
    if (!tc) return;
    /* The hint may point into the thread cache that last freed it. */
    b->tc_hint = b->owner ? tc_find(tc, b->owner, b->size) : NULL;
    atomic_store_explicit(&b->holder, tc->id, memory_order_relaxed);
    tc->live[tc_live_slot(b->ptr)] = b;
}

/* ---- stopping the caches ---------------------------------------------------------- */

void mem_tc_stop(void)
{
    tc_stop();
}

void mem_tc_resume(void)
{
    tc_resume();
}

void mem_tc_flush(mem_alloc *a, vn_stream *s, bool drop)
{
    if (!tc_all) return;
    tc_stop();
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        for (size_t i = 0; i < TC_BINS; i++) {
            tc_bin *bin = &tc->bins[i];
            if (bin->stream && (!a || bin->alloc == a) && (!s || bin->stream == s))
                bin_flush(bin, drop);
        }
    tc_resume();
}

uint64_t mem_tc_fold(mem_alloc *a)
{
    uint64_t cached = 0;
    if (!tc_all) return 0;
    bool stop = mem_tc_others(tc_self, a);
    if (stop) tc_stop();
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        for (size_t i = 0; i < TC_BINS; i++) {
            tc_bin *bin = &tc->bins[i];
            if (!bin->stream || bin->alloc != a) continue;
            bin_fold(bin);
            cached += (uint64_t)bin->uncredited * bin->size;
        }
    if (stop) tc_resume();
    return cached;
}

void mem_tc_fold_own_credit(mem_tcache *tc, mem_alloc *a)
{
    for (size_t i = 0; tc && i < TC_BINS; i++)
        if (tc->bins[i].stream && tc->bins[i].alloc == a) bin_fold(&tc->bins[i]);
}

bool mem_tc_others(mem_tcache *self, mem_alloc *a)
{
    for (mem_tcache *tc = tc_all; tc; tc = tc->next) {
        if (tc == self) continue;
        for (size_t i = 0; i < TC_BINS; i++)
            if (tc->bins[i].stream && tc->bins[i].alloc == a) return true;
    }
    return false;
}

void mem_peak_check(mem_alloc *a)
{
    vn_mem_stats *st = &a->stats;
    if (a->commit > st->peak_allocated) {
        mem_tc_fold_own_credit(tc_self, a);
        if (a->commit > st->peak_allocated && mem_tc_others(tc_self, a)) mem_tc_fold(a);
        if (a->commit > st->peak_allocated) st->peak_allocated = a->commit;
    }
    if (st->reserved > st->peak_reserved) st->peak_reserved = st->reserved;
}

/* Thread exit: the cache's blocks go to the shared structures. */
static void tc_exit(void *arg)
{
    mem_tcache *tc = arg;
    mem_lock();
    for (size_t i = 0; i < TC_BINS; i++)
        if (tc->bins[i].stream) bin_flush(&tc->bins[i], false);
    for (mem_tcache **link = &tc_all; *link; link = &(*link)->next)
        if (*link == tc) {
            *link = tc->next;
            break;
        }
    tc_self = NULL;
    mem_unlock();
    free(tc);
}

/* ---- block records ------------------------------------------------------------- */

static mem_block *records_free; /* allocator lock */

mem_block *mem_record_get(void)
{
    mem_block *b = records_free;
    if (b) {
        records_free = b->next;
    } else {
        b = calloc(1, sizeof *b);
        if (!b) return NULL;
        atomic_init(&b->holder, 0);
    }
    /* Field by field: a thread with a stale pointer may read holder now. */
    b->ptr = NULL;
    b->size = b->request = 0;
    b->alloc = NULL;
    b->owner = NULL;
    b->bin = NULL;
    b->tc_hint = NULL;
    b->next = NULL;
    b->free_seq = 0;
    b->state = 0;
    b->stuck = false;
    b->num_uses = 0;
    b->uses = b->uses_inline;
    b->cap_uses = MEM_INLINE_USES;
    return b;
}

void mem_record_put(mem_block *b)
{
    atomic_store_explicit(&b->holder, 0, memory_order_relaxed);
    b->next = records_free;
    records_free = b;
}
