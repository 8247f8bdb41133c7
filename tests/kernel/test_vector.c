/*
 * test_vector.c — the first-n form of the element-wise instructions through
 * real launches (GM -> scratch -> GM, tiled with the _pad copies): every op x
 * every dtype it exists for x lengths 1 .. 1000003, against double references,
 * copied through scratch and computed in place (vn_gm_window);
 * Duplicate; counters; the argument checks of checked mode.
 */
#include "kernel/vec_kernel.h"
#include "kernel/vec_ref.h"

static const int64_t lengths[] = {1, 7, 31, 33, 4095};
static const vn_dtype dtypes[] = {VN_F32, VN_F16, VN_BF16, VN_I32};

static int32_t wrap(int64_t v)
{
    return (int32_t)(uint32_t)(uint64_t)v;
}

/* The i32 semantics: wrapping two's complement. */
static int32_t ref_i32(vn_vop op, int32_t a, int32_t b)
{
    switch (op) {
    case VN_VOP_ABS:
        return a < 0 ? wrap(-(int64_t)a) : a;
    case VN_VOP_NEG:
        return wrap(-(int64_t)a);
    case VN_VOP_RELU:
        return a < 0 ? 0 : a;
    case VN_VOP_ADD:
    case VN_VOP_ADDS:
        return wrap((int64_t)a + b);
    case VN_VOP_SUB:
        return wrap((int64_t)a - b);
    case VN_VOP_MUL:
    case VN_VOP_MULS:
        return wrap((int64_t)a * b);
    case VN_VOP_MAX:
    case VN_VOP_MAXS:
        return a > b ? a : b;
    default:
        return a < b ? a : b;
    }
}

static void fill(vt_rng *rng, const vt_op *o, vn_dtype d, void *a, void *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (d == VN_I32) {
            int64_t r = (int64_t)(vt_next(rng) % 2001) - 1000;
            int32_t x = i == 0 ? INT32_MIN : (i == 1 ? INT32_MAX : (int32_t)r);
            ((int32_t *)a)[i] = x;
            ((int32_t *)b)[i] =
                i == 2 ? INT32_MAX : (int32_t)((int64_t)(vt_next(rng) % 2001) - 1000);
            continue;
        }
        double x = i < VT_NSPECIAL ? vt_specials[i] : vt_uniform(rng, o->lo, o->hi);
        double y = i < VT_NSPECIAL ? vt_specials[(i * 7 + 3) % VT_NSPECIAL]
                                   : vt_uniform(rng, o->blo, o->bhi);
        vt_put(d, a, i, x);
        vt_put(d, b, i, y);
    }
}

/* The scalar operand as the instruction sees it: stored in the dtype first. */
static double scalar_in(vn_dtype d, double s)
{
    if (d == VN_I32) return nearbyint(s);
    uint8_t cell[4];
    vt_put(d, cell, 0, s);
    return vt_get(d, cell, 0);
}

/* Number of elements off by more than the op's bound; prints the first. */
static int64_t count_bad(const vt_op *o, vn_dtype d, const void *a, const void *b, const void *out,
                         int64_t n)
{
    bool scalar = vn_vop_kind_of(o->op) == VN_VOP_SCALAR;
    double s = scalar_in(d, o->s);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = vt_get(d, a, i), y = scalar ? s : vt_get(d, b, i);
        bool ok;
        if (d == VN_I32) {
            ok = ((const int32_t *)out)[i] == ref_i32(o->op, (int32_t)x, (int32_t)y);
        } else if (d == VN_F32) {
            float want = (float)o->ref(x, y), got = ((const float *)out)[i];
            int64_t u = vt_ulps(got, want);
            if (fabsf(want) < 1.17549435e-38f * (1.0 + fabs(x)))
                u -= 2 * (int64_t)ceil(fmin(fabs(x), 1e6));
            ok = u <= o->ulps;
        } else {
            uint16_t got = ((const uint16_t *)out)[i];
            uint16_t want = d == VN_F16 ? vn_f32_to_f16((float)o->ref(x, y))
                                        : vn_f32_to_bf16((float)o->ref(x, y));
            ok = vt_ulps16(got, want, d == VN_F16 ? vt_f16_nan : vt_bf16_nan) <= 1;
        }
        if (!ok && bad++ == 0)
            fprintf(stderr, "    %s %s [%lld]: a=%.9g b=%.9g got %.9g want %.9g\n",
                    vn_vop_name(o->op), vn_dtype_name(d), (long long)i, x, y, vt_get(d, out, i),
                    o->ref(x, y));
    }
    return bad;
}

