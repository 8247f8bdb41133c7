/*
 * allocator_tcache.c — per-thread caches: the caching allocator's fast path.
 *
 * An alloc + free pair through the locked path costs a lock round trip, two
 * hash probes and a bin search, about as much as malloc itself. Each thread
 * therefore keeps its own small cache: bins keyed by (stream, size), each a
 * hot block plus a LIFO list (allocator_tcache.h), and a direct-mapped table
 * of the blocks it handed out (so a free finds its record without the global
 * pointer table). A hit or a free touches only the thread's own cache: no
 * lock and no atomic read-modify-write.
 *
 * Three tiers, cheapest first:
 *   1. the hot block of the bin of the last allocation, for a call with the
 *      same (device, stream) arguments and request: the whole pair is a few
 *      loads, compares and stores of constants (hot_alloc, hot_free);
 *   2. any bin of the cache: resolve the stream, round, find the bin, use its
 *      hot block or its list (tc_alloc, tc_free);
 *   3. the locked path (allocator.c).
 *
 * Other threads still need those blocks now and then: release_cache, a limit
 * failure, a stream or device destroy, exact statistics. They stop the caches
 * (allocator_tcache_locked.c); a fast path runs between tc_enter and tc_leave,
 * and tc_enter fails while a stop (or an armed fault injection) is on.
 *
 * Stale table entries are harmless: a record is reused only after its
 * `holder` was cleared, and records are never freed, so an entry is trusted
 * only when the record's holder names this cache (ids are never reused). A
 * hot slot is trusted only while its block's holder is the bin's tag: a free
 * on another thread clears it, and the slot is then cleared lazily.
 *
 * Peak allocated stays exact with credits: a bin earns credit for the bytes
 * its thread freed into it, and a fast allocation must spend credit (a cached
 * hot block is one credit). With commit = allocated + all credits, fast
 * operations leave commit unchanged and commit <= peak, so they never raise
 * the peak; locked allocations raise commit and, when it passes the peak,
 * first fold the credits (stopping the caches if other threads hold any), so
 * the peak is set from the true value.
 */
#include "runtime/allocator_tcache.h"
#include "runtime/stream_internal.h"

/* initial-exec: a plain %fs-relative load even in the shared library. */
_Thread_local mem_tcache *mem_tc_current __attribute__((tls_model("initial-exec")));
/* The default device's default stream (the device lives for the process). */
static _Atomic(vn_stream *) default_stream;

/* ---- the hot block ------------------------------------------------------------ */

void tc_settle(tc_bin *bin)
{
    /* Flips alternate, an allocation being an even -> odd one. */
    uint64_t s0 = bin->seq_settled, s1 = bin->seq;
    bin->d_allocs += (s1 + 1) / 2 - (s0 + 1) / 2;
    bin->d_frees += s1 / 2 - s0 / 2;
    bin->d_requested += ((int64_t)(s1 & 1) - (int64_t)(s0 & 1)) * (int64_t)bin->hot_req;
    bin->seq_settled = s1;
}

/* Makes cached block b (in no list) the bin's hot block; the slot is empty.
 * It keeps the credit it had (or the caller's new one). */
void tc_hot_key(mem_tcache *tc, tc_bin *bin, mem_block *b)
{
    b->state = BLOCK_CACHED;
    b->tc_hint = bin;
    atomic_store_explicit(&b->holder, bin->tag, memory_order_relaxed);
    tc->live[tc_live_slot(b->ptr)] = b; /* for a free that misses `last` */
    bin->hot = b;
    bin->hot_ptr = b->ptr;
    bin->hot_req = b->request;
    bin->seq = bin->seq_settled = 0;
}

static void hot_clear(tc_bin *bin)
{
    bin->hot = NULL;
    bin->hot_ptr = NULL;
    bin->seq = bin->seq_settled = 1;
}

/* Takes the cached hot block out of the slot (to hand out or list it). */
mem_block *tc_hot_take(tc_bin *bin)
{
    mem_block *b = bin->hot;
    tc_settle(bin);
    hot_clear(bin);
    return b;
}

