/*
 * write_trace.c — trace.json in the Chrome trace event format (Perfetto,
 * chrome://tracing): complete ("X") events in microseconds on three
 * processes of named tracks ("M" metadata events): the host thread of
 * synchronous runs, one track per worker, one per stream of asynchronous
 * runs (profiler.h). Model runs enclose their node slices; a node's slice on
 * a worker carries that worker's counters, its slice on the run's track the
 * node's totals and its bound. Inside a node's worker slice, one slice per
 * block (the runtime's block records, blocks.c) with the block's kernel
 * counters, for the first VN_PROF_BLOCK_RUNS runs ("otherData" says so).
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

/* A block on its worker's track (a guest index: the host's caller-run track). */
static void put_block(FILE *f, const vn_profiler *p, const vn_prof_block *k)
{
    const vn_profile_block *b = &k->b;
    int32_t tid = b->worker < p->num_workers ? b->worker : p->num_workers;
    double ts = (double)(b->start_ns - p->epoch_ns) / 1e3;
    double dur = (double)(b->end_ns - b->start_ns) / 1e3;
    fprintf(f,
            ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":\"block %d\","
            "\"cat\":\"block\",\"args\":{\"run\":%lld,\"node\":",
            VN_PROF_PID_WORKERS, (int)tid, ts, dur > 0 ? dur : 0, (int)b->block, (long long)k->run);
    const vn_profile_node *n = k->node >= 0 ? &p->nodes[k->node] : NULL;
    put_json_str(f, !n ? "" : n->name && n->name[0] ? n->name : n->op_type); /* as its slices */
    if (b->stream_id == VN_PROFILE_SYNC)
        fprintf(f, ",\"launch\":%llu", (unsigned long long)b->task);
    else
        fprintf(f, ",\"stream\":%u,\"task\":%llu", (unsigned)b->stream_id,
                (unsigned long long)b->task);
    fprintf(f,
            ",\"block\":%d,\"worker\":%d,\"bytes_in\":%lld,\"bytes_out\":%lld,"
            "\"vector_elem_ops\":%lld,\"cube_ops\":%lld",
            (int)b->block, (int)b->worker, (long long)b->bytes_in, (long long)b->bytes_out,
            (long long)b->vector_elem_ops, (long long)b->cube_ops);
    for (int a = 0; a < VN_ARENA_COUNT; a++)
        fprintf(f, ",\"scratch_%s\":%lld", vn_arena_name((vn_arena)a),
                (long long)b->scratch_high_water[a]);
    fputs("}}", f);
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
    for (int64_t i = 0; i < p->num_blocks; i++) put_block(f, p, &p->blocks[i]);
    int64_t block_runs = p->runs < VN_PROF_BLOCK_RUNS ? p->runs : VN_PROF_BLOCK_RUNS;
    fprintf(f,
            "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"runs\":%lld,\"block_slice_runs\":%lld,"
            "\"blocks_dropped\":%llu,\"tasks_dropped\":%llu,\"block_slices\":\"one per block "
            "for the first %lld of %lld runs\"}}\n",
            (long long)p->runs, (long long)block_runs, (unsigned long long)p->blocks_dropped,
            (unsigned long long)p->records_dropped, (long long)block_runs, (long long)p->runs);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return vn_error(VN_ERR_IO, "vn_profiler_write_trace", "error writing '%s'", path);
    return VN_OK;
}