/* In window modes the three arrays start one element past an allocation, so
 * windows (and non-temporal stores) start unaligned. */
static void run_case_in(const vt_op *o, vn_dtype d, int64_t n, int checked, vt_window w,
                        vt_rng *rng)
{
    size_t size = vn_dtype_size(d), skew = w == VT_COPY ? 0 : size;
    uint8_t *ab = malloc(size * (size_t)(n + 1)), *bb = malloc(size * (size_t)(n + 1)),
            *ob = malloc(size * (size_t)(n + 1));
    void *a = ab + skew, *b = bb + skew, *out = ob + skew;
    fill(rng, o, d, a, b, n);
    vt_tiled t = {o->op, d, a, b, out, o->s, n, w};
    VT_OK(vt_tiled_run(&t, checked));
    int64_t bad = count_bad(o, d, a, b, out, n);
    VT_CHECK(bad == 0, "%s %s n=%lld checked=%d window %d: %lld wrong", vn_vop_name(o->op),
             vn_dtype_name(d), (long long)n, checked, (int)w, (long long)bad);
    free(ab), free(bb), free(ob);
}

static void run_case(const vt_op *o, vn_dtype d, int64_t n, int checked, vt_rng *rng)
{
    run_case_in(o, d, n, checked, VT_COPY, rng);
}

static void test_every_op_dtype_length(void)
{
    vt_rng rng = {0xabc};
    for (int k = 0; k < VN_VOP_COUNT; k++)
        for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++) {
            if (!vn_vop_supports(vt_ops[k].op, dtypes[di])) continue;
            for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++)
                for (int checked = 0; checked < 2; checked++)
                    run_case(&vt_ops[k], dtypes[di], lengths[li], checked, &rng);
        }
}

static void test_long_lengths(void)
{
    vt_rng rng = {0xdef};
    static const vn_vop ops[] = {VN_VOP_ADD, VN_VOP_EXP, VN_VOP_GELU, VN_VOP_MAXS};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++)
            if (vn_vop_supports(ops[k], dtypes[di]))
                run_case(&vt_ops[ops[k]], dtypes[di], 1000003, 0, &rng);
}

/* Every op and dtype computed in place in global memory (vn_gm_window), the
 * output cached and streamed, from unaligned starts. */
static void test_windows(void)
{
    static const int64_t lens[] = {1, 33, 4095, 20003};
    vt_rng rng = {0x123};
    for (int k = 0; k < VN_VOP_COUNT; k++)
        for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++) {
            if (!vn_vop_supports(vt_ops[k].op, dtypes[di])) continue;
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                for (int checked = 0; checked < 2; checked++) {
                    run_case_in(&vt_ops[k], dtypes[di], lens[li], checked, VT_WINDOW, &rng);
                    run_case_in(&vt_ops[k], dtypes[di], lens[li], checked, VT_WINDOW_STREAM, &rng);
                }
        }
}

/* ---- programs (vn_vprogram) -------------------------------------------------------- */

static const vn_vinstr prog_relu_add[] = {{VN_VOP_ADD, 0, 1, 0}, {VN_VOP_RELU, 2, -1, 0}};
/* r0 read three times, a scalar op, a unary of an intermediate, r1 late */
static const vn_vinstr prog_chain[] = {{VN_VOP_MULS, 0, -1, 0.5},
                                       {VN_VOP_ADD, 2, 0, 0},
                                       {VN_VOP_TANH, 3, -1, 0},
                                       {VN_VOP_MUL, 4, 1, 0},
                                       {VN_VOP_MAX, 5, 0, 0}};

typedef struct prog_case {
    const vn_vinstr *ins;
    int32_t num;
    float *x, *y, *out;
    int64_t n;
    vt_window mode; /* VT_COPY: operands in UB */
} prog_case;

