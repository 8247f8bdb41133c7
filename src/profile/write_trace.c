/*
 * write_trace.c — trace.json in the Chrome trace event format (Perfetto,
 * chrome://tracing): complete ("X") events in microseconds on three
 * processes of named tracks ("M" metadata events): the host thread of
 * synchronous runs, one track per worker, one per stream of asynchronous
 * runs (profiler.h). Model runs enclose their node slices; a node's slice on
 * a worker carries that worker's counters, its slice on the run's track the
 * node's totals and its bound.
 */
#include <stdlib.h>

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

static void put_meta(FILE *f, const char *what, int32_t pid, int32_t tid, const char *fmt,
                     long long arg)
{
    char name[96];
    snprintf(name, sizeof name, fmt, arg);
    fprintf(f,
            ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"args\":{\"name\":", (int)pid,
            (int)tid, what);
    put_json_str(f, name);
    fputs("}}", f);
}

static void put_counters(FILE *f, const vn_profiler *p, const int64_t *ctr)
{
    for (int32_t k = 0; k < VN_CTR_COUNT; k++) {
        fprintf(f, ",\"%s\":", vn_counter_name(k));
        if (p->supported[k])
            fprintf(f, "%lld", (long long)ctr[k]);
        else
            fputs("\"unsupported\"", f);
    }
}

static void put_slice(FILE *f, const vn_profiler *p, const vn_prof_slice *s)
{
    double ts = (double)(s->t0_ns - p->epoch_ns) / 1e3, dur = (double)(s->t1_ns - s->t0_ns) / 1e3;
    fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":",
            (int)s->pid, (int)s->tid, ts, dur);
    if (s->node < 0) {
        put_json_str(f, "model run");
        fprintf(f, ",\"cat\":\"model\",\"args\":{\"run\":%lld}}", (long long)s->run);
        return;
    }
    const vn_profile_node *n = &p->nodes[s->node];
    put_json_str(f, n->name && n->name[0] ? n->name : n->op_type);
    fprintf(f, ",\"cat\":\"%s\",\"args\":{\"run\":%lld,\"op_type\":",
            s->pid == VN_PROF_PID_WORKERS ? "worker" : "node", (long long)s->run);
    put_json_str(f, n->op_type);
    if (s->pid == VN_PROF_PID_WORKERS) {
        fprintf(f, ",\"blocks\":%d", (int)s->blocks);
    } else {
        double frac = 0;
        vn_bound b = vn_prof_node_bound(p, n, &frac);
        fprintf(f, ",\"flops\":%.0f,\"bytes\":%.0f,\"bound\":\"%s\",\"roof_fraction\":%.4f",
                n->flops, n->bytes, vn_bound_name(b), frac);
    }
    put_counters(f, p, s->ctr);
    fputs("}}", f);
}

static void put_record(FILE *f, const vn_profiler *p, const vn_profile_record *r)
{
    static const char *kinds[] = {"kernel", "generic", "memcpy", "memset"};
    double ts = (double)(r->start_ns - p->epoch_ns) / 1e3;
    double dur = (double)(r->end_ns - r->start_ns) / 1e3;
    fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"name\":",
            VN_PROF_PID_STREAMS, (unsigned)r->stream_id, ts, dur > 0 ? dur : 0);
    put_json_str(f, r->name);
    fprintf(f,
            ",\"cat\":\"task\",\"args\":{\"task\":%llu,\"kind\":\"%s\",\"blocks\":%d,"
            "\"first_worker\":%d,\"last_worker\":%d,\"skipped\":%s,\"bytes_in\":%lld,"
            "\"bytes_out\":%lld}}",
            (unsigned long long)r->task, (unsigned)r->kind < 4 ? kinds[r->kind] : "?",
            (int)r->num_blocks, (int)r->first_worker, (int)r->last_worker,
            r->skipped ? "true" : "false", (long long)r->bytes_in, (long long)r->bytes_out);
}

/* Process and track names: every track that has a slice, plus every worker. */
static void put_tracks(FILE *f, const vn_profiler *p)
{
    put_meta(f, "process_name", VN_PROF_PID_WORKERS, 0, "vinci workers", 0);
    put_meta(f, "process_name", VN_PROF_PID_STREAMS, 0, "vinci streams", 0);
    for (int32_t w = 0; w < p->num_workers; w++)
        put_meta(f, "thread_name", VN_PROF_PID_WORKERS, w, "worker %lld", w);
    /* blocks the node's own thread ran (caller-runs launches) */
    put_meta(f, "thread_name", VN_PROF_PID_WORKERS, p->num_workers, "host (caller-run blocks)", 0);
    int64_t host = -1, streams = 0; /* bit s: stream s named (ids past 63 named per slice) */
    for (int64_t i = 0; i < p->num_slices; i++) {
        const vn_prof_slice *s = &p->slices[i];
        if (s->pid == VN_PROF_PID_HOST && s->tid != host)
            put_meta(f, "thread_name", s->pid, s->tid, "host thread %lld", host = s->tid);
        if (s->pid == VN_PROF_PID_STREAMS && !(s->tid < 64 && (streams >> s->tid) & 1)) {
            put_meta(f, "thread_name", s->pid, s->tid, "stream %lld", s->tid);
            if (s->tid < 64) streams |= (int64_t)1 << s->tid;
        }
    }
}

vn_status vn_profiler_write_trace(const vn_profiler *p, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return vn_error(VN_ERR_IO, "vn_profiler_write_trace", "cannot write '%s'", path);
    fputs("{\"traceEvents\":[\n", f);
    fputs("{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":", f);
    put_json_str(f, p->model->name ? p->model->name : "vinci");
    fputs("}}", f);
    put_tracks(f, p);
    for (int64_t i = 0; i < p->num_slices; i++) put_slice(f, p, &p->slices[i]);
    for (int64_t i = 0; i < p->num_records; i++) put_record(f, p, &p->records[i]);
    fputs("\n],\"displayTimeUnit\":\"ms\"}\n", f);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return vn_error(VN_ERR_IO, "vn_profiler_write_trace", "error writing '%s'", path);
    return VN_OK;
}
