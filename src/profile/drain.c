/*
 * drain.c — empties one of the runtime's two profile queues (task records,
 * block records) into a growing profiler buffer. What does not fit (past
 * the buffer's limit, or with no memory) is still drained, so the queue
 * never backs up, and counted as dropped.
 */
#include <stdlib.h>

#include "profile/profiler.h"

bool vn_prof_grow(void **buf, int64_t *cap, int64_t need, size_t size, int64_t limit)
{
    if (need <= *cap) return true;
    int64_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    if (c > limit) return false;
    void *p = realloc(*buf, (size_t)c * size);
    if (!p) return false;
    *buf = p;
    *cap = c;
    return true;
}

static size_t drain_some(vn_device *d, vn_prof_queue q, void *out, size_t max, uint64_t *lost)
{
    return q == VN_PROF_TASKS ? vn_device_profile_drain(d, out, max, lost)
                              : vn_device_profile_drain_blocks(d, out, max, lost);
}

int64_t vn_prof_drain(vn_device *d, vn_prof_queue q, void **buf, int64_t n, int64_t *cap,
                      int64_t limit, uint64_t *dropped)
{
    size_t size = q == VN_PROF_TASKS ? sizeof(vn_profile_record) : sizeof(vn_profile_block);
    for (;;) {
        if (n == *cap && !vn_prof_grow(buf, cap, n + 1, size, limit)) break;
        uint64_t lost = 0;
        size_t room = (size_t)(*cap - n);
        size_t got = drain_some(d, q, (char *)*buf + (size_t)n * size, room, &lost);
        *dropped += lost;
        n += (int64_t)got;
        if (got < room) return n;
    }
    union {
        vn_profile_record r[64];
        vn_profile_block b[64];
    } sink; /* no room: the rest are lost */
    size_t got;
    while ((got = drain_some(d, q, &sink, 64, NULL)) > 0) *dropped += got;
    return n;
}
