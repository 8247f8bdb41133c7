/*
 * exec_async.c — a run enqueued on a stream.
 *
 * Operators run synchronously: each node's run launches its kernels with
 * vn_launch, which waits for the device's workers. A block of a stream task
 * runs on one of those workers and may not wait for them (the runtime
 * refuses: it would deadlock), so the nodes cannot be stream tasks of the
 * same device. Instead a run is two stream entries:
 *
 *   1. a blocking host callback that runs every node in order (on the
 *      device's callback thread, which may launch kernels); later work of
 *      the stream waits for it, so the run is ordered like any stream work;
 *   2. a one-block task that turns the run's error, if any, into the
 *      stream's sticky error (callbacks cannot fail a stream), naming the
 *      node and operator; its release marks the context free again.
 *
 * Runs on different streams of one device share its one callback thread, so
 * they do not overlap each other; for concurrent runs call vn_model_run from
 * several threads (each node's blocks still spread over all workers).
 */
#include <stdio.h>
#include <string.h>

#include "graph/exec.h"

static void run_callback(void *user, vn_status status)
{
    vn_model_ctx *c = user;
    if (status != VN_OK) { /* the stream failed earlier: the check task is skipped too */
        c->async_status = status;
        snprintf(c->async_msg, sizeof c->async_msg, "skipped: the stream had failed");
        return;
    }
    c->async_status = vn_exec_nodes(c->model, c);
    snprintf(c->async_msg, sizeof c->async_msg, "%s",
             c->async_status == VN_OK ? "" : vn_last_error());
}

static vn_status check_block(void *user, int32_t worker, int32_t block)
{
    vn_model_ctx *c = user;
    if (c->async_status == VN_OK) return VN_OK;
    return vn_error(c->async_status, "vn_model_run_async", "%s", c->async_msg);
}

static void release(void *user)
{
    vn_model_ctx *c = user;
    atomic_store(&c->busy, false);
}

vn_status vn_model_run_async(const vn_model *m, vn_model_ctx *c, vn_stream *stream,
                             const vn_named_tensor *inputs, int32_t ni, vn_named_tensor *outputs,
                             int32_t no)
{
    const char *w = "vn_model_run_async";
    if (!stream || !c) return vn_error(VN_ERR_INVALID_ARG, w, "stream or ctx is NULL");
    if (m && vn_stream_device(stream) != m->device)
        return vn_error(VN_ERR_INVALID_ARG, w, "%s: the stream belongs to another device", m->name);
    bool idle = false;
    if (!atomic_compare_exchange_strong(&c->busy, &idle, true))
        return vn_error(VN_ERR_STATE, w, "the context already has a run pending");
    vn_status st = vn_exec_bind(m, c, inputs, ni, outputs, no, w);
    c->async_status = VN_OK;
    if (st == VN_OK) st = vn_stream_add_callback(stream, run_callback, c, true);
    if (st != VN_OK) {
        atomic_store(&c->busy, false);
        return st;
    }
    vn_task_desc task = {"vinci model run", 1, check_block, c, release};
    st = vn_stream_submit(stream, &task);
    if (st != VN_OK) { /* the callback is queued: it must finish before the context is reused */
        vn_stream_synchronize(stream, -1);
        atomic_store(&c->busy, false);
    }
    return st;
}
