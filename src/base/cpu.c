/*
 * cpu.c — CPU feature detection and the process-wide ISA choice.
 *
 * Both are computed once (pthread_once) and then only read, so any thread may
 * call these functions at any time. A feature counts for an ISA only when the
 * OS also saves the matching register state (XGETBV), otherwise the first
 * vector instruction would fault.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "vinci/base.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define VN_HAVE_CPUID 1
#else
#define VN_HAVE_CPUID 0
#endif

static vn_cpu_features features;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;
static vn_isa active_isa;
static pthread_once_t active_once = PTHREAD_ONCE_INIT;

#define BIT(reg, n) ((((reg) >> (n)) & 1u) != 0)

#if VN_HAVE_CPUID
typedef struct cpuid_regs {
    unsigned a, b, c, d;
} cpuid_regs;

/* CPUID leaf/subleaf, all zero when the leaf is beyond the CPU's maximum. */
static cpuid_regs cpuid(unsigned leaf, unsigned sub)
{
    cpuid_regs r = {0, 0, 0, 0};
    if (!__get_cpuid_count(leaf, sub, &r.a, &r.b, &r.c, &r.d)) memset(&r, 0, sizeof r);
    return r;
}

/* XCR0: which register states the OS saves on context switch. Only valid
 * when CPUID says OSXSAVE. The mnemonic avoids needing -mxsave. */
