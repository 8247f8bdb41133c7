/*
 * write_top.c — the printed top-N table: nodes by total time, with share,
 * achieved rates, bound and fraction of roof, then the total.
 */
#include <stdlib.h>

#include "profile/profiler.h"

static const vn_profiler *sort_p; /* qsort has no context argument in C11 */

static int by_time(const void *a, const void *b)
{
    double x = sort_p->nodes[*(const int32_t *)a].total_ms;
    double y = sort_p->nodes[*(const int32_t *)b].total_ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void print_row(FILE *f, const vn_profiler *p, const vn_profile_node *n, double median)
{
    double avg = n->calls ? n->total_ms / (double)n->calls : 0, frac = 0, s = avg / 1e3;
    vn_bound b = vn_prof_node_bound(p, n, &frac);
    fprintf(f, "%-28.28s %-14.14s %10.4f %10.4f %6.1f%% %9.2f %8.2f %8.3f %-8s %6.1f%%\n",
            n->name && n->name[0] ? n->name : "-", n->op_type, avg, median,
            p->run_ms > 0 ? 100.0 * n->total_ms / p->run_ms : 0, s > 0 ? n->flops / s / 1e9 : 0,
            s > 0 ? n->bytes / s / 1e9 : 0, n->bytes > 0 ? n->flops / n->bytes : 0,
            vn_bound_name(b), 100.0 * frac);
}

void vn_profiler_print_top(const vn_profiler *p, int32_t top, FILE *f)
{
    int32_t *order = malloc((size_t)(p->num_nodes ? p->num_nodes : 1) * sizeof *order);
    double *median = vn_prof_medians(p);
    if (!order || !median) {
        free(order), free(median);
        fputs("(no memory for the profile table)\n", f);
        return;
    }
    for (int32_t i = 0; i < p->num_nodes; i++) order[i] = i;
    sort_p = p;
    qsort(order, (size_t)p->num_nodes, sizeof *order, by_time);
    fprintf(f, "%-28s %-14s %10s %10s %7s %9s %8s %8s %-8s %7s\n", "node", "op", "avg ms", "med ms",
            "share", "GFLOP/s", "GB/s", "FLOP/B", "bound", "roof");
    double nodes_ms = 0;
    for (int32_t i = 0; i < p->num_nodes; i++) {
        if (i < top) print_row(f, p, &p->nodes[order[i]], median[order[i]]);
        nodes_ms += p->nodes[i].total_ms;
    }
    double runs = (double)(p->runs ? p->runs : 1), run = p->run_ms > 0 ? p->run_ms : 1;
    double own = vn_profiler_overhead_ms(p), rest = p->run_ms - nodes_ms - own;
    fprintf(f,
            "total: %.4f ms per run over %lld runs (nodes %.4f ms, %.1f%% of run; profiler "
            "%.1f%%; executor between nodes %.1f%%); roofs %.1f GFLOP/s, %.1f GB/s\n",
            p->run_ms / runs, (long long)p->runs, nodes_ms / runs, 100.0 * nodes_ms / run,
            100.0 * own / run, 100.0 * (rest > 0 ? rest : 0) / run, p->peak_gflops, p->peak_gbs);
    for (int q = VN_PREC_BF16; q <= VN_PREC_INT8; q++) /* the roofs of low-precision nodes */
        if (vn_prof_used_roof(p, (vn_prof_precision)q) > 0)
            fprintf(f, "  (%s nodes: roof %.1f G%s/s)\n",
                    vn_prof_precision_name((vn_prof_precision)q),
                    vn_prof_used_roof(p, (vn_prof_precision)q), q == VN_PREC_INT8 ? "OP" : "FLOP");
    vn_counter_values c = vn_profiler_counters(p);
    fputs("counters (all runs):", f);
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) {
        if (c.supported[k])
            fprintf(f, " %s %lld", vn_counter_name(k), (long long)c.value[k]);
        else
            fprintf(f, " %s unsupported", vn_counter_name(k));
    }
    fputc('\n', f);
    free(order), free(median);
}
