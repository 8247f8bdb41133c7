/*
 * allocator_cache.c — the caching allocator's free lists, cross-stream events
 * and giving memory back to the OS. Callers hold the allocator lock; only
 * mem_release_all drops it (to wait on events) and takes it again.
 *
 * Why release needs care: a block on stream S's free list was freed by the
 * host, but work already queued on S may still use it (that is why it is
 * reusable only on S). Before such a block can go back to the OS we need
 * proof that S has passed the point where it was freed: S idle now
 * (vn_stream_query), or an event recorded on S after the free has completed.
 */
#include <stdlib.h>

#include "runtime/allocator_internal.h"

void mem_block_release(mem_block *b)
{
    vn_mem_stats *s = &b->alloc->stats;
    if (b->state == BLOCK_CACHED) s->cached -= b->size;
    if (b->state == BLOCK_PENDING) s->pending -= b->size;
    if (b->state == BLOCK_LIVE) {
        s->allocated -= b->size;
        s->requested -= b->request;
        b->alloc->commit -= b->size;
    }
    s->reserved -= b->size;
    s->num_releases++;
    mem_ptr_remove(b->ptr);
    mem_os_free(b->ptr, b->size);
    if (b->uses != b->uses_inline) free(b->uses);
    mem_record_put(b);
}

void mem_block_cache(mem_alloc *a, mem_block *b)
{
    if (!b->bin) b->bin = mem_bin_get(a, b->owner, b->size);
    if (!b->bin) { /* no memory for a new bin: the OS gets the block back */
        mem_block_release(b);
        return;
    }
    b->state = BLOCK_CACHED;
    b->next = b->bin->free;
    b->bin->free = b;
    a->stats.cached += b->size;
}

mem_block *mem_bin_pop(mem_alloc *a, mem_bin *bin)
{
    mem_block *b = bin ? bin->free : NULL;
    if (!b) return NULL;
    bin->free = b->next;
    b->next = NULL;
    a->stats.cached -= b->size;
    return b;
}

/* ---- events: a small pool, since creating one per free would be slow ---- */

static vn_event *event_get(mem_alloc *a)
{
    if (a->num_events) return a->events[--a->num_events];
    vn_event *ev = NULL;
    return vn_event_create(a->device, &ev) == VN_OK ? ev : NULL;
}

static void event_put(mem_alloc *a, vn_event *ev)
{
    if (a->num_events == a->cap_events) {
        size_t cap = a->cap_events ? a->cap_events * 2 : 16;
        vn_event **grown = realloc(a->events, cap * sizeof *grown);
        /* Leak it rather than destroy it: a release may be waiting on it
         * without the lock (see fence_wait). */
        if (!grown) return;
        a->events = grown;
        a->cap_events = cap;
    }
    a->events[a->num_events++] = ev;
}

/* True when every event of a pending block has completed (each completed one
 * goes back to the pool at once, so a later poll does not query it again). */
static bool block_events_done(mem_alloc *a, mem_block *b)
{
    bool done = !b->stuck;
    for (uint32_t i = 0; i < b->num_uses; i++) {
        vn_event *ev = b->uses[i].event;
        if (!ev) continue;
        if (vn_event_query(ev) == VN_OK) {
            event_put(a, ev);
            b->uses[i].event = NULL;
        } else {
            done = false;
        }
    }
    return done;
}

void mem_poll_pending(mem_alloc *a)
{
    mem_block **link = &a->pending;
    while (*link) {
        mem_block *b = *link;
        if (!block_events_done(a, b)) {
            link = &b->next;
            continue;
        }
        *link = b->next;
        a->stats.pending -= b->size;
        b->num_uses = 0;
        mem_block_cache(a, b);
    }
}

vn_status mem_block_free_uses(mem_alloc *a, mem_block *b)
{
    vn_status st = VN_OK;
    for (uint32_t i = 0; i < b->num_uses; i++) {
        vn_event *ev = event_get(a);
        vn_status rec = ev ? vn_event_record(ev, b->uses[i].stream) : VN_ERR_OUT_OF_MEMORY;
        if (rec != VN_OK) {
            /* Without the event nothing proves the stream is done with the
             * block: keep it out of circulation rather than risk reuse. */
            if (ev) vn_event_destroy(ev);
            ev = NULL;
            b->stuck = true;
            st = rec;
        }
        b->uses[i].event = ev;
    }
    b->state = BLOCK_PENDING;
    b->next = a->pending;
    a->pending = b;
    a->stats.pending += b->size;
    return st;
}

/* ---- giving memory back ------------------------------------------------- */

/* Releases the bin's blocks freed at or before `seq`; returns the bytes. */
static size_t bin_release(mem_bin *bin, uint64_t seq)
{
    size_t bytes = 0;
    mem_block **link = &bin->free;
    while (*link) {
        mem_block *b = *link;
        if (b->free_seq > seq) {
            link = &b->next;
            continue;
        }
        *link = b->next;
        bytes += b->size;
        mem_block_release(b);
    }
    return bytes;
}

size_t mem_release_idle(mem_alloc *a)
{
    mem_poll_pending(a);
    size_t bytes = 0;
    for (size_t i = 0; i < a->bin_cap; i++) {
        mem_bin *bin = a->bins[i];
        if (!bin || !bin->free) continue;
        /* Holding the lock, no free can slip in between the query and the
         * release, so every block on the list was freed before the query. */
        if (bin->stream && vn_stream_query(bin->stream) != VN_OK) continue;
        bytes += bin_release(bin, UINT64_MAX);
    }
    return bytes;
}

