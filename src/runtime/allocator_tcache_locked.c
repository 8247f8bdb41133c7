/*
 * allocator_tcache_locked.c — what code holding the allocator lock does to
 * the per-thread caches (allocator_tcache.c): the calling thread's own cache
 * on the locked path, stopping every cache to fold its counters or take its
 * blocks, thread exit, and the block records.
 *
 * Stopping: under the allocator lock, set each cache's TC_STOP bit, then one
 * membarrier(PRIVATE_EXPEDITED) makes every running thread execute a full
 * barrier, then wait until each `busy` is 0. An owner marks `busy` before it
 * reads `flush_req` (only a compiler barrier between them: the membarrier is
 * the other half of this Dekker handshake), so either the stopper sees busy
 * and waits, or the owner sees the request and takes the locked path. Where
 * membarrier is unavailable the owner marks busy with a sequentially
 * consistent exchange instead (slower).
 */
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/allocator_tcache.h"

bool mem_tc_membarrier;
static mem_tcache *tc_all; /* allocator lock */
static uint64_t tc_next_id = 1;
static int tc_stop_depth; /* allocator lock; stops nest */
static int tc_faults;     /* allocators with an armed fault injection */
static pthread_key_t tc_key;

/* ---- the handshake ---------------------------------------------------------- */

/* Caller holds the lock. After it, no owner is or will be in a fast path
 * until the matching mem_tc_resume. */
void mem_tc_stop(void)
{
    if (tc_stop_depth++) return;
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        atomic_fetch_or_explicit(&tc->flush_req, TC_STOP, memory_order_seq_cst);
    if (mem_tc_membarrier) syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        while (atomic_load_explicit(&tc->busy, memory_order_seq_cst)) sched_yield();
}

void mem_tc_resume(void)
{
    if (--tc_stop_depth) return;
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        atomic_fetch_and_explicit(&tc->flush_req, ~TC_STOP, memory_order_release);
}

void mem_tc_fault_armed(mem_alloc *a, bool armed)
{
    if (armed == a->fault_armed) return;
    a->fault_armed = armed;
    bool before = tc_faults > 0;
    tc_faults += armed ? 1 : -1;
    if (before == (tc_faults > 0)) return;
    /* The fast paths do not count calls: while any countdown runs, every
     * allocation takes the locked path. */
    for (mem_tcache *tc = tc_all; tc; tc = tc->next) {
        if (tc_faults)
            atomic_fetch_or_explicit(&tc->flush_req, TC_FAULT, memory_order_relaxed);
        else
            atomic_fetch_and_explicit(&tc->flush_req, ~TC_FAULT, memory_order_relaxed);
    }
}

/* ---- folding and flushing ------------------------------------------------------ */

/* Folds a bin's counters and credits into its allocator; a cached hot block
 * joins the list, uncredited like the rest. Lock held, and the bin is the
 * caller's own or the caches are stopped. */
static void bin_fold(tc_bin *bin)
{
    mem_alloc *a = bin->alloc;
    if (bin->hot_ptr && !(bin->seq & 1)) {
        mem_block *b = tc_hot_take(bin);
        atomic_store_explicit(&b->holder, 0, memory_order_relaxed);
        b->next = bin->free;
        bin->free = b;
        bin->credit++;
    }
    tc_settle(bin);
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
static void bin_flush(mem_tcache *tc, tc_bin *bin, bool drop)
{
    mem_alloc *a = bin->alloc;
    bin_fold(bin);
    if (bin->hot_ptr) tc_hot_drop(tc, bin); /* out: an ordinary live block now */
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
    if (tc->last == bin) tc->last = &tc->none;
}

void mem_tc_flush(mem_alloc *a, vn_stream *s, bool drop)
{
    if (!tc_all) return;
    mem_tc_stop();
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        for (size_t i = 0; i < TC_BINS; i++) {
            tc_bin *bin = &tc->bins[i];
            if (bin->stream && (!a || bin->alloc == a) && (!s || bin->stream == s))
                bin_flush(tc, bin, drop);
        }
    mem_tc_resume();
}

uint64_t mem_tc_fold(mem_alloc *a)
{
    uint64_t cached = 0;
    if (!tc_all) return 0;
    bool stop = mem_tc_others(mem_tc_current, a);
    if (stop) mem_tc_stop();
    for (mem_tcache *tc = tc_all; tc; tc = tc->next)
        for (size_t i = 0; i < TC_BINS; i++) {
            tc_bin *bin = &tc->bins[i];
            if (!bin->stream || bin->alloc != a) continue;
            bin_fold(bin);
            cached += (uint64_t)bin->uncredited * bin->size;
        }
    if (stop) mem_tc_resume();
    return cached;
}

static void fold_own_credit(mem_tcache *tc, mem_alloc *a)
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
        fold_own_credit(mem_tc_current, a);
        if (a->commit > st->peak_allocated && mem_tc_others(mem_tc_current, a)) mem_tc_fold(a);
        if (a->commit > st->peak_allocated) st->peak_allocated = a->commit;
    }
    if (st->reserved > st->peak_reserved) st->peak_reserved = st->reserved;
}

/* ---- the calling thread's cache on the locked path ---------------------------- */

