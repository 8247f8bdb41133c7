/*
 * shape_ops_view.c — the view copy engine (see shape_ops.h) and the plain
 * copy kernel.
 *
 * Kernels move data straight between the two global tensors: a pure
 * data-movement operator gains nothing from staging through scratch (the
 * CPU's caches stand in for the copy engine, as in layout.c).
 *
 * Rows kernel: the destination is [rows, L] (L = the last dim); a tile is
 * tile_rows rows; each row's source offset is the sum of the per-dim offsets
 * of its index, and the row is a memcpy (stride 1), a fill (stride 0) or a
 * gather (any other stride or a table).
 * Transpose kernel: when the last two dims are a 2-D transpose (the inner
 * destination dim walks the source with a large stride, the one before it
 * with stride 1) the destination is cut into TB x TB blocks so both sides
 * of a block stay in L1.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/shape_ops.h"

#define ROW_TILE_ELEMS 8192
#define TB             32
#define COPY_CHUNK     ((int64_t)1 << 20) /* bytes per tile of the plain copy */

vn_view *vn_view_new(const char *where, int32_t rank, vn_dtype dtype)
{
    vn_view *v = calloc(1, sizeof *v);
    if (!v) {
        vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
        return NULL;
    }
    v->rank = rank;
    v->esize = (int32_t)vn_dtype_size(dtype);
    return v;
}

int64_t *vn_view_table(const char *where, vn_view *v, int32_t d)
{
    free(v->d[d].table);
    v->d[d].table = malloc((size_t)(v->d[d].size > 0 ? v->d[d].size : 1) * sizeof(int64_t));
    if (!v->d[d].table) vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    return v->d[d].table;
}

void vn_view_free(void *view)
{
    vn_view *v = view;
    if (!v) return;
    for (int32_t d = 0; d < VN_VIEW_MAX_RANK; d++) free(v->d[d].table);
    free(v);
}

/* Drop affine dims of size 1 and merge affine neighbours that walk the
 * source contiguously (outer stride == inner stride * inner size). */
static void collapse(vn_view *v)
{
    int32_t r = 0;
    for (int32_t d = 0; d < v->rank; d++) {
        vn_view_dim x = v->d[d];
        v->d[d].table = NULL;
        if (!x.table && x.size == 1) continue;
        if (r > 0 && !x.table && !v->d[r - 1].table && v->d[r - 1].stride == x.stride * x.size) {
            v->d[r - 1].size *= x.size;
            v->d[r - 1].stride = x.stride;
            continue;
        }
        v->d[r++] = x;
    }
    for (int32_t d = r; d < v->rank; d++) v->d[d] = (vn_view_dim){0, 0, NULL};
    v->rank = r;
    if (r == 0) {
        v->rank = 1;
        v->d[0] = (vn_view_dim){1, 0, NULL};
    }
}

static bool is_transpose(const vn_view *v)
{
    if (v->rank < 2) return false;
    const vn_view_dim *a = &v->d[v->rank - 2], *b = &v->d[v->rank - 1];
    return !a->table && !b->table && a->stride == 1 && b->stride > 1 && a->size >= 8 &&
           b->size >= 8;
}

vn_status vn_view_finish(const char *where, vn_device *device, vn_view *v)
{
    v->numel = 1;
    for (int32_t d = 0; d < v->rank; d++) v->numel *= v->d[d].size;
    if (v->numel == 0) return VN_OK; /* nothing to launch */
    collapse(v);
    v->L = v->d[v->rank - 1].size;
    v->rows = v->numel / v->L;
    v->transpose = is_transpose(v);
    if (v->transpose) {
        int64_t A = v->d[v->rank - 2].size;
        v->rows = v->numel / (A * v->L);
        v->tiles = v->rows * vn_ops_div_up(A, TB) * vn_ops_div_up(v->L, TB);
        v->block_dim = vn_ops_block_dim(device, v->tiles, TB * TB);
        return VN_OK;
    }
    v->tile_rows = vn_ops_max(1, ROW_TILE_ELEMS / v->L);
    v->tiles = vn_ops_div_up(v->rows, v->tile_rows);
    v->block_dim = vn_ops_block_dim(device, v->tiles, v->tile_rows * v->L);
    (void)where;
    return VN_OK;
}

typedef struct view_args {
    const vn_view *v;
    const uint8_t *src;
    uint8_t *dst;
} view_args;

/* Source offset of the row whose index over dims [0, ndims) is `row`;
 * -1 when any dim of it is padding. */
static int64_t row_offset(const vn_view *v, int64_t row, int32_t ndims)
{
    int64_t off = v->base;
    for (int32_t d = ndims - 1; d >= 0; d--) {
        const vn_view_dim *x = &v->d[d];
        int64_t i = row % x->size;
        row /= x->size;
        if (!x->table) {
            off += i * x->stride; /* may be negative: a reversed slice */
            continue;
        }
        if (x->table[i] < 0) return -1;
        off += x->table[i];
    }
    return off;
}

#define GATHER(T)                                                                                  \
    do {                                                                                           \
        const T *s_ = (const T *)src;                                                              \
        T *d_ = (T *)dst, p_;                                                                      \
        memcpy(&p_, pad, sizeof p_);                                                               \
        if (x->table)                                                                              \
            for (int64_t i = 0; i < n; i++) d_[i] = x->table[i] < 0 ? p_ : s_[x->table[i]];        \
        else                                                                                       \
            for (int64_t i = 0; i < n; i++) d_[i] = s_[i * x->stride];                             \
    } while (0)