/* Forgets a hot block that is out (an ordinary block handed out by this
 * cache from now on) or stale. */
void tc_hot_drop(mem_tcache *tc, tc_bin *bin)
{
    if (!tc_hot_stale(bin))
        atomic_store_explicit(&bin->hot->holder, tc_plain(tc), memory_order_relaxed);
    tc_settle(bin);
    hot_clear(bin);
}

/* ---- tier 1: the hot block of the last bin ----------------------------------------- */

static inline bool hot_alloc(mem_tcache *tc, vn_device *dev, vn_stream *s, size_t bytes, void **out)
{
    if (!tc_enter_hot(tc)) return false;
    tc_bin *bin = tc->last;
    uint64_t seq = bin->seq;
    bool hit = !(seq & 1) && bin->hot_req == bytes && tc->k_stream == s && tc->k_dev == dev;
    if (hit) {
        bin->seq = seq + 1;
        bin->hot->state = BLOCK_LIVE;
        *out = bin->hot_ptr;
    }
    tc_leave(tc);
    return hit;
}

static inline bool hot_free(mem_tcache *tc, void *ptr)
{
    if (!tc_enter_hot(tc)) return false;
    tc_bin *bin = tc->last;
    uint64_t seq = bin->seq;
    bool hit = ptr == bin->hot_ptr && (seq & 1) &&
               atomic_load_explicit(&bin->hot->holder, memory_order_relaxed) == bin->tag;
    if (hit) {
        bin->seq = seq + 1;
        bin->hot->state = BLOCK_CACHED;
    }
    tc_leave(tc);
    return hit;
}

/* ---- tier 2: any bin ------------------------------------------------------------- */

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

/* Hands out the bin's cached hot block for `bytes`. */
static void hot_hand_out(tc_bin *bin, size_t bytes, void **out)
{
    if (bin->hot_req != bytes) { /* the counters hold the old request until now */
        tc_settle(bin);
        bin->hot_req = bin->hot->request = bytes;
    }
    bin->seq++;
    bin->hot->state = BLOCK_LIVE;
    *out = bin->hot_ptr;
}

/* Pops a credited list block. */
static mem_block *list_pop(tc_bin *bin)
{
    mem_block *b = bin->free;
    bin->free = b->next;
    bin->credit--;
    return b;
}

static bool bin_alloc(mem_tcache *tc, tc_bin *bin, size_t bytes, void **out)
{
    if (tc_hot_stale(bin)) tc_hot_drop(tc, bin);
    /* Credited blocks are at the head: a credit is earned by a push. */
    if (!bin->hot_ptr && bin->credit) tc_hot_key(tc, bin, list_pop(bin));
    if (bin->hot_ptr && !(bin->seq & 1)) {
        hot_hand_out(bin, bytes, out);
        return true;
    }
    if (!bin->credit) return false;
    mem_block *b = list_pop(bin); /* the hot block is out: an ordinary one */
    bin->d_allocs++;
    bin->d_requested += (int64_t)bytes;
    b->state = BLOCK_LIVE; /* b->next is stale while live: nothing reads it */
    b->request = bytes;
    b->tc_hint = bin;
    atomic_store_explicit(&b->holder, tc_plain(tc), memory_order_relaxed);
    tc->live[tc_live_slot(b->ptr)] = b;
    *out = b->ptr;
    return true;
}

static bool tc_alloc(mem_tcache *tc, vn_device *dev, vn_stream *s, size_t bytes, void **out)
{
    vn_stream *stream = fast_stream(dev, s);
    size_t size = mem_round(bytes);
    if (!stream || !size || !tc_enter(tc)) return false;
    tc_bin *bin = tc_find(tc, stream, size);
    bool hit = bin && bin_alloc(tc, bin, bytes, out);
    if (hit) {
        tc->last = bin;
        tc->k_dev = dev;
        tc->k_stream = s;
    }
    tc_leave(tc);
    return hit;
}

