/*
 * compile_release.c — constants that only packing operators read.
 *
 * An operator's plan may hold a constant input packed (vinci/ops.h, pre-pack
 * hooks: MatMul's B, Conv's blocked weights); the raw bytes are then dead
 * for every run. The .vnm writer leaves such constants out of the file, and
 * after a compile the model gives back the pages of the ones it owns (folded
 * constants: BatchNorm-folded weights, transposed B, ...), so a weight is
 * held once. Initializers are the graph's and stay: the graph may be
 * compiled again (other shapes, other levels).
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph/compile.h"

#define MIN_RELEASE (64 * 1024) /* smaller constants are not worth a system call */

int32_t vn_cg_node_blobs(const vn_model *m, int32_t i, vn_op_blob *blobs, uint64_t *consumed)
{
    const vn_cnode *n = &m->nodes[i];
    const vn_op_prepack *hooks = n->plan_data ? vn_op_prepack_hooks(n->def) : NULL;
    *consumed = 0;
    int32_t nb = hooks ? hooks->export_blobs(n->plan_data, blobs, consumed) : 0;
    if (nb <= 0 || nb > VN_OP_MAX_BLOBS || !*consumed) {
        *consumed = 0;
        return 0;
    }
    return nb;
}

void vn_cg_packed_only(const vn_model *m, const uint64_t *consumed, bool *packed_only)
{
    for (int32_t v = 0; v < m->num_values; v++) packed_only[v] = false;
    for (int32_t i = 0; i < m->num_nodes; i++) /* read through a replaced input */
        for (int32_t k = 0; k < m->nodes[i].num_inputs && k < 64; k++) {
            int32_t v = m->nodes[i].inputs[k];
            if (v >= 0 && (consumed[i] >> k & 1)) packed_only[v] = true;
        }
    for (int32_t i = 0; i < m->num_nodes; i++) /* ... and never raw */
        for (int32_t k = 0; k < m->nodes[i].num_inputs; k++) {
            int32_t v = m->nodes[i].inputs[k];
            if (v >= 0 && (k >= 64 || !(consumed[i] >> k & 1))) packed_only[v] = false;
        }
    for (int32_t v = 0; v < m->num_values; v++)
        if (m->values[v].mem != VN_MEM_CONST) packed_only[v] = false;
    for (int32_t i = 0; i < m->num_outputs; i++) packed_only[m->outputs[i]] = false;
}

/* The whole pages inside [p, p + n) back to the system (they read as zeros
 * if touched again, which nothing does). */
static void release_pages(const void *p, size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    uintptr_t lo = ((uintptr_t)p + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
    uintptr_t hi = ((uintptr_t)p + n) / (uintptr_t)page * (uintptr_t)page;
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void vn_cg_release_packed(vn_model *m)
{
    uint64_t *consumed = calloc((size_t)m->num_nodes + 1, sizeof *consumed);
    bool *packed_only = calloc((size_t)m->num_values + 1, sizeof *packed_only);
    if (consumed && packed_only) {
        vn_op_blob blobs[VN_OP_MAX_BLOBS];
        for (int32_t i = 0; i < m->num_nodes; i++) vn_cg_node_blobs(m, i, blobs, &consumed[i]);
        vn_cg_packed_only(m, consumed, packed_only);
        for (int32_t v = 0; v < m->num_values; v++) {
            vn_cvalue *val = &m->values[v];
            if (!packed_only[v] || !val->owned || !val->data || val->nbytes < MIN_RELEASE) continue;
            release_pages(val->data, val->nbytes);
            val->data = NULL;
            val->packed_only = true;
        }
    }
    free(consumed);
    free(packed_only);
}
