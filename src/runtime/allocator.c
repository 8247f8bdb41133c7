/*
 * allocator.c — the caching allocator's public calls (vinci/memory.h) and the
 * per-device registry.
 *
 * The allocator state of a device lives in a small registry keyed by the
 * device pointer, created on first use, so the device record needs no field
 * for it. A hit in the calling thread's cache and a free into it take no lock
 * (allocator_tcache.c); everything else runs under one process-wide lock, and
 * a cache hit or a free there is still a few table probes and list pushes,
 * with no malloc and no system call.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/allocator_internal.h"

atomic_bool vn_mem_locked;
static mem_alloc *allocs; /* the registry: one per device that used memory */

size_t vn_mem_round_size(size_t bytes)
{
    return mem_round(bytes);
}

/* ---- VINCI_MEM_LIMIT ------------------------------------------------------ */

static vn_status parse_limit(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    static const char suffix[] = "KMGT"; /* powers of 1024 */
    const char *unit = *end ? strchr(suffix, toupper((unsigned char)*end)) : NULL;
    int shift = unit ? 10 * (int)(unit - suffix + 1) : 0;
    if (unit) end++;
    if (errno || end == s || *end != '\0' || s[0] == '-' || v > (UINT64_MAX >> shift))
        return vn_error(VN_ERR_INVALID_ARG, "vn_mem_alloc",
                        "VINCI_MEM_LIMIT=\"%s\" is not a byte count (e.g. 1073741824, 512M, 2G)",
                        s);
    *out = (uint64_t)v << shift;
    return VN_OK;
}

/* ---- the registry ---------------------------------------------------------- */

static mem_alloc *alloc_find(const vn_device *dev)
{
    for (mem_alloc *a = allocs; a; a = a->next)
        if (a->device == dev) return a;
    return NULL;
}

mem_alloc *mem_allocs_head(void)
{
    return allocs;
}

mem_alloc *mem_allocs_unlink(const vn_device *dev)
{
    for (mem_alloc **link = &allocs; *link; link = &(*link)->next) {
        mem_alloc *a = *link;
        if (a->device != dev) continue;
        *link = a->next;
        return a;
    }
    return NULL;
}

/* The device's allocator, created on first use. Caller holds the lock. */
static vn_status alloc_get(vn_device *dev, mem_alloc **out)
{
    *out = alloc_find(dev);
    if (*out) return VN_OK;
    uint64_t limit = 0;
    const char *env = getenv("VINCI_MEM_LIMIT");
    if (env && *env) {
        vn_status st = parse_limit(env, &limit);
        if (st != VN_OK) return st;
    }
    mem_alloc *a = calloc(1, sizeof *a);
    if (!a) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_mem_alloc", "no memory for the allocator");
    a->device = dev;
    a->default_stream = vn_device_default_stream(dev);
    a->stats.limit = limit;
    a->next = allocs;
    allocs = a;
    *out = a;
    return VN_OK;
}

/* Resolves the (device, stream) pair every call accepts. Needs no lock. */
static vn_status resolve_device(const char *where, vn_device **dev, vn_stream *stream)
{
    if (stream) {
        vn_device *sd = vn_stream_device(stream);
        if (*dev && sd != *dev)
            return vn_error(VN_ERR_INVALID_ARG, where, "stream %p belongs to another device",
                            (void *)stream);
        *dev = sd;
    }
    return *dev ? VN_OK : vn_device_default(dev);
}

/* Runs fn on the device's allocator under the lock. */
static vn_status with_alloc(const char *where, vn_device *dev, vn_status (*fn)(mem_alloc *, void *),
                            void *ctx)
{
    vn_status st = resolve_device(where, &dev, NULL);
    if (st != VN_OK) return st;
    mem_alloc *a = NULL;
    mem_lock();
    st = alloc_get(dev, &a);
    if (st == VN_OK) st = fn(a, ctx);
    mem_unlock();
    return st;
}

/* ---- the out-of-memory message --------------------------------------------- */

static const char *fmt_bytes(char buf[48], uint64_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024.0 && u < 4) v /= 1024.0, u++;
    if (u == 0)
        snprintf(buf, 48, "%llu B", (unsigned long long)n);
    else
        snprintf(buf, 48, "%.2f %s (%llu B)", v, unit[u], (unsigned long long)n);
    return buf;
}

