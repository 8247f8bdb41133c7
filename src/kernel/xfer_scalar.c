/*
 * xfer_scalar.c — the copy engine's turns for baseline x86-64 (SSE2, 16-byte
 * vectors); the code is xfer_turns.inc.
 */
#include <emmintrin.h>

typedef long long vn_xfer_vec128 __attribute__((vector_size(16), aligned(1), may_alias));
#define VN_XFER_VEC          vn_xfer_vec128
#define VN_XFER_VBYTES       16
#define VN_XFER_STREAM(p, v) _mm_stream_si128((__m128i *)(void *)(p), (__m128i)(v))
#define VN_XFER_FN           vn_xfer_turns_scalar
#include "kernel/xfer_turns.inc"
