/*
 * check.c — checked-mode validation of local tensors and the shadow maps.
 *
 * The shadow map of an arena has one byte per arena byte: non-zero iff that
 * byte was written since the buffer holding it was allocated (queue alloc or
 * vn_buf_new clear it). A read of a byte whose shadow is 0 is a read of data
 * no stage produced — on the hardware, stale garbage from an earlier tile.
 * Shadow maps exist only in checked mode; with them NULL every function here
 * that only marks is a no-op.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/core_internal.h"

/* Names the buffer a tensor came from, for messages. */
static void describe(const vn_core *core, vn_local t, char *out, size_t cap)
{
    if (t.owner == VN_OWNER_GM) {
        snprintf(out, cap, "a window onto global memory");
    } else if (t.owner >= 0 && t.owner < core->num_queues) {
        const struct vn_queue *q = &core->queues[t.owner];
        snprintf(out, cap, "%s queue %d buffer %d", vn_position_name(q->position), (int)t.owner,
                 (int)t.slot);
    } else {
        int a = vn_core_arena_of(core, t.data);
        snprintf(out, cap, "a %s buffer", a >= 0 ? vn_arena_name((vn_arena)a) : "non-scratch");
    }
}

/* A window (window.c) was checked against its tensor when made; here, that it
 * still is one: not in scratch (where it would escape the shadow maps) and
 * aligned to its dtype (the kernels assume whole elements). */
static void check_window(vn_core *core, vn_local t, const char *call, vn_site site)
{
    size_t size = vn_dtype_valid(t.dtype) ? vn_dtype_size(t.dtype) : 0;
    if (!t.data || t.bytes < 0 || size == 0 || t.slot > -1 || t.slot < -4 ||
        (uintptr_t)t.data % size != 0)
        vn_core_fail(core, site, call,
                     "malformed window onto global memory (%p, %d bytes, dtype %d, slot %d)",
                     t.data, (int)t.bytes, (int)t.dtype, (int)t.slot);
    if (vn_core_arena_of(core, t.data) >= 0 ||
        (t.bytes > 0 && vn_core_arena_of(core, (const uint8_t *)t.data + t.bytes - 1) >= 0))
        vn_core_fail(core, site, call,
                     "a window onto global memory points into this core's scratch arenas");
}

void vn_check_scratch(vn_core *core, vn_local t, const char *call, vn_site site)
{
    if (t.owner == VN_OWNER_GM)
        vn_core_fail(core, site, call,
                     "a window onto global memory (vn_gm_window) cannot be a scratch operand");
    vn_check_local(core, t, call, site);
}

void vn_check_local(vn_core *core, vn_local t, const char *call, vn_site site)
{
    if (t.owner == VN_OWNER_GM) {
        check_window(core, t, call, site);
        return;
    }
    int a = vn_core_arena_of(core, t.data);
    if (a < 0)
        vn_core_fail(core, site, call,
                     "local tensor at %p does not point into this core's scratch arenas", t.data);
    int64_t at = (int64_t)((uintptr_t)t.data - (uintptr_t)core->arena[a]);
    if (at % VN_BLOCK_BYTES != 0)
        vn_core_fail(core, site, call, "local tensor at byte %lld of %s is not 32-byte aligned",
                     (long long)at, vn_arena_name((vn_arena)a));
    if (t.bytes < 0 || at + t.bytes > core->arena_size[a])
        vn_core_fail(core, site, call,
                     "local tensor of %d bytes at byte %lld runs past the %s arena", (int)t.bytes,
                     (long long)at, vn_arena_name((vn_arena)a));
    if (!vn_dtype_valid(t.dtype))
        vn_core_fail(core, site, call, "local tensor has invalid dtype %d", (int)t.dtype);
}

static void check_extent(vn_core *core, vn_local t, int64_t offset, int64_t bytes, const char *what,
                         const char *call, vn_site site)
{
    vn_check_local(core, t, call, site);
    if (offset < 0 || bytes < 0 || offset + bytes > t.bytes) {
        char buf[128];
        describe(core, t, buf, sizeof buf);
        vn_core_fail(core, site, call,
                     "%s bytes [%lld, %lld) of a local tensor with %d bytes (%s): out of bounds",
                     what, (long long)offset, (long long)(offset + bytes), (int)t.bytes, buf);
    }
}

static uint8_t *shadow_of(vn_core *core, const void *p, int64_t bytes)
{
    int a = vn_core_arena_of(core, p);
    if (a < 0 || !core->shadow[a]) return NULL;
    int64_t at = (int64_t)((uintptr_t)p - (uintptr_t)core->arena[a]);
    if (bytes < 0 || at + bytes > core->arena_size[a]) return NULL;
    return core->shadow[a] + at;
}

void vn_check_read(vn_core *core, vn_local t, int64_t offset, int64_t bytes, const char *call,
                   vn_site site)
{
    check_extent(core, t, offset, bytes, "reads", call, site);
    const uint8_t *s = shadow_of(core, (uint8_t *)t.data + offset, bytes);
    if (!s) return;
    const uint8_t *hole = memchr(s, 0, (size_t)bytes);
    if (!hole) return;
    int64_t first = offset + (hole - s);
    char buf[128];
    describe(core, t, buf, sizeof buf);
    vn_core_fail(core, site, call,
                 "reads byte %lld of a local tensor (%s) that nothing wrote since it was "
                 "allocated (reading bytes [%lld, %lld))",
                 (long long)first, buf, (long long)offset, (long long)(offset + bytes));
}

void vn_check_write(vn_core *core, vn_local t, int64_t offset, int64_t bytes, const char *call,
                    vn_site site)
{
    check_extent(core, t, offset, bytes, "writes", call, site);
    if (t.owner == VN_OWNER_GM && !vn_window_writable(t))
        vn_core_fail(core, site, call,
                     "writes bytes [%lld, %lld) of a window made with VN_WINDOW_READ",
                     (long long)offset, (long long)(offset + bytes));
    vn_shadow_mark(core, (uint8_t *)t.data + offset, bytes);
}

void vn_shadow_mark(vn_core *core, const void *p, int64_t bytes)
{
    uint8_t *s = shadow_of(core, p, bytes);
    if (s) memset(s, 1, (size_t)bytes);
}

void vn_shadow_clear(vn_core *core, const void *p, int64_t bytes)
{
    uint8_t *s = shadow_of(core, p, bytes);
    if (s) memset(s, 0, (size_t)bytes);
}
