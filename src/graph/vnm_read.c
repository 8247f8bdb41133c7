/*
 * vnm_read.c — a .vnm file's values, model inputs / outputs and nodes into
 * the model's arrays. Every record field is checked before use: strings,
 * dtypes, ranks and dims (sizes stay below 2^48 bytes, so no later product
 * overflows), memory classes against the model's io lists, arena ranges
 * against the arena size and the arena size against the ranges, constant
 * ranges against WEIGHTS, and every index against its array. Messages give
 * the byte offset of the field at fault.
 */
#include <inttypes.h>
#include <string.h>

#include "graph/vnm_load.h"

#define MAX_BYTES (1ull << 48) /* far above any real tensor or arena */
#define MAXIO     64           /* as compile.c: a node's inputs / outputs */

#define VAL_AT(ld, v) ((ld)->off[VNM_SEC_VALUES] + (uint64_t)(v) * sizeof(vnm_value))

/* Shape and dtype of a record (rank -1 allowed only when `may_unknown`). */
static vn_status read_desc(const vnm_loader *ld, const vnm_value *r, uint64_t at, bool *known,
                           vn_tensor_desc *d)
{
    if (r->rank < -1 || r->rank > VN_MAX_RANK)
        return vn_vnm_bad(ld, at + 12, "rank %" PRId32 " is outside -1..%d", r->rank, VN_MAX_RANK);
    *known = r->rank >= 0;
    d->rank = r->rank;
    d->dtype = VN_F32;
    if (!*known) return VN_OK;
    if (!vn_dtype_valid((vn_dtype)r->dtype))
        return vn_vnm_bad(ld, at + 8, "dtype %" PRId32 " is not a vinci dtype", r->dtype);
    d->dtype = (vn_dtype)r->dtype;
    uint64_t bytes = vn_dtype_size(d->dtype);
    for (int32_t k = 0; k < r->rank; k++) {
        int64_t dim = r->dims[k];
        if (dim < 0 || (uint64_t)dim > MAX_BYTES || (dim && bytes > MAX_BYTES / (uint64_t)dim))
            return vn_vnm_bad(ld, at + 16 + 8 * (uint64_t)k,
                              "dim %d is %" PRId64 " (negative or the tensor is too large)", (int)k,
                              dim);
        bytes *= (uint64_t)dim;
        d->dims[k] = dim;
    }
    return VN_OK;
}

static uint64_t value_bytes(const vn_tensor_desc *d)
{
    int64_t numel = vn_desc_numel(d);
    return numel > 0 ? (uint64_t)numel * vn_dtype_size(d->dtype) : 0;
}

static vn_status read_io(vnm_loader *ld, uint32_t first, uint32_t count, int32_t **out, uint64_t at)
{
    vn_model *m = ld->m;
    if (count > VN_IR_MAX_IO || (uint64_t)first + count > ld->num_indices)
        return vn_vnm_bad(
            ld, at, "io list of %" PRIu32 " at index %" PRIu32 " runs past the %" PRIu64 " indices",
            count, first, ld->num_indices);
    *out = vn_gmem_alloc(&m->mem, ((size_t)count + 1) * sizeof **out);
    if (!*out) return VN_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < count; i++) {
        int32_t v = ld->indices[first + i];
        if (v < 0 || v >= m->num_values)
            return vn_vnm_bad(ld, ld->off[VNM_SEC_INDICES] + 4 * ((uint64_t)first + i),
                              "value index %" PRId32 " is outside 0..%d", v,
                              (int)m->num_values - 1);
        (*out)[i] = v;
    }
    return VN_OK;
}

/* The io-index of a value of class INPUT / OUTPUT must point back at it;
 * an activation of class INPUT is a view's alias of that input (its node is
 * checked against it in vnm_replan.c). */
static bool io_points_back(const vn_model *m, const vnm_value *r, int32_t v, bool output)
{
    int32_t n = output ? m->num_outputs : m->num_inputs;
    const int32_t *list = output ? m->outputs : m->inputs;
    bool alias = !output && r->kind == VN_CV_ACT;
    return r->io_index >= 0 && r->io_index < n && (alias || list[r->io_index] == v);
}