typedef struct fence {
    vn_stream *stream;
    vn_event *event; /* recorded on stream, or NULL */
    bool passed;
} fence;

typedef struct fence_set {
    fence *f;
    size_t n, cap;
} fence_set;

static bool fence_add(fence_set *set, vn_stream *s)
{
    if (!s) return true;
    for (size_t i = 0; i < set->n; i++)
        if (set->f[i].stream == s) return true;
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        fence *grown = realloc(set->f, cap * sizeof *grown);
        if (!grown) return false;
        set->f = grown;
        set->cap = cap;
    }
    set->f[set->n++] = (fence){s, NULL, false};
    return true;
}

/* The streams whose cached or pending blocks need a fence. */
static vn_status fence_collect(mem_alloc *a, fence_set *set)
{
    bool ok = true;
    for (size_t i = 0; i < a->bin_cap; i++)
        if (a->bins[i] && a->bins[i]->free) ok &= fence_add(set, a->bins[i]->stream);
    for (mem_block *b = a->pending; b; b = b->next) ok &= fence_add(set, b->owner);
    return ok ? VN_OK
              : vn_error(VN_ERR_OUT_OF_MEMORY, "vn_mem_release_cache", "no memory for fences");
}

static void fence_record(mem_alloc *a, fence_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        fence *f = &set->f[i];
        f->event = event_get(a);
        if (f->event && vn_event_record(f->event, f->stream) != VN_OK) {
            vn_event_destroy(f->event);
            f->event = NULL;
        }
    }
}

/* Copies the pending blocks' events, to wait on them without the lock. */
static vn_event **pending_events(mem_alloc *a, size_t *count)
{
    size_t n = 0;
    for (mem_block *b = a->pending; b; b = b->next) n += b->num_uses;
    *count = 0;
    vn_event **evs = n ? malloc(n * sizeof *evs) : NULL;
    if (!evs) return NULL;
    for (mem_block *b = a->pending; b; b = b->next)
        for (uint32_t i = 0; i < b->num_uses; i++)
            if (b->uses[i].event) evs[(*count)++] = b->uses[i].event;
    return evs;
}

/* True while a bin of `s` still holds a block freed at or before `seq`. */
static bool fence_needed(mem_alloc *a, vn_stream *s, uint64_t seq)
{
    for (size_t i = 0; i < a->bin_cap; i++) {
        mem_bin *bin = a->bins[i];
        if (!bin || bin->stream != s) continue;
        for (mem_block *b = bin->free; b; b = b->next)
            if (b->free_seq <= seq) return true;
    }
    return false;
}

/* Waits (without the lock) for one fence. A stream destroyed after the fence
 * was recorded may never run it; but then the destroy hook has moved its
 * blocks to the shared cache, so every few milliseconds we check, under the
 * lock, whether the fence still guards anything. */
static bool fence_pass(mem_alloc *a, fence *f, uint64_t seq)
{
    for (;;) {
        vn_status st = vn_event_synchronize(f->event, 10);
        if (st == VN_OK) return true;
        if (st != VN_ERR_TIMEOUT) return false;
        mem_lock();
        bool needed = fence_needed(a, f->stream, seq);
        mem_unlock();
        if (!needed) return false;
    }
}

/* Waits, without the lock, for the pending events and the fences. Events are
 * never destroyed while the device lives, so a pending event another thread
 * recycles meanwhile is still a valid object (we may just wait longer). */
static void fence_wait(mem_alloc *a, fence_set *set, uint64_t seq, vn_event **evs, size_t nev)
{
    mem_unlock();
    for (size_t i = 0; i < nev; i++) vn_event_synchronize(evs[i], -1);
    for (size_t i = 0; i < set->n; i++)
        set->f[i].passed = set->f[i].event && fence_pass(a, &set->f[i], seq);
    mem_lock();
}

/* Releases, for each passed fence, the blocks freed before it was recorded. */
static void fence_release(mem_alloc *a, fence_set *set, uint64_t seq)
{
    mem_poll_pending(a);
    for (size_t i = 0; i < a->bin_cap; i++) {
        mem_bin *bin = a->bins[i];
        if (!bin || !bin->free) continue;
        for (size_t k = 0; k < set->n; k++)
            if (set->f[k].passed && set->f[k].stream == bin->stream) bin_release(bin, seq);
    }
    /* Only completed events go back to the pool: a reused event must not
     * still have a record in flight. Destroying one drops just our reference. */
    for (size_t k = 0; k < set->n; k++) {
        if (set->f[k].passed)
            event_put(a, set->f[k].event);
        else if (set->f[k].event)
            vn_event_destroy(set->f[k].event);
    }
}

vn_status mem_release_all(mem_alloc *a)
{
    mem_tc_flush(a, NULL, false); /* the thread caches' blocks too */
    mem_release_idle(a);
    fence_set set = {0};
    vn_status st = fence_collect(a, &set);
    if (st == VN_OK && (set.n || a->pending)) {
        fence_record(a, &set);
        uint64_t seq = a->seq;
        size_t nev = 0;
        vn_event **evs = pending_events(a, &nev);
        fence_wait(a, &set, seq, evs, nev);
        free(evs);
        fence_release(a, &set, seq);
    }
    free(set.f);
    mem_release_idle(a); /* the shared cache, and whatever became idle meanwhile */
    return st;
}

/* ---- device destroy ------------------------------------------------------ */

void mem_events_destroy(mem_alloc *a)
{
    for (size_t i = 0; i < a->num_events; i++) vn_event_destroy(a->events[i]);
    free(a->events);
    a->events = NULL;
    a->num_events = a->cap_events = 0;
}
