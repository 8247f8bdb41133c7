/*
 * vnm_write.c — vn_model_save: a compiled model into a .vnm file (vnm.h).
 *
 * Each section is built in its own growable buffer, then the file is laid
 * out as header, table and the sections at 64-byte aligned offsets, sealed
 * with both hashes and written in one go. Nothing of the model changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/vnm.h"
#include "vinci/vinci.h"

#define W       "vn_model_save"
#define STR2(x) #x
#define STR(x)  STR2(x)
#define PRODUCER_VERSION                                                                           \
    STR(VINCI_VERSION_MAJOR) "." STR(VINCI_VERSION_MINOR) "." STR(VINCI_VERSION_PATCH)

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
    bool failed; /* sticky: out of memory once, every later put is a no-op */
} buf;

typedef struct writer {
    const vn_model *m;
    buf sec[VNM_SEC_END];
    uint64_t *consumed;  /* per node: inputs its plan holds packed (exported blobs) */
    bool *packed_only;   /* per value: every reader holds it packed (no raw bytes) */
    int32_t *canon;      /* per value: the value whose stored bytes it shares (itself) */
    uint64_t *weight_at; /* per value: its offset in WEIGHTS, once written */
} writer;

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* Append `n` bytes (zeros when data is NULL) at an `align`-aligned offset;
 * returns that offset. */
static size_t put(buf *b, const void *data, size_t n, size_t align)
{
    size_t at = align_up(b->n, align);
    if (b->failed) return 0;
    if (at + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < at + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return 0;
        }
        b->p = p;
        b->cap = cap;
    }
    memset(b->p + b->n, 0, at - b->n);
    if (data)
        memcpy(b->p + at, data, n);
    else
        memset(b->p + at, 0, n);
    b->n = at + n;
    return at;
}

static uint32_t str_ref(writer *w, const char *s)
{
    if (!s || !s[0]) return VNM_NO_STRING;
    return (uint32_t)put(&w->sec[VNM_SEC_STRINGS], s, strlen(s) + 1, 1);
}

static size_t desc_bytes(const vn_tensor_desc *d)
{
    int64_t numel = vn_desc_numel(d);
    return numel > 0 ? (size_t)numel * vn_dtype_size(d->dtype) : 0;
}

/* Whether the file stores constant v's raw bytes. */
static bool stores_bytes(const writer *w, int32_t v)
{
    const vn_cvalue *val = &w->m->values[v];
    return val->mem == VN_MEM_CONST && !w->packed_only[v] && val->nbytes && val->data;
}

typedef struct weight_key {
    uintptr_t data;
    size_t nbytes;
    int32_t v;
} weight_key;

static int by_bytes(const void *pa, const void *pb)
{
    const weight_key *a = pa, *b = pb;
    if (a->data != b->data) return a->data < b->data ? -1 : 1;
    if (a->nbytes != b->nbytes) return a->nbytes < b->nbytes ? -1 : 1;
    return a->v < b->v ? -1 : a->v > b->v;
}

/* Constants with the same bytes (a view of a constant shares its source's,
 * compile_views.c) are stored once: canon[v] is the first value, by index,
 * of v's bytes, written before v. False when out of memory. */
static bool share_weights(writer *w)
{
    const vn_model *m = w->m;
    weight_key *keys = malloc(((size_t)m->num_values + 1) * sizeof *keys);
    if (!keys) return false;
    int32_t n = 0;
    for (int32_t v = 0; v < m->num_values; v++) {
        w->canon[v] = v;
        if (stores_bytes(w, v))
            keys[n++] = (weight_key){(uintptr_t)m->values[v].data, m->values[v].nbytes, v};
    }
    qsort(keys, (size_t)n, sizeof *keys, by_bytes);
    for (int32_t i = 1; i < n; i++)
        if (keys[i].data == keys[i - 1].data && keys[i].nbytes == keys[i - 1].nbytes)
            w->canon[keys[i].v] = w->canon[keys[i - 1].v];
    free(keys);
    return true;
}

static uint64_t stored_weights(writer *w, const vn_cvalue *v)
{
    int32_t self = (int32_t)(v - w->m->values), first = w->canon[self];
    if (first != self) return w->weight_at[self] = w->weight_at[first];
    return w->weight_at[self] = put(&w->sec[VNM_SEC_WEIGHTS], v->data, v->nbytes, VNM_ALIGN);
}

