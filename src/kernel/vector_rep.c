/*
 * vector_rep.c — the mask/repeat form of the element-wise instructions (the
 * Ascend ISA form) and the lane walk checked mode uses for it.
 *
 * Semantics (kernel.h): for repeat r, block j (0..7) and lane l of the
 * 32-byte block, operand X's element lives at
 *     X + (r * X_rep + j * X_blk) * 32 + l * size,
 * its lane index is j * (32 / size) + l, and the lane is computed iff that
 * bit of the mask is set; disabled lanes of dst are left untouched. All
 * reads of one repeat happen before its writes.
 */
#include <string.h>

#include "kernel/vector_internal.h"

vn_mask vn_mask_first(int32_t k)
{
    vn_mask m = {{0, 0}};
    for (int w = 0; w < 2; w++) {
        int32_t bits = k - 64 * w;
        m.bits[w] = bits >= 64 ? ~0ull : (bits <= 0 ? 0 : (1ull << bits) - 1);
    }
    return m;
}

int32_t vn_mask_count(vn_mask m, int32_t lanes)
{
    int32_t c = __builtin_popcountll(m.bits[0]);
    if (lanes > 64) c += __builtin_popcountll(m.bits[1]);
    return c;
}

static bool vn_mask_full(vn_mask m, int32_t lanes)
{
    return vn_mask_count(m, lanes) == lanes;
}

void vn_rep_check_args(vn_core *core, vn_dtype dtype, int32_t repeat, const char *call,
                       vn_site site)
{
    if (repeat < 0 || repeat > VN_MAX_REPEAT)
        vn_core_fail(core, site, call, "repeat %d outside 0..%d", (int)repeat, VN_MAX_REPEAT);
    size_t size = vn_dtype_size(dtype);
    if (size < 2 || size > 4)
        vn_core_fail(core, site, call, "dtype %s has no mask/repeat form", vn_dtype_name(dtype));
}

/* Byte runs [off, off+len) reported to the checker, merged while contiguous. */
typedef struct vn_run {
    int64_t off, len;
} vn_run;

static void vn_run_flush(vn_core *core, vn_local t, vn_run *run, bool write, const char *call,
                         vn_site site)
{
    if (run->len == 0) return;
    if (write)
        vn_check_write(core, t, run->off, run->len, call, site);
    else
        vn_check_read(core, t, run->off, run->len, call, site);
    run->len = 0;
}

static void vn_run_add(vn_core *core, vn_local t, vn_run *run, int64_t off, int64_t len, bool write,
                       const char *call, vn_site site)
{
    if (run->len > 0 && off == run->off + run->len) {
        run->len += len;
        return;
    }
    vn_run_flush(core, t, run, write, call, site);
    run->off = off;
    run->len = len;
}

void vn_rep_check(vn_core *core, vn_local t, vn_mask mask, int32_t repeat, int32_t blk, int32_t rep,
                  bool write, const char *call, vn_site site)
{
    size_t size = vn_dtype_size(t.dtype);
    int32_t lanes = vn_rep_lanes(t.dtype);
    vn_run run = {0, 0};
    for (int32_t r = 0; r < repeat; r++)
        for (int32_t lane = 0; lane < lanes; lane++)
            if (vn_mask_lane(mask, lane))
                vn_run_add(core, t, &run, vn_rep_offset(r, lane, blk, rep, size), (int64_t)size,
                           write, call, site);
    vn_run_flush(core, t, &run, write, call, site);
}

/* Strides of one instruction, in 32-byte units; index 0 is dst. */
typedef struct vn_rep_strides {
    int32_t blk[3], rep[3];
} vn_rep_strides;

/* The 8 blocks of repeat r of an operand, gathered contiguously; blocks with
 * no enabled lane are not read (they may lie outside the tensor). */
static void vn_rep_gather(uint8_t *out, const uint8_t *src, int32_t r, int32_t blk, int32_t rep,
                          vn_mask mask, int32_t per_block)
{
    for (int32_t j = 0; j < VN_REPEAT_BLOCKS; j++) {
        bool any = false;
        for (int32_t l = 0; l < per_block; l++) any |= vn_mask_lane(mask, j * per_block + l);
        if (any)
            memcpy(out + j * VN_BLOCK_BYTES,
                   src + ((int64_t)r * rep + (int64_t)j * blk) * VN_BLOCK_BYTES, VN_BLOCK_BYTES);
        else
            memset(out + j * VN_BLOCK_BYTES, 0, VN_BLOCK_BYTES);
    }
}

static void vn_rep_scatter(uint8_t *dst, const uint8_t *res, int32_t r, int32_t blk, int32_t rep,
                           vn_mask mask, size_t size)
{
    int32_t lanes = (int32_t)(VN_REPEAT_BYTES / size);
    for (int32_t lane = 0; lane < lanes; lane++)
        if (vn_mask_lane(mask, lane))
            memcpy(dst + vn_rep_offset(r, lane, blk, rep, size), res + (size_t)lane * size, size);
}

