/*
 * xfer_avx512.c — the copy engine's turns with 64-byte vectors (AVX-512
 * flags from the file name); the code is xfer_turns.inc.
 */
#include <immintrin.h>

typedef long long vn_xfer_vec512 __attribute__((vector_size(64), aligned(1), may_alias));
#define VN_XFER_VEC          vn_xfer_vec512
#define VN_XFER_VBYTES       64
#define VN_XFER_STREAM(p, v) _mm512_stream_si512((void *)(p), (__m512i)(v))
#define VN_XFER_FN           vn_xfer_turns_avx512
#include "kernel/xfer_turns.inc"