/* A constant's bytes: exactly its shape's size, 64-byte aligned in WEIGHTS. */
static vn_status read_const(const vnm_loader *ld, const vnm_value *r, vn_cvalue *val, uint64_t at)
{
    uint64_t bytes = value_bytes(&val->desc), wlen = ld->len[VNM_SEC_WEIGHTS];
    if (r->io_index != 0 && r->io_index != VNM_CONST_PACKED)
        return vn_vnm_bad(ld, at + 84, "constant flag %" PRId32 " is not 0 or %d (packed)",
                          r->io_index, VNM_CONST_PACKED);
    if (r->io_index == VNM_CONST_PACKED) { /* readers' plans hold it (checked with BLOBS) */
        if (r->nbytes || r->offset)
            return vn_vnm_bad(ld, at + 88, "a packed-only constant stores no bytes");
        val->packed_only = true;
        val->io_index = -1;
        return VN_OK;
    }
    if (r->nbytes != bytes)
        return vn_vnm_bad(ld, at + 96, "constant has %" PRIu64 " bytes, its shape needs %" PRIu64,
                          r->nbytes, bytes);
    if (bytes && (r->offset % VNM_ALIGN || r->offset > wlen || bytes > wlen - r->offset))
        return vn_vnm_bad(ld, at + 88,
                          "weights range %" PRIu64 "+%" PRIu64
                          " is misaligned or outside the %" PRIu64 "-byte WEIGHTS",
                          r->offset, bytes, wlen);
    val->data = bytes ? ld->base + ld->off[VNM_SEC_WEIGHTS] + r->offset : NULL;
    val->nbytes = bytes;
    return VN_OK;
}

static vn_status read_mem(vnm_loader *ld, const vnm_value *r, int32_t v, uint64_t at)
{
    vn_cvalue *val = &ld->m->values[v];
    uint64_t bytes = value_bytes(&val->desc), arena = ld->plan->arena_bytes;
    int32_t mem = r->mem, kind = r->kind;
    bool kind_ok = mem == VN_MEM_NONE                            ? kind != VN_CV_INPUT
                   : mem == VN_MEM_ARENA || mem == VN_MEM_OUTPUT ? kind == VN_CV_ACT
                   : mem == VN_MEM_CONST                         ? kind == VN_CV_CONST
                                                                 : kind != VN_CV_CONST;
    /* an operator's unused anonymous output (Split's beyond the node's, ...)
     * has no shape (rank -1, no bytes) but the arena class of every output */
    bool shape_ok = val->known || mem == VN_MEM_NONE || (mem == VN_MEM_ARENA && kind == VN_CV_ACT);
    if (mem < VN_MEM_NONE || mem > VN_MEM_OUTPUT || !kind_ok || !shape_ok)
        return vn_vnm_bad(ld, at + 80, "memory class %" PRId32 " does not fit kind %" PRId32, mem,
                          kind);
    val->mem = mem;
    val->io_index = r->io_index;
    if (mem == VN_MEM_ARENA &&
        (r->offset % VNM_ALIGN || r->offset > arena || bytes > arena - r->offset))
        return vn_vnm_bad(ld, at + 88,
                          "arena range %" PRIu64 "+%" PRIu64
                          " is misaligned or outside the %" PRIu64 "-byte arena",
                          r->offset, bytes, arena);
    if ((mem == VN_MEM_INPUT || mem == VN_MEM_OUTPUT) &&
        !io_points_back(ld->m, r, v, mem == VN_MEM_OUTPUT))
        return vn_vnm_bad(ld, at + 84, "io index %" PRId32 " does not name this value",
                          r->io_index);
    val->offset = mem == VN_MEM_ARENA ? r->offset : 0;
    return mem == VN_MEM_CONST ? read_const(ld, r, val, at) : VN_OK;
}