static uint64_t xgetbv0(void)
{
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void detect_isa_features(vn_cpu_features *f)
{
    cpuid_regs l1 = cpuid(1, 0), l7 = cpuid(7, 0);
    /* Subleaf 1 exists only when leaf 7 reports it (EAX = highest subleaf). */
    cpuid_regs l7s1 = l7.a >= 1 ? cpuid(7, 1) : (cpuid_regs){0, 0, 0, 0};
    f->sse42 = BIT(l1.c, 20);
    f->fma = BIT(l1.c, 12);
    f->avx = BIT(l1.c, 28);
    f->f16c = BIT(l1.c, 29);
    f->avx2 = BIT(l7.b, 5);
    f->avx512f = BIT(l7.b, 16);
    f->avx512dq = BIT(l7.b, 17);
    f->avx512bw = BIT(l7.b, 30);
    f->avx512vl = BIT(l7.b, 31);
    f->avx512_vnni = BIT(l7.c, 11);
    f->avx512_fp16 = BIT(l7.d, 23);
    f->avx512_bf16 = BIT(l7s1.a, 5);
    f->amx_bf16 = BIT(l7.d, 22);
    f->amx_tile = BIT(l7.d, 24);
    f->amx_int8 = BIT(l7.d, 25);
    if (BIT(l1.c, 27)) { /* OSXSAVE: XGETBV is usable */
        uint64_t xcr0 = xgetbv0();
        f->os_avx = (xcr0 & 0x6) == 0x6;         /* XMM + YMM */
        f->os_avx512 = (xcr0 & 0xe6) == 0xe6;    /* + opmask, ZMM_Hi256, Hi16_ZMM */
        f->os_amx = (xcr0 & 0x60000) == 0x60000; /* XTILECFG + XTILEDATA */
    }
}

/* Walks a deterministic cache leaf (4 on Intel, 0x8000001D on AMD): each
 * subleaf describes one cache until the type field is 0. */
static void cache_sizes_from_leaf(unsigned leaf, vn_cpu_features *f)
{
    for (unsigned sub = 0; sub < 16; sub++) {
        cpuid_regs r = cpuid(leaf, sub);
        unsigned type = r.a & 0x1f, level = (r.a >> 5) & 0x7;
        if (type == 0) break;
        if (type == 2) continue; /* instruction cache */
        uint64_t bytes = (uint64_t)((r.b >> 22) + 1) * (((r.b >> 12) & 0x3ff) + 1) *
                         ((r.b & 0xfff) + 1) * ((uint64_t)r.c + 1);
        int32_t clamped = bytes > INT32_MAX ? INT32_MAX : (int32_t)bytes;
        if (level == 1) f->l1d_bytes = clamped;
        if (level == 2) f->l2_bytes = clamped;
        if (level == 3) f->l3_bytes = clamped;
    }
}

static void detect_caches_cpuid(vn_cpu_features *f)
{
    cpuid_regs l0 = cpuid(0, 0);
    char vendor[13];
    memcpy(vendor, &l0.b, 4);
    memcpy(vendor + 4, &l0.d, 4);
    memcpy(vendor + 8, &l0.c, 4);
    vendor[12] = '\0';
    if (strcmp(vendor, "GenuineIntel") == 0 && l0.a >= 4) {
        cache_sizes_from_leaf(4, f);
    } else if (strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0) {
        /* 0x8000001D exists only with the TopologyExtensions bit. */
        if (cpuid(0x80000000u, 0).a >= 0x8000001du && BIT(cpuid(0x80000001u, 0).c, 22))
            cache_sizes_from_leaf(0x8000001du, f);
    }
}
#endif /* VN_HAVE_CPUID */

/* sysconf value as a cache size, 0 when unknown or absurd. */
static int32_t sysconf_bytes(int name)
{
    long v = sysconf(name);
    return v > 0 && v <= INT32_MAX ? (int32_t)v : 0;
}

/* Fills only what CPUID left unknown (virtual machines often hide leaf 4). */
static void detect_caches_sysconf(vn_cpu_features *f)
{
#ifdef _SC_LEVEL1_DCACHE_SIZE
    if (!f->l1d_bytes) f->l1d_bytes = sysconf_bytes(_SC_LEVEL1_DCACHE_SIZE);
    if (!f->l2_bytes) f->l2_bytes = sysconf_bytes(_SC_LEVEL2_CACHE_SIZE);
    if (!f->l3_bytes) f->l3_bytes = sysconf_bytes(_SC_LEVEL3_CACHE_SIZE);
#else
    (void)f;
    (void)sysconf_bytes;
#endif
}

static void detect_features(void)
{
#if VN_HAVE_CPUID
    detect_isa_features(&features);
    detect_caches_cpuid(&features);
#endif
    detect_caches_sysconf(&features);
}

const vn_cpu_features *vn_cpu_features_get(void)
{
    pthread_once(&features_once, detect_features);
    return &features;
}

vn_isa vn_isa_detected(void)
{
    const vn_cpu_features *f = vn_cpu_features_get();
    bool avx2 = f->avx && f->avx2 && f->fma && f->f16c && f->os_avx;
    bool avx512 = avx2 && f->avx512f && f->avx512bw && f->avx512dq && f->avx512vl && f->os_avx512;
    return avx512 ? VN_ISA_AVX512 : avx2 ? VN_ISA_AVX2 : VN_ISA_SCALAR;
}

static const char *const isa_names[VN_ISA_COUNT] = {
    [VN_ISA_SCALAR] = "scalar",
    [VN_ISA_AVX2] = "avx2",
    [VN_ISA_AVX512] = "avx512",
};
_Static_assert(VN_ISA_COUNT == 3, "add the new ISA to isa_names");

const char *vn_isa_name(vn_isa isa)
{
    return (unsigned)isa < VN_ISA_COUNT ? isa_names[isa] : "invalid";
}

/* The ISA named by VINCI_ISA, or -1 when unset or unrecognised. */
static int isa_from_env(void)
{
    const char *env = getenv("VINCI_ISA");
    if (!env || !*env) return -1;
    for (int i = 0; i < VN_ISA_COUNT; i++)
        if (strcasecmp(env, isa_names[i]) == 0) return i;
    /* Unknown values must not stop the program; say once that it was ignored. */
    fprintf(stderr, "vinci: ignoring VINCI_ISA=\"%.32s\" (expected avx512, avx2 or scalar)\n", env);
    return -1;
}

static void choose_active_isa(void)
{
    vn_isa detected = vn_isa_detected();
    int requested = isa_from_env();
    active_isa = requested >= 0 && requested < (int)detected ? (vn_isa)requested : detected;
}

vn_isa vn_isa_active(void)
{
    pthread_once(&active_once, choose_active_isa);
    return active_isa;
}
