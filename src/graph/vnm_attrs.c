/*
 * vnm_attrs.c — a node's attributes from ATTRS / ATTRDATA into vn_attr form.
 * Arrays and tensor data are used in place (read-only mapping): their ranges
 * are checked against ATTRDATA and their alignment against the element type
 * (tensor data 64-byte aligned, like every constant a kernel reads).
 */
#include <inttypes.h>
#include <string.h>

#include "graph/vnm_load.h"

#define MAX_COUNT (1 << 24) /* elements of one attribute array */
#define MAX_BYTES (1ull << 48)

/* A `count` x `elem`-byte array at `data` inside ATTRDATA, `align`-aligned. */
static vn_status array_at(const vnm_loader *ld, const vnm_attr *r, uint64_t at, uint64_t elem,
                          uint64_t align, const void **out)
{
    uint64_t len = ld->len[VNM_SEC_ATTRDATA];
    uint64_t bytes = (uint64_t)r->count * elem;
    if (r->count < 0 || r->count > MAX_COUNT)
        return vn_vnm_bad(ld, at + 8, "attribute count %" PRId32 " is outside 0..%d", r->count,
                          MAX_COUNT);
    if (r->data % align || r->data > len || bytes > len - r->data)
        return vn_vnm_bad(ld, at + 32,
                          "attribute data %" PRIu64 "+%" PRIu64
                          " is misaligned or outside the %" PRIu64 "-byte ATTRDATA",
                          r->data, bytes, len);
    *out = ld->base + ld->off[VNM_SEC_ATTRDATA] + r->data;
    return VN_OK;
}

static vn_status read_strings(vnm_loader *ld, const vnm_attr *r, uint64_t at, vn_attr *a)
{
    const void *p = NULL;
    vn_status st = array_at(ld, r, at, 4, 4, &p);
    if (st != VN_OK) return st;
    const char **list = vn_gmem_alloc(&ld->m->mem, ((size_t)r->count + 1) * sizeof *list);
    if (!list) return VN_ERR_OUT_OF_MEMORY;
    uint64_t first = ld->off[VNM_SEC_ATTRDATA] + r->data;
    for (int32_t k = 0; k < r->count && st == VN_OK; k++)
        st = vn_vnm_string(ld, ((const uint32_t *)p)[k], first + 4 * (uint64_t)k, &list[k]);
    a->strings = list;
    a->count = r->count;
    return st;
}

static vn_status read_tensor(vnm_loader *ld, const vnm_attr *r, uint64_t at, vn_attr *a)
{
    vn_tensor *t = vn_gmem_alloc(&ld->m->mem, sizeof *t);
    if (!t) return VN_ERR_OUT_OF_MEMORY;
    if (!vn_dtype_valid((vn_dtype)r->dtype) || r->rank < 0 || r->rank > VN_MAX_RANK)
        return vn_vnm_bad(ld, at + 40, "tensor attribute dtype %" PRId32 " / rank %" PRId32,
                          r->dtype, r->rank);
    t->desc.dtype = (vn_dtype)r->dtype;
    t->desc.rank = r->rank;
    uint64_t bytes = vn_dtype_size(t->desc.dtype);
    for (int32_t k = 0; k < r->rank; k++) {
        int64_t d = r->dims[k];
        if (d < 0 || (uint64_t)d > MAX_BYTES || (d && bytes > MAX_BYTES / (uint64_t)d))
            return vn_vnm_bad(ld, at + 48 + 8 * (uint64_t)k, "tensor attribute dim %" PRId64, d);
        bytes *= (uint64_t)d;
        t->desc.dims[k] = d;
    }
    uint64_t len = ld->len[VNM_SEC_ATTRDATA];
    if (r->nbytes != bytes) /* kernels read the whole tensor: no short data */
        return vn_vnm_bad(ld, at + 112,
                          "tensor attribute has %" PRIu64 " bytes, its shape needs %" PRIu64,
                          r->nbytes, bytes);
    if (r->nbytes && (r->data % 64 || r->data > len || r->nbytes > len - r->data))
        return vn_vnm_bad(ld, at + 32,
                          "tensor attribute data %" PRIu64 "+%" PRIu64
                          " is misaligned or outside ATTRDATA",
                          r->data, r->nbytes);
    t->data = r->nbytes ? (void *)(ld->base + ld->off[VNM_SEC_ATTRDATA] + r->data) : NULL;
    a->t = t;
    return VN_OK;
}

static vn_status read_attr(vnm_loader *ld, uint64_t at, vn_attr *a)
{
    const vnm_attr *r = (const vnm_attr *)(ld->base + at);
    const void *p = NULL;
    vn_status st = vn_vnm_string(ld, r->name, at, &a->name);
    if (st == VN_OK) st = vn_vnm_string(ld, r->s, at + 12, &a->s);
    if (st != VN_OK) return st;
    if (!strncmp(a->name, "_vinci", 6)) /* internal attributes carry addresses */
        return vn_vnm_bad(ld, at, "attribute '%s' is internal to vinci (an address)", a->name);
    if (r->type < VN_ATTR_INT || r->type > VN_ATTR_STRINGS)
        return vn_vnm_bad(ld, at + 4, "attribute type %" PRId32, r->type);
    a->type = (vn_attr_type)r->type;
    if (a->type != VN_ATTR_STRING) a->s = NULL; /* as the compiler's attributes have it */
    a->i = r->i;
    a->f = r->f;
    switch (a->type) {
    case VN_ATTR_INTS:
        st = array_at(ld, r, at, 8, 8, &p);
        a->ints = p;
        a->count = r->count;
        return st;
    case VN_ATTR_FLOATS:
        st = array_at(ld, r, at, 4, 4, &p);
        a->floats = p;
        a->count = r->count;
        return st;
    case VN_ATTR_STRINGS:
        return read_strings(ld, r, at, a);
    case VN_ATTR_TENSOR:
        return read_tensor(ld, r, at, a);
    default:
        return VN_OK;
    }
}

vn_status vn_vnm_read_attrs(vnm_loader *ld, const vnm_node *r, uint64_t at, vn_cnode *n)
{
    uint64_t total = ld->len[VNM_SEC_ATTRS] / sizeof(vnm_attr);
    if (r->num_attrs > VN_IR_MAX_ATTRS || (uint64_t)r->first_attr + r->num_attrs > total)
        return vn_vnm_bad(ld, at + 20,
                          "%" PRIu32 " attributes at %" PRIu32 " run past the %" PRIu64
                          " attributes",
                          r->num_attrs, r->first_attr, total);
    vn_attr *attrs = vn_gmem_alloc(&ld->m->mem, ((size_t)r->num_attrs + 1) * sizeof *attrs);
    if (!attrs) return VN_ERR_OUT_OF_MEMORY;
    vn_status st = VN_OK;
    for (uint32_t k = 0; k < r->num_attrs && st == VN_OK; k++)
        st =
            read_attr(ld, ld->off[VNM_SEC_ATTRS] + ((uint64_t)r->first_attr + k) * sizeof(vnm_attr),
                      &attrs[k]);
    n->attrs = attrs;
    n->num_attrs = (int32_t)r->num_attrs;
    return st;
}
