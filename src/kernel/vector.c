/*
 * vector.c — the first-n form of the element-wise vector instructions
 * (Ascend Add(dst, a, b, count)) and Duplicate.
 *
 * Release mode does one check (the op exists for the dtype: an unsupported
 * pair must never silently do nothing) and the `checked` branch; checked mode
 * validates every operand and the bytes read and written.
 */
#include <string.h>

#include "kernel/vector_internal.h"

static const char *const vn_kind_call[] = {
    [VN_VOP_UNARY] = "vn_vunary", [VN_VOP_BINARY] = "vn_vbinary", [VN_VOP_SCALAR] = "vn_vscalar"};

/* The op exists for dst's dtype and is of the kind of the calling entry point. */
static void vn_vec_check_op(vn_core *core, vn_vop op, vn_vop_kind kind, vn_dtype dtype,
                            vn_site site)
{
    if (!vn_vop_supports(op, dtype) || vn_vop_kind_of(op) != kind)
        vn_core_fail(core, site, vn_kind_call[kind], "%s is not a %s operation on %s",
                     vn_vop_name(op), vn_kind_call[kind], vn_dtype_name(dtype));
}

static void vn_vec_check_first_n(vn_core *core, vn_vop op, vn_local dst, const vn_local *src,
                                 int nsrc, int64_t n, vn_site site)
{
    const char *call = vn_kind_call[vn_vop_kind_of(op)];
    static const char *const what[] = {"operand a", "operand b"};
    if (n < 0)
        vn_core_fail(core, site, call, "%s: negative count %lld", vn_vop_name(op), (long long)n);
    vn_vec_check_operand(core, dst, dst.dtype, "dst", call, site);
    for (int i = 0; i < nsrc; i++) {
        vn_vec_check_operand(core, src[i], dst.dtype, what[i], call, site);
        vn_vec_check_read_n(core, src[i], n, call, site);
    }
    vn_vec_check_write_n(core, dst, n, call, site);
}

/* Computes dst = op(a, b or s); a streamed window gets non-temporal stores,
 * which the block end fences. */
static void vn_vec_run(vn_core *core, vn_vop op, vn_local dst, vn_local a, vn_local b, double s,
                       int64_t n)
{
    bool stream = vn_window_streamed(dst);
    core->xfer_streamed |= stream;
    vn_vec_compute(op, dst.dtype, dst.data, a.data, b.data, s, n, stream);
    core->counters.vector_elem_ops += n;
}

void vn_vunary_(vn_core *core, vn_vop op, vn_local dst, vn_local a, int64_t n, vn_site site)
{
    vn_xfer_sync(core);
    vn_vec_check_op(core, op, VN_VOP_UNARY, dst.dtype, site);
    if (core->checked) vn_vec_check_first_n(core, op, dst, &a, 1, n, site);
    vn_vec_run(core, op, dst, a, (vn_local){0}, 0.0, n);
}

void vn_vbinary_(vn_core *core, vn_vop op, vn_local dst, vn_local a, vn_local b, int64_t n,
                 vn_site site)
{
    vn_xfer_sync(core);
    vn_vec_check_op(core, op, VN_VOP_BINARY, dst.dtype, site);
    if (core->checked) vn_vec_check_first_n(core, op, dst, (vn_local[]){a, b}, 2, n, site);
    vn_vec_run(core, op, dst, a, b, 0.0, n);
}

void vn_vscalar_(vn_core *core, vn_vop op, vn_local dst, vn_local a, double s, int64_t n,
                 vn_site site)
{
    vn_xfer_sync(core);
    vn_vec_check_op(core, op, VN_VOP_SCALAR, dst.dtype, site);
    if (core->checked) vn_vec_check_first_n(core, op, dst, &a, 1, n, site);
    vn_vec_run(core, op, dst, a, (vn_local){0}, s, n);
}

/* One element is encoded, then copied in doubling runs (memcpy speed). */
void vn_duplicate_(vn_core *core, vn_local dst, double value, int64_t n, vn_site site)
{
    vn_xfer_sync(core);
    size_t size = vn_dtype_size(dst.dtype);
    if (size == 0) vn_core_fail(core, site, "vn_duplicate", "invalid dtype %d", (int)dst.dtype);
    if (core->checked) {
        if (n < 0) vn_core_fail(core, site, "vn_duplicate", "negative count %lld", (long long)n);
        vn_check_local(core, dst, "vn_duplicate", site);
        vn_vec_check_write_n(core, dst, n, "vn_duplicate", site);
    }
    if (n <= 0) return;
    uint8_t *p = dst.data;
    vn_scalar_store(dst.dtype, p, value);
    size_t total = (size_t)n * size, done = size;
    while (done < total) {
        size_t step = done < total - done ? done : total - done;
        memcpy(p + done, p, step);
        done += step;
    }
    core->counters.vector_elem_ops += n;
}
