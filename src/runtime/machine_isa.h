/*
 * machine_isa.h — the per-ISA micro-benchmark loops behind vn_machine_measure
 * (internal). Only call an ISA's functions when vn_isa_active() and the CPU
 * features allow it: they are compiled with that instruction set.
 *
 * Compute loops run `iters` iterations of VN_MACHINE_CHAINS independent
 * instructions and return a value that depends on every accumulator, so the
 * compiler must execute all of them. The caller stores the result in a sink.
 */
#ifndef VINCI_SRC_RUNTIME_MACHINE_ISA_H
#define VINCI_SRC_RUNTIME_MACHINE_ISA_H

#include <stddef.h>
#include <stdint.h>

/* Independent accumulators per loop iteration. A throughput loop must keep
 * latency x ports instructions in flight: FMA / vdpbf16ps / vpdpbusd have 4-6
 * cycles latency on 2 ports on current x86 cores, so 8-12 are needed; 12 keeps
 * a margin and still leaves registers free for the operands (16 ymm in AVX2). */
#define VN_MACHINE_CHAINS 12

/* Operations each loop does per iteration (the FLOP / OP counting of the peaks). */
#define VN_MACHINE_FMA512_FLOP (VN_MACHINE_CHAINS * 16 * 2) /* 16 lanes, mul + add */
#define VN_MACHINE_FMA256_FLOP (VN_MACHINE_CHAINS * 8 * 2)
#define VN_MACHINE_BF16_FLOP   (VN_MACHINE_CHAINS * 32 * 2) /* 32 bf16 pairs */
#define VN_MACHINE_INT8_OP     (VN_MACHINE_CHAINS * 64 * 2) /* 64 byte pairs */

/* acc = acc * a + b per chain; |a| < 1 keeps every accumulator finite and normal. */
float vn_machine_fma_avx512(int64_t iters, float a, float b);
float vn_machine_fma_avx2(int64_t iters, float a, float b);
/* acc += dot of bf16 pairs; `a` and `b` are two bf16 each (low, high). */
float vn_machine_bf16_avx512(int64_t iters, uint32_t a, uint32_t b);
/* acc += dot of 4 u8 x s8 pairs per lane; `a` holds 4 u8, `b` 4 s8. */
int32_t vn_machine_int8_avx512(int64_t iters, uint32_t a, uint32_t b);

/* AMX tiles: four 16 x 16 accumulators, each step 4 tile products of 16 x 64
 * byte operands (vn_amx_usable() must be true). Operands as above. */
#define VN_MACHINE_AMX_BF16_FLOP (4 * 16 * 16 * 32 * 2)
#define VN_MACHINE_AMX_INT8_OP   (4 * 16 * 16 * 64 * 2)
float vn_machine_bf16_amx(int64_t iters, uint32_t a, uint32_t b);
int32_t vn_machine_int8_amx(int64_t iters, uint32_t a, uint32_t b);

/* STREAM triad a[i] = b[i] + s * c[i] and copy a[i] = b[i] with ordinary
 * (cached) loads and stores. n is a multiple of 64 and the arrays are 64-byte
 * aligned. */
void vn_machine_triad_avx512(float *restrict a, const float *restrict b, const float *restrict c,
                             float s, size_t n);
void vn_machine_copy_avx512(float *restrict a, const float *restrict b, size_t n);
void vn_machine_triad_avx2(float *restrict a, const float *restrict b, const float *restrict c,
                           float s, size_t n);
void vn_machine_copy_avx2(float *restrict a, const float *restrict b, size_t n);

#endif /* VINCI_SRC_RUNTIME_MACHINE_ISA_H */
