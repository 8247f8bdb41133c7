/*
 * window.c — vn_gm_window: a local-tensor view of global memory, so that the
 * vector instructions can compute a tile where it lies (see kernel.h).
 *
 * Invariant: a window has owner VN_OWNER_GM, a negative slot encoding its mode
 * and the tensor's cache hint (vn_window_bits), and `bytes` = its extent,
 * which checked mode validated against the tensor here; vn_check_local then
 * accepts it without an arena, and it has no shadow bytes (global memory is
 * always initialised as far as a kernel knows). Its bytes are counted here,
 * once, as the copy it replaces would have counted them.
 */
#include <stdint.h>

#include "kernel/core_internal.h"

vn_local vn_gm_window_(vn_core *core, vn_gm g, int64_t offset, int64_t count, vn_window_mode mode,
                       vn_site site)
{
    static const char call[] = "vn_gm_window";
    int64_t size = (int64_t)vn_dtype_size(g.dtype);
    if (mode != VN_WINDOW_READ && mode != VN_WINDOW_WRITE)
        vn_core_fail(core, site, call, "invalid mode %d", (int)mode);
    if (count < 0 || count > INT32_MAX / (size > 0 ? size : 1))
        vn_core_fail(core, site, call, "%lld elements of %s: a window holds 0 to 2 GiB",
                     (long long)count, vn_dtype_name(g.dtype));
    if (core->checked) vn_check_gm(core, g, offset * size, count * size, "views", call, site);
    int64_t bytes = count * size;
    if (mode == VN_WINDOW_WRITE)
        core->counters.bytes_out += bytes;
    else
        core->counters.bytes_in += bytes;
    int bits = (g.hint == VN_CACHE_STREAM) | (mode == VN_WINDOW_WRITE) << 1;
    vn_local w = {(uint8_t *)g.data + offset * size, (int32_t)bytes, g.dtype, VN_OWNER_GM,
                  (int16_t)(-1 - bits)};
    return w;
}