static vn_status read_values(vnm_loader *ld)
{
    vn_model *m = ld->m;
    uint64_t n = ld->len[VNM_SEC_VALUES] / sizeof(vnm_value);
    if (n > VN_IR_MAX_VALUES)
        return vn_vnm_bad(ld, ld->off[VNM_SEC_VALUES], "%" PRIu64 " values (limit %d)", n,
                          VN_IR_MAX_VALUES);
    m->values = vn_gmem_alloc(&m->mem, ((size_t)n + 1) * sizeof *m->values);
    if (!m->values) return VN_ERR_OUT_OF_MEMORY;
    m->num_values = m->cap_values = (int32_t)n;
    for (int32_t v = 0; v < m->num_values; v++) {
        const vnm_value *r = (const vnm_value *)(ld->base + VAL_AT(ld, v));
        vn_cvalue *val = &m->values[v];
        val->producer = val->input_index = val->output_index = val->io_index = -1;
        if (r->kind < VN_CV_ACT || r->kind > VN_CV_CONST)
            return vn_vnm_bad(ld, VAL_AT(ld, v) + 4, "value kind %" PRId32, r->kind);
        val->kind = r->kind;
        vn_status st = vn_vnm_string(ld, r->name, VAL_AT(ld, v), &val->name);
        if (st == VN_OK) st = read_desc(ld, r, VAL_AT(ld, v), &val->known, &val->desc);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

/* Model inputs and outputs: inputs are input values, outputs known ones. */
static vn_status read_model_io(vnm_loader *ld)
{
    vn_model *m = ld->m;
    const vnm_meta *mt = ld->meta;
    uint64_t at = ld->off[VNM_SEC_META];
    vn_status st = read_io(ld, mt->inputs_first, mt->num_inputs, &m->inputs, at + 12);
    if (st == VN_OK) st = read_io(ld, mt->outputs_first, mt->num_outputs, &m->outputs, at + 16);
    if (st != VN_OK) return st;
    m->num_inputs = (int32_t)mt->num_inputs;
    m->num_outputs = (int32_t)mt->num_outputs;
    for (int32_t i = 0; i < m->num_inputs; i++) {
        vn_cvalue *v = &m->values[m->inputs[i]];
        if (v->kind != VN_CV_INPUT || !v->known || v->input_index >= 0)
            return vn_vnm_bad(ld, at + 12, "model input %d ('%s') is not a distinct input value",
                              (int)i, v->name);
        v->input_index = i;
    }
    for (int32_t i = m->num_outputs - 1; i >= 0; i--) { /* the first occurrence wins */
        vn_cvalue *v = &m->values[m->outputs[i]];
        if (!v->known)
            return vn_vnm_bad(ld, at + 16, "model output %d ('%s') has no shape", (int)i, v->name);
        v->output_index = i;
    }
    return VN_OK;
}

static vn_status read_node(vnm_loader *ld, int32_t i)
{
    vn_model *m = ld->m;
    vn_cnode *n = &m->nodes[i];
    uint64_t at = ld->off[VNM_SEC_NODES] + (uint64_t)i * sizeof(vnm_node);
    const vnm_node *r = (const vnm_node *)(ld->base + at);
    vn_status st = vn_vnm_string(ld, r->name, at, &n->name);
    if (st == VN_OK) st = vn_vnm_string(ld, r->op_type, at + 4, &n->op_type);
    if (st == VN_OK) st = vn_vnm_string(ld, r->domain, at + 8, &n->domain);
    const char *fused = NULL;
    if (st == VN_OK) st = vn_vnm_string(ld, r->fused_from, at + 32, &fused);
    if (st != VN_OK) return st;
    n->fused_from = fused && fused[0] ? fused : NULL;
    if (r->num_inputs > MAXIO || r->num_outputs > MAXIO || r->num_outputs < 1)
        return vn_vnm_bad(ld, at + 12, "%" PRIu32 " inputs and %" PRIu32 " outputs (1..%d)",
                          r->num_inputs, r->num_outputs, MAXIO);
    if ((uint64_t)r->first_index + r->num_inputs + r->num_outputs > ld->num_indices)
        return vn_vnm_bad(ld, at + 24,
                          "index range at %" PRIu32 " runs past the %" PRIu64 " indices",
                          r->first_index, ld->num_indices);
    n->num_inputs = (int32_t)r->num_inputs;
    n->num_outputs = (int32_t)r->num_outputs;
    n->inputs = vn_gmem_alloc(&m->mem, (r->num_inputs + r->num_outputs + 1) * sizeof(int32_t));
    if (!n->inputs) return VN_ERR_OUT_OF_MEMORY;
    n->outputs = n->inputs + n->num_inputs;
    for (uint32_t k = 0; k < r->num_inputs + r->num_outputs; k++) {
        int32_t v = ld->indices[r->first_index + k];
        if (v < (k < r->num_inputs ? -1 : 0) || v >= m->num_values)
            return vn_vnm_bad(ld, ld->off[VNM_SEC_INDICES] + 4 * ((uint64_t)r->first_index + k),
                              "node %d: value index %" PRId32 " is outside 0..%d", (int)i, v,
                              (int)m->num_values - 1);
        n->inputs[k] = v; /* inputs and outputs share the block */
    }
    return vn_vnm_read_attrs(ld, r, at, n);
}

static vn_status read_nodes(vnm_loader *ld)
{
    vn_model *m = ld->m;
    uint64_t n = ld->len[VNM_SEC_NODES] / sizeof(vnm_node);
    if (n > VN_IR_MAX_NODES)
        return vn_vnm_bad(ld, ld->off[VNM_SEC_NODES], "%" PRIu64 " nodes (limit %d)", n,
                          VN_IR_MAX_NODES);
    m->nodes = vn_gmem_alloc(&m->mem, ((size_t)n + 1) * sizeof *m->nodes);
    if (!m->nodes) return VN_ERR_OUT_OF_MEMORY;
    m->num_nodes = m->cap_nodes = (int32_t)n; /* zeroed: destroy frees no plan yet */
    vn_status st = VN_OK;
    for (int32_t i = 0; i < m->num_nodes && st == VN_OK; i++) st = read_node(ld, i);
    return st;
}

/* The plan's arena is exactly what its values need: the planner's peak is the
 * end of the highest arena value, 64-byte rounded (buffers sit at 64-byte
 * offsets, sizes rounded up). A larger size is refused, since every context
 * allocates and zeroes the whole arena. */
static vn_status check_arena_size(vnm_loader *ld)
{
    const vn_model *m = ld->m;
    uint64_t end = 0;
    for (int32_t v = 0; v < m->num_values; v++) {
        const vn_cvalue *val = &m->values[v];
        uint64_t e = val->mem == VN_MEM_ARENA ? val->offset + value_bytes(&val->desc) : 0;
        if (e > end) end = e;
    }
    end = (end + VNM_ALIGN - 1) & ~(uint64_t)(VNM_ALIGN - 1);
    if (ld->plan->arena_bytes > end)
        return vn_vnm_bad(ld, ld->off[VNM_SEC_PLAN],
                          "arena of %" PRIu64 " bytes, but its values need %" PRIu64,
                          ld->plan->arena_bytes, end);
    return VN_OK;
}

vn_status vn_vnm_read_model(vnm_loader *ld)
{
    if (ld->plan->arena_bytes > MAX_BYTES)
        return vn_vnm_bad(ld, ld->off[VNM_SEC_PLAN], "arena of %" PRIu64 " bytes",
                          ld->plan->arena_bytes);
    ld->m->arena_bytes = ld->plan->arena_bytes;
    vn_status st = read_values(ld);
    if (st == VN_OK) st = read_model_io(ld);
    for (int32_t v = 0; st == VN_OK && v < ld->m->num_values; v++)
        st = read_mem(ld, (const vnm_value *)(ld->base + VAL_AT(ld, v)), v, VAL_AT(ld, v));
    if (st == VN_OK) st = check_arena_size(ld);
    if (st == VN_OK) st = read_nodes(ld);
    if (st == VN_OK) st = vn_vnm_read_blobs(ld);
    if (st == VN_OK)
        for (int32_t i = 0; i < ld->m->num_outputs; i++)
            if (ld->m->values[ld->m->outputs[i]].mem == VN_MEM_NONE)
                return vn_vnm_bad(ld, ld->off[VNM_SEC_META] + 16,
                                  "model output %d is never computed", (int)i);
    return st;
}