static void program_kernel(vn_core *c, const void *p)
{
    const prog_case *k = p;
    vn_gm gx = vn_gm_make(k->x, VN_F32, k->n), gy = vn_gm_make(k->y, VN_F32, k->n);
    vn_gm go = vn_gm_with_hint(vn_gm_make(k->out, VN_F32, k->n),
                               k->mode == VT_WINDOW_STREAM ? VN_CACHE_STREAM : VN_CACHE_NORMAL);
    if (k->mode != VT_COPY) {
        vn_local in[2] = {vn_gm_window(c, gx, 0, k->n, VN_WINDOW_READ),
                          vn_gm_window(c, gy, 0, k->n, VN_WINDOW_READ)};
        vn_vprogram(c, vn_gm_window(c, go, 0, k->n, VN_WINDOW_WRITE), in, 2, k->ins, k->num, k->n);
        return;
    }
    vn_copy_pad_params cp = {1, (uint32_t)(k->n * 4), 0, 0};
    vn_local in[2] = {vn_buf_new(c, VN_VECIN, k->n, VN_F32), vn_buf_new(c, VN_VECIN, k->n, VN_F32)};
    vn_local o = vn_buf_new(c, VN_VECOUT, k->n, VN_F32);
    vn_copy_in_pad(c, in[0], gx, 0, cp, (vn_pad){0});
    vn_copy_in_pad(c, in[1], gy, 0, cp, (vn_pad){0});
    vn_pipe_barrier(c);
    vn_vprogram(c, o, in, 2, k->ins, k->num, k->n);
    vn_copy_out_pad(c, go, 0, o, cp);
}

/* The program in double, element e. */
static double program_ref(const prog_case *k, int64_t e)
{
    double r[2 + VN_VPROGRAM_MAX_INSTRS] = {k->x[e], k->y[e]};
    for (int32_t j = 0; j < k->num; j++) {
        const vn_vinstr *in = &k->ins[j];
        bool scalar = vn_vop_kind_of(in->op) == VN_VOP_SCALAR;
        r[2 + j] =
            vt_ops[in->op].ref(r[in->src0], scalar ? in->scalar : r[in->src1 < 0 ? 0 : in->src1]);
    }
    return r[1 + k->num];
}

/* Both programs on UB locals and on windows (cached and streamed, output over
 * input x too), odd lengths, release and checked, against the double
 * interpretation; its errors. */
static void test_programs(void)
{
    static const int64_t lens[] = {1, 37, 4095, 100003};
    vt_rng rng = {0x777};
    for (int pg = 0; pg < 2; pg++)
        for (size_t li = 0; li < 4; li++)
            for (int mode = 0; mode < 3; mode++)
                for (int v = 0; v < 3; v++) { /* 0, 1: release / checked; 2: out over x */
                    int64_t n = lens[li];
                    if (mode == VT_COPY && n > 4095) continue; /* UB holds 3 x 4095 floats */
                    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4),
                          *out = v == 2 ? x : malloc((size_t)n * 4);
                    for (int64_t e = 0; e < n; e++)
                        x[e] = (float)vt_uniform(&rng, -3, 3),
                        y[e] = (float)vt_uniform(&rng, -3, 3);
                    prog_case k = {pg ? prog_chain : prog_relu_add, pg ? 5 : 2, x, y, out, n, mode};
                    prog_case ref = k;
                    float *x0 = malloc((size_t)n * 4);
                    memcpy(x0, x, (size_t)n * 4);
                    ref.x = x0;
                    vn_launch_desc d = {program_kernel, "program", 1, &k, v == 1, 0};
                    VT_OK(vn_launch(vt_dev(), &d, NULL));
                    int64_t bad = 0;
                    for (int64_t e = 0; e < n; e++) {
                        double want = program_ref(&ref, e);
                        if (!(fabs(out[e] - want) <= 1e-5 * (1 + fabs(want))) && bad++ == 0)
                            fprintf(stderr, "    program %d n %lld mode %d: [%lld] %g want %g\n",
                                    pg, (long long)n, mode, (long long)e, out[e], want);
                    }
                    VT_CHECK(bad == 0, "program %d n=%lld mode %d variant %d: %lld wrong", pg,
                             (long long)n, mode, v, (long long)bad);
                    if (out != x) free(out);
                    free(x), free(y), free(x0);
                }
}

