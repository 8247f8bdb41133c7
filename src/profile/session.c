/*
 * session.c — a profiler: the per-node summary of its model's runs, filled by
 * the executor's hook (profile/hook.h) while vn_profiler_run runs. Around a
 * node the running thread snapshots every worker's counters (counters.c): a
 * worker that ran blocks of the node gets a slice on its track with its
 * counter differences, and the node gets the sum plus the running thread's.
 * At the node's end the runtime's block records of its launches are taken
 * (blocks.c).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "graph/compile.h"
#include "profile/profiler.h"

int32_t vn_prof_tid(void)
{
    return (int32_t)syscall(SYS_gettid);
}

/* "f32[1,64];f32[64]" for a node's values. */
static void format_values(const vn_model *m, const int32_t *v, int32_t n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int32_t k = 0; k < n && used + 1 < size; k++) {
        char d[128] = "-";
        if (v[k] >= 0) vn_desc_format(&m->values[v[k]].desc, d, sizeof d);
        int w = snprintf(buf + used, size - used, "%s%s", k ? ";" : "", d);
        if (w < 0) break;
        used += (size_t)w;
    }
}

/* A node's mean counts per call: 2 FLOPs per multiply-accumulate, 1 per vector element op. */
static void node_work(vn_profile_node *n)
{
    const vn_kernel_counters *c = &n->counters;
    double calls = (double)(n->calls ? n->calls : 1);
    n->flops = (2.0 * (double)c->cube_ops + (double)c->vector_elem_ops) / calls;
    n->bytes = ((double)c->bytes_in + (double)c->bytes_out) / calls;
}

static bool ours(const vn_profiler *p, const vn_model *m)
{
    /* pthread_self, not gettid: no system call per node. */
    return m == p->model && (p->any_thread || pthread_equal(pthread_self(), p->runner));
}

static int64_t hook_begin(vn_prof_hook *h, const vn_model *m, int32_t node)
{
    vn_profiler *p = (vn_profiler *)h;
    (void)node;
    if (!ours(p, m)) return 0;
    int64_t entered = vn_prof_now_ns();
    vn_ctr_mark();
    vn_ctr_snapshot(p->w_begin, p->num_workers, &p->self_begin, &p->host_begin);
    int64_t t0 = vn_prof_now_ns();
    p->own_ns += t0 - entered;
    return t0;
}

/* The slice of the node on track `tid` (between snapshots a and b) and its
 * counters, added into sum unless sum is NULL (the running thread's own
 * blocks: already in its counts). */
static void worker_part(vn_profiler *p, int32_t node, int32_t tid, const vn_ctr_worker *a,
                        const vn_ctr_worker *b, int64_t t0, int64_t t1, vn_counter_values *sum)
{
    if (b->blocks == a->blocks) return;
    vn_counter_values d;
    vn_counters_diff(&a->ctr, &b->ctr, &d);
    for (int32_t k = 0; sum && k < VN_CTR_COUNT; k++) {
        sum->value[k] += d.value[k];
        sum->supported[k] &= d.supported[k];
    }
    int64_t s0 = b->first_ns ? b->first_ns : t0, s1 = b->last_ns > s0 ? b->last_ns : t1;
    vn_prof_slice *s = vn_prof_add_slice(p, node, VN_PROF_PID_WORKERS, tid, s0, s1);
    if (!s) return;
    s->blocks = (int32_t)(b->blocks - a->blocks);
    memcpy(s->ctr, d.value, sizeof s->ctr);
}

static void hook_end(vn_prof_hook *h, const vn_model *m, int32_t node, int64_t t0,
                     const vn_kernel_counters *c)
{
    vn_profiler *p = (vn_profiler *)h;
    if (!ours(p, m) || t0 == 0 || node < 0 || node >= p->num_nodes) return;
    int64_t t1 = vn_prof_now_ns();
    vn_counter_values self_end, sum;
    vn_ctr_snapshot(p->w_end, p->num_workers, &self_end, &p->host_end);
    vn_counters_diff(&p->self_begin, &self_end, &sum);
    for (int32_t w = 0; w < p->num_workers; w++)
        worker_part(p, node, w, &p->w_begin[w], &p->w_end[w], t0, t1, &sum);
    worker_part(p, node, p->num_workers, &p->host_begin, &p->host_end, t0, t1, NULL);
    vn_profile_node *n = &p->nodes[node];
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) {
        n->ctr.value[k] += sum.value[k];
        p->supported[k] &= sum.supported[k];
    }
    double ms = (double)(t1 - t0) / 1e6;
    n->min_ms = n->calls == 0 || ms < n->min_ms ? ms : n->min_ms;
    n->max_ms = ms > n->max_ms ? ms : n->max_ms;
    n->total_ms += ms;
    n->calls++;
    vn_kernel_counters_add(&n->counters, c);
    node_work(n);
    vn_prof_slice *s = vn_prof_add_slice(p, node, p->pid, p->tid, t0, t1);
    if (s) memcpy(s->ctr, sum.value, sizeof s->ctr);
    vn_prof_take_blocks(p, node, t0, t1);
    p->own_ns += vn_prof_now_ns() - t1;
}

