/*
 * allocator_internal.h — the caching allocator's records, shared by
 * allocator.c (public calls), allocator_cache.c (free lists, events, release),
 * allocator_table.c (hash tables) and allocator_os.c (memory from the OS).
 * Private to src/runtime.
 *
 * Invariants (all state is guarded by the one lock, mem_lock / mem_unlock,
 * except a thread cache's bins, which its thread also uses without the lock:
 * see allocator_tcache*.c for that protocol):
 *   - every block reserved from the OS is in the pointer table exactly once,
 *     from its creation until it is given back to the OS;
 *   - a block is in exactly one state: LIVE (handed out, in no list), CACHED
 *     (on the free list of `bin` or of a thread-cache bin, or a thread-cache
 *     bin's hot block), or PENDING (on its allocator's pending list, waiting
 *     for the events in `uses`);
 *   - a bin's free list holds only blocks of exactly `bin->size` bytes, all
 *     safe to hand to work on `bin->stream` now (stream order protects them);
 *     a bin with stream NULL is the shared cache, safe for any stream;
 *   - `block->bin`, when not NULL, is the bin of (block->owner, block->size);
 *   - the stats' byte counts plus the thread-cache bins' deltas equal the
 *     sums over the blocks in each state;
 *   - `commit` = allocated + the credits of all thread-cache bins, and
 *     commit <= peak_allocated after every allocation (see mem_peak_check).
 */
#ifndef VINCI_RUNTIME_ALLOCATOR_INTERNAL_H
#define VINCI_RUNTIME_ALLOCATOR_INTERNAL_H

#include <sched.h>
#include <stdatomic.h>

#include "runtime/allocator.h"

#define MEM_ALIGN       64
#define MEM_SMALL_ROUND ((size_t)512)
#define MEM_SMALL_MAX   ((size_t)1 << 20)
#define MEM_LARGE_ROUND ((size_t)2 << 20)
#define MEM_INLINE_USES 2

enum { BLOCK_LIVE = 1, BLOCK_CACHED, BLOCK_PENDING };

typedef struct mem_alloc mem_alloc;
typedef struct mem_bin mem_bin;

/* Another stream that used a block; `event` is recorded on it at free. */
typedef struct mem_use {
    vn_stream *stream;
    vn_event *event;
} mem_use;

typedef struct mem_block {
    /* The thread cache that handed the block out and may free it without the
     * lock: its id << 8, plus (bin index + 1) while the block is that bin's
     * hot block (cached or out); 0 when none. Read by threads holding a stale
     * pointer to the record, hence atomic; records are never freed
     * (mem_record_*). */
    atomic_ullong holder;
    void *ptr;
    size_t size;    /* rounded: the bytes reserved */
    size_t request; /* the bytes asked for, while LIVE */
    mem_alloc *alloc;
    vn_stream *owner; /* NULL once the owner stream is destroyed */
    mem_bin *bin;     /* cached lookup of (owner, size); NULL: look it up */
    void *tc_hint;    /* the holder's thread-cache bin for it, if any (a guess) */
    struct mem_block *next;
    uint64_t free_seq; /* the allocator's seq when last freed */
    int state;
    bool stuck; /* an event record failed: only device destroy frees it */
    uint32_t num_uses, cap_uses;
    mem_use *uses; /* points at uses_inline or a heap array */
    mem_use uses_inline[MEM_INLINE_USES];
} mem_block;

struct mem_bin {
    vn_stream *stream; /* NULL: the shared cache */
    size_t size;
    mem_block *free; /* LIFO: the most recently freed block is the warmest */
};

struct mem_alloc {
    vn_device *device;
    vn_stream *default_stream;
    mem_alloc *next;
    /* (stream, size) -> bin, open addressing; bins are removed only by rebuild */
    mem_bin **bins;
    size_t bin_cap, bin_count;
    mem_block *pending;
    vn_event **events; /* idle events kept for reuse */
    size_t num_events, cap_events;
    vn_mem_stats stats;
    uint64_t fault_countdown; /* 0: disarmed */
    bool fault_armed;         /* counted in the thread caches (mem_tc_fault_armed) */
    uint64_t seq;             /* counts frees */
    uint64_t commit;          /* allocated + thread-cache credits (see invariants) */
};

/* The allocator's one lock: a test-and-set lock whose release is a plain
 * store. A pthread mutex costs two locked instructions per critical section,
 * and each waits for the section's stores to drain; the hot paths are a few
 * probes, so that was most of an alloc + free pair. Waiters spin briefly, then
 * yield, so a preempted holder (or one in mmap) gets the CPU. Nothing blocks
 * while holding it (release drops it around its waits). */
extern atomic_bool vn_mem_locked;

static inline void mem_lock(void)
{
    while (atomic_exchange_explicit(&vn_mem_locked, true, memory_order_acquire)) {
        for (int spin = 0; atomic_load_explicit(&vn_mem_locked, memory_order_relaxed); spin++) {
            if (spin < 100)
                __builtin_ia32_pause();
            else
                sched_yield();
        }
    }
}

