/*
 * write_trace.c — trace.json in the Chrome trace event format (Perfetto,
 * chrome://tracing): complete ("X") events in microseconds, one track per
 * thread (tid), model runs as enclosing slices, node slices carrying their
 * op type, FLOPs, bytes and bound as args.
 */
#include "graph/compile.h"
#include "profile/profiler.h"

static void put_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void put_slice(FILE *f, const vn_profiler *p, const vn_prof_slice *s, int64_t run)
{
    double ts = (double)(s->t0_ns - p->epoch_ns) / 1e3, dur = (double)(s->t1_ns - s->t0_ns) / 1e3;
    fputs("{\"ph\":\"X\",\"pid\":1,\"tid\":", f);
    fprintf(f, "%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":", (int)s->tid, ts, dur);
    if (s->node < 0) {
        put_json_str(f, "model run");
        fprintf(f, ",\"cat\":\"model\",\"args\":{\"run\":%lld}}", (long long)run);
        return;
    }
    const vn_profile_node *n = &p->nodes[s->node];
    double frac = 0;
    vn_bound b = vn_prof_node_bound(p, n, &frac);
    put_json_str(f, n->name && n->name[0] ? n->name : n->op_type);
    fputs(",\"cat\":\"node\",\"args\":{\"op_type\":", f);
    put_json_str(f, n->op_type);
    fprintf(f, ",\"flops\":%.0f,\"bytes\":%.0f,\"bound\":\"%s\",\"roof_fraction\":%.4f}}", n->flops,
            n->bytes, vn_bound_name(b), frac);
}

vn_status vn_profiler_write_trace(const vn_profiler *p, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return vn_error(VN_ERR_IO, "vn_profiler_write_trace", "cannot write '%s'", path);
    fputs("{\"traceEvents\":[\n", f);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":", f);
    put_json_str(f, p->model->name ? p->model->name : "vinci");
    fputs("}}", f);
    int64_t run = 0;
    for (int64_t i = 0; i < p->num_slices; i++) {
        fputs(",\n", f);
        put_slice(f, p, &p->slices[i], p->slices[i].node < 0 ? run++ : run);
    }
    fputs("\n],\"displayTimeUnit\":\"ms\"}\n", f);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return vn_error(VN_ERR_IO, "vn_profiler_write_trace", "error writing '%s'", path);
    return VN_OK;
}
