/*
 * vnm_set_write.c — vn_model_set_save: several compiled models (one per
 * input-shape set) into one file: a set header and table, then each model's
 * .vnm image as vn_model_save writes it, page-aligned (vnm.h). Images are
 * built and written one at a time; the header goes in last.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/vnm_set.h"

#define W "vn_model_set_save"

static size_t page_up(size_t x)
{
    return (x + VNM_SET_ALIGN - 1) / VNM_SET_ALIGN * VNM_SET_ALIGN;
}

/* The header and table at the front of `file`, sealed with the header hash. */
static void put_header(uint8_t *file, size_t size, const vnm_set_entry *table, int32_t count)
{
    vnm_set_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, VNM_SET_MAGIC, 8);
    h.version = VNM_SET_VERSION;
    h.byte_order = VNM_BYTE_ORDER;
    h.file_size = size;
    h.count = (uint32_t)count;
    memcpy(file, &h, sizeof h);
    memcpy(file + sizeof h, table, (size_t)count * sizeof *table);
    uint64_t x = vn_vnm_fnv1a(VNM_FNV_BASIS, file, sizeof h + (size_t)count * sizeof *table);
    memcpy(file + offsetof(vnm_set_header, header_hash), &x, sizeof x);
}

/* Image k at the next page from *at, built and written one at a time (so
 * only one image is in memory), its place in table[k]. */
static vn_status put_image(FILE *f, const vn_model *m, const char *path, uint64_t *at,
                           vnm_set_entry *entry)
{
    uint8_t *img = NULL;
    size_t size = 0;
    vn_status st = vn_vnm_image(m, path, &img, &size);
    if (st != VN_OK) return st;
    *entry = (vnm_set_entry){page_up(*at), size};
    if (fseeko(f, (off_t)entry->offset, SEEK_SET) != 0 || fwrite(img, 1, size, f) != size)
        st = vn_error(VN_ERR_IO, W, "%s: write failed: %s", path, strerror(errno));
    free(img);
    *at = entry->offset + size;
    return st;
}

static vn_status write_set(FILE *f, const vn_model *const *models, int32_t count, const char *path)
{
    vnm_set_entry table[VNM_SET_MAX_COUNT];
    uint64_t at = sizeof(vnm_set_header) + (uint64_t)count * sizeof(vnm_set_entry);
    vn_status st = VN_OK;
    for (int32_t k = 0; st == VN_OK && k < count; k++)
        st = put_image(f, models[k], path, &at, &table[k]);
    uint8_t head[sizeof(vnm_set_header) + VNM_SET_MAX_COUNT * sizeof(vnm_set_entry)];
    size_t n = sizeof(vnm_set_header) + (size_t)count * sizeof(vnm_set_entry);
    if (st == VN_OK) put_header(head, at, table, count);
    if (st == VN_OK && (fseeko(f, 0, SEEK_SET) != 0 || fwrite(head, 1, n, f) != n))
        st = vn_error(VN_ERR_IO, W, "%s: write failed: %s", path, strerror(errno));
    return st;
}

vn_status vn_model_set_save(const vn_model *const *models, int32_t count, const char *path)
{
    if (!models || !path || count < 1 || count > (int32_t)VNM_SET_MAX_COUNT)
        return vn_error(VN_ERR_INVALID_ARG, W,
                        "models or path is NULL, or count %d is not in 1..%u", (int)count,
                        VNM_SET_MAX_COUNT);
    for (int32_t k = 0; k < count; k++)
        if (!models[k]) return vn_error(VN_ERR_INVALID_ARG, W, "model %d is NULL", (int)k);
    vn_status st = vn_vnm_set_check(models, count, VN_ERR_INVALID_ARG, W, path);
    if (st != VN_OK) return st;
    FILE *f = fopen(path, "wb");
    if (!f) return vn_error(VN_ERR_IO, W, "%s: cannot create: %s", path, strerror(errno));
    st = write_set(f, models, count, path);
    if (fclose(f) != 0 && st == VN_OK)
        st = vn_error(VN_ERR_IO, W, "%s: write failed: %s", path, strerror(errno));
    if (st != VN_OK) remove(path); /* never leave a partial file behind */
    return st;
}
