/*
 * test_graph_oom.c — memory exhausted at every allocation of the graph
 * engine's life cycle: parse an ONNX model, compile it at O3, create a
 * context, run, save a .vnm file of two shape sets, load it, pick and run.
 *
 * The test binary interposes malloc / calloc / realloc / posix_memalign /
 * aligned_alloc / free (an executable's definitions come first in symbol
 * lookup, so the shared libvinci's calls land here too) and makes exactly the Nth allocation of the
 * test's thread fail (the workers' allocations interleave at random: counting them would not
 * repeat), for N = 1, 2, ...
 * until a whole pass succeeds. Every pass must end in VN_OK or an error with a
 * message (never a crash), and once everything is destroyed the number of
 * live allocations must be back where it started: a failure loses nothing.
 * Under a sanitizer (which owns malloc) the test reports itself skipped.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_fuse_util.h"
#include "vinci/memory.h"
#include "vnm_fixture.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OOM_SKIP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define OOM_SKIP 1
#endif
#endif

#ifndef OOM_SKIP
/* ---- the interposed allocator ---- */
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);

static atomic_long countdown; /* the allocation that fails: when it reaches 0 (<= 0: none) */
static atomic_long live;      /* allocations not yet freed */
static atomic_bool failed_one;

/* Where an injected failure happens: a breakpoint for debugging. */
__attribute__((noinline)) void oom_injected(void)
{
    atomic_store(&failed_one, true);
}

static _Thread_local bool armed_thread; /* only the test's thread: a deterministic count */

static bool fail_now(void)
{
    if (!armed_thread || atomic_load(&countdown) <= 0) return false;
    if (atomic_fetch_sub(&countdown, 1) != 1) return false;
    oom_injected();
    return true;
}

static void *counted(void *p)
{
    if (p) atomic_fetch_add(&live, 1);
    return p;
}

void *malloc(size_t n)
{
    return fail_now() ? NULL : counted(__libc_malloc(n));
}

void *calloc(size_t n, size_t s)
{
    return fail_now() ? NULL : counted(__libc_calloc(n, s));
}

void *realloc(void *p, size_t n)
{
    if (!p) return malloc(n);
    if (n == 0) {
        free(p);
        return NULL;
    }
    return fail_now() ? NULL : __libc_realloc(p, n); /* the block stays one allocation */
}

int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = fail_now() ? NULL : counted(__libc_memalign(align, n));
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    return fail_now() ? NULL : counted(__libc_memalign(align, n));
}

void free(void *p)
{
    if (!p) return;
    atomic_fetch_sub(&live, 1);
    __libc_free(p);
}

/* ---- the life cycle under test ---- */

/* A model and its input "x" for two shape sets (batch b[0] and b[1]: dim 0). */
typedef struct cycle {
    const char *name;
    void *onnx;
    size_t onnx_size;
    int32_t rank;
    int64_t dims[4]; /* dims[0] is replaced by the batch */
    int64_t batch[2];
    float *x[2];
    char vnm[256];
} cycle;

static vn_input_shape shape_of(const cycle *c, int k)
{
    vn_input_shape s = {"x", c->rank, {0}};
    memcpy(s.dims, c->dims, sizeof c->dims);
    s.dims[0] = c->batch[k];
    return s;
}

static vn_status compile(const cycle *c, vn_graph *g, int k, vn_model **m)
{
    vn_input_shape s = shape_of(c, k);
    vn_compile_options o = {.opt_level = 3, .shapes = &s, .num_shapes = 1};
    return vn_model_compile(g, &o, m);
}

static vn_status run(const cycle *c, const vn_model *m, int k)
{
    vn_model_ctx *ctx = NULL;
    vn_input_shape s = shape_of(c, k);
    vn_named_tensor in = {"x", {{VN_F32, s.rank, {0}}, c->x[k]}};
    memcpy(in.tensor.desc.dims, s.dims, sizeof s.dims);
    vn_status st = vn_model_ctx_create(m, &ctx);
    if (st == VN_OK) st = vn_model_run(m, ctx, &in, 1, NULL, 0);
    vn_model_ctx_destroy(ctx);
    return st;
}

/* Load the saved set, pick the second shape set and run it. */
static vn_status load_and_run(const cycle *c)
{
    vn_model_set *set = NULL;
    const vn_model *m = NULL;
    vn_input_shape s = shape_of(c, 1);
    vn_status st = vn_model_set_load(c->vnm, NULL, &set);
    if (st == VN_OK) st = vn_model_set_pick(set, &s, 1, &m);
    if (st == VN_OK) st = run(c, m, 1);
    vn_model_set_destroy(set);
    return st;
}

