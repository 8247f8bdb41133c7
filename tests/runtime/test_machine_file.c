/*
 * test_machine_file.c — the peaks file `vinci machine` saves: a round trip
 * keeps every figure, and a file that is truncated, corrupted, measured for
 * another worker count or ISA, or not there is refused (the caller measures).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vinci/machine.h"
#include "vt.h"

static vn_machine_peaks sample(void)
{
    vn_machine_peaks p = {0};
    for (int i = 0; i < 2; i++) {
        p.fp32_gflops[i] = 173.9 * (i + 1), p.fp32_avx2_gflops[i] = 87.1 * (i + 1);
        p.bf16_gflops[i] = 85.25 * (i + 1), p.int8_gops[i] = 686.5 * (i + 1);
        p.amx_bf16_gflops[i] = 3207.75 * (i + 1), p.amx_int8_gops[i] = 6353.5 * (i + 1);
        p.dram_triad_gbs[i] = 14.3 + i, p.dram_copy_gbs[i] = 12.1 + i;
        p.l2_triad_gbs[i] = 103.0 / 3.0 + i, p.l2_copy_gbs[i] = 99.0 + i;
    }
    p.dram_array_bytes = 256ll << 20, p.l2_bytes_per_thread = 1 << 20;
    p.threads = 2, p.isa = VN_ISA_AVX2;
    p.has_avx2 = p.has_vnni = p.has_amx = true;
    return p;
}

/* Field by field (memcmp would compare padding bytes too). */
static bool same(const vn_machine_peaks *a, const vn_machine_peaks *b)
{
    bool eq = a->threads == b->threads && a->isa == b->isa && a->has_avx512 == b->has_avx512 &&
              a->has_avx2 == b->has_avx2 && a->has_bf16 == b->has_bf16 &&
              a->has_vnni == b->has_vnni && a->has_amx == b->has_amx &&
              a->dram_array_bytes == b->dram_array_bytes &&
              a->l2_bytes_per_thread == b->l2_bytes_per_thread;
    for (int i = 0; i < 2; i++)
        eq = eq && a->fp32_gflops[i] == b->fp32_gflops[i] &&
             a->fp32_avx2_gflops[i] == b->fp32_avx2_gflops[i] &&
             a->bf16_gflops[i] == b->bf16_gflops[i] && a->int8_gops[i] == b->int8_gops[i] &&
             a->amx_bf16_gflops[i] == b->amx_bf16_gflops[i] &&
             a->amx_int8_gops[i] == b->amx_int8_gops[i] &&
             a->dram_triad_gbs[i] == b->dram_triad_gbs[i] &&
             a->dram_copy_gbs[i] == b->dram_copy_gbs[i] &&
             a->l2_triad_gbs[i] == b->l2_triad_gbs[i] && a->l2_copy_gbs[i] == b->l2_copy_gbs[i];
    return eq;
}

static void replace_line(const char *path, const char *prefix, const char *with)
{
    char text[4096] = {0}, out[4096] = {0};
    FILE *f = fopen(path, "r");
    VT_CHECK(f && fread(text, 1, sizeof text - 1, f) > 0, "read %s", path);
    if (f) fclose(f);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        const char *keep = strncmp(line, prefix, strlen(prefix)) ? line : with;
        if (keep[0]) strcat(strcat(out, keep), "\n");
    }
    f = fopen(path, "w");
    VT_CHECK(f && fputs(out, f) >= 0, "write %s", path);
    if (f) fclose(f);
}

static void test_round_trip_and_refusals(void)
{
    char path[] = "/tmp/vinci_peaks_XXXXXX";
    int fd = mkstemp(path);
    VT_CHECK(fd >= 0, "mkstemp");
    close(fd);
    vn_machine_peaks p = sample(), q;
    VT_OK(vn_machine_peaks_save(&p, path));
    memset(&q, 0xab, sizeof q);
    VT_CHECK(vn_machine_peaks_load(path, 2, VN_ISA_AVX2, &q), "load");
    VT_CHECK(same(&p, &q), "round trip changed the figures");
    VT_CHECK(!vn_machine_peaks_load(path, 4, VN_ISA_AVX2, &q), "other worker count accepted");
    VT_CHECK(!vn_machine_peaks_load(path, 2, VN_ISA_AVX512, &q), "other ISA accepted");
    const char *bad[][2] = {{"dram_triad_gbs", "dram_triad_gbs nan 1"},
                            {"fp32_gflops", ""},
                            {"l2_copy_gbs", "l2_copy_gbs -5 3"},
                            {"sizes", "sizes 0 7"},
                            {"isa", "isa 1 garbage line"},
                            {"bf16_gflops", "bf16_gflops 1"},
                            {"flags", "flags 0 1 0 1"}, /* a file from before the AMX figures */
                            {"amx_int8_gops", ""}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        VT_OK(vn_machine_peaks_save(&p, path));
        replace_line(path, bad[i][0], bad[i][1]);
        q = sample();
        q.threads = 99;
        bool ok = vn_machine_peaks_load(path, 2, VN_ISA_AVX2, &q);
        VT_CHECK(!ok && q.threads == 99, "accepted '%s' (output must stay untouched)", bad[i][1]);
    }
    remove(path);
    VT_CHECK(!vn_machine_peaks_load(path, 2, VN_ISA_AVX2, &q), "missing file accepted");
}

static void test_path(void)
{
    char buf[256];
    setenv("VINCI_MACHINE_FILE", "/x/peaks.txt", 1);
    VT_OK(vn_machine_peaks_path(buf, sizeof buf));
    VT_CHECK(!strcmp(buf, "/x/peaks.txt"), "env path: %s", buf);
    unsetenv("VINCI_MACHINE_FILE");
    setenv("HOME", "/home/u", 1);
    VT_OK(vn_machine_peaks_path(buf, sizeof buf));
    VT_CHECK(!strcmp(buf, "/home/u/.cache/vinci-machine-peaks.txt"), "home path: %s", buf);
    VT_CHECK(vn_machine_peaks_path(buf, 8) == VN_ERR_INVALID_ARG, "truncation accepted");
}

int main(void)
{
    VT_RUN(test_round_trip_and_refusals);
    VT_RUN(test_path);
    return vt_summary();
}
