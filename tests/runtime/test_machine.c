/*
 * test_machine.c — the machine peaks: plausible figures where the ISA allows,
 * exactly 0 where it does not, the cache, the formatted table. One measurement
 * of the default device (a few seconds) serves all checks, to keep the test
 * fast; the bounds are loose because the build machines are shared and noisy.
 */
#include <time.h>

#include "vinci/machine.h"
#include "vt.h"

static vn_machine_peaks peaks;
static vn_status measured = VN_ERR_INTERNAL;
static double measure_seconds;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The cached API measures the default device once; the second call is free. */
static void test_measure(void)
{
    double t0 = now_s();
    measured = vn_machine_peaks_get(&peaks);
    measure_seconds = now_s() - t0;
    VT_CHECK(measured == VN_OK, "%s: %s", vn_status_name(measured), vn_last_error());
    /* "A few seconds" on a quiet machine (3-5 s here); the bound is loose
     * because ctest runs tests in parallel on 2 shared cores. */
    VT_CHECK(measure_seconds < 45.0, "measuring took %.1f s", measure_seconds);
    vn_device *d = NULL;
    VT_OK(vn_device_default(&d));
    VT_CHECK(peaks.threads == vn_device_num_workers(d), "threads %d", peaks.threads);
    VT_CHECK(peaks.isa == vn_isa_active(), "isa %s", vn_isa_name(peaks.isa));

    vn_machine_peaks again;
    t0 = now_s();
    VT_OK(vn_machine_peaks_get(&again));
    VT_CHECK(now_s() - t0 < 0.05, "the second call measured again (%.3f s)", now_s() - t0);
    VT_CHECK(!memcmp(&again, &peaks, sizeof peaks), "the cached peaks differ");
}

/* Supported figures are positive (and above a floor no x86 core of this
 * decade misses); unsupported ones are exactly 0. */
static void check_pair(const char *name, const double v[2], bool on, double floor)
{
    for (int i = 0; i < 2; i++) {
        if (on)
            VT_CHECK(v[i] > floor, "%s[%d] = %.2f, want > %.1f", name, i, v[i], floor);
        else
            VT_CHECK(v[i] == 0.0, "%s[%d] = %.2f but unsupported", name, i, v[i]);
    }
}

static void test_support_follows_isa(void)
{
    const vn_cpu_features *f = vn_cpu_features_get();
    vn_isa isa = vn_isa_active();
    VT_CHECK(peaks.has_avx512 == (isa >= VN_ISA_AVX512), "has_avx512");
    VT_CHECK(peaks.has_avx2 == (isa >= VN_ISA_AVX2), "has_avx2");
    VT_CHECK(peaks.has_bf16 == (isa >= VN_ISA_AVX512 && f->avx512_bf16), "has_bf16");
    VT_CHECK(peaks.has_vnni == (isa >= VN_ISA_AVX512 && f->avx512_vnni), "has_vnni");
    check_pair("fp32_gflops", peaks.fp32_gflops, peaks.has_avx512, 1.0);
    check_pair("fp32_avx2_gflops", peaks.fp32_avx2_gflops, peaks.has_avx2, 1.0);
    check_pair("bf16_gflops", peaks.bf16_gflops, peaks.has_bf16, 1.0);
    check_pair("int8_gops", peaks.int8_gops, peaks.has_vnni, 1.0);
    const char *no_amx = getenv("VINCI_AMX");
    bool amx = isa >= VN_ISA_AVX512 && f->amx_tile && f->amx_bf16 && f->amx_int8 && f->os_amx &&
               !(no_amx && strcmp(no_amx, "0") == 0);
    VT_CHECK(peaks.has_amx == amx, "has_amx %d, expected %d", (int)peaks.has_amx, (int)amx);
    check_pair("amx_bf16_gflops", peaks.amx_bf16_gflops, peaks.has_amx, 1.0);
    check_pair("amx_int8_gops", peaks.amx_int8_gops, peaks.has_amx, 1.0);
    /* the tiles multiply more per instruction than the vector dot products */
    if (peaks.has_amx && peaks.has_bf16)
        VT_CHECK(peaks.amx_bf16_gflops[0] > peaks.bf16_gflops[0], "AMX bf16 %.1f <= vdpbf16ps %.1f",
                 peaks.amx_bf16_gflops[0], peaks.bf16_gflops[0]);
}

