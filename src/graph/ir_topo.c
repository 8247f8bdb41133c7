/*
 * ir_topo.c — a topological order of a body's nodes (Kahn's algorithm, FIFO,
 * so a file that is already sorted keeps nearly its order). ONNX requires
 * sorted nodes, but exporters do not always comply; vinci sorts rather than
 * trusts, and reports a cycle by naming a node on it.
 */
#include <stdlib.h>

#include "graph/ir.h"

static int32_t waiting_input(const vn_gbody *b, const int32_t *indeg, int32_t n)
{
    const vn_gnode *node = &b->nodes[n];
    for (int32_t k = 0; k < node->num_inputs + node->num_implicit; k++) {
        int32_t v = k < node->num_inputs ? node->inputs[k] : node->implicit[k - node->num_inputs];
        if (v >= 0 && b->values[v].producer >= 0 && indeg[b->values[v].producer] > 0) return v;
    }
    return -1;
}

static vn_status report_cycle(const vn_gbody *b, const int32_t *indeg)
{
    char a[256], c[256];
    for (int32_t n = 0; n < b->num_nodes; n++) {
        if (indeg[n] == 0) continue;
        int32_t v = waiting_input(b, indeg, n);
        if (v < 0) continue;
        return vn_error(VN_ERR_FORMAT, b->graph->file,
                        "graph '%s' has a cycle: %s reads '%s', which %s produces only after it",
                        b->name, vn_ir_node_label(b, n, a, sizeof a), b->values[v].name,
                        vn_ir_node_label(b, b->values[v].producer, c, sizeof c));
    }
    return vn_error(VN_ERR_INTERNAL, b->graph->file, "graph '%s': sort stalled without a cycle",
                    b->name);
}

static int32_t *count_deps(const vn_gbody *b)
{
    int32_t *indeg = calloc((size_t)b->num_nodes + 1, sizeof *indeg);
    if (!indeg) return NULL;
    for (int32_t n = 0; n < b->num_nodes; n++) {
        const vn_gnode *node = &b->nodes[n];
        for (int32_t k = 0; k < node->num_inputs + node->num_implicit; k++) {
            int32_t v =
                k < node->num_inputs ? node->inputs[k] : node->implicit[k - node->num_inputs];
            if (v >= 0 && b->values[v].producer >= 0) indeg[n]++;
        }
    }
    return indeg;
}

vn_status vn_ir_topo_sort(vn_gbody *b)
{
    int32_t *order = vn_gmem_alloc(&b->graph->mem, (size_t)b->num_nodes * sizeof *order + 1);
    int32_t *indeg = count_deps(b);
    if (!order || !indeg) {
        free(indeg);
        return vn_error(VN_ERR_OUT_OF_MEMORY, b->graph->file, "no memory to sort %d nodes",
                        (int)b->num_nodes);
    }
    int32_t head = 0, tail = 0;
    for (int32_t n = 0; n < b->num_nodes; n++)
        if (indeg[n] == 0) order[tail++] = n;
    while (head < tail) {
        const vn_gnode *node = &b->nodes[order[head++]];
        for (int32_t k = 0; k < node->num_outputs; k++) {
            int32_t v = node->outputs[k];
            if (v < 0) continue;
            for (int32_t c = 0; c < b->values[v].num_consumers; c++)
                if (--indeg[b->values[v].consumers[c]] == 0)
                    order[tail++] = b->values[v].consumers[c];
        }
    }
    vn_status st = tail == b->num_nodes ? VN_OK : report_cycle(b, indeg);
    free(indeg);
    if (st == VN_OK) b->order = order;
    return st;
}
