/*
 * vinci/machine.h — this machine's measured peaks: the roof that benchmarks
 * and the profiler compare achieved throughput against.
 *
 * vn_machine_measure runs short micro-benchmarks (a few seconds in all) on a
 * device's workers: dependent-free chains of FMA / dot-product instructions
 * for the compute peaks, and STREAM-style triad and copy loops for bandwidth.
 * Every figure is the median of several runs, for one thread (index 0) and for
 * all of the device's workers at once (index 1).
 *
 * Units the CPU (or the active ISA, see VINCI_ISA) does not offer report 0 and
 * are never executed: with VINCI_ISA=avx2 the AVX-512, bf16 and int8 figures
 * are 0; with VINCI_ISA=scalar the compute figures are all 0 while bandwidth is
 * still measured (with plain C loops).
 *
 * The figures are only as good as the machine is quiet: other processes, or
 * other callers of the same device, lower them. Measure on an idle machine
 * when the numbers matter.
 */
#ifndef VINCI_MACHINE_H
#define VINCI_MACHINE_H

#include <stddef.h>

#include "vinci/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Index into every two-element figure below. */
enum { VN_MACHINE_ONE_THREAD = 0, VN_MACHINE_ALL_THREADS = 1 };

typedef struct vn_machine_peaks {
    /* Compute, in GFLOP/s (GOP/s for int8); 0 where not supported. */
    double fp32_gflops[2];      /* AVX-512 FMA (zmm): 2 FLOP per lane per FMA */
    double fp32_avx2_gflops[2]; /* AVX2 FMA (ymm) */
    double bf16_gflops[2];      /* vdpbf16ps: 2 FLOP per bf16 pair */
    double int8_gops[2];        /* vpdpbusd (u8 x s8 -> s32): 2 OP per byte pair */
    /* AMX tiles (tdpbf16ps / tdpbusd), what the cube's bf16 and int8 run on
     * where the CPU and OS have them (has_amx). */
    double amx_bf16_gflops[2];
    double amx_int8_gops[2];
    /* Bandwidth in GB/s (1e9 bytes), counted the STREAM way: the bytes the
     * loop names (triad 12 B / float element, copy 8 B), not the extra
     * write-allocate reads the ordinary (cached) stores cause. */
    double dram_triad_gbs[2]; /* a[i] = b[i] + s * c[i] over dram_array_bytes arrays */
    double dram_copy_gbs[2];  /* a[i] = b[i] */
    double l2_triad_gbs[2];   /* the same, over l2_bytes_per_thread per thread, repeated */
    double l2_copy_gbs[2];
    int64_t dram_array_bytes;    /* size of each DRAM array (256 MiB unless memory was short) */
    int64_t l2_bytes_per_thread; /* total footprint of one thread's L2 arrays */
    int32_t threads;             /* the device's workers: what index 1 used */
    vn_isa isa;                  /* the ISA active when measured */
    bool has_avx512, has_avx2, has_bf16, has_vnni; /* which compute figures were measured */
    bool has_amx;
} vn_machine_peaks;

/* Measure this machine with the workers of `device` (NULL: the default device).
 * Takes a few seconds and briefly maps 3 x 256 MiB (less if that fails).
 * Errors: VN_ERR_INVALID_ARG for a NULL `out`, VN_ERR_STATE when called from a
 * block running on `device`, VN_ERR_OUT_OF_MEMORY if not even small arrays fit. */
vn_status vn_machine_measure(vn_device *device, vn_machine_peaks *out);

/* The default device's peaks, cached for the process (thread-safe:
 * concurrent first callers wait for one result; a failed measurement is
 * retried by the next call). The first call reads the peaks file
 * (vn_machine_peaks_path) when it holds a valid measurement for this worker
 * count and ISA — what `vinci machine` saved on a quiet machine — and measures
 * otherwise. */
vn_status vn_machine_peaks_get(vn_machine_peaks *out);

/* The peaks file: $VINCI_MACHINE_FILE, else $HOME/.cache/vinci-machine-peaks.txt. */
vn_status vn_machine_peaks_path(char *buf, size_t size);
/* Write `peaks` as text (one "name value..." line per figure). */
vn_status vn_machine_peaks_save(const vn_machine_peaks *peaks, const char *path);
/* Read the file; true only when every figure is present and sane and it was
 * measured with `threads` workers on `isa` (an untrusted file: anything else
 * is ignored, never trusted). */
bool vn_machine_peaks_load(const char *path, int32_t threads, vn_isa isa, vn_machine_peaks *out);

/* Format the peaks as a readable table (quantity, 1 thread, all threads, unit)
 * into `buf` with snprintf semantics: returns the length the full text needs
 * (excluding the NUL) and truncates to `size` (NUL-terminated when size > 0). */
size_t vn_machine_format(const vn_machine_peaks *peaks, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_MACHINE_H */
