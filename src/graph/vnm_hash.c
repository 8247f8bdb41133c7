/*
 * vnm_hash.c — the .vnm file's two hashes. The payload hash covers every
 * byte after the section table (weights included), so it must run at memory
 * speed: four independent FNV-1a lanes over 64-bit words let the multiplies
 * overlap. Each lane step is a bijection of the lane for a fixed word, so any
 * single changed word changes its lane's result.
 */
#include <string.h>

#include "graph/vnm.h"

#define FNV_PRIME 0x100000001b3ull

uint64_t vn_vnm_fnv1a(uint64_t h, const void *data, size_t size)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < size; i++) h = (h ^ p[i]) * FNV_PRIME;
    return h;
}

uint64_t vn_vnm_hash(const void *data, size_t size)
{
    const uint8_t *p = data;
    uint64_t lane[4] = {VNM_FNV_BASIS, VNM_FNV_BASIS ^ 1, VNM_FNV_BASIS ^ 2, VNM_FNV_BASIS ^ 3};
    size_t i = 0;
    for (; i + 32 <= size; i += 32) {
        uint64_t w[4];
        memcpy(w, p + i, sizeof w); /* unaligned-safe load */
        for (int k = 0; k < 4; k++) lane[k] = (lane[k] ^ w[k]) * FNV_PRIME;
    }
    uint64_t h = vn_vnm_fnv1a(VNM_FNV_BASIS, lane, sizeof lane);
    h = vn_vnm_fnv1a(h, p + i, size - i);
    uint64_t n = size;
    return vn_vnm_fnv1a(h, &n, sizeof n);
}

void vn_vnm_reseal(void *bytes, size_t size)
{
    if (size < sizeof(vnm_header)) return;
    vnm_header h;
    memcpy(&h, bytes, sizeof h);
    if (h.num_sections > 1024) return;
    size_t table_end = sizeof h + (size_t)h.num_sections * sizeof(vnm_section);
    if (table_end > size) return;
    h.payload_hash = vn_vnm_hash((const uint8_t *)bytes + table_end, size - table_end);
    h.header_hash = 0;
    memcpy(bytes, &h, sizeof h);
    uint64_t hh = vn_vnm_fnv1a(VNM_FNV_BASIS, bytes, table_end);
    memcpy((uint8_t *)bytes + offsetof(vnm_header, header_hash), &hh, sizeof hh);
}
