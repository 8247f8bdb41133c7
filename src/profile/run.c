/*
 * run.c — profiled model runs: the executor's hook, the workers' block
 * counting and the device's task and block records are on for the run only
 * (the perf events from the first run to vn_profiler_destroy), the run is an
 * enclosing slice on the track of its nodes. One profiled run at a time per
 * process (the hook is global).
 */
#include <stdlib.h>

#include "graph/compile.h"
#include "profile/profiler.h"

static vn_status worker_buffers(vn_profiler *p)
{
    int32_t n = vn_ctr_num_workers();
    if (n == p->num_workers && p->w_begin) return VN_OK;
    free(p->w_begin);
    free(p->w_end);
    p->w_begin = calloc((size_t)(n ? n : 1), sizeof *p->w_begin);
    p->w_end = calloc((size_t)(n ? n : 1), sizeof *p->w_end);
    p->num_workers = n;
    if (p->w_begin && p->w_end) return VN_OK;
    p->num_workers = 0;
    return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_profiler_run", "no memory for %d workers", (int)n);
}

vn_status vn_prof_run_begin(vn_profiler *p)
{
    vn_prof_hook *none = NULL;
    if (!atomic_compare_exchange_strong(&vn_prof_hook_active, &none, &p->hook))
        return vn_error(VN_ERR_STATE, "vn_profiler_run", "another profiled run is in progress");
    vn_status st = vn_counters_enable(p->device);
    if (st == VN_OK) st = worker_buffers(p);
    p->was_profiling = vn_device_profiling(p->device);
    if (st == VN_OK) vn_device_set_profiling(p->device, true); /* task and block records */
    if (st == VN_OK) return VN_OK;
    vn_counters_disable();
    atomic_store(&vn_prof_hook_active, NULL);
    return st;
}

/* Nodes whose outputs are their inputs' bytes (views, concatenations built
 * in place) run no kernel, so the executor never calls the hook for them: a
 * run that completed ran each of them once, in no time. */
static void count_alias_nodes(vn_profiler *p)
{
    for (int32_t i = 0; i < p->num_nodes; i++)
        if (p->model->nodes[i].alias != VN_ALIAS_NONE) p->nodes[i].calls++;
}

void vn_prof_run_end(vn_profiler *p, int64_t t0, int64_t t1, bool completed)
{
    vn_device_set_profiling(p->device, p->was_profiling); /* as the caller had it */
    /* the stream tasks the runtime recorded during the run (on its stream
     * for an asynchronous run, on any for a synchronous one) */
    p->num_records = vn_prof_drain(p->device, VN_PROF_TASKS, (void **)&p->records, p->num_records,
                                   &p->cap_records, VN_PROF_MAX_SLICES, &p->records_dropped);
    vn_prof_take_blocks(p, -1, 0, 0); /* those outside nodes: stream tasks */
    atomic_store(&vn_prof_hook_active, NULL);
    vn_ctr_pause(); /* the events stay on for the next run: vn_profiler_destroy releases them */
    vn_prof_add_slice(p, -1, p->pid, p->tid, t0, t1);
    if (completed) count_alias_nodes(p);
    p->runs++;
    p->run_ms += (double)(t1 - t0) / 1e6;
    for (int32_t i = 0; i < p->num_nodes; i++)
        for (int32_t k = 0; k < VN_CTR_COUNT; k++) p->nodes[i].ctr.supported[k] = p->supported[k];
}

vn_status vn_profiler_run(vn_profiler *p, vn_model_ctx *ctx, const vn_named_tensor *inputs,
                          int32_t num_inputs)
{
    if (!p || !ctx) return vn_error(VN_ERR_INVALID_ARG, "vn_profiler_run", "NULL argument");
    p->pid = VN_PROF_PID_HOST;
    p->tid = vn_prof_tid();
    p->runner = pthread_self();
    p->any_thread = false;
    vn_status st = vn_prof_run_begin(p);
    if (st != VN_OK) return st;
    int64_t t0 = vn_prof_now_ns();
    st = vn_model_run(p->model, ctx, inputs, num_inputs, NULL, 0);
    vn_prof_run_end(p, t0, vn_prof_now_ns(), st == VN_OK);
    return st;
}