static void put_value(writer *w, const vn_cvalue *v)
{
    vnm_value r;
    memset(&r, 0, sizeof r);
    r.name = str_ref(w, v->name);
    r.kind = v->kind;
    r.dtype = v->known ? (int32_t)v->desc.dtype : 0;
    r.rank = v->known ? v->desc.rank : -1;
    for (int32_t d = 0; d < r.rank; d++) r.dims[d] = v->desc.dims[d];
    r.mem = v->mem;
    r.io_index = v->mem == VN_MEM_CONST ? 0 : v->io_index;
    if (v->mem == VN_MEM_ARENA) r.offset = v->offset;
    if (v->mem == VN_MEM_CONST && w->packed_only[v - w->m->values]) {
        r.io_index = VNM_CONST_PACKED; /* its readers' blobs replace it */
    } else if (stores_bytes(w, (int32_t)(v - w->m->values))) {
        r.nbytes = v->nbytes;
        r.offset = stored_weights(w, v);
    }
    put(&w->sec[VNM_SEC_VALUES], &r, sizeof r, 8);
}

static void put_attr(writer *w, const vn_attr *a)
{
    vnm_attr r;
    buf *d = &w->sec[VNM_SEC_ATTRDATA];
    memset(&r, 0, sizeof r);
    r.name = str_ref(w, a->name);
    r.type = (int32_t)a->type;
    r.i = a->i;
    r.f = a->f;
    r.s = str_ref(w, a->s);
    if (a->type == VN_ATTR_INTS || a->type == VN_ATTR_FLOATS || a->type == VN_ATTR_STRINGS)
        r.count = a->count > 0 ? a->count : 0;
    if (a->type == VN_ATTR_INTS) r.data = put(d, a->ints, (size_t)r.count * 8, 8);
    if (a->type == VN_ATTR_FLOATS) r.data = put(d, a->floats, (size_t)r.count * 4, 8);
    if (a->type == VN_ATTR_STRINGS) {
        r.data = put(d, NULL, (size_t)r.count * 4, 8);
        for (int32_t k = 0; k < r.count && !d->failed; k++) {
            uint32_t ref = str_ref(w, a->strings[k]);
            memcpy(d->p + r.data + 4 * (size_t)k, &ref, 4);
        }
    }
    if (a->type == VN_ATTR_TENSOR) { /* no tensor: an empty one (the loader wants data) */
        vn_tensor_desc desc = a->t ? a->t->desc : (vn_tensor_desc){VN_F32, 1, {0}};
        r.dtype = (int32_t)desc.dtype;
        r.rank = desc.rank;
        for (int32_t k = 0; k < r.rank && k < VN_MAX_RANK; k++) r.dims[k] = desc.dims[k];
        r.nbytes = desc_bytes(&desc);
        r.data = put(d, a->t ? a->t->data : NULL, r.nbytes, VNM_ALIGN); /* NULL data: zeros */
    }
    put(&w->sec[VNM_SEC_ATTRS], &r, sizeof r, 8);
}

static void put_node(writer *w, const vn_cnode *n)
{
    buf *idx = &w->sec[VNM_SEC_INDICES];
    vnm_node r = {str_ref(w, n->name),       str_ref(w, n->op_type),
                  str_ref(w, n->domain),     (uint32_t)n->num_inputs,
                  (uint32_t)n->num_outputs,  (uint32_t)n->num_attrs,
                  (uint32_t)(idx->n / 4),    (uint32_t)(w->sec[VNM_SEC_ATTRS].n / sizeof(vnm_attr)),
                  str_ref(w, n->fused_from), 0};
    put(idx, n->inputs, (size_t)n->num_inputs * 4, 4);
    put(idx, n->outputs, (size_t)n->num_outputs * 4, 4);
    for (int32_t k = 0; k < n->num_attrs; k++) put_attr(w, &n->attrs[k]);
    put(&w->sec[VNM_SEC_NODES], &r, sizeof r, 8);
}

/* Node i's packed constants (its operator's pre-pack hook) into BLOBS and
 * PACKED; w->consumed[i] the inputs they replace. */