vn_prof_slice *vn_prof_add_slice(vn_profiler *p, int32_t node, int32_t pid, int32_t tid, int64_t t0,
                                 int64_t t1)
{
    if (p->num_slices == p->cap_slices) {
        if (p->cap_slices >= VN_PROF_MAX_SLICES) return NULL;
        int64_t cap = p->cap_slices ? p->cap_slices * 2 : 1024;
        vn_prof_slice *s = realloc(p->slices, (size_t)cap * sizeof *s);
        if (!s) return NULL; /* out of memory: the trace stops, the summary goes on */
        p->slices = s;
        p->cap_slices = cap;
    }
    vn_prof_slice *s = &p->slices[p->num_slices++];
    *s = (vn_prof_slice){
        .node = node, .pid = pid, .tid = tid, .run = p->runs, .t0_ns = t0, .t1_ns = t1};
    return s;
}

static vn_status fill_nodes(vn_profiler *p)
{
    const vn_model *m = p->model;
    p->num_nodes = m->num_nodes;
    size_t count = (size_t)(m->num_nodes ? m->num_nodes : 1);
    p->nodes = calloc(count, sizeof *p->nodes);
    p->imbalance_sum = calloc(count, sizeof *p->imbalance_sum);
    p->imbalance_calls = calloc(count, sizeof *p->imbalance_calls);
    if (!p->nodes || !p->imbalance_sum || !p->imbalance_calls)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_profiler_create", "no memory");
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *c = &m->nodes[i];
        vn_profile_node *n = &p->nodes[i];
        n->name = c->name;
        n->op_type = c->op_type;
        n->fused_from = c->fused_from ? c->fused_from : "";
        format_values(m, c->inputs, c->num_inputs, n->inputs, sizeof n->inputs);
        format_values(m, c->outputs, c->num_outputs, n->outputs, sizeof n->outputs);
    }
    return VN_OK;
}

/* The figure of `workers` threads: the one-thread figure for one worker
 * (a 1-worker profile is held to one core's roof, not the machine's), else
 * the one-thread figure times the workers, at most the all-threads one when
 * that is sane (measured under load it can come out below one thread's); the
 * all-threads figure when the device is unknown. */
static double roof_for(const double fig[2], int32_t workers)
{
    double one = fig[VN_MACHINE_ONE_THREAD], all = fig[VN_MACHINE_ALL_THREADS];
    if (workers <= 1) return workers <= 0 ? all : one;
    double scaled = one * workers;
    return all >= one && all < scaled ? all : scaled;
}

static void default_peaks(vn_profiler *p)
{
    vn_machine_peaks k;
    if (p->peak_gflops > 0 && p->peak_gbs > 0) return;
    if (vn_machine_peaks_get(&k) != VN_OK) return;
    int32_t w = vn_device_num_workers(p->device);
    p->peak_gflops = roof_for(k.has_avx512 ? k.fp32_gflops : k.fp32_avx2_gflops, w);
    p->peak_gbs = roof_for(k.dram_triad_gbs, w);
    /* the cube's bf16 / int8 run on AMX tiles where there are any (vinci/machine.h) */
    p->peak_low[VN_PREC_BF16] = roof_for(k.has_amx ? k.amx_bf16_gflops : k.bf16_gflops, w);
    p->peak_low[VN_PREC_INT8] = roof_for(k.has_amx ? k.amx_int8_gops : k.int8_gops, w);
}

vn_status vn_profiler_create(const vn_model *model, double peak_gflops, double peak_gbs,
                             vn_profiler **out)
{
    if (!model || !out) return vn_error(VN_ERR_INVALID_ARG, "vn_profiler_create", "NULL argument");
    vn_profiler *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_profiler_create", "no memory");
    *p = (vn_profiler){.hook = {hook_begin, hook_end}, .model = model, .device = model->device};
    p->peak_gflops = peak_gflops;
    p->peak_gbs = peak_gbs;
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) p->supported[k] = true;
    p->epoch_ns = vn_prof_now_ns();
    vn_status st = fill_nodes(p);
    if (st != VN_OK) return (vn_profiler_destroy(p), st);
    default_peaks(p);
    *out = p;
    return VN_OK;
}

void vn_profiler_destroy(vn_profiler *p)
{
    if (!p) return;
    if (p->runs) vn_ctr_release(); /* the perf events its runs left on */
    free(p->nodes);
    free(p->slices);
    free(p->records);
    free(p->blocks);
    free(p->drained);
    free(p->imbalance_sum);
    free(p->imbalance_calls);
    free(p->w_begin);
    free(p->w_end);
    free(p);
}