/* Sixteen inputs (the fused engine's most), the first never read and left
 * zeroed, summed by fifteen instructions in checked mode. */
static void wide_program_kernel(vn_core *c, const void *p)
{
    float *const *x = p;
    vn_local in[16] = {{0}};
    vn_vinstr sum[15];
    for (int32_t i = 1; i < 16; i++)
        in[i] = vn_gm_window(c, vn_gm_make(x[i], VN_F32, 1000), 0, 1000, VN_WINDOW_READ);
    sum[0] = (vn_vinstr){VN_VOP_ADD, 1, 2, 0};
    for (int16_t k = 1; k < 14; k++)
        sum[k] = (vn_vinstr){VN_VOP_ADD, (int16_t)(15 + k), (int16_t)(k + 2), 0};
    sum[14] = (vn_vinstr){VN_VOP_MULS, 29, -1, 0.5};
    vn_vprogram(c, vn_gm_window(c, vn_gm_make(x[0], VN_F32, 1000), 0, 1000, VN_WINDOW_WRITE), in,
                16, sum, 15, 1000);
}

static void test_wide_program(void)
{
    float *x[16];
    for (int i = 0; i < 16; i++) {
        x[i] = malloc(1000 * sizeof(float));
        for (int e = 0; e < 1000; e++) x[i][e] = (float)(i * 1000 + e) / 4096.0f;
    }
    vn_launch_desc d = {wide_program_kernel, "wide_program", 1, x, 1, 0};
    VT_OK(vn_launch(vt_dev(), &d, NULL));
    int64_t bad = 0;
    for (int e = 0; e < 1000; e++) {
        double want = 0;
        for (int i = 1; i < 16; i++) want += (double)(i * 1000 + e) / 4096.0;
        bad += !(fabs(x[0][e] - 0.5 * want) <= 1e-5 * want);
    }
    VT_CHECK(bad == 0, "sum of 15 inputs: %lld wrong", (long long)bad);
    for (int i = 0; i < 16; i++) free(x[i]);
}

static void test_supports_table(void)
{
    VT_CHECK(vn_vop_kind_of(VN_VOP_SILU) == VN_VOP_UNARY, "silu unary");
    VT_CHECK(vn_vop_kind_of(VN_VOP_MIN) == VN_VOP_BINARY, "min binary");
    VT_CHECK(vn_vop_kind_of(VN_VOP_LEAKY_RELU) == VN_VOP_SCALAR, "leaky relu scalar");
    VT_CHECK(strcmp(vn_vop_name(VN_VOP_LEAKY_RELU), "LeakyRelu") == 0, "name");
    VT_CHECK(strcmp(vn_vop_name(VN_VOP_ADD), "Add") == 0, "name");
    VT_CHECK(!vn_vop_supports(VN_VOP_EXP, VN_I32) && vn_vop_supports(VN_VOP_ADD, VN_I32),
             "i32 subset");
    VT_CHECK(!vn_vop_supports(VN_VOP_ADD, VN_I8) && !vn_vop_supports(VN_VOP_COUNT, VN_F32),
             "others");
}

/* ---- duplicate and counters ---------------------------------------------------------- */

typedef struct dup_ctx {
    double value;
    int64_t n;
} dup_ctx;

static void dup_body(vn_core *c, vn_local *l, const void *p)
{
    const dup_ctx *d = p;
    vn_duplicate(c, l[0], d->value, d->n);
}

