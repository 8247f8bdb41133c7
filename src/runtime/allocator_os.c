/*
 * allocator_os.c — where the caching allocator's blocks come from.
 *
 * Small blocks (up to 1 MiB) come from the C heap, 64-byte aligned. Large
 * blocks (multiples of 2 MiB) are their own anonymous mappings aligned to
 * 2 MiB, so that transparent huge pages can back them (fewer page faults and
 * TLB misses on first touch) and so that giving one back really returns it to
 * the OS instead of leaving it in the heap.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "runtime/allocator_internal.h"

static void *map_aligned(size_t size)
{
    /* Over-map by one alignment unit, then trim both ends to the aligned range. */
    size_t span = size + MEM_LARGE_ROUND;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    uintptr_t start = ((uintptr_t)raw + MEM_LARGE_ROUND - 1) & ~(uintptr_t)(MEM_LARGE_ROUND - 1);
    char *p = (char *)start;
    size_t head = (size_t)(p - raw), tail = span - head - size;
    if (head) munmap(raw, head);
    if (tail) munmap(p + size, tail);
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE); /* a hint: failure only costs speed */
#endif
    return p;
}

void *mem_os_alloc(size_t size)
{
    if (size > MEM_SMALL_MAX) return map_aligned(size);
    /* vn_aligned_alloc would set an error message the caller replaces anyway. */
    void *p = NULL;
    return posix_memalign(&p, MEM_ALIGN, size) == 0 ? p : NULL;
}

void mem_os_free(void *ptr, size_t size)
{
    if (size > MEM_SMALL_MAX)
        munmap(ptr, size);
    else
        free(ptr);
}
