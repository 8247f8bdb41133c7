/*
 * memory.c — aligned allocation with vinci error reporting.
 */
#include <stdlib.h>

#include "vinci/base.h"

void *vn_aligned_alloc(size_t bytes, size_t alignment)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        vn_error(VN_ERR_INVALID_ARG, "vn_aligned_alloc",
                 "alignment %zu is not a power of two (asked for %zu bytes)", alignment, bytes);
        return NULL;
    }
    /* posix_memalign needs a multiple of sizeof(void*); a stricter alignment
     * than asked for still satisfies the caller. */
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    /* A zero-byte request still returns a unique pointer, since NULL means failure. */
    void *p = NULL;
    if (posix_memalign(&p, alignment, bytes ? bytes : 1) != 0) {
        vn_error(VN_ERR_OUT_OF_MEMORY, "vn_aligned_alloc",
                 "cannot allocate %zu bytes aligned to %zu", bytes, alignment);
        return NULL;
    }
    return p;
}

void vn_aligned_free(void *p)
{
    free(p);
}
