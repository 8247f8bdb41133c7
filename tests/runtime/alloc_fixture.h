/*
 * alloc_fixture.h — what the allocator tests share: a 2-worker device whose
 * allocator state is torn down with it, and a stats snapshot that fails the
 * test when the query fails (the 0xff fill makes a missed field visible).
 */
#ifndef VINCI_TEST_ALLOC_FIXTURE_H
#define VINCI_TEST_ALLOC_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
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

/* A blocking host callback: it holds its stream until the test opens the
 * gate, so work queued behind it waits (cross-stream reuse tests). */
typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    bool open;
} gate;

static inline void gate_init(gate *g)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = false;
}

static inline void gate_wait(void *user, vn_status status)
{
    (void)status;
    gate *g = user;
    pthread_mutex_lock(&g->lock);
    while (!g->open) pthread_cond_wait(&g->cv, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

static inline void gate_open(gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lock);
}

static inline void gate_destroy(gate *g)
{
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->cv);
}

#endif
