/*
 * pool_global.c — GlobalAveragePool / GlobalMaxPool (NCHW and NC1HWC0): one
 * value per channel from all its pixels.
 *
 * A tile is `gp` planes; each plane streams through scratch in chunks.
 * NCHW (lanes 1): a chunk is reduced by one vector reduction, and the chunks'
 * sums are added in double. NC1HWC0 (lanes 16): an f32 plane is reduced in
 * place by the direct pool kernels (pool_c0_kernels.h); another dtype's
 * chunk of pixels is folded in halves with whole-pixel vector adds / maxes
 * (offsets stay 64-byte multiples, so aligned) down to one pixel, which is
 * added into the plane's 16-lane accumulator. The padded channels (zeros)
 * stay zero either way.
 */
#include <math.h>

#include "kernel/core_internal.h"
#include "kernel/pool_c0_kernels.h"
#include "ops/pool.h"

typedef struct global_args {
    const vn_pool_plan *p;
    vn_gm x, y;
} global_args;

typedef struct global_block {
    vn_queue *qin, *qout;
    vn_local xin, out, acc, red;
} global_block;

static int64_t pixels(const vn_pool_plan *p)
{
    return p->g.in[0] * p->g.in[1] * p->g.in[2];
}

static void carve(vn_core *c, const vn_pool_plan *p, global_block *b)
{
    int64_t xw = vn_ops_row_width(p->chunk * p->lanes, p->dtype);
    int64_t ow = vn_ops_row_width(p->gp * p->lanes, p->dtype);
    b->qin = b->qout = NULL;
    if (p->dtype != VN_F32) {
        b->qin = vn_queue_new(c, VN_VECIN, 2, xw, p->dtype);
        b->qout = vn_queue_new(c, VN_VECOUT, 2, ow, p->dtype);
    }
    b->xin = vn_buf_new(c, VN_VECCALC, xw, VN_F32);
    b->out = vn_buf_new(c, VN_VECCALC, ow, VN_F32);
    /* marked written once: scalar code fills it, a cast reads its padding */
    vn_duplicate(c, b->out, 0.0, ow);
    b->acc = vn_buf_new(c, VN_VECCALC, VN_POOL_C0, VN_F32);
    b->red = vn_buf_new(c, VN_VECCALC, 8, VN_F32);
}

/* One NCHW plane to a scalar. */
static double plane_scalar(vn_core *c, const global_args *a, const global_block *b, int64_t plane)
{
    const vn_pool_plan *p = a->p;
    int64_t pix = pixels(p);
    bool max = p->kind == VN_POOL_MAX;
    double r = max ? -INFINITY : 0.0;
    for (int64_t c0 = 0; c0 < pix; c0 += p->chunk) {
        int64_t n = vn_ops_min(p->chunk, pix - c0);
        vn_ops_load_f32(c, b->qin, b->xin, a->x, plane * pix + c0, 1, n, n);
        vn_reduce(c, max ? VN_REDUCE_MAX : VN_REDUCE_SUM, b->red, b->xin, n);
        double v = vn_ptr(const float, b->red)[0];
        r = max ? (v > r ? v : r) : r + v;
    }
    return max ? r : r / (double)pix;
}

/* One NC1HWC0 plane into dst (16 lanes). An f32 plane is reduced where it
 * lies, by the direct pool kernels' one pass (pool_c0_kernels.h: a copy into
 * UB and log2(pixels) folding calls cost SqueezeNet's 63 x 13 x 13 map 42 us,
 * twice ONNX Runtime's time); other dtypes stream through UB, converted. */
static void plane_c0(vn_core *c, const global_args *a, const global_block *b, int64_t plane,
                     vn_local dst)
{
    const vn_pool_plan *p = a->p;
    int64_t pix = pixels(p), L = VN_POOL_C0;
    bool max = p->kind == VN_POOL_MAX;
    if (p->dtype == VN_F32 && pix > 0) {
        const float *x = (const float *)a->x.data + plane * pix * L;
        float *out = vn_ptr(float, dst);
        vn_pool_c0_table_get()->reduce_plane(x, pix, max, max ? 1.0f : (float)(1.0 / pix), out);
        vn_shadow_mark(c, out, L * (int64_t)sizeof(float)); /* written outside the tile model */
        c->counters.bytes_in += pix * L * (int64_t)sizeof(float);
        c->counters.vector_elem_ops += pix * L;
        return;
    }
    vn_vop op = max ? VN_VOP_MAX : VN_VOP_ADD;
    vn_duplicate(c, b->acc, max ? -INFINITY : 0.0, L);
    for (int64_t c0 = 0; c0 < pix; c0 += p->chunk) {
        int64_t n = vn_ops_min(p->chunk, pix - c0);
        vn_ops_load_f32(c, b->qin, b->xin, a->x, (plane * pix + c0) * L, 1, n * L, n * L);
        while (n > 1) { /* fold the upper half onto the lower: pairwise, aligned */
            int64_t h = n / 2;
            vn_vbinary(c, op, b->xin, b->xin, vn_local_at(c, b->xin, (n - h) * L), h * L);
            n -= h;
        }
        vn_vbinary(c, op, b->acc, b->acc, b->xin, L);
    }
    vn_muls(c, dst, b->acc, max ? 1.0 : 1.0 / (double)pix, L);
}

static void run_tile(vn_core *c, const global_args *a, const global_block *b, int64_t t)
{
    const vn_pool_plan *p = a->p;
    int64_t first = t * p->gp, np = vn_ops_min(p->gp, p->planes - first), L = p->lanes;
    if (L == 1) {
        float *o = vn_ptr(float, b->out);
        for (int64_t j = 0; j < np; j++) o[j] = (float)plane_scalar(c, a, b, first + j);
    } else {
        for (int64_t j = 0; j < np; j++)
            plane_c0(c, a, b, first + j, vn_local_at(c, b->out, j * L));
    }
    vn_ops_store_f32(c, b->qout, a->y, first * L, b->out, 1, np * L, np * L);
}

static void global_kernel(vn_core *c, const void *args)
{
    const global_args *a = args;
    global_block b;
    carve(c, a->p, &b);
    for (int64_t t; vn_tile_next(c, &t);) run_tile(c, a, &b, t);
}

vn_status vn_pool_run_global(vn_device *device, const vn_pool_plan *p, const void *x, void *y,
                             vn_kernel_counters *counters)
{
    if (p->tiles == 0) return VN_OK;
    int64_t nin = p->planes * pixels(p) * p->lanes;
    global_args a = {p, vn_gm_make((void *)x, p->dtype, nin),
                     vn_ops_output_gm(y, p->dtype, p->planes * p->lanes)};
    const char *name = p->kind == VN_POOL_MAX ? "global_max_pool" : "global_avg_pool";
    vn_launch_desc d = {global_kernel, name, p->block_dim, &a, -1, p->tiles};
    return vn_launch(device, &d, counters);
}
