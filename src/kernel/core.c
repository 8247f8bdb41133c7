/*
 * core.c — the block context: block queries, positions, views of local
 * tensors, and how a block fails.
 *
 * A failure is recorded once per block (the first violation wins) as
 * "kernel K, block B[, loop L]: call at file:line: what" and leaves the kernel
 * by longjmp to the launcher (launch.c), which owns `core->bail`.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernel/core_internal.h"

int32_t vn_block_idx(const vn_core *core)
{
    return core->block_idx;
}

int32_t vn_block_num(const vn_core *core)
{
    return core->block_num;
}

int64_t vn_core_arena_size(const vn_core *core, vn_arena arena)
{
    if ((unsigned)arena >= VN_ARENA_COUNT) return 0;
    return core->arena_size[arena];
}

void vn_set_loop(vn_core *core, int64_t index)
{
    core->loop = index;
}

void vn_pipe_barrier(vn_core *core)
{
    vn_xfer_sync(core);
}

/* ---- positions -------------------------------------------------------------- */

static const vn_arena position_arena[VN_POSITION_COUNT] = {
    [VN_VECIN] = VN_ARENA_UB, [VN_VECOUT] = VN_ARENA_UB, [VN_VECCALC] = VN_ARENA_UB,
    [VN_A1] = VN_ARENA_L1,    [VN_B1] = VN_ARENA_L1,     [VN_A2] = VN_ARENA_L0A,
    [VN_B2] = VN_ARENA_L0B,   [VN_CO1] = VN_ARENA_L0C,
};

static const char *const position_names[VN_POSITION_COUNT] = {
    [VN_VECIN] = "VECIN", [VN_VECOUT] = "VECOUT", [VN_VECCALC] = "VECCALC", [VN_A1] = "A1",
    [VN_B1] = "B1",       [VN_A2] = "A2",         [VN_B2] = "B2",           [VN_CO1] = "CO1",
};

/* VN_ARENA_COUNT for an invalid position, so callers can reject it. */
vn_arena vn_position_arena(vn_position position)
{
    if ((unsigned)position >= VN_POSITION_COUNT) return VN_ARENA_COUNT;
    return position_arena[position];
}

const char *vn_position_name(vn_position position)
{
    if ((unsigned)position >= VN_POSITION_COUNT) return "invalid";
    return position_names[position];
}

/* ---- views -------------------------------------------------------------------- */

vn_local vn_local_at_(vn_core *core, vn_local t, int64_t offset, vn_site site)
{
    int64_t size = (int64_t)vn_dtype_size(t.dtype);
    int64_t byte = offset * size;
    if (core->checked) {
        if (size == 0) vn_core_fail(core, site, "vn_local_at", "invalid dtype %d", (int)t.dtype);
        if (offset < 0 || byte > t.bytes)
            vn_core_fail(core, site, "vn_local_at",
                         "offset %lld (%lld bytes) is outside the tensor's %d bytes",
                         (long long)offset, (long long)byte, (int)t.bytes);
        if (t.owner != VN_OWNER_GM && ((uintptr_t)t.data + (uintptr_t)byte) % VN_BLOCK_BYTES != 0)
            vn_core_fail(core, site, "vn_local_at",
                         "offset %lld of %s (%lld bytes) is not 32-byte aligned: local tensors "
                         "must start on a 32-byte block",
                         (long long)offset, vn_dtype_name(t.dtype), (long long)byte);
    }
    vn_local v = t;
    v.data = (uint8_t *)t.data + byte;
    v.bytes = (int32_t)(t.bytes - byte);
    return v;
}

vn_local vn_local_as(vn_local t, vn_dtype dtype)
{
    t.dtype = dtype;
    return t;
}

int vn_core_arena_of(const vn_core *core, const void *p)
{
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < VN_ARENA_COUNT; i++) {
        uintptr_t base = (uintptr_t)core->arena[i];
        if (base && a >= base && a - base < (uintptr_t)core->arena_size[i]) return i;
    }
    return -1;
}

/* ---- failure ------------------------------------------------------------------ */

/* The file name without its directories: enough to find the line, short enough to read. */
static const char *base_name(const char *path)
{
    if (!path) return "?";
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void record_failure(vn_core *core, vn_status status, vn_site site, const char *call,
                           const char *fmt, va_list ap)
{
    if (core->status != VN_OK) return; /* the first violation is the one that matters */
    core->status = status;
    char *m = core->message;
    size_t cap = sizeof core->message;
    int n;
    if (core->loop >= 0)
        n = snprintf(m, cap, "kernel %s, block %d, loop %lld: %s at %s:%d: ", core->kernel_name,
                     (int)core->block_idx, (long long)core->loop, call, base_name(site.file),
                     site.line);
    else
        n = snprintf(m, cap, "kernel %s, block %d: %s at %s:%d: ", core->kernel_name,
                     (int)core->block_idx, call, base_name(site.file), site.line);
    if (n < 0 || (size_t)n >= cap) return;
    vsnprintf(m + n, cap - (size_t)n, fmt, ap);
}

void vn_core_fail(vn_core *core, vn_site site, const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record_failure(core, VN_ERR_KERNEL, site, call, fmt, ap);
    va_end(ap);
    /* Invariant: every vn_core handed to kernel code was set up by vn_launch,
     * which points `bail` at its setjmp before calling the kernel. */
    longjmp(*core->bail, 1);
}

void vn_kernel_fail_(vn_core *core, vn_site site, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record_failure(core, VN_ERR_KERNEL, site, "vn_kernel_fail", fmt, ap);
    va_end(ap);
    longjmp(*core->bail, 1);
}
