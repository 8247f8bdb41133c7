/*
 * common.c — small helpers shared by the operators: where an error happened
 * and how many blocks a launch should use.
 */
#include <stdio.h>

#include "ops/ops_internal.h"

/* Below this many elements per block, a thread hand-off costs more than the
 * work it moves (a launch wakes workers: microseconds). */
#define MIN_ELEMS_PER_BLOCK 32768

const char *vn_ops_where(const vn_op_ctx *ctx, char *buf, size_t size)
{
    const vn_op_def *d = ctx->def;
    const char *dom = d->domain && d->domain[0] ? d->domain : NULL;
    if (ctx->node_name && ctx->node_name[0])
        snprintf(buf, size, "%s%s%s (node '%s')", dom ? dom : "", dom ? "::" : "", d->name,
                 ctx->node_name);
    else
        snprintf(buf, size, "vn_op_plan_create(%s%s%s)", dom ? dom : "", dom ? "::" : "", d->name);
    return buf;
}

int32_t vn_ops_block_dim(vn_device *device, int64_t tiles, int64_t tile_elems)
{
    if (tiles <= 0) return 0;
    int64_t workers = vn_device_num_workers(device);
    int64_t by_work = vn_ops_max(1, tiles * tile_elems / MIN_ELEMS_PER_BLOCK);
    return (int32_t)vn_ops_max(1, vn_ops_min(vn_ops_min(workers, tiles), by_work));
}

/* Outputs larger than this are written with non-temporal stores: they would
 * not stay in cache for their consumer anyway, and streaming them saves the
 * read-for-ownership traffic (a third of an element-wise op's DRAM bytes).
 * The rule is min(L3 / 2, 16 MiB): a VM reports the whole socket's L3 (here
 * 260 MiB) while its share of it is far smaller. */
static int64_t stream_threshold_bytes(void)
{
    int64_t cap = (int64_t)16 << 20, llc = vn_cpu_features_get()->l3_bytes;
    return llc > 0 && llc / 2 < cap ? llc / 2 : cap;
}

bool vn_ops_output_streamed(vn_dtype dtype, int64_t len)
{
    return len * (int64_t)vn_dtype_size(dtype) > stream_threshold_bytes();
}

vn_gm vn_ops_output_gm(void *data, vn_dtype dtype, int64_t len)
{
    vn_gm g = vn_gm_make(data, dtype, len);
    if (vn_ops_output_streamed(dtype, len)) g.hint = VN_CACHE_STREAM;
    return g;
}
