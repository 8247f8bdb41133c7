/*
 * copy_stream.c — copy-out with non-temporal stores, for global tensors with
 * the VN_CACHE_STREAM hint.
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
