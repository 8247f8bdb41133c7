/*
 * run.c — a profiled model run: the hook is installed for the run only, the
 * run is an enclosing slice, and the thread's software counters are summed.
 * One profiled run at a time per process (the hook is global).
 */
#include "profile/profiler.h"

vn_status vn_profiler_run(vn_profiler *p, vn_model_ctx *ctx, const vn_named_tensor *inputs,
                          int32_t num_inputs)
{
    if (!p || !ctx) return vn_error(VN_ERR_INVALID_ARG, "vn_profiler_run", "NULL argument");
    vn_prof_hook *none = NULL;
    if (!atomic_compare_exchange_strong(&vn_prof_hook_active, &none, &p->hook))
        return vn_error(VN_ERR_STATE, "vn_profiler_run", "another profiled run is in progress");
    p->runner_tid = vn_prof_tid();
    p->runner = pthread_self();
    if (!p->perf_open) { /* opened by the thread that runs, counting that thread */
        vn_perf_open(&p->perf);
        p->perf_open = true;
    }
    vn_sw_counters s0 = vn_sw_now();
    int64_t t0 = vn_prof_now_ns();
    vn_status st = vn_model_run(p->model, ctx, inputs, num_inputs, NULL, 0);
    int64_t t1 = vn_prof_now_ns();
    vn_sw_counters s1 = vn_sw_now();
    atomic_store(&vn_prof_hook_active, NULL);
    vn_prof_add_slice(p, -1, p->runner_tid, t0, t1);
    p->runs++;
    p->run_ms += (double)(t1 - t0) / 1e6;
    p->sw.task_clock_ms += s1.task_clock_ms - s0.task_clock_ms;
    p->sw.page_faults += s1.page_faults - s0.page_faults;
    p->sw.ctx_switches += s1.ctx_switches - s0.ctx_switches;
    for (int32_t i = 0; i < p->num_nodes; i++)
        for (int32_t k = 0; k < VN_HW_COUNT; k++) p->nodes[i].hw_supported[k] = p->perf.fd[k] >= 0;
    return st;
}

int32_t vn_profiler_num_nodes(const vn_profiler *p)
{
    return p ? p->num_nodes : 0;
}

const vn_profile_node *vn_profiler_node(const vn_profiler *p, int32_t index)
{
    return p && index >= 0 && index < p->num_nodes ? &p->nodes[index] : NULL;
}

int64_t vn_profiler_num_runs(const vn_profiler *p)
{
    return p ? p->runs : 0;
}

double vn_profiler_run_ms(const vn_profiler *p)
{
    return p ? p->run_ms : 0;
}

vn_sw_counters vn_profiler_sw(const vn_profiler *p)
{
    return p ? p->sw : (vn_sw_counters){0, 0, 0};
}

void vn_profiler_peaks(const vn_profiler *p, double *gflops, double *gbs)
{
    *gflops = p ? p->peak_gflops : 0;
    *gbs = p ? p->peak_gbs : 0;
}

vn_bound vn_prof_node_bound(const vn_profiler *p, const vn_profile_node *n, double *frac)
{
    double ms = n->calls ? n->total_ms / (double)n->calls : 0;
    return vn_profile_classify(ms, n->flops, n->bytes, p->peak_gflops, p->peak_gbs, frac);
}