static void test_duplicate(void)
{
    static const vn_dtype ds[] = {VN_F32, VN_F16, VN_BF16, VN_I32, VN_I8, VN_U8};
    for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++) {
        enum { CAP = 160 };
        uint8_t buf[CAP * 4];
        memset(buf, 0x5a, sizeof buf);
        dup_ctx ctx = {-2.5, 133};
        vt_stage s = {1, {{buf, CAP, ds[di]}}, dup_body, &ctx};
        vn_kernel_counters k;
        VT_OK(vt_stage_run(&s, 1, &k));
        double want = ds[di] == VN_U8 ? 0 : (ds[di] == VN_I32 || ds[di] == VN_I8 ? -2 : -2.5);
        int bad = 0;
        for (int i = 0; i < 133; i++) bad += vt_get(ds[di], buf, i) != want;
        size_t size = vn_dtype_size(ds[di]);
        VT_CHECK(bad == 0, "%s: %d elements not %g", vn_dtype_name(ds[di]), bad, want);
        VT_CHECK(buf[133 * size] == 0x5a, "%s: element 133 untouched", vn_dtype_name(ds[di]));
        VT_CHECK(k.vector_elem_ops == 133, "counter %lld", (long long)k.vector_elem_ops);
    }
}

/* ---- checked-mode argument checks ------------------------------------------------------- */

static int bad_line;

/* Runs a misused call and records its line in bad_line: the call's VN_HERE
 * and __LINE__ here expand within one macro invocation, so they agree. */
#define MISUSE(...)                                                                                \
    do {                                                                                           \
        bad_line = __LINE__;                                                                       \
        __VA_ARGS__;                                                                               \
    } while (0)

static void mismatch_body(vn_core *c, vn_local *l, const void *p)
{
    MISUSE(vn_add(c, l[0], l[1], l[2], 64));
}

static void unwritten_body(vn_core *c, vn_local *l, const void *p)
{
    vn_local fresh = vn_buf_new(c, VN_VECCALC, 64, VN_F32);
    MISUSE(vn_exp(c, l[0], fresh, 64));
}

static void unsupported_body(vn_core *c, vn_local *l, const void *p)
{
    MISUSE(vn_vunary(c, VN_VOP_EXP, l[2], l[2], 16));
}

static void wrong_kind_body(vn_core *c, vn_local *l, const void *p)
{
    MISUSE(vn_vbinary(c, VN_VOP_EXP, l[0], l[1], l[1], 16));
}

/* Misused windows, each failing at the line bad_line names: past its
 * tensor's end, written though made for reading, given to a queue, to a copy
 * or to the cube, made over scratch, and a negative count (every mode). */
enum {
    WIN_PAST_END,
    WIN_READ_ONLY,
    WIN_ENQUEUED,
    WIN_COPIED,
    WIN_CUBE,
    WIN_OVER_SCRATCH,
    WIN_NEGATIVE,
    PROG_BAD_SRC,
    PROG_OVERLAP,
    PROG_F16
};

typedef struct window_case {
    int what;
    float *x;
} window_case;

static void window_misuse_kernel(vn_core *c, const void *p)
{
    const window_case *k = p;
    vn_gm g = vn_gm_make(k->x, VN_F32, 64);
    vn_local w = vn_gm_window(c, g, 8, 56, VN_WINDOW_WRITE); /* up to the last element: fine */
    vn_adds(c, w, w, 1.0, 56);
    vn_local r = vn_gm_window(c, g, 0, 64, VN_WINDOW_READ);
    vn_local buf = vn_buf_new(c, VN_VECCALC, 64, VN_F32);
    vn_local over = vn_gm_window(c, vn_gm_make(buf.data, VN_F32, 64), 0, 8, VN_WINDOW_READ);
    vn_queue *q = vn_queue_new(c, VN_VECOUT, 1, 64, VN_F32);
    switch (k->what) {
    case WIN_PAST_END:
        MISUSE((void)vn_gm_window(c, g, 9, 56, VN_WINDOW_READ));
        break;
    case WIN_READ_ONLY:
        MISUSE(vn_adds(c, r, r, 1.0, 64));
        break;
    case WIN_ENQUEUED:
        MISUSE(vn_enque(c, q, w));
        break;
    case WIN_COPIED:
        MISUSE(vn_copy_in(c, w, g, 0, 8));
        break;
    case WIN_CUBE:
        MISUSE(vn_cube_mmad(c, w, r, r, 1, 1, 1, false));
        break;
    case WIN_OVER_SCRATCH:
        MISUSE(vn_adds(c, buf, over, 1.0, 8));
        break;
    case WIN_NEGATIVE:
        MISUSE((void)vn_gm_window(c, g, 0, -1, VN_WINDOW_READ));
        break;
    case PROG_BAD_SRC: {
        const vn_vinstr bad[] = {{VN_VOP_ADD, 0, 1, 0}, {VN_VOP_RELU, 3, -1, 0}};
        vn_local two[2] = {r, r};
        MISUSE(vn_vprogram(c, w, two, 2, bad, 2, 8));
        break;
    }
    case PROG_OVERLAP: {
        const vn_vinstr relu[] = {{VN_VOP_RELU, 0, -1, 0}};
        MISUSE(vn_vprogram(c, w, &r, 1, relu, 1, 16));
        break;
    }
    default: {
        vn_local h = vn_buf_new(c, VN_VECCALC, 64, VN_F16);
        MISUSE(vn_vprogram(c, h, &r, 1, prog_relu_add + 1, 1, 8));
        break;
    }
    }
}

