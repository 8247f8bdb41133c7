/*
 * medians.c — per-node median call times, from the node slices the profiler
 * keeps (one per call, on the track of the run's nodes). On a shared machine
 * a few slow calls pull a node's mean well above what it usually takes; the
 * median is what the top table and the CSV show beside the mean.
 *
 * Computed on demand from the slices (all nodes: a counting sort by node,
 * then each node's times sorted; one node: its times only), so runs pay
 * nothing for it. Past
 * VN_PROF_MAX_SLICES the medians cover the calls whose slices were kept.
 */
#include <stdlib.h>

#include "profile/profiler.h"

/* A node's own slice (not one of its blocks' worker slices, not a run's). */
static bool node_slice(const vn_profiler *p, const vn_prof_slice *s)
{
    return s->node >= 0 && s->node < p->num_nodes && s->pid != VN_PROF_PID_WORKERS;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, int64_t n)
{
    if (n == 0) return 0;
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double slice_ms(const vn_prof_slice *s)
{
    return (double)(s->t1_ns - s->t0_ns) / 1e6;
}

double *vn_prof_medians(const vn_profiler *p)
{
    size_t nodes = (size_t)(p->num_nodes > 0 ? p->num_nodes : 1);
    double *med = calloc(nodes, sizeof *med);
    int64_t *at = calloc(nodes + 2, sizeof *at); /* node k's times: ms[at[k]] .. ms[at[k + 1]] */
    double *ms = malloc((size_t)(p->num_slices > 0 ? p->num_slices : 1) * sizeof *ms);
    if (!med || !at || !ms) {
        free(med), free(at), free(ms);
        return NULL;
    }
    /* a counting sort: counts at k + 2, starts at k + 1 after the sums, and
     * filling through at[k + 1] moves each start to its node's end */
    for (int64_t i = 0; i < p->num_slices; i++)
        if (node_slice(p, &p->slices[i])) at[p->slices[i].node + 2]++;
    for (int32_t k = 0; k < p->num_nodes; k++) at[k + 2] += at[k + 1];
    for (int64_t i = 0; i < p->num_slices; i++)
        if (node_slice(p, &p->slices[i])) ms[at[p->slices[i].node + 1]++] = slice_ms(&p->slices[i]);
    for (int32_t k = 0; k < p->num_nodes; k++) med[k] = median_of(ms + at[k], at[k + 1] - at[k]);
    free(at), free(ms);
    return med;
}

double vn_profiler_node_median_ms(const vn_profiler *p, int32_t index)
{
    if (!p || index < 0 || index >= p->num_nodes) return 0;
    int64_t n = 0;
    for (int64_t i = 0; i < p->num_slices; i++)
        n += node_slice(p, &p->slices[i]) && p->slices[i].node == index;
    double *ms = malloc((size_t)(n > 0 ? n : 1) * sizeof *ms);
    if (!ms) return 0;
    n = 0;
    for (int64_t i = 0; i < p->num_slices; i++)
        if (node_slice(p, &p->slices[i]) && p->slices[i].node == index)
            ms[n++] = slice_ms(&p->slices[i]);
    double v = median_of(ms, n);
    free(ms);
    return v;
}
