/*
 * vec_kernel.h — launch helpers for the vector-instruction tests.
 *
 * vt_stage_run: a one-block kernel copies up to VT_MAX_BUFS host buffers into
 * UB locals (vn_copy_in_pad, so they count as written), calls `body` on the
 * locals, and copies every buffer back (vn_copy_out_pad). The test sees the
 * raw bytes an instruction wrote and left untouched. Total bytes must fit UB
 * (192 KiB by default).
 *
 * vt_tiled_run: a multi-block GM -> scratch -> GM element-wise kernel for long
 * lengths (first-n form), tiles padded with vn_copy_in_pad / vn_copy_out_pad,
 * or (window != VT_COPY) computed in place through vn_gm_window, the output
 * cached or streamed.
 */
#ifndef VINCI_TESTS_KERNEL_VEC_KERNEL_H
#define VINCI_TESTS_KERNEL_VEC_KERNEL_H

#include "vinci/kernel.h"
#include "vt.h"
#include "vt_tensor.h"

#define VT_MAX_BUFS 6

typedef struct vt_buf {
    void *host;
    int64_t count;
    vn_dtype dtype;
} vt_buf;

typedef void (*vt_body_fn)(vn_core *c, vn_local *l, const void *ctx);

typedef struct vt_stage {
    int nbuf;
    vt_buf buf[VT_MAX_BUFS];
    vt_body_fn body;
    const void *ctx;
} vt_stage;

static void vt_stage_kernel(vn_core *c, const void *p)
{
    const vt_stage *s = p;
    vn_local l[VT_MAX_BUFS];
    for (int i = 0; i < s->nbuf; i++) {
        const vt_buf *b = &s->buf[i];
        int64_t bytes = b->count * (int64_t)vn_dtype_size(b->dtype);
        l[i] = vn_buf_new(c, VN_VECCALC, b->count, b->dtype);
        vn_copy_pad_params cp = {1, (uint32_t)bytes, 0, 0};
        vn_copy_in_pad(c, l[i], vn_gm_make(b->host, b->dtype, b->count), 0, cp, (vn_pad){0});
    }
    s->body(c, l, s->ctx);
    for (int i = 0; i < s->nbuf; i++) {
        const vt_buf *b = &s->buf[i];
        int64_t bytes = b->count * (int64_t)vn_dtype_size(b->dtype);
        vn_copy_pad_params cp = {1, (uint32_t)bytes, 0, 0};
        vn_copy_out_pad(c, vn_gm_make(b->host, b->dtype, b->count), 0, l[i], cp);
    }
}

/* The references are exact IEEE results, subnormals included, while workers
 * flush denormals to zero by default: these tests' device keeps them. */
static vn_device *vt_dev(void)
{
    static vn_device *dev;
    if (!dev) {
        vn_device_options o = {0};
        o.keep_denormals = true;
        if (vn_device_create(&o, &dev) != VN_OK) dev = NULL;
    }
    return dev;
}

/* checked: 0 release, 1 checked. */
static inline vn_status vt_stage_run(vt_stage *s, int checked, vn_kernel_counters *counters)
{
    vn_launch_desc d = {vt_stage_kernel, "vt_stage_kernel", 1, s, checked, 0};
    return vn_launch(vt_dev(), &d, counters);
}

/* ---- tiled first-n element-wise kernel ----------------------------------------- */

typedef enum vt_window { VT_COPY = 0, VT_WINDOW, VT_WINDOW_STREAM } vt_window;

typedef struct vt_tiled {
    vn_vop op;
    vn_dtype dtype;
    const void *a, *b;
    void *out;
    double s;
    int64_t n;
    vt_window window;
} vt_tiled;

#define VT_TILE 8192 /* elements per tile: 3 x 32 KiB of f32 */

