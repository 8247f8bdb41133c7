/*
 * xfer_internal.h — what the copy engine (xfer.c) shares with its per-ISA
 * inner loop (xfer_turns.inc, compiled by xfer_avx512.c, xfer_avx2.c and
 * xfer_scalar.c).
 */
#ifndef VINCI_KERNEL_XFER_INTERNAL_H
#define VINCI_KERNEL_XFER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#define VN_MAX_XFER_RUNS 8 /* = VN_MAX_XFERS of core_internal.h */

/* A transfer being executed. dst of a streaming run is 64-byte aligned. */
typedef struct vn_xfer_run {
    uint8_t *dst;
    const uint8_t *src;
    int64_t left;
    bool stream;
} vn_xfer_run;

/* Executes whole chunks of runs[0..n) in turns, leaving each run with less
 * than one chunk (VN_XFER_CHUNK of the ISA) for the caller to finish. */
typedef void (*vn_xfer_turns_fn)(vn_xfer_run *runs, int32_t n);

void vn_xfer_turns_avx512(vn_xfer_run *runs, int32_t n);
void vn_xfer_turns_avx2(vn_xfer_run *runs, int32_t n);
void vn_xfer_turns_scalar(vn_xfer_run *runs, int32_t n);

#endif /* VINCI_KERNEL_XFER_INTERNAL_H */