/* The whole life cycle once; every object is destroyed before returning. */
static vn_status one_pass(const cycle *c)
{
    vn_graph *g = NULL;
    vn_model *m[2] = {NULL, NULL};
    vn_status st = vn_graph_load_onnx_bytes(c->onnx, c->onnx_size, c->name, NULL, &g);
    if (st == VN_OK) st = compile(c, g, 0, &m[0]);
    if (st == VN_OK) st = compile(c, g, 1, &m[1]);
    if (st == VN_OK) st = run(c, m[0], 0);
    if (st == VN_OK) st = vn_model_set_save((const vn_model *const *)m, 2, c->vnm);
    if (st == VN_OK) st = load_and_run(c);
    vn_model_destroy(m[0]);
    vn_model_destroy(m[1]);
    vn_graph_destroy(g);
    return st;
}

/* One pass with allocation n failing; the allocations it left live. */
static long fail_pass(const cycle *c, vn_device *dev, long n, vn_status *st)
{
    vn_mem_release_cache(dev); /* blocks cached for a later run are not lost */
    long before = atomic_load(&live);
    atomic_store(&failed_one, false);
    atomic_store(&countdown, n);
    vn_clear_error(); /* so an error without a message of its own is seen */
    *st = one_pass(c);
    atomic_store(&countdown, 0);
    vn_mem_release_cache(dev);
    return atomic_load(&live) - before;
}

static float *input(int64_t n, uint64_t seed)
{
    vt_rng r = {seed};
    float *x = malloc((size_t)n * sizeof *x);
    if (x) vt_fill(&r, x, (size_t)n, -1.0, 1.0);
    return x;
}

/* Every allocation of the test thread in c's life cycle, failing in turn. */
static void sweep(cycle *c)
{
    int64_t per_batch = 1;
    for (int32_t d = 1; d < c->rank; d++) per_batch *= c->dims[d];
    c->x[0] = input(c->batch[0] * per_batch, 1);
    c->x[1] = input(c->batch[1] * per_batch, 2);
    tmp_path(c->vnm, sizeof c->vnm, "oom");
    vn_device *dev = NULL;
    VT_OK(vn_device_default(&dev)); /* the pool and its threads live across passes */
    armed_thread = true;
    for (int warm = 0; warm < 4; warm++) /* lazily built tables, each worker's scratch */
        VT_OK(one_pass(c));
    long passes = 0, errors = 0;
    const char *first = getenv("OOM_FIRST"); /* to debug allocation N: OOM_FIRST=N */
    for (long n = first ? atol(first) : 1; n < 200000; n++, passes++) {
        vn_status st;
        /* A pass may leave memory behind once and for good (a worker's
         * scratch growing to a plan it had not run before), and `live`
         * counts the pool workers' allocations too, which a loaded machine
         * can delay past a pass's end (seen twice in 8 ctest runs beside a CI
         * job): a loss that repeats every time the same allocation fails
         * again, three times, is a leak. */
        long lost = fail_pass(c, dev, n, &st);
        for (int again = 0; lost && again < 2; again++) lost = fail_pass(c, dev, n, &st);
        VT_CHECK(!lost, "%s: allocation %ld failed (%s: %s): %ld allocations lost", c->name, n,
                 vn_status_name(st), vn_last_error(), lost);
        if (!atomic_load(&failed_one)) {
            VT_CHECK(st == VN_OK, "a pass with no failure returned %s", vn_status_name(st));
            break;
        }
        if (st != VN_OK) errors++;
        VT_CHECK(st == VN_OK || vn_last_error()[0], "allocation %ld: %s with no message", n,
                 vn_status_name(st));
    }
    armed_thread = false;
    printf("  %s: %ld passes, one allocation failing in each: %ld reported an error, the rest "
           "recovered\n",
           c->name, passes, errors);
    VT_CHECK(first || (passes > 100 && errors > 0), "the sweep did not run (%ld passes)", passes);
    remove(c->vnm);
    free(c->x[0]);
    free(c->x[1]);
}

static void test_mlp(void)
{
    char path[1024];
    static cycle c = {.name = "mlp_tiny.onnx", .rank = 2, .dims = {0, 64}, .batch = {1, 4}};
    c.onnx = model_path(c.name, path, sizeof path) ? NULL : read_all(path, &c.onnx_size);
    VT_CHECK(c.onnx, "cannot read models/mlp_tiny.onnx");
    if (c.onnx) sweep(&c);
    free(c.onnx);
}

