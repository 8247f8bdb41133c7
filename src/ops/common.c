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
