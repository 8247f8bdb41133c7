/*
 * pool.h — the pooling family (MaxPool, AveragePool, LpPool and the global
 * pools) on NCHW and on the blocked NC1HWC0 layout: window geometry, plan and
 * the two kernels (windowed and global).
 *
 * Geometry is kept in three spatial dims (D, H, W), the missing leading dims
 * of 1-D and 2-D pools being 1 (kernel 1, stride 1, no pads), so one kernel
 * serves every rank. A plane is one (n, c) of NCHW or one (n, c1) of
 * NC1HWC0; `lanes` is the number of values per pixel (1, or C0 = 16).
 */
#ifndef VINCI_OPS_POOL_H
#define VINCI_OPS_POOL_H

#include "ops/ops_internal.h"

#define VN_POOL_DIMS 3
#define VN_POOL_C0   16 /* fp32 channels per block of NC1HWC0 (one AVX-512 register) */

typedef enum vn_pool_kind { VN_POOL_MAX = 0, VN_POOL_AVG, VN_POOL_LP } vn_pool_kind;

/* The window of every spatial dim i (0 = D, 1 = H, 2 = W): output o reads
 * input positions o*s[i] - pb[i] + t*d[i], t in [0, k[i]). Positions outside
 * [0, in[i]) are padding (-inf for max, 0 for sums). */
typedef struct vn_pool_geom {
    int32_t nsp; /* spatial dims of the operator: 1..3 */
    int64_t in[VN_POOL_DIMS], out[VN_POOL_DIMS];
    int64_t k[VN_POOL_DIMS], s[VN_POOL_DIMS], d[VN_POOL_DIMS];
    int64_t pb[VN_POOL_DIMS], pe[VN_POOL_DIMS]; /* effective pads (after auto_pad) */
    bool count_include_pad;
    int32_t storage_order;
    int64_t p; /* LpPool */
} vn_pool_geom;

/* Parse and validate the attributes of a windowed pool on an input with
 * spatial dims `in` (nsp of them) and compute the output dims. */
vn_status vn_pool_geom_make(const char *where, const vn_attrs *attrs, vn_pool_kind kind,
                            int32_t nsp, const int64_t *in, vn_pool_geom *g);

/* Window taps of output o along dim i that fall in [lo, hi). */
int64_t vn_pool_taps_in(const vn_pool_geom *g, int32_t i, int64_t o, int64_t lo, int64_t hi);

typedef struct vn_pool_plan {
    vn_pool_kind kind;
    vn_dtype dtype;
    int32_t lanes;
    bool indices; /* MaxPool on NCHW: the plan can produce Indices */
    bool global;
    vn_pool_geom g;
    int64_t planes;
    /* windowed: R output rows of one (plane, od) per tile, `band` input rows */
    int64_t R, band, group, row_tiles;
    /* global: `gp` planes per tile, each streamed in chunks of `chunk` pixels */
    int64_t gp, chunk;
    int64_t tiles;
    int32_t block_dim;
    /* per tap kw: outputs [ow_lo, ow_hi) read an input column inside [0, W) */
    int64_t *ow_lo, *ow_hi;
    float *cw; /* per output column: taps counted by the divisor (AveragePool) */
} vn_pool_plan;

/* Scratch row strides (elements) of the windowed kernel: loaded input rows,
 * output rows (both as vn_ops_load_f32 / store_f32 lay them out) and rows of
 * the horizontal results. */
typedef struct vn_pool_rows {
    int64_t win, ows, hs;
} vn_pool_rows;

static inline vn_pool_rows vn_pool_rows_of(const vn_pool_plan *p)
{
    vn_pool_rows z;
    z.win = vn_ops_row_width(p->g.in[2] * p->lanes, p->dtype);
    z.ows = vn_ops_row_width(p->g.out[2] * p->lanes, p->dtype);
    z.hs = z.ows;
    return z;
}

/* Elements of the input-row buffer: `group` loaded rows, or the s phases of
 * one row on NC1HWC0 with stride s > 1. */
static inline int64_t vn_pool_xin_elems(const vn_pool_plan *p)
{
    int64_t phases = p->g.s[2] * vn_ops_div_up(p->g.in[2], p->g.s[2]) * p->lanes;
    return vn_ops_max(p->group * vn_pool_rows_of(p).win, phases);
}

vn_status vn_pool_plan_windowed(const char *where, vn_device *device, vn_pool_plan *p);
vn_status vn_pool_plan_global(const char *where, vn_device *device, vn_pool_plan *p);
void vn_pool_plan_release(vn_pool_plan *p);

/* Run: y (and idx, i64, when non-NULL) from x. */
vn_status vn_pool_run_windowed(vn_device *device, const vn_pool_plan *p, const void *x, void *y,
                               int64_t *idx, vn_kernel_counters *counters);
vn_status vn_pool_run_global(vn_device *device, const vn_pool_plan *p, const void *x, void *y,
                             vn_kernel_counters *counters);

/* MaxPool on NC1HWC0 f32, 1-D or 2-D, without Indices: the direct kernel
 * (pool_direct.c), which vn_pool_run_windowed takes when this holds. */
bool vn_pool_direct_ok(const vn_pool_plan *p);
/* MaxPool on u8 / i8 NCHW without Indices, on the bytes (pool_bytes.c). */
bool vn_pool_bytes_ok(const vn_pool_plan *p);
vn_status vn_pool_run_bytes(vn_device *device, const vn_pool_plan *p, const void *x, void *y,
                            vn_kernel_counters *counters);
vn_status vn_pool_run_direct(vn_device *device, const vn_pool_plan *p, const float *x, float *y,
                             vn_kernel_counters *counters);

/* ---- kernel-side helpers (pool_hpass.c) ------------------------------------- */

/* The horizontal pass (stride 1 on NC1HWC0): one loaded input row `x` (W pixels of `lanes` values)
 * reduced along the kernel's W taps into `h` (OW pixels), which holds the
 * reduction's identity or an earlier row's result. `bi` (NULL unless
 * indices) receives the input column of each maximum (first occurrence). */
void vn_pool_hpass(vn_core *core, const vn_pool_plan *p, vn_local h, vn_local x, int32_t *bi);

/* NC1HWC0 with stride s > 1: load the input row at element `off` of x as s
 * phases into xph (s * vn_pool_phase_pixels pixels), LpPool-transform it,
 * and reduce it along the W taps into h. */
int64_t vn_pool_phase_pixels(const vn_pool_plan *p);
void vn_pool_hpass_c0_strided(vn_core *core, const vn_pool_plan *p, vn_local h, vn_local xph,
                              vn_gm x, int64_t off);

/* |x|^p in place over n elements (the LpPool pre-pass), and v^(1/p) (post). */
void vn_pool_lp_pre(vn_core *core, vn_local x, int64_t pw, int64_t n);
void vn_pool_lp_post(vn_core *core, vn_local y, int64_t pw, int64_t n);

#endif /* VINCI_OPS_POOL_H */
