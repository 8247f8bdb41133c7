/*
 * test_cpu.c — CPU features and ISA choice, dtype names, aligned memory and
 * the error text: the rest of base.h.
 */
#include <pthread.h>
#include <strings.h>

#include "vinci/base.h"
#include "vt.h"

/* Lets the out-of-memory test get NULL instead of an abort under ASan. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

static void test_features(void)
{
    const vn_cpu_features *f = vn_cpu_features_get();
    VT_CHECK(f != NULL && f == vn_cpu_features_get(), "features are one detected table");
    printf("features: sse42=%d avx=%d avx2=%d fma=%d f16c=%d avx512 f/bw/dq/vl=%d%d%d%d "
           "vnni=%d bf16=%d fp16=%d os_avx=%d os_avx512=%d\n",
           f->sse42, f->avx, f->avx2, f->fma, f->f16c, f->avx512f, f->avx512bw, f->avx512dq,
           f->avx512vl, f->avx512_vnni, f->avx512_bf16, f->avx512_fp16, f->os_avx, f->os_avx512);
    printf("caches: L1d %d, L2 %d, L3 %d bytes\n", f->l1d_bytes, f->l2_bytes, f->l3_bytes);
    /* XSETBV refuses to enable the ZMM states without the YMM state. */
    VT_CHECK(!f->os_avx512 || f->os_avx, "os_avx512 without os_avx");
    VT_CHECK(f->l1d_bytes >= 0 && f->l2_bytes >= 0 && f->l3_bytes >= 0, "negative cache size");
}

static void test_isa_detected(void)
{
    const vn_cpu_features *f = vn_cpu_features_get();
    vn_isa d = vn_isa_detected();
    printf("detected ISA: %s\n", vn_isa_name(d));
    VT_CHECK((unsigned)d < VN_ISA_COUNT, "detected ISA %d out of range", (int)d);
    if (d >= VN_ISA_AVX2)
        VT_CHECK(f->avx && f->avx2 && f->fma && f->f16c && f->os_avx, "AVX2 path without its "
                                                                      "features");
    if (d == VN_ISA_AVX512)
        VT_CHECK(f->avx512f && f->avx512bw && f->avx512dq && f->avx512vl && f->os_avx512,
                 "AVX-512 path without its features");
    bool can_avx2 = f->avx && f->avx2 && f->fma && f->f16c && f->os_avx;
    bool can_avx512 =
        can_avx2 && f->avx512f && f->avx512bw && f->avx512dq && f->avx512vl && f->os_avx512;
    vn_isa want = can_avx512 ? VN_ISA_AVX512 : can_avx2 ? VN_ISA_AVX2 : VN_ISA_SCALAR;
    VT_CHECK(d == want, "detected %s, features allow %s", vn_isa_name(d), vn_isa_name(want));
}

static void test_isa_active(void)
{
    vn_isa a = vn_isa_active(), d = vn_isa_detected();
    const char *env = getenv("VINCI_ISA");
    printf("active ISA: %s (VINCI_ISA=%s)\n", vn_isa_name(a), env ? env : "(unset)");
    VT_CHECK(a <= d, "active %s above detected %s", vn_isa_name(a), vn_isa_name(d));
    VT_CHECK(a == vn_isa_active(), "the active ISA changed");
    int want = d;
    for (int i = 0; env && i < VN_ISA_COUNT; i++)
        if (strcasecmp(env, vn_isa_name((vn_isa)i)) == 0) want = i < (int)d ? i : (int)d;
    VT_CHECK((int)a == want, "VINCI_ISA=%s but active is %s", env ? env : "(unset)",
             vn_isa_name(a));
}

static void *isa_from_thread(void *arg)
{
    *(vn_isa *)arg = vn_isa_active();
    return NULL;
}

