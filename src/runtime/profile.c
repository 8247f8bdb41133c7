/*
 * profile.c — the profiling hook: a device-wide buffer of task records that
 * the profiler drains. Tasks decide at dispatch whether they are profiled, so
 * a disabled hook costs one branch per block and nothing else.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/stream_internal.h"
#include "runtime/worker_hook.h"

#define PROFILE_CAP ((size_t)1 << 20)

vn_status vn_device_set_profiling(vn_device *device, bool on)
{
    if (!device) return vn_error(VN_ERR_INVALID_ARG, "vn_device_set_profiling", "device is NULL");
    atomic_store(&device->profiling, on);
    return VN_OK;
}

void vn_profile_append_locked(vn_device *d, const vn_profile_record *rec)
{
    if (d->prof_len == d->prof_cap) {
        size_t cap = d->prof_cap ? d->prof_cap * 2 : 1024;
        vn_profile_record *p = cap <= PROFILE_CAP ? realloc(d->prof, cap * sizeof *p) : NULL;
        if (!p) {
            d->prof_dropped++;
            return;
        }
        d->prof = p;
        d->prof_cap = cap;
    }
    d->prof[d->prof_len++] = *rec;
}

size_t vn_device_profile_drain(vn_device *device, vn_profile_record *out, size_t max,
                               uint64_t *dropped)
{
    if (!device || (!out && max)) return 0;
    pthread_mutex_lock(&device->lock);
    size_t n = device->prof_len < max ? device->prof_len : max;
    if (n) {
        memcpy(out, device->prof, n * sizeof *out);
        memmove(device->prof, device->prof + n, (device->prof_len - n) * sizeof *out);
        device->prof_len -= n;
    }
    if (dropped) {
        *dropped = device->prof_dropped;
        device->prof_dropped = 0;
    }
    pthread_mutex_unlock(&device->lock);
    return n;
}

void vn_profile_shutdown(vn_device *d)
{
    free(d->prof);
    d->prof = NULL;
    d->prof_len = d->prof_cap = 0;
}

/* ---- the worker hook (worker_hook.h) ---- */
_Atomic(const vn_worker_hook *) vn_worker_hook_active = NULL;

void vn_worker_hook_set(const vn_worker_hook *hook)
{
    atomic_store_explicit(&vn_worker_hook_active, hook, memory_order_release);
}
