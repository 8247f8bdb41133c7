/*
 * vnm_file.c — the first checks of a .vnm image: header, hashes, section
 * table and the sizes of fixed-size sections. After vn_vnm_check_file every
 * section lies inside the image at a 64-byte aligned offset, sections do not
 * overlap, the string table ends in NUL and every record array is a whole
 * number of records; the records' contents are checked later (vnm_read.c).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph/vnm_load.h"

#define W "vn_model_load"

static const char *const sec_names[VNM_SEC_END] = {
    "?",       "STRINGS", "META",     "OPTIONS", "PLAN",  "VALUES", "NODES",
    "INDICES", "ATTRS",   "ATTRDATA", "WEIGHTS", "BLOBS", "PACKED",
};

vn_status vn_vnm_bad(const vnm_loader *ld, uint64_t at, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return vn_error(VN_ERR_FORMAT, ld->api ? ld->api : W, "%s: byte %" PRIu64 ": %s", ld->name, at,
                    what);
}

vn_status vn_vnm_string(const vnm_loader *ld, uint32_t ref, uint64_t at, const char **out)
{
    if (ref >= ld->len[VNM_SEC_STRINGS])
        return vn_vnm_bad(ld, at,
                          "string offset %" PRIu32 " is outside the %" PRIu64 "-byte string table",
                          ref, ld->len[VNM_SEC_STRINGS]);
    *out = (const char *)ld->base + ld->off[VNM_SEC_STRINGS] + ref;
    return VN_OK;
}

static vn_status check_header(vnm_loader *ld, const vnm_header *h)
{
    if (ld->size < sizeof *h)
        return vn_vnm_bad(ld, 0, "the file has %" PRIu64 " bytes, less than the 64-byte header",
                          ld->size);
    if (!memcmp(h->magic, VNM_SET_MAGIC, 8))
        return vn_vnm_bad(ld, 0,
                          "the file holds models for several input-shape sets: load it with "
                          "vn_model_set_load, which picks one by the input shapes");
    if (memcmp(h->magic, VNM_MAGIC, 8))
        return vn_vnm_bad(ld, 0, "magic is not \"VINCIVNM\": not a .vnm file");
    if (h->version != VNM_VERSION)
        return vn_vnm_bad(ld, 8,
                          "format version %" PRIu32
                          " (this vinci reads version %u only): recompile the model "
                          "(vinci compile model.onnx -o model.vnm)",
                          h->version, VNM_VERSION);
    if (h->byte_order != VNM_BYTE_ORDER)
        return vn_vnm_bad(ld, 12, "byte-order mark 0x%08" PRIx32 " (a big-endian file?)",
                          h->byte_order);
    if (h->file_size != ld->size)
        return vn_vnm_bad(ld, 16,
                          "the header says %" PRIu64 " bytes, the file has %" PRIu64
                          " (truncated or extended)",
                          h->file_size, ld->size);
    if (h->num_sections < 1 || h->num_sections > 64 ||
        sizeof *h + (uint64_t)h->num_sections * sizeof(vnm_section) > ld->size)
        return vn_vnm_bad(ld, 24, "%" PRIu32 " sections: the table does not fit", h->num_sections);
    return VN_OK;
}

static vn_status check_hashes(vnm_loader *ld, const vnm_header *h)
{
    static const uint8_t zeros[8];
    size_t hh = offsetof(vnm_header, header_hash);
    uint64_t table_end = sizeof *h + (uint64_t)h->num_sections * sizeof(vnm_section);
    uint64_t x = vn_vnm_fnv1a(VNM_FNV_BASIS, ld->base, hh);
    x = vn_vnm_fnv1a(x, zeros, 8);
    x = vn_vnm_fnv1a(x, ld->base + hh + 8, table_end - hh - 8);
    if (x != h->header_hash)
        return vn_vnm_bad(ld, hh, "header hash mismatch: the header or section table is corrupt");
    if (vn_vnm_hash_mt(ld->base + table_end, ld->size - table_end, ld->hash_threads) !=
        h->payload_hash)
        return vn_vnm_bad(ld, offsetof(vnm_header, payload_hash),
                          "payload hash mismatch: some byte in %" PRIu64 "..%" PRIu64 " is corrupt",
                          table_end, ld->size);
    return VN_OK;
}

/* One table entry: a known type, first of its kind, aligned, after the
 * previous section and inside the file. */
