/*
 * write_csv.c — op_summary.csv: one row per node, msprof's op summary for
 * vinci (times in ms, per-call FLOPs and bytes, the precision most of the
 * node's cube work ran in and that precision's compute roof, roofline bound, blocks per
 * call and their load imbalance — the longest block over the median, msprof's
 * parallelism — and the perf counters summed over calls, "unsupported" where
 * the kernel has none).
 */
#include <stdlib.h>

#include "profile/profiler.h"

static void put_str(FILE *f, const char *s)
{
    /* RFC 4180 quoting: shapes hold commas, names may hold anything. */
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputs("\",", f);
}

static void put_header(FILE *f)
{
    fputs("name,op_type,fused_from,inputs,outputs,calls,total_ms,avg_ms,median_ms,min_ms,max_ms,"
          "share,flops,bytes,"
          "gflops,gbs,intensity,precision,roof_gflops,bound,roof_fraction,blocks,block_imbalance",
          f);
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) fprintf(f, ",%s", vn_counter_name(k));
    fputc('\n', f);
}

static void put_row(FILE *f, const vn_profiler *p, const vn_profile_node *n, double median)
{
    double avg = n->calls ? n->total_ms / (double)n->calls : 0, frac = 0;
    double s = avg / 1e3;
    vn_bound b = vn_prof_node_bound(p, n, &frac);
    put_str(f, n->name);
    put_str(f, n->op_type);
    put_str(f, n->fused_from);
    put_str(f, n->inputs);
    put_str(f, n->outputs);
    fprintf(f, "%lld,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.0f,%.0f,%.4f,%.4f,%.4f,%s,%.1f,%s,%.4f",
            (long long)n->calls, n->total_ms, avg, median, n->min_ms, n->max_ms,
            p->run_ms > 0 ? n->total_ms / p->run_ms : 0, n->flops, n->bytes,
            s > 0 ? n->flops / s / 1e9 : 0, s > 0 ? n->bytes / s / 1e9 : 0,
            n->bytes > 0 ? n->flops / n->bytes : 0,
            vn_prof_precision_name(vn_prof_node_precision(n)), vn_prof_node_roof(p, n),
            vn_bound_name(b), frac);
    fprintf(f, ",%.2f,%.3f", n->calls ? (double)n->blocks / (double)n->calls : 0,
            n->block_imbalance);
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) {
        if (n->ctr.supported[k])
            fprintf(f, ",%lld", (long long)n->ctr.value[k]);
        else
            fputs(",unsupported", f);
    }
    fputc('\n', f);
}

vn_status vn_profiler_write_csv(const vn_profiler *p, const char *path)
{
    double *median = vn_prof_medians(p);
    if (!median)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_profiler_write_csv",
                        "no memory for the medians of %d nodes' calls", (int)p->num_nodes);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(median);
        return vn_error(VN_ERR_IO, "vn_profiler_write_csv", "cannot write '%s'", path);
    }
    put_header(f);
    for (int32_t i = 0; i < p->num_nodes; i++) put_row(f, p, &p->nodes[i], median[i]);
    free(median);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return vn_error(VN_ERR_IO, "vn_profiler_write_csv", "error writing '%s'", path);
    return VN_OK;
}
