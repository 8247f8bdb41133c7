/*
 * machine_file.c — the peaks `vinci machine` measured, kept in a small text
 * file so later processes (the profiler's roofs, benchmarks) use a quiet
 * measurement instead of re-measuring under whatever load they run in.
 *
 * The file is one "name value..." line per figure. It is untrusted: a figure
 * that is missing, not finite or not positive, an ISA or thread count that
 * differs from this process's, or any unreadable line makes the whole file
 * ignored (the caller then measures), never a crash or a wrong roof.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vinci/machine.h"

typedef struct field {
    const char *name;
    size_t offset; /* of a double[2] in vn_machine_peaks */
} field;

#define FIELD(f)                                                                                   \
    {                                                                                              \
#f, offsetof(vn_machine_peaks, f)                                                          \
    }
static const field fields[] = {
    FIELD(fp32_gflops),     FIELD(fp32_avx2_gflops), FIELD(bf16_gflops),    FIELD(int8_gops),
    FIELD(amx_bf16_gflops), FIELD(amx_int8_gops),    FIELD(dram_triad_gbs), FIELD(dram_copy_gbs),
    FIELD(l2_triad_gbs),    FIELD(l2_copy_gbs),
};
#define NUM_FIELDS (sizeof fields / sizeof fields[0])

vn_status vn_machine_peaks_path(char *buf, size_t size)
{
    const char *env = getenv("VINCI_MACHINE_FILE"), *home = getenv("HOME");
    int n = env && env[0]     ? snprintf(buf, size, "%s", env)
            : home && home[0] ? snprintf(buf, size, "%s/.cache/vinci-machine-peaks.txt", home)
                              : -1;
    if (n < 0 || (size_t)n >= size)
        return vn_error(VN_ERR_INVALID_ARG, "vn_machine_peaks_path",
                        "no VINCI_MACHINE_FILE or HOME, or the path is too long");
    return VN_OK;
}

vn_status vn_machine_peaks_save(const vn_machine_peaks *p, const char *path)
{
    FILE *f = fopen(path, "w");
    const char *slash = strrchr(path, '/');
    if (!f && slash && slash > path && (size_t)(slash - path) < 1024) {
        char dir[1024]; /* the parent folder (~/.cache) may not exist yet */
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        mkdir(dir, 0755);
        f = fopen(path, "w");
    }
    if (!f) return vn_error(VN_ERR_IO, "vn_machine_peaks_save", "cannot write %s", path);
    fprintf(f, "threads %d\nisa %d\nflags %d %d %d %d %d\n", (int)p->threads, (int)p->isa,
            (int)p->has_avx512, (int)p->has_avx2, (int)p->has_bf16, (int)p->has_vnni,
            (int)p->has_amx);
    for (size_t i = 0; i < NUM_FIELDS; i++) {
        const double *v = (const double *)((const char *)p + fields[i].offset);
        fprintf(f, "%s %.17g %.17g\n", fields[i].name, v[0], v[1]);
    }
    fprintf(f, "sizes %lld %lld\n", (long long)p->dram_array_bytes,
            (long long)p->l2_bytes_per_thread);
    return fclose(f) == 0 ? VN_OK
                          : vn_error(VN_ERR_IO, "vn_machine_peaks_save", "cannot write %s", path);
}

/* Only blanks left after what sscanf consumed (`used`). */
static bool at_end(const char *s, int used)
{
    s += used;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return *s == '\0';
}

/* One "name a b" line of doubles into the field it names; false if unknown. */
static bool parse_field(vn_machine_peaks *p, const char *name, const char *rest, int *seen)
{
    for (size_t i = 0; i < NUM_FIELDS; i++) {
        if (strcmp(name, fields[i].name)) continue;
        double a, b, *v = (double *)((char *)p + fields[i].offset);
        int used = 0;
        if (sscanf(rest, "%lf %lf%n", &a, &b, &used) != 2 || !at_end(rest, used) || !isfinite(a) ||
            !isfinite(b) || a < 0 || b < 0)
            return false;
        v[0] = a, v[1] = b;
        *seen |= 1 << i;
        return true;
    }
    return false;
}

static bool parse_line(vn_machine_peaks *p, const char *line, int *seen)
{
    char name[32];
    int used = 0, n = 0, t, isa, f[5];
    long long a, b;
    if (sscanf(line, "%31s %n", name, &used) != 1) return false;
    const char *rest = line + used;
    if (!strcmp(name, "threads"))
        return sscanf(rest, "%d%n", &t, &n) == 1 && at_end(rest, n) && (p->threads = t) > 0;
    if (!strcmp(name, "isa")) {
        if (sscanf(rest, "%d%n", &isa, &n) != 1 || !at_end(rest, n)) return false;
        p->isa = (vn_isa)isa;
        return true;
    }
    if (!strcmp(name, "flags")) {
        if (sscanf(rest, "%d %d %d %d %d%n", &f[0], &f[1], &f[2], &f[3], &f[4], &n) != 5 ||
            !at_end(rest, n))
            return false;
        p->has_avx512 = f[0], p->has_avx2 = f[1], p->has_bf16 = f[2], p->has_vnni = f[3];
        p->has_amx = f[4];
        return true;
    }
    if (!strcmp(name, "sizes")) {
        if (sscanf(rest, "%lld %lld%n", &a, &b, &n) != 2 || !at_end(rest, n) || a <= 0 || b <= 0)
            return false;
        p->dram_array_bytes = a, p->l2_bytes_per_thread = b;
        return true;
    }
    return parse_field(p, name, rest, seen);
}

bool vn_machine_peaks_load(const char *path, int32_t threads, vn_isa isa, vn_machine_peaks *out)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    vn_machine_peaks p = {0};
    char line[256];
    int seen = 0;
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) ok = parse_line(&p, line, &seen);
    fclose(f);
    /* every figure present, measured for this worker count and ISA, with
     * non-zero fp32 and DRAM roofs (the profiler divides by them) */
    ok = ok && seen == (1 << NUM_FIELDS) - 1 && p.threads == threads && p.isa == isa &&
         (p.fp32_gflops[1] > 0 || p.fp32_avx2_gflops[1] > 0) && p.dram_triad_gbs[1] > 0;
    if (ok) *out = p;
    return ok;
}
