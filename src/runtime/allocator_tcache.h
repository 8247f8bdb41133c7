/*
 * allocator_tcache.h — the per-thread caches' records, shared by
 * allocator_tcache.c (the lock-free fast paths) and allocator_tcache_locked.c
 * (what locked code does to them). Private to src/runtime.
 *
 * A bin caches blocks of one (stream, size) in two places:
 *   - the hot block: one block that stays in the bin while the thread
 *     allocates and frees it again and again. The fast path only flips the
 *     parity of `seq` (even: the block is cached here; odd: handed out) and
 *     the block's state, so a hit plus a free is a handful of instructions
 *     with no loop-carried data chain through memory: the pointer it returns
 *     is read from `hot_ptr`, which the pair does not write. The counters
 *     (allocations, frees, allocated and requested bytes) are derived from
 *     `seq` when needed (tc_settle), not counted one by one.
 *   - a LIFO list of further blocks, counted one by one.
 * The hot block, while cached, holds an implicit credit (see
 * allocator_tcache.c on credits and the peak); list blocks hold explicit ones.
 */
#ifndef VINCI_RUNTIME_ALLOCATOR_TCACHE_H
#define VINCI_RUNTIME_ALLOCATOR_TCACHE_H

#include "runtime/allocator_internal.h"

#define TC_BINS      64  /* bins per thread, open addressing */
#define TC_PROBES    4   /* a bin lives within this many slots of its home */
#define TC_LIVE      256 /* direct-mapped table of blocks handed out */
#define TC_BIN_BYTES ((size_t)32 << 20)
#define TC_BIN_MAX   32 /* list blocks per bin at most (and TC_BIN_BYTES) */
/* List frees while the hot block stays out before a freed block replaces it */
#define TC_HOT_PATIENCE 4
/* A block's holder: id << TC_TAG_SHIFT for a block the cache handed out, with
 * (bin index + 1) in the low bits while it is that bin's hot block. */
#define TC_TAG_SHIFT 8

/* flush_req bits: TC_STOP or TC_FAULT send every call down the locked path;
 * TC_FENCED (no membarrier) only the hot-block tier, which has no fence. */
enum { TC_STOP = 1, TC_FAULT = 2, TC_FENCED = 4 };

/* List counts are in blocks: every block of a bin has the bin's size, so the
 * fast paths update two counters, and bytes are derived when folding. */
typedef struct tc_bin {
    /* the hot block: all the hottest path reads */
    uint64_t seq;         /* even: the hot block is cached here; odd: out, or none */
    void *hot_ptr;        /* NULL: no hot block */
    mem_block *hot;       /* its record */
    uint64_t tag;         /* its holder while it is this bin's hot block */
    size_t hot_req;       /* its request (a hit for another request updates it) */
    uint64_t seq_settled; /* seq when the counters last took in its flips */
    vn_stream *stream;    /* NULL: slot empty */
    size_t size;
    /* the list, and counters not yet folded into alloc->stats (every fast
     * allocation is a hit) */
    mem_alloc *alloc;
    mem_block *free;
    uint32_t credit;     /* blocks on `free` the fast path may hand out */
    uint32_t uncredited; /* blocks on `free` only the locked path hands out */
    uint32_t cap;        /* credit + uncredited stays <= cap */
    uint64_t d_allocs, d_frees;
    int64_t d_requested;
    uint64_t idle_seq;   /* seq at the last list free (see hot_idle) */
    uint32_t idle_frees; /* list frees since seq last changed */
} tc_bin;

struct mem_tcache {
    atomic_int busy;      /* the owner is in a fast path */
    atomic_int flush_req; /* TC_STOP | TC_FAULT | TC_FENCED */
    uint64_t id;
    /* The bin of the last fast allocation, and the (device, stream) arguments
     * that led there: a call with the same arguments and the hot block's
     * request skips resolving the stream, rounding and the bin search. */
    tc_bin *last;
    vn_device *k_dev;
    vn_stream *k_stream;
    mem_tcache *next; /* all caches (allocator lock) */
    tc_bin none;      /* never keyed: `last` when there is no last bin */
    tc_bin bins[TC_BINS];
    mem_block *live[TC_LIVE];
};

/* The calling thread's cache (NULL until its first locked call). */
extern _Thread_local mem_tcache *mem_tc_current
    __attribute__((tls_model("initial-exec"), visibility("hidden")));
/* Set once, before the first cache exists: whether membarrier works. */
extern bool mem_tc_membarrier __attribute__((visibility("hidden")));

/* ---- the handshake (see allocator_tcache_locked.c) ---- */

/* For the hot-block tier: no test of mem_tc_membarrier (where it is false,
 * TC_FENCED is set and this fails). */
static inline bool tc_enter_hot(mem_tcache *tc)
{
    atomic_store_explicit(&tc->busy, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst); /* the compiler keeps the order */
    if (!atomic_load_explicit(&tc->flush_req, memory_order_seq_cst)) return true;
    atomic_store_explicit(&tc->busy, 0, memory_order_release);
    return false;
}

static inline bool tc_enter(mem_tcache *tc)
{
    if (mem_tc_membarrier) {
        atomic_store_explicit(&tc->busy, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_exchange_explicit(&tc->busy, 1, memory_order_seq_cst); /* a full barrier */
    }
    if (!(atomic_load_explicit(&tc->flush_req, memory_order_seq_cst) & ~TC_FENCED)) return true;
    atomic_store_explicit(&tc->busy, 0, memory_order_release);
    return false;
}

static inline void tc_leave(mem_tcache *tc)
{
    atomic_store_explicit(&tc->busy, 0, memory_order_release);
}

/* ---- bins ---- */

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

static inline uint64_t tc_plain(const mem_tcache *tc)
{
    return tc->id << TC_TAG_SHIFT;
}

/* The holder value of a block this cache handed out (hot or not). */
static inline bool tc_holds(const mem_tcache *tc, uint64_t holder)
{
    return holder >> TC_TAG_SHIFT == tc->id;
}

/* True when the bin's hot block is out and no longer this bin's (freed on
 * another thread, or given uses): the slot only remembers it. */
static inline bool tc_hot_stale(const tc_bin *bin)
{
    return bin->hot_ptr && (bin->seq & 1) &&
           atomic_load_explicit(&bin->hot->holder, memory_order_relaxed) != bin->tag;
}

/* In allocator_tcache.c; the owner (or a stopper, with the caches stopped). */
void tc_settle(tc_bin *bin);
void tc_hot_key(mem_tcache *tc, tc_bin *bin, mem_block *b);
mem_block *tc_hot_take(tc_bin *bin);
void tc_hot_drop(mem_tcache *tc, tc_bin *bin);

#endif /* VINCI_RUNTIME_ALLOCATOR_TCACHE_H */
