/*
 * pool_direct.c — MaxPool on NC1HWC0 f32 (1-D and 2-D, no Indices) by the
 * direct kernel of src/kernel/pool_c0_kernels.h instead of the tile-model
 * passes of pool_kernel.c: a task is a band of output rows of one plane,
 * sized so that a task is worth its dispatch.
 */
#include "kernel/core_internal.h"
#include "kernel/pool_c0_kernels.h"
#include "ops/pool.h"

#define ROWS_TARGET 4096 /* output values per task */

typedef struct direct_args {
    const vn_pool_plan *p;
    const float *x;
    float *y;
    int64_t rows, bands; /* output rows per task, tasks per plane */
} direct_args;

bool vn_pool_direct_ok(const vn_pool_plan *p)
{
    return p->kind == VN_POOL_MAX && p->lanes == VN_POOL_C0 && p->dtype == VN_F32 && !p->indices &&
           p->g.nsp <= 2;
}

static void direct_kernel(vn_core *core, const void *args)
{
    const direct_args *d = args;
    const vn_pool_geom *g = &d->p->g;
    const vn_pool_c0_table *t = vn_pool_c0_table_get();
    int64_t in_plane = g->in[1] * g->in[2] * VN_POOL_C0,
            out_plane = g->out[1] * g->out[2] * VN_POOL_C0;
    for (int64_t task; vn_tile_next(core, &task);) {
        int64_t plane = task / d->bands, oh0 = (task % d->bands) * d->rows;
        vn_pool_c0_args a = {.x = d->x + plane * in_plane,
                             .y = d->y + plane * out_plane,
                             .IH = g->in[1],
                             .IW = g->in[2],
                             .OW = g->out[2],
                             .oh0 = oh0,
                             .oh1 = vn_ops_min(g->out[1], oh0 + d->rows),
                             .kh = g->k[1],
                             .kw = g->k[2],
                             .sh = g->s[1],
                             .sw = g->s[2],
                             .ph = g->pb[1],
                             .pw = g->pb[2],
                             .dh = g->d[1],
                             .dw = g->d[2]};
        t->max_rows(&a);
        int64_t out = (a.oh1 - a.oh0) * g->out[2] * VN_POOL_C0 * (int64_t)sizeof(float);
        /* input rows of the band, once (the overlap of windows stays in cache) */
        int64_t ih0 = vn_ops_max(0, a.oh0 * a.sh - a.ph);
        int64_t ih1 = vn_ops_min(a.IH, (a.oh1 - 1) * a.sh - a.ph + (a.kh - 1) * a.dh + 1);
        core->counters.bytes_in +=
            vn_ops_max(0, ih1 - ih0) * a.IW * VN_POOL_C0 * (int64_t)sizeof(float);
        core->counters.bytes_out += out;
        core->counters.vector_elem_ops += out / (int64_t)sizeof(float) * a.kh * a.kw;
    }
}

vn_status vn_pool_run_direct(vn_device *device, const vn_pool_plan *p, const float *x, float *y,
                             vn_kernel_counters *counters)
{
    const vn_pool_geom *g = &p->g;
    int64_t row = g->out[2] * VN_POOL_C0;
    direct_args d = {p, x, y, vn_ops_min(g->out[1], vn_ops_max(1, ROWS_TARGET / row)), 0};
    d.bands = vn_ops_div_up(g->out[1], d.rows);
    int64_t tasks = p->planes * d.bands;
    if (tasks == 0 || row == 0) return VN_OK;
    int32_t blocks = vn_ops_block_dim(device, tasks, d.rows * row * g->k[1] * g->k[2]);
    vn_launch_desc ld = {direct_kernel, "max_pool_c0", blocks, &d, -1, tasks};
    return vn_launch(device, &ld, counters);
}