static inline void mem_unlock(void)
{
    atomic_store_explicit(&vn_mem_locked, false, memory_order_release);
}

/* ---- allocator.c: the registry of per-device allocators ---- */
mem_alloc *mem_allocs_head(void);
mem_alloc *mem_allocs_unlink(const vn_device *device); /* NULL if it has none */

/* ---- allocator_table.c ---- */
mem_block *mem_ptr_find(const void *ptr);
bool mem_ptr_insert(mem_block *block);
void mem_ptr_remove(const void *ptr);
/* Calls fn(block, ctx) for every block of `alloc`; fn must not change the table. */
void mem_ptr_each(mem_alloc *alloc, void (*fn)(mem_block *, void *), void *ctx);
mem_bin *mem_bin_find(mem_alloc *a, vn_stream *stream, size_t size);
mem_bin *mem_bin_get(mem_alloc *a, vn_stream *stream, size_t size); /* creates; NULL: no memory */
/* Drops the bins for which keep(bin, ctx) is false (their lists must be empty). */
void mem_bin_filter(mem_alloc *a, bool (*keep)(mem_bin *, void *), void *ctx);
void mem_bin_free_all(mem_alloc *a);

/* ---- allocator_os.c ---- */
void *mem_os_alloc(size_t size);
void mem_os_free(void *ptr, size_t size);

/* The block size for a request (vn_mem_round_size); 0: too large or 0. */
static inline size_t mem_round(size_t bytes)
{
    if (bytes == 0) return 0;
    if (bytes <= MEM_SMALL_MAX) return (bytes + MEM_SMALL_ROUND - 1) & ~(MEM_SMALL_ROUND - 1);
    if (bytes > SIZE_MAX - MEM_LARGE_ROUND) return 0;
    return (bytes + MEM_LARGE_ROUND - 1) & ~(MEM_LARGE_ROUND - 1);
}

/* ---- allocator.c: the locked paths of vn_mem_alloc / vn_mem_free ---- */
vn_status mem_alloc_locked(vn_device *device, vn_stream *stream, size_t bytes, void **out);
vn_status mem_free_locked(void *ptr);

/* ---- allocator_tcache*.c: per-thread caches (vn_mem_alloc / vn_mem_free's
 * lock-free fast path) ---- */
typedef struct mem_tcache mem_tcache;
/* The calling thread's cache, created on first use (NULL: no memory). */
mem_tcache *mem_tc_self(void);
/* Locked-path helpers for the calling thread's own cache. */
mem_block *mem_tc_pop_own(mem_tcache *tc, mem_alloc *a, vn_stream *s, size_t size);
bool mem_tc_push_own(mem_tcache *tc, mem_alloc *a, mem_block *b);
void mem_tc_note_live(mem_tcache *tc, mem_block *b);
/* Moves every thread cache's blocks of `a` (all allocators: NULL) for stream
 * `s` (any stream: NULL) to the shared structures, folding their counters;
 * `drop` forgets them instead of caching (device destroy). Stops the owner
 * threads' fast paths for the duration. */
void mem_tc_flush(mem_alloc *a, vn_stream *s, bool drop);
/* Stop every thread's fast path until the matching resume (nests); for
 * locked code that touches blocks a fast path may be using. Lock held. */
void mem_tc_stop(void);
void mem_tc_resume(void);
/* Folds every thread cache's counters and credits for `a` into a->stats and
 * a->commit, and returns the bytes cached in thread caches. */
uint64_t mem_tc_fold(mem_alloc *a);
/* Records whether `a` has a fault injection armed (a->fault_armed); while any
 * allocator has, every allocation takes the locked path, which counts it. */
void mem_tc_fault_armed(mem_alloc *a, bool armed);
/* Before a locked free or record_stream of live block b: b stops being a hot
 * block, so no fast path frees it. */
void mem_tc_unhot(mem_block *b);
/* True when a thread other than the caller holds a bin of `a`. */
bool mem_tc_others(mem_tcache *self, mem_alloc *a);
/* Block records: recycled, never freed, so a stale pointer stays readable. */
mem_block *mem_record_get(void);
void mem_record_put(mem_block *b);
/* After an allocation raised a->commit: keeps peak_allocated exact. */
void mem_peak_check(mem_alloc *a);

/* ---- allocator_cache.c ---- */
void mem_block_release(mem_block *b); /* back to the OS; b must be in no list */
void mem_block_cache(mem_alloc *a, mem_block *b);
mem_block *mem_bin_pop(mem_alloc *a, mem_bin *bin);
void mem_poll_pending(mem_alloc *a);
vn_status mem_block_free_uses(mem_alloc *a, mem_block *b);
size_t mem_release_idle(mem_alloc *a);
vn_status mem_release_all(mem_alloc *a);
void mem_events_destroy(mem_alloc *a);

#endif /* VINCI_RUNTIME_ALLOCATOR_INTERNAL_H */
