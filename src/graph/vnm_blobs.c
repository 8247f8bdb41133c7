/*
 * vnm_blobs.c — the BLOBS records of a .vnm file: per node the packed
 * constants its plan is re-created around (vinci/ops.h, "pre-packed
 * constants"). Checked here: nodes in range and in order, blob numbers
 * 0, 1, ... without gaps, at most VN_OP_MAX_BLOBS per node, layout strings
 * that fit, 64-byte aligned non-empty ranges inside PACKED, one consumed-input
 * mask per node naming only present constant inputs; and every packed-only
 * constant (no raw bytes stored) is read only through consumed inputs, so no
 * operator ever reads its missing bytes. Whether a blob's size and layout fit
 * the node's shapes is the operator's check, at plan time (vnm_replan.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/vnm_load.h"

#define REC_AT(ld, b) ((ld)->off[VNM_SEC_BLOBS] + (uint64_t)(b) * sizeof(vnm_blob))

static vn_status check_range(const vnm_loader *ld, const vnm_blob *r, uint64_t at)
{
    uint64_t plen = ld->len[VNM_SEC_PACKED];
    if (r->size == 0 || r->offset % VNM_ALIGN || r->offset > plen || r->size > plen - r->offset)
        return vn_vnm_bad(ld, at + 24,
                          "blob range %" PRIu64 "+%" PRIu64
                          " is empty, misaligned or outside the %" PRIu64 "-byte PACKED",
                          r->offset, r->size, plen);
    const char *layout;
    vn_status st = vn_vnm_string(ld, r->layout, at + 8, &layout);
    if (st == VN_OK && strlen(layout) >= sizeof(((vn_op_blob *)0)->layout))
        return vn_vnm_bad(ld, at + 8, "blob layout name is longer than %zu bytes",
                          sizeof(((vn_op_blob *)0)->layout) - 1);
    return st;
}

/* The consumed mask names present constant inputs of the node. */
static vn_status check_consumed(const vnm_loader *ld, const vnm_blob *r, uint64_t at)
{
    const vn_model *m = ld->m;
    const vn_cnode *n = &m->nodes[r->node];
    if (r->consumed == 0 || (n->num_inputs < 64 && r->consumed >> n->num_inputs))
        return vn_vnm_bad(ld, at + 16, "consumed inputs 0x%" PRIx64 " of a node with %d inputs",
                          r->consumed, (int)n->num_inputs);
    for (int32_t k = 0; k < n->num_inputs; k++) {
        if (!(r->consumed >> k & 1)) continue;
        int32_t v = n->inputs[k];
        if (v < 0 || m->values[v].kind != VN_CV_CONST)
            return vn_vnm_bad(ld, at + 16,
                              "consumed input %d of node %" PRIu32 " is not a constant", (int)k,
                              r->node);
    }
    return VN_OK;
}

static vn_status read_record(vnm_loader *ld, uint64_t b, int64_t *last_node)
{
    uint64_t at = REC_AT(ld, b);
    vnm_blob r;
    memcpy(&r, ld->base + at, sizeof r);
    if (r.node >= (uint32_t)ld->m->num_nodes || (int64_t)r.node < *last_node)
        return vn_vnm_bad(ld, at, "blob node %" PRIu32 " is out of range or out of order", r.node);
    bool first = (int64_t)r.node != *last_node;
    uint32_t want = first ? 0 : ld->blob_count[r.node];
    if (r.index != want || want >= VN_OP_MAX_BLOBS)
        return vn_vnm_bad(ld, at + 4, "blob number %" PRIu32 " (expected %" PRIu32 ", at most %d)",
                          r.index, want, VN_OP_MAX_BLOBS);
    if (!first && r.consumed != ld->consumed[r.node])
        return vn_vnm_bad(ld, at + 16, "blobs of node %" PRIu32 " disagree on consumed inputs",
                          r.node);
    vn_status st = check_range(ld, &r, at);
    if (st == VN_OK) st = check_consumed(ld, &r, at);
    if (st != VN_OK) return st;
    if (first) ld->blob_first[r.node] = (uint32_t)b;
    ld->blob_count[r.node]++;
    ld->consumed[r.node] = r.consumed;
    *last_node = r.node;
    return VN_OK;
}

/* A packed-only constant: read, and only through consumed inputs; never an output. */
static vn_status check_packed_only(const vnm_loader *ld)
{
    const vn_model *m = ld->m;
    uint32_t *readers = calloc((size_t)m->num_values + 1, sizeof *readers);
    if (!readers) return VN_ERR_OUT_OF_MEMORY;
    vn_status st = VN_OK;
    for (int32_t i = 0; i < m->num_nodes && st == VN_OK; i++) {
        const vn_cnode *n = &m->nodes[i];
        for (int32_t k = 0; k < n->num_inputs && st == VN_OK; k++) {
            int32_t v = n->inputs[k];
            if (v < 0 || !m->values[v].packed_only) continue;
            readers[v]++;
            if (k >= 64 || !(ld->consumed[i] >> k & 1))
                st = vn_vnm_bad(ld, ld->off[VNM_SEC_NODES] + (uint64_t)i * sizeof(vnm_node) + 24,
                                "node %d reads packed-only constant '%s' (input %d) raw", (int)i,
                                m->values[v].name, (int)k);
        }
    }
    for (int32_t i = 0; i < m->num_outputs && st == VN_OK; i++)
        if (m->values[m->outputs[i]].packed_only) readers[m->outputs[i]] = 0;
    for (int32_t v = 0; v < m->num_values && st == VN_OK; v++)
        if (m->values[v].packed_only && !readers[v])
            st = vn_vnm_bad(ld, ld->off[VNM_SEC_VALUES] + (uint64_t)v * sizeof(vnm_value) + 84,
                            "packed-only constant '%s' has no packed reader (or is an output)",
                            m->values[v].name);
    free(readers);
    return st;
}

vn_status vn_vnm_read_blobs(vnm_loader *ld)
{
    vn_model *m = ld->m;
    size_t nn = (size_t)m->num_nodes + 1;
    ld->blob_first = vn_gmem_alloc(&m->mem, nn * sizeof *ld->blob_first);
    ld->blob_count = vn_gmem_alloc(&m->mem, nn * sizeof *ld->blob_count);
    ld->consumed = vn_gmem_alloc(&m->mem, nn * sizeof *ld->consumed);
    if (!ld->blob_first || !ld->blob_count || !ld->consumed) return VN_ERR_OUT_OF_MEMORY;
    uint64_t count = ld->len[VNM_SEC_BLOBS] / sizeof(vnm_blob);
    int64_t last = -1;
    for (uint64_t b = 0; b < count; b++) {
        vn_status st = read_record(ld, b, &last);
        if (st != VN_OK) return st;
    }
    return check_packed_only(ld);
}

int32_t vn_vnm_node_blobs(const vnm_loader *ld, int32_t i, vn_op_blob *blobs)
{
    int32_t n = (int32_t)ld->blob_count[i];
    for (int32_t k = 0; k < n; k++) {
        vnm_blob r;
        memcpy(&r, ld->base + REC_AT(ld, ld->blob_first[i] + (uint32_t)k), sizeof r);
        const char *layout = "";
        vn_vnm_string(ld, r.layout, 0, &layout); /* checked by vn_vnm_read_blobs */
        memset(&blobs[k], 0, sizeof blobs[k]);
        blobs[k].data = ld->base + ld->off[VNM_SEC_PACKED] + r.offset;
        blobs[k].size = (size_t)r.size;
        snprintf(blobs[k].layout, sizeof blobs[k].layout, "%s", layout);
    }
    return n;
}
