/*
 * unsupported.c — one report of every operator the registry lacks: op,
 * domain, the imported opset and the nodes that use it, so a user sees the
 * whole gap at once rather than one operator per attempt.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

#define NAMES_SHOWN 6 /* node names listed per operator before "and N more" */

typedef struct report {
    char *buf;
    size_t size, len;
    const vn_op_count *op; /* the operator whose nodes are being listed */
    int32_t shown;
} report;

static void put(report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *at = r->len < r->size ? r->buf + r->len : NULL;
    int n = vsnprintf(at, at ? r->size - r->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0) r->len += (size_t)n;
}

static vn_status list_node(vn_gbody *b, int32_t node, void *user)
{
    report *r = user;
    const vn_gnode *n = &b->nodes[node];
    if (strcmp(n->op_type, r->op->op_type) || strcmp(n->domain, r->op->domain)) return VN_OK;
    if (r->shown < NAMES_SHOWN) {
        if (n->name[0])
            put(r, "%s'%s'", r->shown ? ", " : "", n->name);
        else if (b->parent)
            put(r, "%s#%d in subgraph '%s'", r->shown ? ", " : "", (int)node, b->name);
        else
            put(r, "%s#%d", r->shown ? ", " : "", (int)node);
    } else if (r->shown == NAMES_SHOWN) {
        put(r, " and %d more", (int)(r->op->count - NAMES_SHOWN));
    }
    r->shown++;
    return VN_OK;
}

size_t vn_graph_unsupported_report(const vn_graph *graph, char *buf, size_t size)
{
    if (!graph) return 0;
    report r = {buf, buf ? size : 0, 0, NULL, 0};
    if (r.size) buf[0] = '\0';
    for (int32_t i = 0; i < graph->num_op_types; i++) {
        const vn_op_count *c = &graph->op_counts[i];
        if (c->supported) continue;
        put(&r, "%s%s (domain '%s', opset %lld): %d node%s ", r.len ? "\n" : "", c->op_type,
            c->domain[0] ? c->domain : "ai.onnx",
            (long long)vn_graph_domain_opset(graph, c->domain), (int)c->count,
            c->count == 1 ? "" : "s");
        r.op = c;
        r.shown = 0;
        vn_graph_walk(graph->main, list_node, &r);
    }
    return r.len;
}

vn_status vn_graph_check_supported(const vn_graph *g)
{
    int32_t missing = 0;
    for (int32_t i = 0; i < g->num_op_types; i++) missing += !g->op_counts[i].supported;
    if (!missing) return VN_OK;
    char text[900];
    size_t len = vn_graph_unsupported_report(g, text, sizeof text);
    for (char *p = text; *p; p++)
        if (*p == '\n') *p = ';'; /* one line in vn_last_error */
    return vn_error(VN_ERR_UNSUPPORTED, g->file, "%d operator%s not supported by vinci: %s%s",
                    (int)missing, missing == 1 ? " is" : "s are", text,
                    len >= sizeof text ? "... (vn_graph_unsupported_report has the full list)"
                                       : "");
}
