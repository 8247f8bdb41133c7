/*
 * onnx_model.c — ModelProto and the two entry points: a file or bytes in
 * memory. The file is read whole, decoded into the graph's arena (constants
 * are copied), and released; the graph keeps no pointer into it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "graph/onnx.h"

/* OperatorSetIdProto: domain (1), version (2). */
static vn_status opset(vn_pb *pb, const vn_pb_field *f, vn_graph *g)
{
    vn_pb_msg msg;
    vn_status st = vn_pb_sub(pb, f, "opset_import", &msg);
    if (st != VN_OK) return st;
    vn_opset *o = vn_onnx_push(pb, g, f->offset, "opset imports", (void **)&g->opsets,
                               &g->num_opsets, &g->cap_opsets, sizeof *o, VN_IR_MAX_OPSETS);
    if (!o) return VN_ERR_FORMAT;
    o->domain = "";
    if ((st = vn_pb_push(pb, f->offset, "opset_import", g->num_opsets - 1)) != VN_OK) return st;
    vn_pb_field e;
    bool has;
    while ((st = vn_pb_next(pb, &msg, &e, &has)) == VN_OK && has) {
        if (e.number == 1)
            st = vn_pb_string(pb, &e, "domain", &g->mem, &o->domain);
        else if (e.number == 2)
            st = vn_pb_int(pb, &e, "version", &o->version);
        if (st != VN_OK) break;
    }
    vn_pb_pop(pb);
    if (st == VN_OK && !strcmp(o->domain, "ai.onnx")) o->domain = "";
    return st;
}

static vn_status model_field(vn_pb *pb, const vn_pb_field *f, vn_graph *g)
{
    vn_pb_msg sub;
    vn_status st;
    switch (f->number) {
    case 1:
        return vn_pb_int(pb, f, "ir_version", &g->ir_version);
    case 2:
        return vn_pb_string(pb, f, "producer_name", &g->mem, &g->producer);
    case 7:
        if (g->main) return vn_pb_fail(pb, f->offset, "a second graph");
        if ((st = vn_pb_sub(pb, f, "graph", &sub)) != VN_OK) return st;
        if ((st = vn_pb_push(pb, f->offset, "graph", -1)) != VN_OK) return st;
        st = vn_onnx_graph(pb, sub, g, NULL, &g->main);
        vn_pb_pop(pb);
        return st;
    case 8:
        return opset(pb, f, g);
    default:
        return VN_OK; /* doc, versions, metadata, training info, functions */
    }
}

static vn_status decode(vn_graph *g, const void *data, size_t size)
{
    vn_pb pb;
    memset(&pb, 0, sizeof pb);
    pb.buf = data;
    pb.size = size;
    pb.file = g->file;
    vn_pb_msg msg = vn_pb_root(&pb);
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(&pb, &msg, &f, &has)) == VN_OK && has)
        if ((st = model_field(&pb, &f, g)) != VN_OK) return st;
    if (st != VN_OK) return st;
    if (!g->main)
        return vn_error(VN_ERR_FORMAT, g->file, "byte %zu: model: no graph (is this an ONNX file?)",
                        size);
    return VN_OK;
}

static vn_status build(vn_graph *g, const void *data, size_t size)
{
    vn_status st = decode(g, data, size);
    if (st == VN_OK) st = vn_ir_link(g->main);
    if (st == VN_OK) st = vn_graph_prepare_nodes(g, g->main);
    if (st == VN_OK) st = vn_graph_count_ops(g);
    return st;
}

static vn_graph *graph_new(const char *name, const char *dir)
{
    vn_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->file = vn_gmem_strndup(&g->mem, name, strlen(name));
    g->dir = dir ? vn_gmem_strndup(&g->mem, dir, strlen(dir)) : NULL;
    g->producer = "";
    if (!g->file || (dir && !g->dir)) {
        vn_graph_destroy(g);
        return NULL;
    }
    return g;
}

vn_status vn_graph_load_onnx_bytes(const void *data, size_t size, const char *name, const char *dir,
                                   vn_graph **out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, "vn_graph_load_onnx_bytes", "out is NULL");
    *out = NULL;
    if (!data && size)
        return vn_error(VN_ERR_INVALID_ARG, "vn_graph_load_onnx_bytes", "data is NULL");
    vn_graph *g = graph_new(name ? name : "model", dir);
    if (!g) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_graph_load_onnx_bytes", "no memory");
    vn_status st = build(g, data ? data : "", size);
    if (st != VN_OK) {
        vn_graph_destroy(g);
        return st;
    }
    *out = g;
    return VN_OK;
}

static vn_status read_file(const char *path, void **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return vn_error(VN_ERR_IO, path, "cannot open: %s", strerror(errno));
    vn_status st = VN_OK;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        st = vn_error(VN_ERR_IO, path, "cannot find the file's size: %s", strerror(errno));
    } else if (!(*data = malloc((size_t)len + 1))) {
        st = vn_error(VN_ERR_OUT_OF_MEMORY, path, "no memory to read %ld bytes", len);
    } else if (fread(*data, 1, (size_t)len, f) != (size_t)len) {
        st = vn_error(VN_ERR_IO, path, "read failed");
        free(*data);
        *data = NULL;
    }
    *size = len < 0 ? 0 : (size_t)len;
    fclose(f);
    return st;
}

vn_status vn_graph_load_onnx(const char *path, vn_graph **out)
{
    if (!out || !path)
        return vn_error(VN_ERR_INVALID_ARG, "vn_graph_load_onnx", "%s is NULL",
                        out ? "path" : "out");
    *out = NULL;
    void *data = NULL;
    size_t size = 0;
    vn_status st = read_file(path, &data, &size);
    if (st != VN_OK) return st;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path + (slash == path)), path);
    else
        snprintf(dir, sizeof dir, ".");
    st = vn_graph_load_onnx_bytes(data, size, path, dir, out);
    free(data);
    return st;
}

void vn_graph_destroy(vn_graph *graph)
{
    if (!graph) return;
    vn_gmem_free(&graph->mem);
    free(graph);
}