static void vn_rep_compute(vn_vop op, vn_dtype dtype, void *dst, const void *a, const void *b,
                           double s, vn_mask mask, int32_t repeat, vn_rep_strides st)
{
    size_t size = vn_dtype_size(dtype);
    int32_t lanes = (int32_t)(VN_REPEAT_BYTES / size);
    bool binary = vn_vop_kind_of(op) == VN_VOP_BINARY;
    bool contiguous = st.blk[0] == 1 && st.blk[1] == 1 && st.rep[0] == 8 && st.rep[1] == 8 &&
                      (!binary || (st.blk[2] == 1 && st.rep[2] == 8));
    if (contiguous && vn_mask_full(mask, lanes)) {
        vn_vec_compute(op, dtype, dst, a, b, s, (int64_t)repeat * lanes, false);
        return;
    }
    _Alignas(64) uint8_t ga[VN_REPEAT_BYTES], gb[VN_REPEAT_BYTES], res[VN_REPEAT_BYTES];
    int32_t per_block = (int32_t)(VN_BLOCK_BYTES / size);
    for (int32_t r = 0; r < repeat; r++) {
        vn_rep_gather(ga, a, r, st.blk[1], st.rep[1], mask, per_block);
        if (binary) vn_rep_gather(gb, b, r, st.blk[2], st.rep[2], mask, per_block);
        vn_vec_compute(op, dtype, res, ga, gb, s, lanes, false);
        vn_rep_scatter(dst, res, r, st.blk[0], st.rep[0], mask, size);
    }
}

static const char *const vn_rep_call[] = {[VN_VOP_UNARY] = "vn_vunary_rep",
                                          [VN_VOP_BINARY] = "vn_vbinary_rep",
                                          [VN_VOP_SCALAR] = "vn_vscalar_rep"};

/* All checks of one mask/repeat instruction; operands[0] is dst. */
static void vn_rep_check_all(vn_core *core, vn_vop op, const vn_local *operands, int count,
                             vn_mask mask, int32_t repeat, vn_rep_strides st, vn_site site)
{
    static const char *const what[] = {"dst", "operand a", "operand b"};
    const char *call = vn_rep_call[vn_vop_kind_of(op)];
    vn_rep_check_args(core, operands[0].dtype, repeat, call, site);
    for (int i = 0; i < count; i++)
        vn_vec_check_operand(core, operands[i], operands[0].dtype, what[i], call, site);
    for (int i = 1; i < count; i++)
        vn_rep_check(core, operands[i], mask, repeat, st.blk[i], st.rep[i], false, call, site);
    vn_rep_check(core, operands[0], mask, repeat, st.blk[0], st.rep[0], true, call, site);
}

static void vn_rep_check_op(vn_core *core, vn_vop op, vn_vop_kind kind, vn_dtype dtype,
                            vn_site site)
{
    if (!vn_vop_supports(op, dtype) || vn_vop_kind_of(op) != kind)
        vn_core_fail(core, site, vn_rep_call[kind], "%s is not a %s operation on %s",
                     vn_vop_name(op), vn_rep_call[kind], vn_dtype_name(dtype));
}

static void vn_rep_count(vn_core *core, vn_dtype dtype, vn_mask mask, int32_t repeat)
{
    if (repeat > 0)
        core->counters.vector_elem_ops +=
            (int64_t)repeat * vn_mask_count(mask, vn_rep_lanes(dtype));
}

void vn_vunary_rep_(vn_core *core, vn_vop op, vn_local dst, vn_local a, vn_mask mask,
                    int32_t repeat, vn_unary_rep p, vn_site site)
{
    vn_xfer_sync(core);
    vn_rep_check_op(core, op, VN_VOP_UNARY, dst.dtype, site);
    vn_rep_strides st = {{p.dst_blk, p.src_blk, 0}, {p.dst_rep, p.src_rep, 0}};
    if (core->checked) vn_rep_check_all(core, op, (vn_local[]){dst, a}, 2, mask, repeat, st, site);
    vn_rep_compute(op, dst.dtype, dst.data, a.data, NULL, 0.0, mask, repeat, st);
    vn_rep_count(core, dst.dtype, mask, repeat);
}

void vn_vbinary_rep_(vn_core *core, vn_vop op, vn_local dst, vn_local a, vn_local b, vn_mask mask,
                     int32_t repeat, vn_binary_rep p, vn_site site)
{
    vn_xfer_sync(core);
    vn_rep_check_op(core, op, VN_VOP_BINARY, dst.dtype, site);
    vn_rep_strides st = {{p.dst_blk, p.src0_blk, p.src1_blk}, {p.dst_rep, p.src0_rep, p.src1_rep}};
    if (core->checked)
        vn_rep_check_all(core, op, (vn_local[]){dst, a, b}, 3, mask, repeat, st, site);
    vn_rep_compute(op, dst.dtype, dst.data, a.data, b.data, 0.0, mask, repeat, st);
    vn_rep_count(core, dst.dtype, mask, repeat);
}

void vn_vscalar_rep_(vn_core *core, vn_vop op, vn_local dst, vn_local a, double s, vn_mask mask,
                     int32_t repeat, vn_unary_rep p, vn_site site)
{
    vn_xfer_sync(core);
    vn_rep_check_op(core, op, VN_VOP_SCALAR, dst.dtype, site);
    vn_rep_strides st = {{p.dst_blk, p.src_blk, 0}, {p.dst_rep, p.src_rep, 0}};
    if (core->checked) vn_rep_check_all(core, op, (vn_local[]){dst, a}, 2, mask, repeat, st, site);
    vn_rep_compute(op, dst.dtype, dst.data, a.data, NULL, s, mask, repeat, st);
    vn_rep_count(core, dst.dtype, mask, repeat);
}
