/*
 * vnm_hash.c — the .vnm file's two hashes. The payload hash covers every
 * byte after the section table (weights included), so it must run at memory
 * speed: the payload is cut into 1 MiB chunks, each hashed by four
 * independent FNV-1a lanes over 64-bit words (the multiplies overlap), and the
 * chunk hashes are hashed in order with the length; the chunks are
 * independent, so a load hashes them on several threads. Each lane step is a
 * bijection of the lane for a fixed word, so any single changed word changes
 * its lane's, its chunk's and the file's result.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "graph/vnm.h"

#define VNM_HASH_MAX_THREADS 16

#define FNV_PRIME 0x100000001b3ull

uint64_t vn_vnm_fnv1a(uint64_t h, const void *data, size_t size)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < size; i++) h = (h ^ p[i]) * FNV_PRIME;
    return h;
}

/* One chunk: four lanes over 32-byte steps, then its tail bytes. */
static uint64_t chunk_hash(const uint8_t *p, size_t size)
{
    uint64_t lane[4] = {VNM_FNV_BASIS, VNM_FNV_BASIS ^ 1, VNM_FNV_BASIS ^ 2, VNM_FNV_BASIS ^ 3};
    size_t i = 0;
    for (; i + 32 <= size; i += 32) {
        uint64_t w[4];
        memcpy(w, p + i, sizeof w); /* unaligned-safe load */
        for (int k = 0; k < 4; k++) lane[k] = (lane[k] ^ w[k]) * FNV_PRIME;
    }
    uint64_t h = vn_vnm_fnv1a(VNM_FNV_BASIS, lane, sizeof lane);
    return vn_vnm_fnv1a(h, p + i, size - i);
}

typedef struct hash_job {
    const uint8_t *p;
    size_t size, chunks;
    uint64_t *out;
    atomic_size_t next;
} hash_job;

static void *hash_worker(void *arg)
{
    hash_job *j = arg;
    for (size_t c; (c = atomic_fetch_add(&j->next, 1)) < j->chunks;) {
        size_t at = c * VNM_HASH_CHUNK,
               n = j->size - at < VNM_HASH_CHUNK ? j->size - at : VNM_HASH_CHUNK;
        j->out[c] = chunk_hash(j->p + at, n);
    }
    return NULL;
}

/* Chunk hashes into j->out on up to `threads` threads (this one included). */
static void hash_chunks(hash_job *j, int threads)
{
    pthread_t tid[VNM_HASH_MAX_THREADS];
    int started = 0;
    if (threads > VNM_HASH_MAX_THREADS) threads = VNM_HASH_MAX_THREADS;
    if ((size_t)threads > j->chunks) threads = (int)j->chunks;
    while (started < threads - 1 && !pthread_create(&tid[started], NULL, hash_worker, j)) started++;
    hash_worker(j);
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
}

uint64_t vn_vnm_hash_mt(const void *data, size_t size, int threads)
{
    const uint8_t *p = data;
    size_t chunks = (size + VNM_HASH_CHUNK - 1) / VNM_HASH_CHUNK;
    uint64_t *hs = threads > 1 && chunks > 1 ? malloc(chunks * sizeof *hs) : NULL;
    uint64_t h = VNM_FNV_BASIS;
    if (hs) {
        hash_job j = {p, size, chunks, hs, 0};
        hash_chunks(&j, threads);
        h = vn_vnm_fnv1a(h, hs, chunks * sizeof *hs);
    } else { /* one thread (or no memory for the list): the same value, streamed */
        for (size_t c = 0; c < chunks; c++) {
            size_t at = c * VNM_HASH_CHUNK;
            uint64_t x =
                chunk_hash(p + at, size - at < VNM_HASH_CHUNK ? size - at : VNM_HASH_CHUNK);
            h = vn_vnm_fnv1a(h, &x, sizeof x);
        }
    }
    free(hs);
    uint64_t n = size;
    return vn_vnm_fnv1a(h, &n, sizeof n);
}

uint64_t vn_vnm_hash(const void *data, size_t size)
{
    return vn_vnm_hash_mt(data, size, 1);
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