static vn_status check_entry(vnm_loader *ld, const vnm_section *s, uint64_t at, uint64_t *end)
{
    if (s->type < 1 || s->type >= VNM_SEC_END)
        return vn_vnm_bad(ld, at, "unknown section type %" PRIu32, s->type);
    const char *nm = sec_names[s->type];
    if (ld->len[s->type] || ld->off[s->type])
        return vn_vnm_bad(ld, at, "section %s appears twice", nm);
    if (s->offset % VNM_ALIGN)
        return vn_vnm_bad(ld, at + 8, "section %s offset %" PRIu64 " is not 64-byte aligned", nm,
                          s->offset);
    if (s->offset < *end)
        return vn_vnm_bad(ld, at + 8,
                          "section %s at %" PRIu64 " overlaps what precedes it (%" PRIu64 ")", nm,
                          s->offset, *end);
    if (s->offset > ld->size || s->size > ld->size - s->offset)
        return vn_vnm_bad(ld, at + 16,
                          "section %s: %" PRIu64 " bytes at %" PRIu64
                          " run past the end of the file (%" PRIu64 " bytes)",
                          nm, s->size, s->offset, ld->size);
    ld->off[s->type] = s->offset;
    ld->len[s->type] = s->size;
    *end = s->offset + s->size;
    return VN_OK;
}

static vn_status check_table(vnm_loader *ld, const vnm_header *h)
{
    uint64_t end = sizeof *h + (uint64_t)h->num_sections * sizeof(vnm_section);
    for (uint32_t i = 0; i < h->num_sections; i++) {
        uint64_t at = sizeof *h + (uint64_t)i * sizeof(vnm_section);
        vnm_section s;
        memcpy(&s, ld->base + at, sizeof s);
        vn_status st = check_entry(ld, &s, at, &end);
        if (st != VN_OK) return st;
    }
    for (int t = 1; t < VNM_SEC_END; t++)
        if (!ld->off[t]) return vn_vnm_bad(ld, 24, "section %s is missing", sec_names[t]);
    return VN_OK;
}

/* A fixed-size section must be exactly `want` bytes; an array section a
 * whole number of `rec`-byte records. */
static vn_status check_size(const vnm_loader *ld, int t, uint64_t want, uint64_t rec)
{
    uint64_t len = ld->len[t];
    if (want && len != want)
        return vn_vnm_bad(ld, ld->off[t], "section %s has %" PRIu64 " bytes, not %" PRIu64,
                          sec_names[t], len, want);
    if (rec && len % rec)
        return vn_vnm_bad(ld, ld->off[t],
                          "section %s has %" PRIu64 " bytes, not a multiple of its %" PRIu64
                          "-byte records",
                          sec_names[t], len, rec);
    return VN_OK;
}

static vn_status check_sizes(vnm_loader *ld)
{
    uint64_t so = ld->off[VNM_SEC_STRINGS], sl = ld->len[VNM_SEC_STRINGS];
    if (sl == 0 || ld->base[so] || ld->base[so + sl - 1])
        return vn_vnm_bad(ld, so + (sl ? sl - 1 : 0),
                          "the string table must start and end with NUL");
    vn_status st = check_size(ld, VNM_SEC_META, sizeof(vnm_meta), 0);
    if (st == VN_OK) st = check_size(ld, VNM_SEC_PLAN, sizeof(vnm_plan), 0);
    if (st == VN_OK) st = check_size(ld, VNM_SEC_VALUES, 0, sizeof(vnm_value));
    if (st == VN_OK) st = check_size(ld, VNM_SEC_NODES, 0, sizeof(vnm_node));
    if (st == VN_OK) st = check_size(ld, VNM_SEC_ATTRS, 0, sizeof(vnm_attr));
    if (st == VN_OK) st = check_size(ld, VNM_SEC_INDICES, 0, 4);
    if (st == VN_OK) st = check_size(ld, VNM_SEC_BLOBS, 0, sizeof(vnm_blob));
    if (st != VN_OK) return st;
    uint64_t ol = ld->len[VNM_SEC_OPTIONS];
    ld->options = (const vnm_options *)(ld->base + ld->off[VNM_SEC_OPTIONS]);
    if (ol < sizeof(vnm_options) || ld->options->num_shapes > (ol - 16) / sizeof(vnm_shape) ||
        ol != sizeof(vnm_options) + (uint64_t)ld->options->num_shapes * sizeof(vnm_shape))
        return vn_vnm_bad(ld, ld->off[VNM_SEC_OPTIONS] + 8,
                          "section OPTIONS: %" PRIu64 " bytes do not hold its shape count", ol);
    ld->meta = (const vnm_meta *)(ld->base + ld->off[VNM_SEC_META]);
    ld->plan = (const vnm_plan *)(ld->base + ld->off[VNM_SEC_PLAN]);
    ld->indices = (const int32_t *)(ld->base + ld->off[VNM_SEC_INDICES]);
    ld->num_indices = ld->len[VNM_SEC_INDICES] / 4;
    return VN_OK;
}

vn_status vn_vnm_check_file(vnm_loader *ld)
{
    vnm_header h;
    memset(&h, 0, sizeof h);
    if (ld->size >= sizeof h) memcpy(&h, ld->base, sizeof h);
    vn_status st = check_header(ld, &h);
    if (st == VN_OK) st = check_hashes(ld, &h);
    if (st == VN_OK) st = check_table(ld, &h);
    if (st == VN_OK) st = check_sizes(ld);
    return st;
}