/* y = Conv(x) of c -> k channels (groups of c / group), kernel x kernel, "same" pads. */
static void conv_g(ob *g, vt_rng *r, const char *x, int64_t c, int64_t k, int64_t kernel,
                   int64_t group, const char *y)
{
    char w[32], b[32];
    snprintf(w, sizeof w, "%s_w", y);
    snprintf(b, sizeof b, "%s_b", y);
    int64_t wd[4] = {k, c / group, kernel, kernel}, bd[1] = {k}, pads[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++) pads[i] = kernel / 2;
    fz_rand_init(g, r, w, 4, wd, -0.2, 0.2);
    fz_rand_init(g, r, b, 1, bd, -0.1, 0.1);
    ob attrs = {0};
    fz_attr_ints(&attrs, "pads", 4, pads);
    if (group > 1) ob_attr_int(&attrs, "group", group);
    fz_node(g, "Conv", y, x, w, b, y, &attrs);
}

static void conv(ob *g, vt_rng *r, const char *x, int64_t c, int64_t k, int64_t kernel,
                 const char *y)
{
    conv_g(g, r, x, c, k, kernel, 1, y);
}

/* A small residual conv net: 3x3 convs (Winograd at 28x28 and direct),
 * BatchNormalization, Relu, a residual Add, MaxPool, a 1x1 conv and the
 * depthwise 3x3 after it (one fused node at O3: fuse_pointwise_depthwise),
 * a 1x1 conv with the GlobalAveragePool after it (one node: fuse_conv_pool's
 * pool_global), Flatten, Gemm and Softmax, on NC1HWC0 at O3. */
static ob convnet(void)
{
    ob g = {0};
    vt_rng r = {7};
    int64_t xd[4] = {-1, 16, 28, 28}, cd[1] = {32}, wd[2] = {10, 48}, bd[1] = {10};
    fz_input(&g, "x", 4, xd);
    conv(&g, &r, "x", 16, 32, 3, "c1");
    const char *bn[] = {"bn_s", "bn_b", "bn_m", "bn_v"};
    for (int i = 0; i < 4; i++) fz_rand_init(&g, &r, bn[i], 1, cd, i == 3 ? 0.5 : -0.5, 1.0);
    const char *bn_in[] = {"c1", "bn_s", "bn_b", "bn_m", "bn_v", NULL}, *bn_out[] = {"n1", NULL};
    ob_node(&g, "BatchNormalization", "bn", bn_in, bn_out, NULL);
    fz_node(&g, "Relu", "r1", "n1", NULL, NULL, "a1", NULL);
    conv(&g, &r, "a1", 32, 32, 3, "c2");
    fz_node(&g, "Add", "res", "c2", "a1", NULL, "s2", NULL);
    fz_node(&g, "Relu", "r2", "s2", NULL, NULL, "a2", NULL);
    ob pool = {0};
    int64_t k2[2] = {2, 2};
    fz_attr_ints(&pool, "kernel_shape", 2, k2);
    fz_attr_ints(&pool, "strides", 2, k2);
    fz_node(&g, "MaxPool", "pool", "a2", NULL, NULL, "p", &pool);
    conv(&g, &r, "p", 32, 64, 1, "c3");
    fz_node(&g, "Relu", "r3", "c3", NULL, NULL, "a3", NULL);
    conv_g(&g, &r, "a3", 64, 64, 3, 64, "c4");
    conv(&g, &r, "c4", 64, 48, 1, "c5");
    fz_node(&g, "GlobalAveragePool", "gap", "c5", NULL, NULL, "g", NULL);
    fz_node(&g, "Flatten", "flat", "g", NULL, NULL, "f", NULL);
    fz_rand_init(&g, &r, "fc_w", 2, wd, -0.2, 0.2);
    fz_rand_init(&g, &r, "fc_b", 1, bd, -0.1, 0.1);
    ob gemm = {0};
    ob_attr_int(&gemm, "transB", 1);
    fz_node(&g, "Gemm", "fc", "f", "fc_w", "fc_b", "l", &gemm);
    fz_node(&g, "Softmax", "sm", "l", NULL, NULL, "y", NULL);
    fz_output(&g, "y");
    ob_str(&g, 2, "convnet");
    return ob_model(&g, 17);
}

static void test_convnet(void)
{
    static cycle c = {.name = "convnet.onnx", .rank = 4, .dims = {0, 16, 28, 28}, .batch = {1, 2}};
    ob m = convnet();
    c.onnx = m.p;
    c.onnx_size = m.n;
    sweep(&c);
    ob_free(&m);
}

int main(void)
{
    VT_RUN(test_mlp);
    VT_RUN(test_convnet);
    return vt_summary();
}
#else
int main(void)
{
    printf("test_graph_oom: skipped (a sanitizer owns malloc)\n");
    return 0;
}
#endif
