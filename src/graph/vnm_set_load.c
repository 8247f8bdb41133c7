/*
 * vnm_set_load.c — vn_model_set_load: map a shape-set file once, check its
 * header and table as untrusted input (every failure is VN_ERR_FORMAT naming
 * the byte), and load each model in place from its image (vn_vnm_load_bytes
 * checks the image itself). A plain .vnm loads as a set of one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "graph/vnm_load.h"
#include "graph/vnm_set.h"

#define W "vn_model_set_load"

/* VN_ERR_FORMAT "path: byte N: what", as the .vnm loader words it. */
#define BAD(at, ...) vn_vnm_bad(&(vnm_loader){.name = path, .api = W}, at, __VA_ARGS__)

static vn_status check_header(const uint8_t *base, uint64_t size, const char *path)
{
    vnm_set_header h;
    memcpy(&h, base, sizeof h);
    if (h.version != VNM_SET_VERSION)
        return BAD(8, "shape-set format version %" PRIu32 " (this vinci reads version %u only)",
                   h.version, VNM_SET_VERSION);
    if (h.byte_order != VNM_BYTE_ORDER)
        return BAD(12, "byte-order mark 0x%08" PRIx32 " (a big-endian file?)", h.byte_order);
    if (h.file_size != size)
        return BAD(16, "the header says %" PRIu64 " bytes, the file has %" PRIu64, h.file_size,
                   size);
    if (h.count < 1 || h.count > VNM_SET_MAX_COUNT ||
        sizeof h + (uint64_t)h.count * sizeof(vnm_set_entry) > size)
        return BAD(24, "%" PRIu32 " models: not in 1..%u, or the table does not fit", h.count,
                   VNM_SET_MAX_COUNT);
    static const uint8_t zeros[8];
    size_t hh = offsetof(vnm_set_header, header_hash);
    size_t end = sizeof h + (size_t)h.count * sizeof(vnm_set_entry);
    uint64_t x = vn_vnm_fnv1a(VNM_FNV_BASIS, base, hh);
    x = vn_vnm_fnv1a(x, zeros, 8);
    x = vn_vnm_fnv1a(x, base + hh + 8, end - hh - 8);
    if (x != h.header_hash)
        return BAD(hh, "header hash mismatch: the header or model table is corrupt");
    return VN_OK;
}

/* Entry k: page-aligned, after the previous image, inside the file. */
static vn_status check_entry(const vnm_set_entry *e, int32_t k, uint64_t *end, uint64_t size,
                             const char *path)
{
    uint64_t at = sizeof(vnm_set_header) + (uint64_t)k * sizeof *e;
    if (e->offset % VNM_SET_ALIGN || e->offset < *end)
        return BAD(at, "model %d at %" PRIu64 " is not page-aligned after byte %" PRIu64, (int)k,
                   e->offset, *end);
    if (e->offset > size || e->size > size - e->offset)
        return BAD(at + 8,
                   "model %d: %" PRIu64 " bytes at %" PRIu64 " run past the end (%" PRIu64
                   " bytes)",
                   (int)k, e->size, e->offset, size);
    *end = e->offset + e->size;
    return VN_OK;
}

/* Every image of a checked table, each loaded in place. */
static vn_status load_models(vn_model_set *set, const uint8_t *base, uint64_t size,
                             const char *path, vn_device *device)
{
    uint64_t end = sizeof(vnm_set_header) + (uint64_t)set->count * sizeof(vnm_set_entry);
    vn_status st = VN_OK;
    for (int32_t k = 0; st == VN_OK && k < set->count; k++) {
        vnm_set_entry e;
        memcpy(&e, base + sizeof(vnm_set_header) + (size_t)k * sizeof e, sizeof e);
        st = check_entry(&e, k, &end, size, path);
        char name[1024];
        snprintf(name, sizeof name, "%s[model %d]", path, (int)k);
        if (st == VN_OK)
            st = vn_vnm_load_bytes(base + e.offset, (size_t)e.size, name, device, &set->models[k]);
    }
    if (st == VN_OK)
        st = vn_vnm_set_check((const vn_model *const *)set->models, set->count, VN_ERR_FORMAT, W,
                              path);
    return st;
}

/* The models of a mapped file: a set, or one plain .vnm. */
static vn_status load_mapped(vn_model_set *set, const char *path, vn_device *device)
{
    static _Alignas(64) const uint64_t empty[8];
    const uint8_t *base = set->map ? set->map : (const void *)empty;
    uint64_t size = set->map_size;
    bool is_set = size >= sizeof(vnm_set_header) && !memcmp(base, VNM_SET_MAGIC, 8);
    vn_status st = is_set ? check_header(base, size, path) : VN_OK;
    if (st == VN_OK) set->count = is_set ? (int32_t)((const vnm_set_header *)base)->count : 1;
    set->models = st == VN_OK ? calloc((size_t)set->count, sizeof *set->models) : NULL;
    if (st == VN_OK && !set->models) st = vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", path);
    if (st == VN_OK && is_set) return load_models(set, base, size, path, device);
    if (st == VN_OK) /* the .vnm loader's own checks name what is wrong */
        st = vn_vnm_load_bytes(base, (size_t)size, path, device, &set->models[0]);
    return st;
}

vn_status vn_model_set_load(const char *path, vn_device *device, vn_model_set **out)
{
    if (!path || !out) return vn_error(VN_ERR_INVALID_ARG, W, "path or out is NULL");
    *out = NULL;
    vn_model_set *set = calloc(1, sizeof *set);
    if (!set) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", path);
    vn_status st = vn_vnm_map_file(path, &set->map, &set->map_size);
    if (st == VN_OK) st = load_mapped(set, path, device);
    if (st != VN_OK) {
        vn_model_set_destroy(set);
        return st;
    }
    *out = set;
    return VN_OK;
}
