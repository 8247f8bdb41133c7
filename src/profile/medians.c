/*
 * medians.c — per-node median call times, from the node slices the profiler
 * keeps (one per call, on the track of the run's nodes). On a shared machine
 * a few slow calls pull a node's mean well above what it usually takes; the
 * median is what the top table and the CSV show beside the mean.
 *
 * Computed on demand in one pass over the slices (count per node, fill, sort
 * each node's run of times), so runs pay nothing for it. Past
 * VN_PROF_MAX_SLICES the medians cover the calls whose slices were kept.
 */
#include <stdlib.h>

#include "profile/profiler.h"

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

double *vn_prof_medians(const vn_profiler *p)
{
    size_t nodes = (size_t)(p->num_nodes > 0 ? p->num_nodes : 1);
    double *med = calloc(nodes, sizeof *med);
    int64_t *start = calloc(nodes + 1, sizeof *start);
    double *ms = malloc((size_t)(p->num_slices > 0 ? p->num_slices : 1) * sizeof *ms);
    if (!med || !start || !ms) {
        free(med), free(start), free(ms);
        return NULL;
    }
    for (int64_t i = 0; i < p->num_slices; i++) /* counts, then where each node's run starts */
        if (node_slice(p, &p->slices[i])) start[p->slices[i].node + 1]++;
    for (int32_t k = 0; k < p->num_nodes; k++) start[k + 1] += start[k];
    int64_t *fill = calloc(nodes, sizeof *fill);
    if (!fill) {
        free(med), free(start), free(ms);
        return NULL;
    }
    for (int64_t i = 0; i < p->num_slices; i++) {
        const vn_prof_slice *s = &p->slices[i];
        if (node_slice(p, s))
            ms[start[s->node] + fill[s->node]++] = (double)(s->t1_ns - s->t0_ns) / 1e6;
    }
    for (int32_t k = 0; k < p->num_nodes; k++)
        med[k] = median_of(ms + start[k], start[k + 1] - start[k]);
    free(fill), free(start), free(ms);
    return med;
}

double vn_profiler_node_median_ms(const vn_profiler *p, int32_t index)
{
    if (!p || index < 0 || index >= p->num_nodes) return 0;
    double *med = vn_prof_medians(p), v = med ? med[index] : 0;
    free(med);
    return v;
}
