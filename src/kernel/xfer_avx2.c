/*
 * xfer_avx2.c — the copy engine's turns with 32-byte vectors (AVX2 flags
 * from the file name); the code is xfer_turns.inc.
 */
#include <immintrin.h>

typedef long long vn_xfer_vec256 __attribute__((vector_size(32), aligned(1), may_alias));
#define VN_XFER_VEC          vn_xfer_vec256
#define VN_XFER_VBYTES       32
#define VN_XFER_STREAM(p, v) _mm256_stream_si256((__m256i *)(void *)(p), (__m256i)(v))
#define VN_XFER_FN           vn_xfer_turns_avx2
#include "kernel/xfer_turns.inc"