static void vt_tiled_kernel(vn_core *c, const void *p)
{
    const vt_tiled *t = p;
    size_t size = vn_dtype_size(t->dtype);
    vn_local la = vn_buf_new(c, VN_VECIN, VT_TILE, t->dtype);
    vn_local lb = vn_buf_new(c, VN_VECIN, VT_TILE, t->dtype);
    vn_local lo = vn_buf_new(c, VN_VECOUT, VT_TILE, t->dtype);
    bool binary = vn_vop_kind_of(t->op) == VN_VOP_BINARY;
    int64_t tiles = (t->n + VT_TILE - 1) / VT_TILE;
    vn_gm ga = vn_gm_make((void *)t->a, t->dtype, t->n),
          gb = vn_gm_make((void *)t->b, t->dtype, t->n);
    vn_gm gout = vn_gm_make(t->out, t->dtype, t->n);
    if (t->window == VT_WINDOW_STREAM) gout.hint = VN_CACHE_STREAM;
    for (int64_t k = vn_block_idx(c); k < tiles; k += vn_block_num(c)) {
        vn_set_loop(c, k);
        int64_t off = k * VT_TILE, m = t->n - off < VT_TILE ? t->n - off : VT_TILE;
        vn_copy_pad_params cp = {1, (uint32_t)(m * (int64_t)size), 0, 0};
        if (t->window != VT_COPY) {
            la = vn_gm_window(c, ga, off, m, VN_WINDOW_READ);
            lb = binary ? vn_gm_window(c, gb, off, m, VN_WINDOW_READ) : la;
            lo = vn_gm_window(c, gout, off, m, VN_WINDOW_WRITE);
        } else {
            vn_copy_in_pad(c, la, ga, off, cp, (vn_pad){0});
            if (binary) vn_copy_in_pad(c, lb, gb, off, cp, (vn_pad){0});
        }
        switch (vn_vop_kind_of(t->op)) {
        case VN_VOP_UNARY:
            vn_vunary(c, t->op, lo, la, m);
            break;
        case VN_VOP_BINARY:
            vn_vbinary(c, t->op, lo, la, lb, m);
            break;
        case VN_VOP_SCALAR:
            vn_vscalar(c, t->op, lo, la, t->s, m);
            break;
        }
        if (t->window == VT_COPY) vn_copy_out_pad(c, gout, off, lo, cp);
    }
}

static inline vn_status vt_tiled_run(vt_tiled *t, int checked)
{
    vn_launch_desc d = {vt_tiled_kernel, "vt_tiled_kernel", 4, t, checked, 0};
    return vn_launch(vt_dev(), &d, NULL);
}

/* ---- dtype helpers (element access: vt_get / vt_put of vt_tensor.h) ------------------ */

/* Distance in representable steps of a 16-bit float format (sign-magnitude). */
static inline int64_t vt_ulps16(uint16_t got, uint16_t want, bool (*is_nan)(uint16_t))
{
    if (is_nan(want)) return is_nan(got) ? 0 : INT64_MAX;
    if (is_nan(got)) return INT64_MAX;
    int64_t g = (got & 0x8000u) ? -(int64_t)(got & 0x7fffu) : got;
    int64_t w = (want & 0x8000u) ? -(int64_t)(want & 0x7fffu) : want;
    return g > w ? g - w : w - g;
}
static inline bool vt_f16_nan(uint16_t h)
{
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
}
static inline bool vt_bf16_nan(uint16_t h)
{
    return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
}

/* The error text of the last failed call contains the call name and the line. */
#define VT_FAILS_AT(status, call, file, line)                                                      \
    do {                                                                                           \
        char vt_where_[64];                                                                        \
        snprintf(vt_where_, sizeof vt_where_, "%s:%d", file, line);                                \
        VT_CHECK((status) == VN_ERR_KERNEL, "status %s", vn_status_name(status));                  \
        VT_CONTAINS(vn_last_error(), call);                                                        \
        VT_CONTAINS(vn_last_error(), vt_where_);                                                   \
    } while (0)

#endif /* VINCI_TESTS_KERNEL_VEC_KERNEL_H */