static vn_status oom(mem_alloc *a, vn_stream *s, size_t bytes, size_t size, const char *why)
{
    uint64_t tc_cached = mem_tc_fold(a); /* the thread caches' share, for the message */
    vn_mem_stats stats = a->stats;
    stats.cached += tc_cached;
    const vn_mem_stats *t = &stats;
    char b[9][48];
    a->stats.num_ooms++;
    return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_mem_alloc",
                    "out of memory (%s): tried to allocate %s (block %s) on stream %p; "
                    "limit %s; allocated %s; reserved %s (cached %s, pending %s); "
                    "peak allocated %s; peak reserved %s; %llu allocations, %llu cache hits, "
                    "%llu misses",
                    why, fmt_bytes(b[0], bytes), fmt_bytes(b[1], size), (void *)s,
                    t->limit ? fmt_bytes(b[2], t->limit) : "none", fmt_bytes(b[3], t->allocated),
                    fmt_bytes(b[4], t->reserved), fmt_bytes(b[5], t->cached),
                    fmt_bytes(b[6], t->pending), fmt_bytes(b[7], t->peak_allocated),
                    fmt_bytes(b[8], t->peak_reserved), (unsigned long long)t->num_allocs,
                    (unsigned long long)t->cache_hits, (unsigned long long)t->cache_misses);
}

/* ---- allocation -------------------------------------------------------------- */

/* A block from the thread's cache, the stream's cache, else from the shared
 * cache (adopted by the stream), polling the pending blocks once if all are
 * empty. */
static mem_block *take_cached(mem_alloc *a, vn_stream *s, size_t size)
{
    mem_block *own = mem_tc_pop_own(mem_tc_self(), a, s, size);
    if (own) return own;
    for (int round = 0; round < 2; round++) {
        mem_bin *bin = mem_bin_find(a, s, size);
        mem_block *b = mem_bin_pop(a, bin);
        if (!b && (b = mem_bin_pop(a, mem_bin_find(a, NULL, size)))) {
            b->owner = s;
            b->bin = mem_bin_get(a, s, size); /* NULL is fine: looked up at free */
        }
        if (b || !a->pending) return b;
        mem_poll_pending(a);
    }
    return NULL;
}

static bool over_limit(const mem_alloc *a, size_t size)
{
    return a->stats.limit && a->stats.reserved + size > a->stats.limit;
}

/* Releases idle cache, the thread caches' blocks included when the first
 * round is not enough; returns the bytes released. */
static size_t make_room(mem_alloc *a, size_t size)
{
    size_t freed = mem_release_idle(a);
    if (!over_limit(a, size) && freed) return freed;
    mem_tc_flush(a, NULL, false);
    return freed + mem_release_idle(a);
}

/* New memory from the OS; first makes room by releasing idle cache when the
 * limit or the OS says no. */
static vn_status block_new(mem_alloc *a, vn_stream *s, size_t bytes, size_t size, mem_block **out)
{
    if (over_limit(a, size)) make_room(a, size);
    if (over_limit(a, size)) return oom(a, s, bytes, size, "the memory limit would be exceeded");
    mem_block *b = mem_record_get();
    void *p = b ? mem_os_alloc(size) : NULL;
    if (b && !p && make_room(a, size)) p = mem_os_alloc(size);
    if (p) b->ptr = p;
    if (!p || !mem_ptr_insert(b)) {
        if (p) mem_os_free(p, size);
        if (b) mem_record_put(b);
        return oom(a, s, bytes, size, "the system has no more memory");
    }
    b->size = size;
    b->alloc = a;
    b->owner = s;
    b->bin = mem_bin_get(a, s, size);
    a->stats.reserved += size;
    *out = b;
    return VN_OK;
}

static vn_status alloc_locked(mem_alloc *a, vn_stream *s, size_t bytes, void **out)
{
    size_t size = vn_mem_round_size(bytes);
    if (a->fault_countdown && --a->fault_countdown == 0) {
        mem_tc_fault_armed(a, false);
        return oom(a, s, bytes, size, "injected fault");
    }
    mem_block *b = take_cached(a, s, size);
    if (b) {
        a->stats.cache_hits++;
    } else {
        vn_status st = block_new(a, s, bytes, size, &b);
        if (st != VN_OK) return st;
        a->stats.cache_misses++;
    }
    b->state = BLOCK_LIVE;
    b->request = bytes;
    a->stats.allocated += size;
    a->stats.requested += bytes;
    a->stats.num_allocs++;
    a->commit += size;
    mem_peak_check(a);
    mem_tc_note_live(mem_tc_self(), b);
    *out = b->ptr;
    return VN_OK;
}

/* vn_mem_alloc after the thread cache missed (allocator_tcache.c). */
vn_status mem_alloc_locked(vn_device *device, vn_stream *stream, size_t bytes, void **out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_mem_alloc", "out is NULL");
    *out = NULL;
    if (bytes == 0) return vn_error(VN_ERR_INVALID_ARG, "vn_mem_alloc", "size 0 is not allowed");
    if (!mem_round(bytes))
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_mem_alloc", "%zu bytes is too large", bytes);
    vn_status st = resolve_device("vn_mem_alloc", &device, stream);
    if (st != VN_OK) return st;
    mem_alloc *a = NULL;
    mem_lock();
    st = alloc_get(device, &a);
    if (st == VN_OK) st = alloc_locked(a, stream ? stream : a->default_stream, bytes, out);
    mem_unlock();
    return st;
}

/* ---- free and cross-stream use ---------------------------------------------- */

