/*
 * copy_stream.c — copy-out with non-temporal stores, for global tensors with
 * the VN_CACHE_STREAM hint, and the queue of lines vn_prefetch asked for,
 * which the copy-out and the row instructions issue a few at a time.
 *
 * A normal store to memory that is not cached first reads the line (read for
 * ownership), so writing N bytes costs 2N bytes of DRAM traffic; a
 * non-temporal store writes the line whole, as a copy engine would. Baseline
 * SSE2 is enough: the limit is DRAM, not the store width.
 *
 * Non-temporal stores are weakly ordered: the sfence at the end makes them
 * visible before the block reports completion to other threads.
 */
#include <emmintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "kernel/isa.h"

/* ---- prefetch queue (vn_prefetch) ---------------------------------------------
 *
 * vn_prefetch queues the lines of the next tile; they are requested while the
 * current tile's copy-out streams (PF_PER_LINE lines per line written), so that
 * reads and non-temporal writes are in flight together, as in the STREAM triad
 * loop, instead of in separate phases. Issuing them all at once would hold the
 * line-fill buffers and stall the compute in between. What is still queued at
 * the next copy-in is dropped: the copy fetches it anyway. Per worker thread. */
#define PF_RANGES   8
#define PF_PER_LINE 2

/* The lines [p, end) of the current row, then `rows` more rows of row_bytes,
 * each `stride` bytes after the previous row's start (a strided tile). */
typedef struct pf_range {
    const char *p, *end;
    int64_t rows;
    ptrdiff_t stride;
    size_t row_bytes;
} pf_range;
static _Thread_local pf_range pf_queue[PF_RANGES];
static _Thread_local int pf_count;

/* To L2 (T1): measured ahead of T0 (which evicts the tile being computed
 * from L1) and of T2 on the Add and row benchmarks, and for rows read in
 * place when each block requests its own size of the next tile
 * (VN_BLOCK_LINES, isa_f32.inc). The generic (non-AVX-512) rows read in
 * place still request into L1 (T0). */
static inline void pf_line(const char *p, bool l1)
{
    if (l1)
        _mm_prefetch(p, _MM_HINT_T0);
    else
        _mm_prefetch(p, _MM_HINT_T1);
}

static pf_range pf_row(const char *row, size_t row_bytes)
{
    pf_range r = {(const char *)((uintptr_t)row & ~(uintptr_t)63), row + row_bytes, 0, 0, 0};
    return r;
}

void vn_prefetch_queue(const void *src, size_t bytes)
{
    vn_prefetch_queue_rows(src, bytes, 1, 0);
}

void vn_prefetch_queue_rows(const void *src, size_t row_bytes, int64_t rows, ptrdiff_t stride)
{
    if (pf_count == PF_RANGES || row_bytes == 0 || rows <= 0) return;
    pf_range r = pf_row(src, row_bytes);
    r.rows = rows - 1, r.stride = stride, r.row_bytes = row_bytes;
    pf_queue[pf_count++] = r;
}

void vn_prefetch_rows_now(const void *src, size_t row_bytes, int64_t rows, ptrdiff_t stride)
{
    for (int64_t i = 0; i < rows && row_bytes > 0; i++) {
        pf_range r = pf_row((const char *)src + i * stride, row_bytes);
        for (; r.p < r.end; r.p += 64) pf_line(r.p, false);
    }
}

void vn_prefetch_drop(void)
{
    pf_count = 0;
}

/* Moves r to its next row; false when it has none. */
static bool pf_next_row(pf_range *r)
{
    if (r->rows <= 0) return false;
    const char *row = r->end - r->row_bytes + r->stride;
    size_t rb = r->row_bytes;
    *r = (pf_range){pf_row(row, rb).p, row + rb, r->rows - 1, r->stride, rb};
    return true;
}

static void pf_remove(int k)
{
    for (int i = k + 1; i < pf_count; i++) pf_queue[i - 1] = pf_queue[i];
    pf_count--;
}

/* Request up to `lines` queued lines, oldest range first. */
static void issue(int64_t lines, bool l1)
{
    while (lines > 0 && pf_count > 0) {
        pf_range *r = &pf_queue[0];
        for (; lines > 0 && r->p < r->end; lines--, r->p += 64) pf_line(r->p, l1);
        if (r->p >= r->end && !pf_next_row(r)) pf_remove(0);
    }
}

void vn_prefetch_issue(int64_t lines)
{
    issue(lines, false);
}

void vn_prefetch_issue_l1(int64_t lines)
{
    issue(lines, true);
}

int64_t vn_prefetch_take(int64_t max_lines, const char **p)
{
    while (pf_count > 0) {
        pf_range *r = &pf_queue[pf_count - 1]; /* newest first: the most urgent tile */
        if (r->p >= r->end) {
            if (!pf_next_row(r)) pf_remove(pf_count - 1);
            continue;
        }
        int64_t n = (r->end - r->p + 63) / 64;
        n = n < max_lines ? n : max_lines;
        *p = r->p;
        r->p += n * 64;
        return n;
    }
    return 0;
}

void vn_prefetch_drop_within(const void *lo, const void *hi)
{
    for (int k = pf_count - 1; k >= 0; k--)
        if (pf_queue[k].p >= (const char *)lo && pf_queue[k].p < (const char *)hi) pf_remove(k);
}

/* Below this, the fence and the head/tail handling cost more than they save. */
#define STREAM_MIN_BYTES 256

void vn_copy_streaming(void *dst, const void *src, size_t bytes)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (bytes < STREAM_MIN_BYTES) {
        memcpy(d, s, bytes);
        return;
    }
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    size_t body = bytes & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        if (pf_count) issue(PF_PER_LINE, false);
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(d + i + 48), e);
    }
    memcpy(d + body, s + body, bytes - body);
    _mm_sfence();
}