static void put_blobs(writer *w, int32_t i)
{
    vn_op_blob blobs[VN_OP_MAX_BLOBS];
    int32_t nb = vn_cg_node_blobs(w->m, i, blobs, &w->consumed[i]);
    for (int32_t k = 0; k < nb; k++) {
        vnm_blob r = {(uint32_t)i, (uint32_t)k,  str_ref(w, blobs[k].layout), 0, w->consumed[i],
                      0,           blobs[k].size};
        r.offset = put(&w->sec[VNM_SEC_PACKED], blobs[k].data, blobs[k].size, VNM_ALIGN);
        put(&w->sec[VNM_SEC_BLOBS], &r, sizeof r, 8);
    }
}

/* A loaded packed-only constant the file would need raw: its index, else -1
 * (cannot happen: the loader checked every reader holds it packed). */
static int32_t raw_bytes_lost(const writer *w)
{
    for (int32_t v = 0; v < w->m->num_values; v++)
        if (w->m->values[v].packed_only && !w->packed_only[v]) return v;
    return -1;
}

static void put_model(writer *w)
{
    const vn_model *m = w->m;
    const vn_model_stats *s = &m->stats;
    buf *idx = &w->sec[VNM_SEC_INDICES];
    put(&w->sec[VNM_SEC_STRINGS], "", 1, 1); /* offset 0 is "" */
    for (int32_t i = 0; i < m->num_nodes; i++) put_blobs(w, i);
    if (w->sec[VNM_SEC_PACKED].n) /* slack after the last blob, as packed buffers have */
        put(&w->sec[VNM_SEC_PACKED], NULL, VNM_ALIGN, VNM_ALIGN);
    vn_cg_packed_only(m, w->consumed, w->packed_only);
    if (!share_weights(w)) w->sec[VNM_SEC_WEIGHTS].failed = true;
    for (int32_t v = 0; v < m->num_values; v++) put_value(w, &m->values[v]);
    for (int32_t i = 0; i < m->num_nodes; i++) put_node(w, &m->nodes[i]);
    vnm_meta meta = {str_ref(w, "vinci"),
                     str_ref(w, PRODUCER_VERSION),
                     str_ref(w, m->name),
                     (uint32_t)m->num_inputs,
                     (uint32_t)m->num_outputs,
                     (uint32_t)(idx->n / 4),
                     (uint32_t)(idx->n / 4 + (size_t)m->num_inputs),
                     0};
    put(idx, m->inputs, (size_t)m->num_inputs * 4, 4);
    put(idx, m->outputs, (size_t)m->num_outputs * 4, 4);
    put(&w->sec[VNM_SEC_META], &meta, sizeof meta, 8);
    vnm_options opt = {s->opt_level, s->precision, (uint32_t)m->num_inputs, 0};
    put(&w->sec[VNM_SEC_OPTIONS], &opt, sizeof opt, 8);
    for (int32_t i = 0; i < m->num_inputs; i++) { /* the concrete shapes compiled for */
        const vn_cvalue *v = &m->values[m->inputs[i]];
        vnm_shape sh = {str_ref(w, v->name), v->desc.rank, {0}};
        memcpy(sh.dims, v->desc.dims, sizeof sh.dims);
        put(&w->sec[VNM_SEC_OPTIONS], &sh, sizeof sh, 8);
    }
    vnm_plan plan = {m->arena_bytes,    m->workspace_bytes, s->activation_bytes, s->inplace_count,
                     s->constant_bytes, s->nodes_before,    s->nodes_after,      s->compile_ms};
    put(&w->sec[VNM_SEC_PLAN], &plan, sizeof plan, 8);
}

/* Header, table and sections in one image; NULL when out of memory. */
static uint8_t *layout(writer *w, size_t *size)
{
    vnm_section table[VNM_NUM_SECTIONS];
    size_t at = sizeof(vnm_header) + sizeof table;
    for (int t = 1; t < VNM_SEC_END; t++) {
        at = align_up(at, VNM_ALIGN);
        table[t - 1] = (vnm_section){(uint32_t)t, 0, at, w->sec[t].n};
        at += w->sec[t].n;
    }
    uint8_t *img = calloc(1, at);
    if (!img) return NULL;
    vnm_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, VNM_MAGIC, 8);
    h.version = VNM_VERSION;
    h.byte_order = VNM_BYTE_ORDER;
    h.file_size = at;
    h.num_sections = VNM_NUM_SECTIONS;
    memcpy(img, &h, sizeof h);
    memcpy(img + sizeof h, table, sizeof table);
    for (int t = 1; t < VNM_SEC_END; t++)
        if (w->sec[t].n) memcpy(img + table[t - 1].offset, w->sec[t].p, w->sec[t].n);
    vn_vnm_reseal(img, at);
    *size = at;
    return img;
}