vn_status vn_profiler_run_async(vn_profiler *p, vn_model_ctx *ctx, vn_stream *stream,
                                const vn_named_tensor *inputs, int32_t num_inputs)
{
    if (!p || !ctx || !stream)
        return vn_error(VN_ERR_INVALID_ARG, "vn_profiler_run_async", "NULL argument");
    p->pid = VN_PROF_PID_STREAMS;
    p->tid = (int32_t)vn_stream_id(stream);
    p->any_thread = true; /* the nodes run on the device's callback thread */
    vn_status st = vn_prof_run_begin(p);
    if (st != VN_OK) return st;
    int64_t t0 = vn_prof_now_ns();
    st = vn_model_run_async(p->model, ctx, stream, inputs, num_inputs, NULL, 0);
    vn_status sync = vn_stream_synchronize(stream, -1);
    vn_prof_run_end(p, t0, vn_prof_now_ns(), st == VN_OK && sync == VN_OK);
    return st != VN_OK ? st : sync;
}

int32_t vn_profiler_num_nodes(const vn_profiler *p)
{
    return p ? p->num_nodes : 0;
}

const vn_profile_node *vn_profiler_node(const vn_profiler *p, int32_t index)
{
    if (!p || index < 0 || index >= p->num_nodes) return NULL;
    return &p->nodes[index];
}

int64_t vn_profiler_num_runs(const vn_profiler *p)
{
    return p ? p->runs : 0;
}

double vn_profiler_run_ms(const vn_profiler *p)
{
    return p ? p->run_ms : 0;
}

double vn_profiler_overhead_ms(const vn_profiler *p)
{
    return p ? (double)p->own_ns / 1e6 : 0;
}

vn_counter_values vn_profiler_counters(const vn_profiler *p)
{
    vn_counter_values t = {{0}, {0}};
    for (int32_t k = 0; p && k < VN_CTR_COUNT; k++) {
        t.supported[k] = p->supported[k];
        for (int32_t i = 0; i < p->num_nodes; i++) t.value[k] += p->nodes[i].ctr.value[k];
    }
    return t;
}

void vn_profiler_peaks(const vn_profiler *p, double *gflops, double *gbs)
{
    *gflops = p ? p->peak_gflops : 0;
    *gbs = p ? p->peak_gbs : 0;
}

vn_prof_precision vn_prof_node_precision(const vn_profile_node *n)
{
    const vn_kernel_counters *c = &n->counters;
    if (2 * c->cube_ops_int8 > c->cube_ops) return VN_PREC_INT8;
    if (2 * c->cube_ops_bf16 > c->cube_ops) return VN_PREC_BF16;
    return VN_PREC_F32;
}

const char *vn_prof_precision_name(vn_prof_precision p)
{
    return p == VN_PREC_INT8 ? "int8" : p == VN_PREC_BF16 ? "bf16" : "f32";
}

double vn_prof_node_roof(const vn_profiler *p, const vn_profile_node *n)
{
    double low = p->peak_low[vn_prof_node_precision(n)];
    return low > 0 ? low : p->peak_gflops;
}

double vn_prof_used_roof(const vn_profiler *p, vn_prof_precision q)
{
    if (!(p->peak_low[q] > 0 && p->peak_gbs > 0)) return 0;
    for (int32_t i = 0; i < p->num_nodes; i++)
        if (p->nodes[i].flops > 0 && vn_prof_node_precision(&p->nodes[i]) == q)
            return p->peak_low[q];
    return 0;
}

vn_bound vn_prof_node_bound(const vn_profiler *p, const vn_profile_node *n, double *frac)
{
    double ms = n->calls ? n->total_ms / (double)n->calls : 0;
    return vn_profile_classify(ms, n->flops, n->bytes, vn_prof_node_roof(p, n), p->peak_gbs, frac);
}