/* One destination row of n elements from src (already at the row offset). */
static void copy_row(const vn_view_dim *x, int32_t esize, const uint8_t *pad, const uint8_t *src,
                     uint8_t *dst, int64_t n)
{
    if (!x->table && x->stride == 1) {
        memcpy(dst, src, (size_t)(n * esize));
        return;
    }
    switch (esize) {
    case 1:
        GATHER(uint8_t);
        break;
    case 2:
        GATHER(uint16_t);
        break;
    case 4:
        GATHER(uint32_t);
        break;
    default:
        GATHER(uint64_t);
        break;
    }
}

static void fill_row(int32_t esize, const uint8_t *pad, uint8_t *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * esize, pad, (size_t)esize);
}

static void rows_kernel(vn_core *core, const void *args)
{
    const view_args *a = args;
    const vn_view *v = a->v;
    int64_t es = v->esize;
    const vn_view_dim *last = &v->d[v->rank - 1];
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t r1 = vn_ops_min(v->rows, (t + 1) * v->tile_rows);
        for (int64_t r = t * v->tile_rows; r < r1; r++) {
            int64_t off = row_offset(v, r, v->rank - 1);
            uint8_t *dst = a->dst + r * v->L * es;
            if (off < 0)
                fill_row(v->esize, v->pad, dst, v->L);
            else
                copy_row(last, v->esize, v->pad, a->src + off * es, dst, v->L);
        }
        core->counters.bytes_in += (r1 - t * v->tile_rows) * v->L * es;
        core->counters.bytes_out += (r1 - t * v->tile_rows) * v->L * es;
    }
}

#define TRANSPOSE_BLOCK(T)                                                                         \
    do {                                                                                           \
        const T *s_ = (const T *)src;                                                              \
        T *d_ = (T *)dst;                                                                          \
        for (int64_t j = 0; j < nb; j++)                                                           \
            for (int64_t i = 0; i < na; i++) d_[i * L + j] = s_[j * sb + i];                       \
    } while (0)

/* Destination block [na x nb] at dst (row pitch L) from src, where destination
 * (i, j) is source element j * sb + i: reads run along i, contiguous. */
static void transpose_block(int32_t esize, const uint8_t *src, uint8_t *dst, int64_t na, int64_t nb,
                            int64_t L, int64_t sb)
{
    switch (esize) {
    case 1:
        TRANSPOSE_BLOCK(uint8_t);
        break;
    case 2:
        TRANSPOSE_BLOCK(uint16_t);
        break;
    case 4:
        TRANSPOSE_BLOCK(uint32_t);
        break;
    default:
        TRANSPOSE_BLOCK(uint64_t);
        break;
    }
}

static void transpose_kernel(vn_core *core, const void *args)
{
    const view_args *a = args;
    const vn_view *v = a->v;
    int64_t A = v->d[v->rank - 2].size, L = v->L, sb = v->d[v->rank - 1].stride, es = v->esize;
    int64_t nba = vn_ops_div_up(A, TB), nbb = vn_ops_div_up(L, TB);
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t jb = t % nbb, ib = t / nbb % nba, o = t / (nbb * nba);
        int64_t i0 = ib * TB, j0 = jb * TB;
        int64_t na = vn_ops_min(TB, A - i0), nb = vn_ops_min(TB, L - j0);
        int64_t off = row_offset(v, o, v->rank - 2) + i0 + j0 * sb;
        uint8_t *dst = a->dst + ((o * A + i0) * L + j0) * es;
        transpose_block(v->esize, a->src + off * es, dst, na, nb, L, sb);
        core->counters.bytes_in += na * nb * es;
        core->counters.bytes_out += na * nb * es;
    }
}

vn_status vn_view_execute(vn_device *device, const vn_view *v, const void *src, void *dst,
                          vn_kernel_counters *counters)
{
    if (v->numel == 0 || v->tiles == 0) return VN_OK;
    view_args a = {v, src, dst};
    vn_kernel_fn kernel = v->transpose ? transpose_kernel : rows_kernel;
    const char *name = v->transpose ? "vn_transpose" : "vn_view_copy";
    vn_launch_desc d = {kernel, name, v->block_dim, &a, -1, v->tiles};
    return vn_launch(device, &d, counters);
}

vn_status vn_view_run(const vn_op_run_ctx *ctx)
{
    return vn_view_execute(ctx->device, ctx->plan, ctx->inputs[0].data, ctx->outputs[0].data,
                           ctx->counters);
}

/* ---- plain copy ----------------------------------------------------------------- */

typedef struct copy_args {
    const uint8_t *src;
    uint8_t *dst;
    int64_t bytes, tiles;
} copy_args;

static void copy_kernel(vn_core *core, const void *args)
{
    const copy_args *a = args;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t o = t * COPY_CHUNK, n = vn_ops_min(COPY_CHUNK, a->bytes - o);
        memcpy(a->dst + o, a->src + o, (size_t)n);
        core->counters.bytes_in += n;
        core->counters.bytes_out += n;
    }
}

vn_status vn_so_copy(vn_device *device, const void *src, void *dst, int64_t bytes,
                     vn_kernel_counters *counters)
{
    if (bytes <= 0 || src == dst) return VN_OK;
    copy_args a = {src, dst, bytes, vn_ops_div_up(bytes, COPY_CHUNK)};
    int32_t blocks = vn_ops_block_dim(device, a.tiles, COPY_CHUNK / 4);
    vn_launch_desc d = {copy_kernel, "vn_copy", blocks, &a, -1, a.tiles};
    return vn_launch(device, &d, counters);
}