static void test_window_errors(void)
{
    static const struct {
        int what, checked;
        const char *call, *text;
    } cases[] = {
        {WIN_PAST_END, 1, "vn_gm_window", "out of bounds"},
        {WIN_READ_ONLY, 1, "vn_vscalar", "made with VN_WINDOW_READ"},
        {WIN_ENQUEUED, 1, "vn_enque", "window onto global memory"},
        {WIN_COPIED, 1, "vn_copy_in", "cannot be a scratch operand"},
        {WIN_CUBE, 1, "vn_cube_mmad", "cannot be a scratch operand"},
        {WIN_OVER_SCRATCH, 1, "vn_vscalar", "points into this core's scratch"},
        {WIN_NEGATIVE, 0, "vn_gm_window", "a window holds 0 to 2 GiB"},
        {PROG_BAD_SRC, 0, "vn_vprogram", "instruction 1 (op"},
        {PROG_OVERLAP, 1, "vn_vprogram", "input 0 partly overlaps dst"},
        {PROG_F16, 0, "vn_vprogram", "dst is f16"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        float x[64] = {0};
        window_case wc = {cases[k].what, x};
        vn_launch_desc d = {window_misuse_kernel, "window_misuse", 1, &wc, cases[k].checked, 0};
        vn_status st = vn_launch(vt_dev(), &d, NULL);
        printf("  expected error: %s\n", vn_last_error());
        VT_FAILS_AT(st, cases[k].call, "test_vector.c", bad_line);
        VT_CONTAINS(vn_last_error(), cases[k].text);
        VT_CHECK(x[63] == 1.0f && x[7] == 0.0f,
                 "case %zu: the valid window's add: x[63] %g x[7] %g", k, x[63], x[7]);
    }
}

static void test_checked_errors(void)
{
    float f0[64] = {0}, f1[64] = {0};
    uint16_t h[64] = {0};
    int32_t i32[64] = {0};
    struct {
        vt_body_fn body;
        const char *call;
        int checked;
        vn_dtype third;
    } cases[] = {
        {mismatch_body, "vn_vbinary", 1, VN_F16},
        {unwritten_body, "vn_vunary", 1, VN_F16},
        {unsupported_body, "vn_vunary", 1, VN_I32},
        {unsupported_body, "vn_vunary", 0, VN_I32}, /* fails in release too */
        {wrong_kind_body, "vn_vbinary", 0, VN_I32},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        void *third = cases[k].third == VN_F16 ? (void *)h : (void *)i32;
        vt_stage s = {3,
                      {{f0, 64, VN_F32}, {f1, 64, VN_F32}, {third, 64, cases[k].third}},
                      cases[k].body,
                      NULL};
        vn_status st = vt_stage_run(&s, cases[k].checked, NULL);
        printf("  expected error: %s\n", vn_last_error());
        VT_FAILS_AT(st, cases[k].call, "test_vector.c", bad_line);
    }
}

int main(void)
{
    VT_RUN(test_supports_table);
    VT_RUN(test_every_op_dtype_length);
    VT_RUN(test_long_lengths);
    VT_RUN(test_windows);
    VT_RUN(test_window_errors);
    VT_RUN(test_programs);
    VT_RUN(test_wide_program);
    VT_RUN(test_duplicate);
    VT_RUN(test_checked_errors);
    return vt_summary();
}