/* The live block at ptr, or an error. Caller holds the lock. */
static vn_status live_block(const char *where, const void *ptr, mem_block **out)
{
    mem_block *b = mem_ptr_find(ptr);
    *out = b;
    if (!b) return vn_error(VN_ERR_INVALID_ARG, where, "%p was not allocated by vn_mem_alloc", ptr);
    if (b->state != BLOCK_LIVE)
        return vn_error(VN_ERR_INVALID_ARG, where, "%p was already freed", ptr);
    return VN_OK;
}

/* vn_mem_free when the block is not the thread cache's to take back. */
vn_status mem_free_locked(void *ptr)
{
    mem_block *b = NULL;
    mem_lock();
    vn_status st = live_block("vn_mem_free", ptr, &b);
    if (st == VN_OK) {
        mem_alloc *a = b->alloc;
        mem_tc_unhot(b);
        atomic_store_explicit(&b->holder, 0, memory_order_relaxed);
        a->stats.allocated -= b->size;
        a->stats.requested -= b->request;
        a->stats.num_frees++;
        a->commit -= b->size;
        b->free_seq = ++a->seq;
        if (b->num_uses)
            st = mem_block_free_uses(a, b);
        else if (!mem_tc_push_own(mem_tc_self(), a, b))
            mem_block_cache(a, b);
    }
    mem_unlock();
    return st;
}

static vn_status add_use(mem_block *b, vn_stream *s)
{
    if (s == b->owner) return VN_OK; /* stream order already protects it */
    for (uint32_t i = 0; i < b->num_uses; i++)
        if (b->uses[i].stream == s) return VN_OK;
    if (b->num_uses == b->cap_uses) {
        uint32_t cap = b->cap_uses * 2;
        mem_use *grown = malloc(cap * sizeof *grown);
        if (!grown)
            return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_mem_record_stream", "no memory for a use");
        memcpy(grown, b->uses, b->num_uses * sizeof *grown);
        if (b->uses != b->uses_inline) free(b->uses);
        b->uses = grown;
        b->cap_uses = cap;
    }
    b->uses[b->num_uses++] = (mem_use){s, NULL};
    mem_tc_unhot(b); /* the fast frees do not look at uses */
    return VN_OK;
}

vn_status vn_mem_record_stream(void *ptr, vn_stream *stream)
{
    if (!ptr) return vn_error(VN_ERR_INVALID_ARG, "vn_mem_record_stream", "ptr is NULL");
    mem_block *b = NULL;
    mem_lock();
    vn_status st = live_block("vn_mem_record_stream", ptr, &b);
    vn_stream *s = stream ? stream : (b ? b->alloc->default_stream : NULL);
    if (st == VN_OK && vn_stream_device(s) != b->alloc->device)
        st = vn_error(VN_ERR_INVALID_ARG, "vn_mem_record_stream",
                      "stream %p belongs to another device than block %p", (void *)s, ptr);
    if (st == VN_OK) st = add_use(b, s);
    mem_unlock();
    return st;
}

/* ---- statistics, limit, release, fault injection -------------------------- */

static vn_status stats_fn(mem_alloc *a, void *ctx)
{
    mem_poll_pending(a); /* so blocks whose events completed count as cached */
    uint64_t tc_cached = mem_tc_fold(a);
    vn_mem_stats *out = ctx;
    *out = a->stats;
    out->cached += tc_cached;
    return VN_OK;
}

vn_status vn_mem_stats_get(vn_device *device, vn_mem_stats *out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_mem_stats_get", "out is NULL");
    return with_alloc("vn_mem_stats_get", device, stats_fn, out);
}

static vn_status reset_peak_fn(mem_alloc *a, void *ctx)
{
    mem_tc_fold(a); /* every credit back: commit is the true allocated bytes */
    a->stats.peak_allocated = a->stats.allocated;
    a->stats.peak_reserved = a->stats.reserved;
    return VN_OK;
}

vn_status vn_mem_reset_peak(vn_device *device)
{
    return with_alloc("vn_mem_reset_peak", device, reset_peak_fn, NULL);
}

static vn_status release_fn(mem_alloc *a, void *ctx)
{
    return mem_release_all(a);
}

vn_status vn_mem_release_cache(vn_device *device)
{
    return with_alloc("vn_mem_release_cache", device, release_fn, NULL);
}

static vn_status limit_fn(mem_alloc *a, void *ctx)
{
    a->stats.limit = *(const uint64_t *)ctx;
    return VN_OK;
}

vn_status vn_mem_set_limit(vn_device *device, uint64_t bytes)
{
    return with_alloc("vn_mem_set_limit", device, limit_fn, &bytes);
}

static vn_status fault_fn(mem_alloc *a, void *ctx)
{
    a->fault_countdown = *(const uint64_t *)ctx;
    mem_tc_fault_armed(a, a->fault_countdown != 0);
    return VN_OK;
}

vn_status vn_mem_fault_inject(vn_device *device, uint64_t n)
{
    return with_alloc("vn_mem_fault_inject", device, fault_fn, &n);
}