static void test_isa_threads(void)
{
    pthread_t t[4];
    vn_isa got[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, isa_from_thread, &got[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        VT_CHECK(got[i] == vn_isa_active(), "thread %d saw %s", i, vn_isa_name(got[i]));
    }
}

static void test_isa_names(void)
{
    VT_CHECK(strcmp(vn_isa_name(VN_ISA_SCALAR), "scalar") == 0, "scalar name");
    VT_CHECK(strcmp(vn_isa_name(VN_ISA_AVX2), "avx2") == 0, "avx2 name");
    VT_CHECK(strcmp(vn_isa_name(VN_ISA_AVX512), "avx512") == 0, "avx512 name");
    VT_CHECK(strcmp(vn_isa_name(VN_ISA_COUNT), "invalid") == 0, "out-of-range name");
    VT_CHECK(strcmp(vn_isa_name((vn_isa)-1), "invalid") == 0, "negative name");
}

static void test_dtypes(void)
{
    /* the enum values are a file format (.vnm): this order may only grow */
    static const size_t sizes[VN_DTYPE_COUNT] = {4, 2, 2, 1, 1, 4, 8, 1, 8, 2, 2, 4, 8};
    static const char *const names[VN_DTYPE_COUNT] = {
        "f32", "f16", "bf16", "i8", "u8", "i32", "i64", "bool", "f64", "i16", "u16", "u32", "u64"};
    VT_CHECK(VN_BOOL == 7 && VN_F64 == 8 && VN_U64 == 12, "stored dtype values unchanged");
    for (int d = 0; d < VN_DTYPE_COUNT; d++) {
        vn_dtype back = VN_DTYPE_COUNT;
        VT_CHECK(vn_dtype_size((vn_dtype)d) == sizes[d], "size of %s", names[d]);
        VT_CHECK(strcmp(vn_dtype_name((vn_dtype)d), names[d]) == 0, "name of dtype %d", d);
        VT_OK(vn_dtype_from_name(vn_dtype_name((vn_dtype)d), &back));
        VT_CHECK(back == (vn_dtype)d, "%s parses back to %d", names[d], (int)back);
        VT_CHECK(vn_dtype_valid((vn_dtype)d), "dtype %d valid", d);
    }
    VT_CHECK(!vn_dtype_valid(VN_DTYPE_COUNT), "VN_DTYPE_COUNT is not a dtype");
    VT_CHECK(vn_dtype_size(VN_DTYPE_COUNT) == 0, "invalid dtype has size 0");
    VT_CHECK(vn_dtype_size((vn_dtype)-1) == 0, "negative dtype has size 0");
    VT_CHECK(strcmp(vn_dtype_name((vn_dtype)99), "invalid") == 0, "invalid dtype name");
}

static void test_dtype_junk(void)
{
    const char *junk[] = {"", "f33", "F32", "float32", "f32 ", "bf", "bool\n"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
        vn_dtype out = VN_I8;
        vn_clear_error();
        vn_status st = vn_dtype_from_name(junk[i], &out);
        VT_CHECK(st == VN_ERR_INVALID_ARG, "\"%s\" -> %s", junk[i], vn_status_name(st));
        VT_CHECK(out == VN_I8, "\"%s\" wrote the output", junk[i]);
        VT_CONTAINS(vn_last_error(), "vn_dtype_from_name");
        VT_CONTAINS(vn_last_error(), "unknown dtype");
    }
    vn_dtype out;
    VT_CHECK(vn_dtype_from_name(NULL, &out) == VN_ERR_INVALID_ARG, "NULL name");
    VT_CONTAINS(vn_last_error(), "name");
    VT_CHECK(vn_dtype_from_name("f32", NULL) == VN_ERR_INVALID_ARG, "NULL out");
    VT_CONTAINS(vn_last_error(), "out");
}

static void test_aligned_alloc(void)
{
    static const size_t aligns[] = {1, 2, 4, 8, 16, 32, 64, 128, 4096, 1 << 21};
    for (size_t i = 0; i < sizeof aligns / sizeof *aligns; i++) {
        for (size_t bytes = 0; bytes < 3000; bytes += 1499) {
            unsigned char *p = vn_aligned_alloc(bytes, aligns[i]);
            VT_CHECK(p != NULL, "alloc %zu aligned %zu: %s", bytes, aligns[i], vn_last_error());
            if (!p) continue;
            VT_CHECK((uintptr_t)p % aligns[i] == 0, "%p not aligned to %zu", (void *)p, aligns[i]);
            memset(p, 0x5a, bytes);
            vn_aligned_free(p);
        }
    }
    vn_aligned_free(NULL);
}

static void test_aligned_alloc_errors(void)
{
    static const size_t bad[] = {0, 3, 24, 48, 100, (size_t)1 << 63 | 1};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        vn_clear_error();
        void *p = vn_aligned_alloc(64, bad[i]);
        VT_CHECK(p == NULL, "alignment %zu accepted", bad[i]);
        vn_aligned_free(p);
        VT_CONTAINS(vn_last_error(), "vn_aligned_alloc");
        VT_CONTAINS(vn_last_error(), "power of two");
    }
    vn_clear_error();
    size_t huge = SIZE_MAX / 2;
    void *p = vn_aligned_alloc(huge, 64);
    VT_CHECK(p == NULL, "allocating %zu bytes succeeded", huge);
    vn_aligned_free(p);
    char size_text[32];
    snprintf(size_text, sizeof size_text, "%zu", huge);
    VT_CONTAINS(vn_last_error(), size_text);
}

