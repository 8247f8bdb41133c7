/*
 * window.c — vn_gm_window: a local-tensor view of global memory, so that the
 * vector instructions can compute a tile where it lies (see kernel.h).
 *
 * Invariant: a window has owner VN_OWNER_GM, slot = the tensor's cache hint,
 * and `bytes` = its extent, which checked mode validated against the tensor
 * here; vn_check_local then accepts it without an arena, and it has no shadow
 * bytes (global memory is always initialised as far as a kernel knows).
 */
#include <stdint.h>

#include "kernel/core_internal.h"

vn_local vn_gm_window_(vn_core *core, vn_gm g, int64_t offset, int64_t count, vn_site site)
{
    static const char call[] = "vn_gm_window";
    int64_t size = (int64_t)vn_dtype_size(g.dtype);
    if (core->checked) {
        if (count < 0) vn_core_fail(core, site, call, "negative count %lld", (long long)count);
        vn_check_gm(core, g, offset * size, count * size, "views", call, site);
    }
    if (count > INT32_MAX / (size > 0 ? size : 1))
        vn_core_fail(core, site, call, "%lld elements of %s: a window holds at most 2 GiB",
                     (long long)count, vn_dtype_name(g.dtype));
    /* Any instruction may store through it: the block end fences them. */
    core->xfer_streamed |= g.hint == VN_CACHE_STREAM;
    vn_local w = {(uint8_t *)g.data + offset * size, (int32_t)(count * size), g.dtype, VN_OWNER_GM,
                  (int16_t)g.hint};
    return w;
}
