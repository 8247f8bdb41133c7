/*
 * pool_bytes.c — MaxPool on u8 / i8 NCHW without Indices (the quantised
 * tensors of QDQ models: pass_fuse_qdq.c runs DQ -> MaxPool -> Q as a MaxPool
 * on the bytes) computed on the bytes, instead of the windowed kernel's f32
 * passes, which convert every byte in and out and run NCHW's strided taps as
 * scalar loops (QDQ ResNet-18's 3x3/2 MaxPool on 64 x 112 x 112: 2.6 ms).
 *
 * Max is separable: an output row is the max over the W taps of the max of
 * its valid input rows (the (kd, kh) taps inside the input), and the row max
 * runs over whole contiguous rows, which the compiler vectorises. i8 values
 * are compared as u8 after flipping the sign bit (x ^ 0x80 keeps the order),
 * so one loop serves both. Padding never wins; a window with no valid tap
 * gives the type's lowest value, as the f32 path's -inf saturates to.
 */
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/pool.h"

#define BYTES_ROW_MAX 8192 /* the row max lives on the stack */
#define ROWS_TARGET   4096 /* output values per task */

typedef struct bytes_args {
    const vn_pool_plan *p;
    const uint8_t *x;
    uint8_t *y;
    uint8_t flip;        /* 0x80 for i8 */
    int64_t rows, bands; /* output rows per task, tasks per (plane, od) */
} bytes_args;

bool vn_pool_bytes_ok(const vn_pool_plan *p)
{
    return p->kind == VN_POOL_MAX && p->lanes == 1 && (p->dtype == VN_U8 || p->dtype == VN_I8) &&
           p->g.in[2] <= BYTES_ROW_MAX;
}

/* v = max(v, row ^ flip), elementwise over n bytes. */
static void row_max(uint8_t *restrict v, const uint8_t *restrict row, uint8_t flip, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint8_t b = row[i] ^ flip;
        v[i] = b > v[i] ? b : v[i];
    }
}

/* Output row oh of depth od of one plane. */
static void out_row(const bytes_args *a, const uint8_t *xp, uint8_t *yrow, int64_t od, int64_t oh)
{
    const vn_pool_geom *g = &a->p->g;
    uint8_t v[BYTES_ROW_MAX];
    memset(v, 0, (size_t)g->in[2]);
    for (int64_t kd = 0; kd < g->k[0]; kd++) {
        int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
        if (id < 0 || id >= g->in[0]) continue;
        for (int64_t kh = 0; kh < g->k[1]; kh++) {
            int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
            if (ih >= 0 && ih < g->in[1])
                row_max(v, xp + (id * g->in[1] + ih) * g->in[2], a->flip, g->in[2]);
        }
    }
    /* the W taps, tap outer over the outputs whose tap lies in the row
     * (the plan's ow_lo / ow_hi, as the windowed kernel's pass) */
    memset(yrow, 0, (size_t)g->out[2]);
    for (int64_t t = 0; t < g->k[2]; t++) {
        int64_t off = t * g->d[2] - g->pb[2];
        for (int64_t ow = a->p->ow_lo[t]; ow < a->p->ow_hi[t]; ow++) {
            uint8_t b = v[ow * g->s[2] + off];
            yrow[ow] = b > yrow[ow] ? b : yrow[ow];
        }
    }
    for (int64_t ow = 0; a->flip && ow < g->out[2]; ow++) yrow[ow] ^= a->flip;
}

static void bytes_kernel(vn_core *core, const void *args)
{
    const bytes_args *a = args;
    const vn_pool_geom *g = &a->p->g;
    int64_t in_plane = g->in[0] * g->in[1] * g->in[2], out_rows = g->out[0] * g->out[1];
    for (int64_t task; vn_tile_next(core, &task);) {
        int64_t pd = task / a->bands, plane = pd / g->out[0], od = pd % g->out[0];
        int64_t oh0 = (task % a->bands) * a->rows, oh1 = vn_ops_min(g->out[1], oh0 + a->rows);
        for (int64_t oh = oh0; oh < oh1; oh++)
            out_row(a, a->x + plane * in_plane,
                    a->y + (plane * out_rows + od * g->out[1] + oh) * g->out[2], od, oh);
        int64_t n = (oh1 - oh0) * g->out[2];
        core->counters.bytes_in += (oh1 - oh0) * g->k[0] * g->k[1] * g->in[2];
        core->counters.bytes_out += n;
        core->counters.vector_elem_ops += n * g->k[0] * g->k[1] * g->k[2];
    }
}

vn_status vn_pool_run_bytes(vn_device *device, const vn_pool_plan *p, const void *x, void *y,
                            vn_kernel_counters *counters)
{
    const vn_pool_geom *g = &p->g;
    int64_t row = g->out[2] > 0 ? g->out[2] : 1;
    bytes_args a = {p,
                    x,
                    y,
                    p->dtype == VN_I8 ? 0x80 : 0,
                    vn_ops_min(g->out[1], vn_ops_max(1, ROWS_TARGET / row)),
                    0};
    a.bands = a.rows > 0 ? vn_ops_div_up(g->out[1], a.rows) : 0;
    int64_t tasks = p->planes * g->out[0] * a.bands;
    if (tasks == 0 || g->out[2] == 0) return VN_OK;
    int32_t blocks = vn_ops_block_dim(device, tasks, a.rows * row * g->k[0] * g->k[1] * g->k[2]);
    vn_launch_desc ld = {bytes_kernel, "max_pool_bytes", blocks, &a, -1, tasks};
    return vn_launch(device, &ld, counters);
}
