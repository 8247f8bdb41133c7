/*
 * alloc_fixture.h — what the allocator tests share: a 2-worker device whose
 * allocator state is torn down with it, and a stats snapshot that fails the
 * test when the query fails (the 0xff fill makes a missed field visible).
 */
#ifndef VINCI_TEST_ALLOC_FIXTURE_H
#define VINCI_TEST_ALLOC_FIXTURE_H

#include <string.h>

#include "runtime/allocator.h"
#include "vinci/memory.h"
#include "vt.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static inline vn_device *device_new(void)
{
    vn_device_options o = {0};
    o.num_threads = 2;
    vn_device *d = NULL;
    VT_OK(vn_device_create(&o, &d));
    return d;
}

static inline void device_free(vn_device *d)
{
    vn_mem_on_device_destroy(d);
    vn_device_destroy(d);
}

static inline vn_mem_stats stats_of(vn_device *d)
{
    vn_mem_stats s;
    memset(&s, 0xff, sizeof s);
    VT_OK(vn_mem_stats_get(d, &s));
    return s;
}

#endif