static void test_bandwidth_plausible(void)
{
    check_pair("dram_triad_gbs", peaks.dram_triad_gbs, true, 0.1);
    check_pair("dram_copy_gbs", peaks.dram_copy_gbs, true, 0.1);
    check_pair("l2_triad_gbs", peaks.l2_triad_gbs, true, 0.1);
    check_pair("l2_copy_gbs", peaks.l2_copy_gbs, true, 0.1);
    VT_CHECK(peaks.dram_array_bytes >= (16 << 20), "dram arrays %lld B",
             (long long)peaks.dram_array_bytes);
    VT_CHECK(peaks.l2_bytes_per_thread > 0, "l2 footprint");
    /* Caches are faster than memory by far more than the noise (3-10x). */
    VT_CHECK(peaks.l2_triad_gbs[0] > peaks.dram_triad_gbs[0], "L2 triad %.1f <= DRAM %.1f",
             peaks.l2_triad_gbs[0], peaks.dram_triad_gbs[0]);
    VT_CHECK(peaks.l2_copy_gbs[0] > peaks.dram_copy_gbs[0], "L2 copy %.1f <= DRAM %.1f",
             peaks.l2_copy_gbs[0], peaks.dram_copy_gbs[0]);
}

static void test_compute_ordering(void)
{
    /* A zmm FMA does twice a ymm FMA's work; allow for noise and for CPUs
     * that split zmm into two halves (then the two are about equal). */
    if (peaks.has_avx512)
        VT_CHECK(peaks.fp32_gflops[0] > 0.6 * peaks.fp32_avx2_gflops[0], "avx512 %.1f vs avx2 %.1f",
                 peaks.fp32_gflops[0], peaks.fp32_avx2_gflops[0]);
    /* vpdpbusd does 4x the OPs of an FMA per lane: even at half the rate it wins. */
    if (peaks.has_vnni && peaks.has_avx512)
        VT_CHECK(peaks.int8_gops[0] > peaks.fp32_gflops[0], "int8 %.1f vs fp32 %.1f",
                 peaks.int8_gops[0], peaks.fp32_gflops[0]);
    VT_CHECK(measured == VN_OK, "measured");
}

static void test_format(void)
{
    char buf[2048];
    size_t n = vn_machine_format(&peaks, buf, sizeof buf);
    VT_CHECK(n > 0 && n < sizeof buf && strlen(buf) == n, "length %zu", n);
    VT_CONTAINS(buf, "fp32 FMA, AVX-512");
    VT_CONTAINS(buf, "DRAM triad");
    VT_CONTAINS(buf, "L2 copy");
    VT_CONTAINS(buf, "GB/s");
    if (!peaks.has_bf16) VT_CONTAINS(buf, "n/a");
    char small[16];
    VT_CHECK(vn_machine_format(&peaks, small, sizeof small) == n, "needed length");
    VT_CHECK(strlen(small) == sizeof small - 1, "truncated to the buffer");
    VT_CHECK(vn_machine_format(&peaks, NULL, 0) == n, "size query");
}

static void test_errors(void)
{
    VT_CHECK(vn_machine_measure(NULL, NULL) == VN_ERR_INVALID_ARG, "NULL out");
    VT_CONTAINS(vn_last_error(), "vn_machine_measure");
    VT_CHECK(vn_machine_peaks_get(NULL) == VN_ERR_INVALID_ARG, "NULL out");
}

int main(void)
{
    /* measure here, whatever a `vinci machine` run saved for later processes */
    setenv("VINCI_MACHINE_FILE", "/nonexistent/vinci-peaks", 1);
    VT_RUN(test_measure);
    VT_RUN(test_support_follows_isa);
    VT_RUN(test_bandwidth_plausible);
    VT_RUN(test_compute_ordering);
    VT_RUN(test_format);
    VT_RUN(test_errors);
    printf("(measured in %.1f s)\n", measure_seconds);
    return vt_summary();
}
