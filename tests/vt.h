/*
 * vt.h — the tiny test harness every vinci test uses.
 *
 *   static void test_something(void) { VT_CHECK(x == 1, "x is %d", x); }
 *   int main(void) { VT_RUN(test_something); return vt_summary(); }
 *
 * Each VT_CHECK counts as one assertion; a test function passes when none of
 * its assertions failed. vt_summary() prints "N passed, N failed" (tests, not
 * assertions) and returns the process exit code. A test run that executed no
 * assertion at all fails: no test can pass vacuously.
 */
#ifndef VINCI_TESTS_VT_H
#define VINCI_TESTS_VT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int vt_tests_passed, vt_tests_failed;
static long vt_checks_run, vt_checks_failed_in_test;
static const char *vt_current = "";

static inline void vt_report(int ok, const char *file, int line, const char *expr)
{
    vt_checks_run++;
    if (!ok) {
        vt_checks_failed_in_test++;
        if (vt_checks_failed_in_test <= 10)
            fprintf(stderr, "  FAIL %s (%s:%d): %s\n", vt_current, file, line, expr);
    }
}

/* VT_CHECK(cond, fmt, ...) — on failure prints the condition and the message. */
#define VT_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        int vt_ok_ = !!(cond);                                                                     \
        vt_report(vt_ok_, __FILE__, __LINE__, #cond);                                              \
        if (!vt_ok_ && vt_checks_failed_in_test <= 10) {                                           \
            fprintf(stderr, "       ");                                                            \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

/* Asserts a vinci call returned VN_OK, printing vn_last_error() otherwise. */
#define VT_OK(call)                                                                                \
    do {                                                                                           \
        vn_status vt_st_ = (call);                                                                 \
        VT_CHECK(vt_st_ == VN_OK, "%s -> %s: %s", #call, vn_status_name(vt_st_), vn_last_error()); \
    } while (0)

/* Asserts a string contains a substring. */
#define VT_CONTAINS(haystack, needle)                                                              \
    VT_CHECK(strstr((haystack), (needle)) != NULL, "\"%s\" does not contain \"%s\"", (haystack),   \
             (needle))

static inline void vt_run(const char *name, void (*fn)(void))
{
    long before = vt_checks_run;
    vt_current = name;
    vt_checks_failed_in_test = 0;
    fn();
    if (vt_checks_run == before) {
        fprintf(stderr, "  FAIL %s: ran no assertion\n", name);
        vt_checks_failed_in_test = 1;
    }
    if (vt_checks_failed_in_test) {
        vt_tests_failed++;
        fprintf(stderr, "FAILED %s (%ld failed assertions)\n", name, vt_checks_failed_in_test);
    } else {
        vt_tests_passed++;
        printf("ok     %s\n", name);
    }
}
#define VT_RUN(fn) vt_run(#fn, fn)

static inline int vt_summary(void)
{
    printf("%d passed, %d failed\n", vt_tests_passed, vt_tests_failed);
    fflush(stdout);
    return vt_tests_failed == 0 && vt_tests_passed > 0 ? 0 : 1;
}

/* Deterministic random numbers (xorshift64*), so failures reproduce. */
typedef struct vt_rng {
    uint64_t s;
} vt_rng;
static inline uint64_t vt_next(vt_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ULL;
}
/* Uniform in [lo, hi). */
static inline double vt_uniform(vt_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * (double)(vt_next(r) >> 11) * (1.0 / 9007199254740992.0);
}
static inline void vt_fill(vt_rng *r, float *x, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) x[i] = (float)vt_uniform(r, lo, hi);
}

#endif /* VINCI_TESTS_VT_H */