static void *error_in_thread(void *arg)
{
    (void)arg;
    int clean = vn_last_error()[0] == '\0';
    vn_error(VN_ERR_IO, "other", "thread error");
    return (void *)(intptr_t)clean;
}

static void test_errors(void)
{
    vn_clear_error();
    VT_CHECK(strcmp(vn_last_error(), "") == 0, "cleared error is \"\"");
    vn_status st = vn_error(VN_ERR_SHAPE, "vn_foo", "rank %d > %d", 9, 8);
    VT_CHECK(st == VN_ERR_SHAPE, "vn_error returns its status");
    VT_CHECK(strcmp(vn_last_error(), "vn_foo: rank 9 > 8") == 0, "message \"%s\"", vn_last_error());
    vn_error(VN_ERR_INTERNAL, NULL, "x");
    VT_CHECK(strcmp(vn_last_error(), "vinci: x") == 0, "NULL where gives \"%s\"", vn_last_error());

    char longer[4000];
    memset(longer, 'y', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    vn_error(VN_ERR_FORMAT, "vn_long", "%s", longer);
    size_t len = strlen(vn_last_error());
    VT_CHECK(len > 100 && len < sizeof longer, "long message truncated to %zu", len);

    /* The message is per thread. */
    vn_error(VN_ERR_SHAPE, "mine", "kept");
    pthread_t t;
    void *clean = NULL;
    pthread_create(&t, NULL, error_in_thread, NULL);
    pthread_join(t, &clean);
    VT_CHECK(clean != NULL, "a new thread starts with an empty error");
    VT_CHECK(strcmp(vn_last_error(), "mine: kept") == 0, "another thread overwrote \"%s\"",
             vn_last_error());

    VT_CHECK(strcmp(vn_status_name(VN_OK), "VN_OK") == 0, "VN_OK name");
    VT_CHECK(strcmp(vn_status_name(VN_ERR_INTERNAL), "VN_ERR_INTERNAL") == 0, "last name");
    for (int s = 0; s < VN_STATUS_COUNT; s++)
        VT_CHECK(strncmp(vn_status_name((vn_status)s), "VN_", 3) == 0, "status %d name", s);
    VT_CHECK(vn_status_name(VN_STATUS_COUNT) != NULL, "out-of-range status name");
    vn_clear_error();
}

int main(void)
{
    VT_RUN(test_features);
    VT_RUN(test_isa_detected);
    VT_RUN(test_isa_active);
    VT_RUN(test_isa_threads);
    VT_RUN(test_isa_names);
    VT_RUN(test_dtypes);
    VT_RUN(test_dtype_junk);
    VT_RUN(test_aligned_alloc);
    VT_RUN(test_aligned_alloc_errors);
    VT_RUN(test_errors);
    return vt_summary();
}
