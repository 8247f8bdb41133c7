/*
 * ir_values.c — a body's values and the name index over them. The index is
 * open addressing with linear probing, kept under half full so a probe always
 * ends at an empty slot.
 */
#include <stdio.h>
#include <string.h>

#include "graph/ir.h"

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

int32_t vn_ir_find(const vn_gbody *b, const char *name)
{
    if (!b->hash_cap) return -1;
    uint64_t mask = (uint64_t)b->hash_cap - 1;
    for (uint64_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
        int32_t v = b->slots[i];
        if (v < 0) return -1;
        if (strcmp(b->values[v].name, name) == 0) return v;
    }
}

static void insert_slot(vn_gbody *b, int32_t v)
{
    uint64_t mask = (uint64_t)b->hash_cap - 1;
    uint64_t i = hash_name(b->values[v].name) & mask;
    while (b->slots[i] >= 0) i = (i + 1) & mask;
    b->slots[i] = v;
}

static int rehash(vn_gbody *b, int32_t cap)
{
    int32_t *slots = vn_gmem_alloc(&b->graph->mem, (size_t)cap * sizeof *slots);
    if (!slots) return -1;
    memset(slots, 0xff, (size_t)cap * sizeof *slots);
    b->slots = slots;
    b->hash_cap = cap;
    for (int32_t v = 0; v < b->num_values; v++) insert_slot(b, v);
    return 0;
}

int32_t vn_ir_add_value(vn_gbody *b, const char *name, int32_t kind)
{
    if (b->num_values >= VN_IR_MAX_VALUES) {
        vn_error(VN_ERR_UNSUPPORTED, b->graph->file, "graph '%s' has more than %d values", b->name,
                 VN_IR_MAX_VALUES);
        return -1;
    }
    void *vals = b->values;
    if (vn_gmem_grow(&b->graph->mem, &vals, &b->cap_values, b->num_values + 1, sizeof(vn_gvalue)))
        return -1;
    b->values = vals;
    if ((int64_t)(b->num_values + 1) * 2 > b->hash_cap &&
        rehash(b, b->hash_cap ? b->hash_cap * 2 : 64))
        return -1;
    int32_t v = b->num_values++;
    vn_gvalue *val = &b->values[v];
    memset(val, 0, sizeof *val);
    val->name = name;
    val->info.name = name;
    val->info.desc.rank = -1;
    val->kind = kind;
    val->producer = -1;
    insert_slot(b, v);
    return v;
}

vn_status vn_ir_add_consumer(vn_gbody *b, int32_t value, int32_t node)
{
    vn_gvalue *v = &b->values[value];
    void *c = v->consumers;
    if (vn_gmem_grow(&b->graph->mem, &c, &v->cap_consumers, v->num_consumers + 1, sizeof(int32_t)))
        return VN_ERR_OUT_OF_MEMORY;
    v->consumers = c;
    v->consumers[v->num_consumers++] = node;
    return VN_OK;
}

const char *vn_ir_node_label(const vn_gbody *b, int32_t node, char *buf, size_t size)
{
    const vn_gnode *n = &b->nodes[node];
    const char *dom = n->domain && n->domain[0] ? n->domain : NULL;
    if (n->name && n->name[0])
        snprintf(buf, size, "node '%s' (%s%s%s)", n->name, dom ? dom : "", dom ? "::" : "",
                 n->op_type);
    else
        snprintf(buf, size, "node #%d (%s%s%s)", (int)node, dom ? dom : "", dom ? "::" : "",
                 n->op_type);
    return buf;
}
