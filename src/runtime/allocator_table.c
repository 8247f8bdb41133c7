/*
 * allocator_table.c — the caching allocator's two hash tables, both open
 * addressing with linear probing and power-of-two capacities, kept at most
 * half full so a probe is short:
 *
 *   - pointer -> block for every block reserved from the OS, across all
 *     devices (vn_mem_free gets only the pointer); deletion shifts later
 *     entries back, so there are no tombstones and lookups stay O(1);
 *   - per allocator, (stream, size) -> bin; bins are only added on the hot
 *     path and removed by a rebuild when a stream dies.
 *
 * They grow with malloc, which happens only when a new block or bin appears
 * (a cache miss), never on a hit or a free. Callers hold the allocator lock.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/allocator_internal.h"

static struct {
    mem_block **slot;
    size_t cap, count;
} ptrs;

static size_t hash_ptr(const void *p, size_t cap)
{
    /* Blocks are 64-byte aligned: drop the zero bits, then Fibonacci hashing. */
    uint64_t h = ((uint64_t)(uintptr_t)p >> 6) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

mem_block *mem_ptr_find(const void *ptr)
{
    if (!ptrs.cap) return NULL;
    for (size_t i = hash_ptr(ptr, ptrs.cap);; i = (i + 1) & (ptrs.cap - 1)) {
        mem_block *b = ptrs.slot[i];
        if (!b || b->ptr == ptr) return b;
    }
}

static void ptr_place(mem_block **slot, size_t cap, mem_block *b)
{
    size_t i = hash_ptr(b->ptr, cap);
    while (slot[i]) i = (i + 1) & (cap - 1);
    slot[i] = b;
}

static bool ptr_grow(void)
{
    size_t cap = ptrs.cap ? ptrs.cap * 2 : 256;
    mem_block **slot = calloc(cap, sizeof *slot);
    if (!slot) return false;
    for (size_t i = 0; i < ptrs.cap; i++)
        if (ptrs.slot[i]) ptr_place(slot, cap, ptrs.slot[i]);
    free(ptrs.slot);
    ptrs.slot = slot;
    ptrs.cap = cap;
    return true;
}

bool mem_ptr_insert(mem_block *block)
{
    if ((ptrs.count + 1) * 2 > ptrs.cap && !ptr_grow()) return false;
    ptr_place(ptrs.slot, ptrs.cap, block);
    ptrs.count++;
    return true;
}

void mem_ptr_remove(const void *ptr)
{
    size_t mask = ptrs.cap - 1, i = hash_ptr(ptr, ptrs.cap);
    while (ptrs.slot[i]->ptr != ptr) i = (i + 1) & mask;
    /* Backward-shift deletion: move each later entry of the run into the hole
     * unless its home slot lies cyclically in (hole, j]. */
    for (size_t j = (i + 1) & mask; ptrs.slot[j]; j = (j + 1) & mask) {
        size_t home = hash_ptr(ptrs.slot[j]->ptr, ptrs.cap);
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays) continue;
        ptrs.slot[i] = ptrs.slot[j];
        i = j;
    }
    ptrs.slot[i] = NULL;
    ptrs.count--;
}

void mem_ptr_each(mem_alloc *alloc, void (*fn)(mem_block *, void *), void *ctx)
{
    for (size_t i = 0; i < ptrs.cap; i++)
        if (ptrs.slot[i] && ptrs.slot[i]->alloc == alloc) fn(ptrs.slot[i], ctx);
}

/* ---- (stream, size) -> bin --------------------------------------------- */

static size_t hash_bin(const vn_stream *s, size_t size, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)size >> 9) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h >> 32) & (cap - 1);
}

mem_bin *mem_bin_find(mem_alloc *a, vn_stream *stream, size_t size)
{
    if (!a->bin_cap) return NULL;
    for (size_t i = hash_bin(stream, size, a->bin_cap);; i = (i + 1) & (a->bin_cap - 1)) {
        mem_bin *b = a->bins[i];
        if (!b || (b->stream == stream && b->size == size)) return b;
    }
}

static void bin_place(mem_bin **slot, size_t cap, mem_bin *b)
{
    size_t i = hash_bin(b->stream, b->size, cap);
    while (slot[i]) i = (i + 1) & (cap - 1);
    slot[i] = b;
}

static bool bin_rehash(mem_alloc *a, size_t cap)
{
    mem_bin **slot = calloc(cap, sizeof *slot);
    if (!slot) return false;
    for (size_t i = 0; i < a->bin_cap; i++)
        if (a->bins[i]) bin_place(slot, cap, a->bins[i]);
    free(a->bins);
    a->bins = slot;
    a->bin_cap = cap;
    return true;
}

mem_bin *mem_bin_get(mem_alloc *a, vn_stream *stream, size_t size)
{
    mem_bin *b = mem_bin_find(a, stream, size);
    if (b) return b;
    if ((a->bin_count + 1) * 2 > a->bin_cap && !bin_rehash(a, a->bin_cap ? a->bin_cap * 2 : 64))
        return NULL;
    b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->stream = stream;
    b->size = size;
    bin_place(a->bins, a->bin_cap, b);
    a->bin_count++;
    return b;
}

/* Backward-shift deletion of slot i (as for pointers): no tombstones. */
static void bin_delete_at(mem_alloc *a, size_t i)
{
    size_t mask = a->bin_cap - 1;
    free(a->bins[i]);
    for (size_t j = (i + 1) & mask; a->bins[j]; j = (j + 1) & mask) {
        size_t home = hash_bin(a->bins[j]->stream, a->bins[j]->size, a->bin_cap);
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays) continue;
        a->bins[i] = a->bins[j];
        i = j;
    }
    a->bins[i] = NULL;
    a->bin_count--;
}

void mem_bin_filter(mem_alloc *a, bool (*keep)(mem_bin *, void *), void *ctx)
{
    /* A deletion only moves entries into the hole at i or into later slots
     * (or, across the wrap, from the scanned start to the unscanned end), so
     * re-examining slot i after a deletion visits every entry. */
    for (size_t i = 0; i < a->bin_cap;) {
        if (a->bins[i] && !keep(a->bins[i], ctx))
            bin_delete_at(a, i);
        else
            i++;
    }
}

void mem_bin_free_all(mem_alloc *a)
{
    for (size_t i = 0; i < a->bin_cap; i++) free(a->bins[i]);
    free(a->bins);
    a->bins = NULL;
    a->bin_cap = a->bin_count = 0;
}
