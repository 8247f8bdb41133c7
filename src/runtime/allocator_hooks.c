/*
 * allocator_hooks.c — what the caching allocator does when a stream or a
 * device it keys caches by goes away (see runtime/allocator.h for when the
 * runtime calls these).
 */
#include <stdlib.h>

#include "runtime/allocator_internal.h"

/* Takes every cached block of `s` off its bins, as one list. */
static mem_block *detach_stream_cache(mem_alloc *a, vn_stream *s)
{
    mem_block *list = NULL, *b;
    for (size_t i = 0; i < a->bin_cap; i++) {
        mem_bin *bin = a->bins[i];
        if (!bin || bin->stream != s) continue;
        while ((b = mem_bin_pop(a, bin))) {
            b->next = list;
            list = b;
        }
    }
    return list;
}

/* The destroyed stream's work is done: forget it as an owner and as a user. */
static void forget_stream(mem_block *b, void *ctx)
{
    vn_stream *s = ctx;
    if (b->owner == s) {
        b->owner = NULL;
        b->bin = NULL;
    }
    if (b->state != BLOCK_LIVE) return; /* pending events were recorded already */
    for (uint32_t i = 0; i < b->num_uses; i++) {
        if (b->uses[i].stream != s) continue;
        b->uses[i] = b->uses[--b->num_uses];
        break;
    }
}

static bool bin_not_of(mem_bin *bin, void *ctx)
{
    return bin->stream != (vn_stream *)ctx;
}

void vn_mem_on_stream_destroy(vn_stream *stream)
{
    if (!stream) return;
    mem_lock();
    mem_tc_stop();                     /* forget_stream rewrites blocks a fast free may read */
    mem_tc_flush(NULL, stream, false); /* thread caches keyed by it, into its bins */
    for (mem_alloc *a = mem_allocs_head(); a; a = a->next) {
        mem_block *list = detach_stream_cache(a, stream);
        mem_ptr_each(a, forget_stream, stream);
        mem_bin_filter(a, bin_not_of, stream);
        while (list) { /* now in the shared cache: any stream may take them */
            mem_block *b = list;
            list = b->next;
            b->owner = NULL;
            b->bin = NULL;
            mem_block_cache(a, b);
        }
        if (a->default_stream == stream) a->default_stream = NULL;
    }
    mem_tc_resume();
    mem_unlock();
}

typedef struct block_list {
    mem_block **b;
    size_t n;
} block_list;

static void count_block(mem_block *b, void *ctx)
{
    ((block_list *)ctx)->n++;
}

static void collect_block(mem_block *b, void *ctx)
{
    block_list *l = ctx;
    l->b[l->n++] = b;
}

/* Gives every block of `a` back to the OS, live and pending ones included. */
static void release_every_block(mem_alloc *a)
{
    block_list list = {NULL, 0};
    mem_ptr_each(a, count_block, &list);
    list.b = malloc((list.n ? list.n : 1) * sizeof *list.b);
    if (!list.b) return; /* leaks the blocks rather than walking a changing table */
    list.n = 0;
    mem_ptr_each(a, collect_block, &list);
    for (size_t i = 0; i < list.n; i++) {
        mem_block *b = list.b[i];
        for (uint32_t k = 0; b->state == BLOCK_PENDING && k < b->num_uses; k++)
            if (b->uses[k].event) vn_event_destroy(b->uses[k].event);
        mem_block_release(b);
    }
    free(list.b);
}

void vn_mem_on_device_destroy(vn_device *device)
{
    mem_lock();
    mem_alloc *a = mem_allocs_unlink(device);
    if (a) {
        mem_tc_fault_armed(a, false);
        mem_tc_stop();
        mem_tc_flush(a, NULL, true); /* off the thread caches; released below */
        release_every_block(a);
        mem_tc_resume();
        mem_events_destroy(a);
        mem_bin_free_all(a);
        free(a);
    }
    mem_unlock();
}