/* Internal attributes ("_vinci...") carry addresses: never written (the
 * loader rejects them). The graph engine gives constants as input data. */
static vn_status check_attrs(const vn_model *m)
{
    for (int32_t i = 0; i < m->num_nodes; i++)
        if (m->nodes[i].cf) { /* its subgraphs' models would need a section of their own */
            char label[256];
            return vn_error(VN_ERR_UNSUPPORTED, W,
                            "%s: %s has subgraphs (control flow), which .vnm files do not "
                            "carry: run the .onnx model",
                            m->name, vn_cg_label(m, i, label, sizeof label));
        }
    for (int32_t i = 0; i < m->num_nodes; i++)
        for (int32_t k = 0; k < m->nodes[i].num_attrs; k++) {
            const char *name = m->nodes[i].attrs[k].name;
            if (name && !strncmp(name, "_vinci", 6)) {
                char label[256];
                return vn_error(VN_ERR_UNSUPPORTED, W, "%s: %s: attribute '%s' is an address",
                                m->name, vn_cg_label(m, i, label, sizeof label), name);
            }
        }
    return VN_OK;
}

vn_status vn_vnm_image(const vn_model *m, const char *path, uint8_t **out, size_t *out_size)
{
    *out = NULL;
    if (!m->final) return vn_error(VN_ERR_STATE, W, "%s: not compiled", m->name);
    vn_status ok = check_attrs(m);
    if (ok != VN_OK) return ok;
    writer w;
    memset(&w, 0, sizeof w);
    w.m = m;
    w.consumed = calloc((size_t)m->num_nodes + 1, sizeof *w.consumed);
    w.packed_only = calloc((size_t)m->num_values + 1, sizeof *w.packed_only);
    w.canon = malloc(((size_t)m->num_values + 1) * sizeof *w.canon);
    w.weight_at = calloc((size_t)m->num_values + 1, sizeof *w.weight_at);
    bool failed = !w.consumed || !w.packed_only || !w.canon || !w.weight_at;
    if (!failed) put_model(&w);
    int32_t lost = failed ? -1 : raw_bytes_lost(&w);
    free(w.consumed);
    free(w.packed_only);
    free(w.canon);
    free(w.weight_at);
    if (lost >= 0) {
        for (int t = 1; t < VNM_SEC_END; t++) free(w.sec[t].p);
        return vn_error(VN_ERR_STATE, W,
                        "%s: constant '%s' has no raw bytes, but a reader does not hold it "
                        "packed",
                        m->name, m->values[lost].name);
    }
    for (int t = 1; t < VNM_SEC_END; t++) failed |= w.sec[t].failed;
    /* string references and indices are u32 in the format */
    if (w.sec[VNM_SEC_STRINGS].n > UINT32_MAX || w.sec[VNM_SEC_INDICES].n / 4 > UINT32_MAX) {
        for (int t = 1; t < VNM_SEC_END; t++) free(w.sec[t].p);
        return vn_error(VN_ERR_UNSUPPORTED, W, "%s: too many strings or indices for .vnm", path);
    }
    uint8_t *img = failed ? NULL : layout(&w, out_size);
    for (int t = 1; t < VNM_SEC_END; t++) free(w.sec[t].p);
    if (!img) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory for the file image", path);
    *out = img;
    return VN_OK;
}

vn_status vn_vnm_write_file(const char *path, const uint8_t *img, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return vn_error(VN_ERR_IO, W, "%s: cannot create: %s", path, strerror(errno));
    bool ok = fwrite(img, 1, size, f) == size;
    ok &= fclose(f) == 0;
    if (!ok) {
        remove(path); /* never leave a truncated model behind */
        return vn_error(VN_ERR_IO, W, "%s: write failed: %s", path, strerror(errno));
    }
    return VN_OK;
}

vn_status vn_model_save(const vn_model *m, const char *path)
{
    if (!m || !path) return vn_error(VN_ERR_INVALID_ARG, W, "model or path is NULL");
    uint8_t *img;
    size_t size = 0;
    vn_status st = vn_vnm_image(m, path, &img, &size);
    if (st == VN_OK) st = vn_vnm_write_file(path, img, size);
    free(img);
    return st;
}