static void tc_exit(void *arg);

static void tc_key_init(void)
{
    mem_tc_membarrier =
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    pthread_key_create(&tc_key, tc_exit);
}

static void bin_init(tc_bin *bin, uint64_t tag)
{
    bin->seq = bin->seq_settled = 1; /* no hot block */
    bin->tag = tag;
}

mem_tcache *mem_tc_self(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (mem_tc_current) return mem_tc_current;
    pthread_once(&once, tc_key_init);
    mem_tcache *tc = calloc(1, sizeof *tc);
    if (!tc) return NULL;
    tc->id = tc_next_id++;
    bin_init(&tc->none, 0);
    for (size_t i = 0; i < TC_BINS; i++) bin_init(&tc->bins[i], tc_plain(tc) | (i + 1));
    tc->last = &tc->none;
    atomic_init(&tc->flush_req, (tc_faults ? TC_FAULT : 0) | (mem_tc_membarrier ? 0 : TC_FENCED));
    /* A stop in progress (we hold the lock, so none is) would not know us. */
    tc->next = tc_all;
    tc_all = tc;
    pthread_setspecific(tc_key, tc);
    mem_tc_current = tc;
    return tc;
}

mem_block *mem_tc_pop_own(mem_tcache *tc, mem_alloc *a, vn_stream *s, size_t size)
{
    /* s is NULL when the default stream is gone: no bin (tc_find would take
     * an empty slot for it). */
    tc_bin *bin = tc && s ? tc_find(tc, s, size) : NULL;
    if (!bin) return NULL;
    bin_fold(bin); /* the locked path counts in a->stats; all blocks uncredited */
    mem_block *b = bin->free;
    if (!b) return NULL;
    bin->free = b->next;
    bin->uncredited--;
    b->next = NULL;
    return b;
}

/* The caller's bin for (s, size), made if needed; evicts a neighbour when its
 * probe window is full. */
static tc_bin *bin_get(mem_tcache *tc, mem_alloc *a, vn_stream *s, size_t size)
{
    tc_bin *bin = tc_find(tc, s, size);
    if (bin) return bin;
    size_t home = tc_home(s, size);
    for (size_t k = 0; k < TC_PROBES && !bin; k++)
        if (!tc->bins[(home + k) & (TC_BINS - 1)].stream)
            bin = &tc->bins[(home + k) & (TC_BINS - 1)];
    if (!bin) {
        bin = &tc->bins[home];
        bin_flush(tc, bin, false);
    }
    size_t cap = TC_BIN_BYTES / size;
    bin->stream = s;
    bin->size = size;
    bin->alloc = a;
    bin->cap = cap < 2 ? 2 : cap > TC_BIN_MAX ? TC_BIN_MAX : (uint32_t)cap;
    return bin;
}

bool mem_tc_push_own(mem_tcache *tc, mem_alloc *a, mem_block *b)
{
    if (!tc || !b->owner) return false;
    tc_bin *bin = bin_get(tc, a, b->owner, b->size);
    if (tc_hot_stale(bin)) tc_hot_drop(tc, bin);
    if (bin->hot_ptr && bin->credit + bin->uncredited >= bin->cap) return false;
    /* The caller took the bytes off allocated and commit: turn them into
     * credit instead, so the next fast hit may use the block. */
    a->commit += b->size;
    if (!bin->hot_ptr) {
        tc_hot_key(tc, bin, b);
        return true;
    }
    b->state = BLOCK_CACHED;
    b->tc_hint = bin;
    b->next = bin->free;
    bin->free = b;
    bin->credit++;
    return true;
}

void mem_tc_note_live(mem_tcache *tc, mem_block *b)
{
    if (!tc) return;
    /* The hint may point into the thread cache that last freed it. */
    b->tc_hint = b->owner ? tc_find(tc, b->owner, b->size) : NULL;
    atomic_store_explicit(&b->holder, tc_plain(tc), memory_order_relaxed);
    tc->live[tc_live_slot(b->ptr)] = b;
}

void mem_tc_unhot(mem_block *b)
{
    uint64_t holder = atomic_load_explicit(&b->holder, memory_order_relaxed);
    uint64_t bin_index = holder & ((1u << TC_TAG_SHIFT) - 1);
    mem_tcache *tc = mem_tc_current;
    if (!bin_index) return;
    if (tc && tc_holds(tc, holder) && tc->bins[bin_index - 1].hot == b) {
        tc_hot_drop(tc, &tc->bins[bin_index - 1]);
        return;
    }
    /* Another thread's: its slot goes stale and is cleared there lazily. */
    atomic_store_explicit(&b->holder, holder - bin_index, memory_order_relaxed);
}

/* Thread exit: the cache's blocks go to the shared structures. */
static void tc_exit(void *arg)
{
    mem_tcache *tc = arg;
    mem_lock();
    for (size_t i = 0; i < TC_BINS; i++)
        if (tc->bins[i].stream) bin_flush(tc, &tc->bins[i], false);
    for (mem_tcache **link = &tc_all; *link; link = &(*link)->next)
        if (*link == tc) {
            *link = tc->next;
            break;
        }
    mem_tc_current = NULL;
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