/* Called for each list free while the hot block is out: true once the hot
 * block stayed out over TC_HOT_PATIENCE of them in a row (a long-lived
 * block), so that the block just freed had better take its slot. Two blocks
 * of a size live at once keep flipping the hot one, which resets the count. */
static bool hot_idle(tc_bin *bin)
{
    if (bin->idle_seq != bin->seq) {
        bin->idle_seq = bin->seq;
        bin->idle_frees = 0;
    }
    return ++bin->idle_frees >= TC_HOT_PATIENCE;
}

/* Frees b, a block this cache handed out, into its bin. */
static bool bin_free(mem_tcache *tc, tc_bin *bin, mem_block *b)
{
    /* A stale slot may still name b (which came back to us since). */
    if (tc_hot_stale(bin)) tc_hot_drop(tc, bin);
    if (bin->hot == b) {
        if (!(bin->seq & 1)) return false; /* cached: the locked path reports it */
        bin->seq++;
        b->state = BLOCK_CACHED;
        return true;
    }
    if (bin->hot_ptr && (bin->seq & 1) && hot_idle(bin)) tc_hot_drop(tc, bin);
    if (!bin->hot_ptr) {
        bin->d_frees++;
        bin->d_requested -= (int64_t)b->request;
        tc_hot_key(tc, bin, b); /* its credit is the bytes it frees */
        return true;
    }
    if (bin->credit + bin->uncredited >= bin->cap) return false;
    atomic_store_explicit(&b->holder, 0, memory_order_relaxed); /* the table entry is stale now */
    b->state = BLOCK_CACHED;
    b->next = bin->free;
    bin->free = b;
    bin->credit++;
    bin->d_frees++;
    bin->d_requested -= (int64_t)b->request;
    return true;
}

static bool tc_free(mem_tcache *tc, void *ptr)
{
    mem_block *b = tc->live[tc_live_slot(ptr)];
    /* holder names us: we handed it out and nobody freed it since, so its ptr
     * is stable (records are reused only after holder is cleared). */
    if (!b || !tc_holds(tc, atomic_load_explicit(&b->holder, memory_order_relaxed)) ||
        b->ptr != ptr)
        return false;
    if (!tc_enter(tc)) return false;
    /* owner and uses may change under a stop (stream destroy): read them now.
     * No owner (its stream was destroyed): the shared cache, locked. An empty
     * slot has no stream either, so the hint must not match it then. */
    if (!b->owner) {
        tc_leave(tc);
        return false;
    }
    tc_bin *bin = b->tc_hint;
    if (!bin || bin->stream != b->owner || bin->size != b->size)
        bin = tc_find(tc, b->owner, b->size);
    bool done = bin && !b->num_uses && bin_free(tc, bin, b);
    tc_leave(tc);
    return done;
}

/* ---- the public calls ---------------------------------------------------------------- */

/* Tiers 2 and 3, out of line so that tier 1 needs no stack frame. */
static __attribute__((noinline)) vn_status alloc_slow(vn_device *device, vn_stream *stream,
                                                      size_t bytes, void **out)
{
    mem_tcache *tc = mem_tc_current;
    if (tc && out && tc_alloc(tc, device, stream, bytes, out)) return VN_OK;
    return mem_alloc_locked(device, stream, bytes, out);
}

static __attribute__((noinline)) vn_status free_slow(void *ptr)
{
    mem_tcache *tc = mem_tc_current;
    if (tc && tc_free(tc, ptr)) return VN_OK;
    return mem_free_locked(ptr);
}

vn_status vn_mem_alloc(vn_device *device, vn_stream *stream, size_t bytes, void **out)
{
    mem_tcache *tc = mem_tc_current;
    if (tc && out && hot_alloc(tc, device, stream, bytes, out)) return VN_OK;
    return alloc_slow(device, stream, bytes, out);
}

vn_status vn_mem_free(void *ptr)
{
    mem_tcache *tc = mem_tc_current;
    if (!ptr || (tc && hot_free(tc, ptr))) return VN_OK;
    return free_slow(ptr);
}
