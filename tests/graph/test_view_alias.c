/*
 * test_view_alias.c — views and contiguous Concats copy nothing from O1 on
 * (compile_views.c, compile_concat.c, compile_memory.c).
 *
 * Views: chains of views feeding operators, views of model inputs, of
 * constants (one larger than constant folding takes), a view whose result is
 * a model output (stays a copy), and a view whose input an element-wise
 * node could take over in place while the view is still to be read.
 * Concats: built in place when their inputs are consecutive ranges of the
 * output, and not when an input is a model input, another in-place Concat,
 * repeated, misaligned, or the ranges are not contiguous (batch 2 on the
 * channel axis); an element-wise node must not take over an input that the
 * Concat's output still needs.
 * Each model: O0 against a plain C reference, O1..O3 bit-identical to O0,
 * the aliases the O1 plan made, and the same after a .vnm round trip.
 */
#include <math.h>
#include <unistd.h>

#include "graph/compile.h"
#include "onnx_build.h"
#include "vinci/graph.h"
#include "vt.h"

#define MAXOUT 4

typedef struct outs {
    int n;
    size_t bytes[MAXOUT];
    void *data[MAXOUT];
} outs;

static void init_i64(ob *g, const char *name, const int64_t *v, int64_t n)
{
    ob t = {0};
    ob_tensor_raw(&t, name, OB_INT64, 1, &n, v, (size_t)n * 8);
    ob_msg(g, 5, &t);
}

static void node(ob *g, const char *op, const char *a, const char *b, const char *y)
{
    const char *in[] = {a, b, NULL}, *out[] = {y, NULL};
    ob_node(g, op, NULL, in, out, NULL);
}

static void concat(ob *g, const char *a, const char *b, const char *y, int64_t axis)
{
    const char *in[] = {a, b, NULL}, *out[] = {y, NULL};
    ob attrs = {0};
    ob_attr_int(&attrs, "axis", axis);
    ob_node(g, "Concat", NULL, in, out, &attrs);
}

static void flatten(ob *g, const char *x, const char *y, int64_t axis)
{
    const char *in[] = {x, NULL}, *out[] = {y, NULL};
    ob attrs = {0};
    ob_attr_int(&attrs, "axis", axis);
    ob_node(g, "Flatten", NULL, in, out, &attrs);
}

static size_t desc_bytes(const vn_tensor_desc *d)
{
    int64_t n = vn_desc_numel(d);
    return n > 0 ? (size_t)n * vn_dtype_size(d->dtype) : 0;
}

/* Every output of one run in its own buffer (a second run first, with the
 * caller's buffer for output 0, must give the same). */
static outs run(const vn_model *m, const vn_named_tensor *in, int ni)
{
    outs r = {0};
    vn_model_ctx *c = NULL;
    VT_OK(vn_model_ctx_create(m, &c));
    if (!c) return r;
    const char *name0 = NULL;
    vn_tensor_desc d0;
    VT_OK(vn_model_output(m, 0, &name0, &d0));
    void *mine = calloc(1, desc_bytes(&d0) + 1);
    vn_named_tensor o0 = {name0, {d0, mine}};
    VT_OK(vn_model_run(m, c, in, ni, &o0, 1));
    VT_OK(vn_model_run(m, c, in, ni, NULL, 0));
    r.n = vn_model_num_outputs(m);
    for (int i = 0; i < r.n && i < MAXOUT; i++) {
        const char *name;
        vn_tensor t;
        VT_OK(vn_model_output(m, i, &name, NULL));
        VT_OK(vn_model_ctx_output(c, name, &t));
        r.bytes[i] = desc_bytes(&t.desc);
        r.data[i] = malloc(r.bytes[i] + 1);
        memcpy(r.data[i], t.data, r.bytes[i]);
    }
    VT_CHECK(r.n > 0 && !memcmp(mine, r.data[0], r.bytes[0]), "caller's output buffer differs");
    free(mine);
    vn_model_ctx_destroy(c);
    return r;
}

static bool same(const outs *a, const outs *b)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n && i < MAXOUT; i++)
        if (a->bytes[i] != b->bytes[i] || memcmp(a->data[i], b->data[i], a->bytes[i])) return false;
    return true;
}

static void free_outs(outs *o)
{
    for (int i = 0; i < o->n && i < MAXOUT; i++) free(o->data[i]);
}

/* Aliasing views whose output has memory class `mem` (-1: any). */
static int aliases(const vn_model *m, int32_t mem)
{
    int count = 0;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        const vn_cnode *n = &m->nodes[i];
        if (n->alias != VN_ALIAS_VIEW) continue;
        if (mem < 0 || m->values[n->outputs[0]].mem == mem) count++;
        /* an alias has exactly its input's memory */
        VT_CHECK(vn_cg_view_shares(m, i), "node %d: alias with memory of its own", (int)i);
    }
    return count;
}

/* Concats built in place; each one's inputs lie at consecutive offsets of it. */
static int concats(const vn_model *m)
{
    int count = 0;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        if (m->nodes[i].alias != VN_ALIAS_CONCAT) continue;
        count++;
        VT_CHECK(vn_cg_concat_shares(m, i), "node %d: Concat inputs out of place", (int)i);
    }
    return count;
}

/* Save, load, run: the same outputs, aliases and arena. */
static void round_trip(const vn_model *m, const char *tag, const vn_named_tensor *in, int ni,
                       const outs *want, size_t *file_bytes)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/vinci_test_view_%d_%s.vnm", (int)getpid(), tag);
    VT_OK(vn_model_save(m, path));
    vn_model *l = NULL;
    VT_OK(vn_model_load(path, NULL, &l));
    FILE *f = fopen(path, "rb");
    if (f && file_bytes) {
        fseek(f, 0, SEEK_END);
        *file_bytes = (size_t)ftell(f);
    }
    if (f) fclose(f);
    remove(path);
    if (!l) return;
    outs got = run(l, in, ni);
    VT_CHECK(same(&got, want), "%s: the loaded model's outputs differ", tag);
    free_outs(&got);
    VT_CHECK(l->num_nodes == m->num_nodes && l->arena_bytes == m->arena_bytes,
             "%s: %d/%d nodes, arena %zu/%zu", tag, (int)l->num_nodes, (int)m->num_nodes,
             l->arena_bytes, m->arena_bytes);
    for (int32_t i = 0; i < m->num_nodes && i < l->num_nodes; i++)
        VT_CHECK(l->nodes[i].alias == m->nodes[i].alias, "%s: node %d alias %d, loaded %d", tag,
                 (int)i, m->nodes[i].alias, l->nodes[i].alias);
    vn_model_destroy(l);
}

typedef struct expect {
    int arena_aliases, input_aliases; /* at O1 */
    const float *want;                /* output 0 at O0 */
    size_t want_n;
    size_t inplace; /* at least this many in-place items at O1 */
    int concats;    /* Concats built in place at O1 */
} expect;

/* O0 against the reference, O1..O3 bit for bit against O0, aliases at O1,
 * and the .vnm round trip at O1 and O3. */
static void check_model(const char *tag, ob *mb, const vn_named_tensor *in, int ni, expect e,
                        size_t *file_bytes)
{
    vn_graph *g = NULL;
    VT_OK(vn_graph_load_onnx_bytes(mb->p, mb->n, tag, NULL, &g));
    ob_free(mb);
    if (!g) return;
    outs base = {0};
    for (int level = 0; level <= 3; level++) {
        vn_compile_options o = {.opt_level = level};
        vn_model *m = NULL;
        VT_OK(vn_model_compile(g, &o, &m));
        if (!m) continue;
        outs got = run(m, in, ni);
        if (level == 0) {
            base = got;
            bool ok = base.n > 0 && base.bytes[0] == e.want_n * sizeof(float);
            for (size_t i = 0; ok && i < e.want_n; i++)
                ok = ((float *)base.data[0])[i] == e.want[i];
            VT_CHECK(ok, "%s: O0 differs from the reference", tag);
            VT_CHECK(aliases(m, -1) == 0 && concats(m) == 0, "%s: O0 aliases", tag);
        } else {
            VT_CHECK(same(&got, &base), "%s: O%d differs from O0", tag, level);
            free_outs(&got);
        }
        if (level == 1) {
            int arena = aliases(m, VN_MEM_ARENA), input = aliases(m, VN_MEM_INPUT);
            VT_CHECK(arena == e.arena_aliases && input == e.input_aliases,
                     "%s: %d arena and %d input aliases, want %d and %d", tag, arena, input,
                     e.arena_aliases, e.input_aliases);
            VT_CHECK(m->stats.inplace_count >= e.inplace, "%s: %zu in place, want %zu", tag,
                     m->stats.inplace_count, e.inplace);
            VT_CHECK(concats(m) == e.concats, "%s: %d Concats in place, want %d", tag, concats(m),
                     e.concats);
        }
        char t[64];
        snprintf(t, sizeof t, "%s%d", tag, level);
        if (level == 1 || level == 3) round_trip(m, t, in, ni, &base, level == 1 ? file_bytes : 0);
        vn_model_destroy(m);
    }
    free_outs(&base);
    vn_graph_destroy(g);
}

static void fill(float *x, int n, int seed)
{
    for (int i = 0; i < n; i++) x[i] = (float)((i * 7 + seed * 13) % 17) - 8.0f;
}

static float relu(float v)
{
    return v > 0 ? v : 0;
}

/* y = Flatten(Squeeze(Unsqueeze(Reshape(Relu(x), [6,4]), 0), 0), 1) + w */
static void test_chain(void)
{
    ob g = {0};
    node(&g, "Relu", "x", NULL, "a");
    node(&g, "Reshape", "a", "s64", "b");
    node(&g, "Unsqueeze", "b", "ax0", "c");
    node(&g, "Squeeze", "c", "ax0", "d");
    flatten(&g, "d", "e", 1);
    node(&g, "Add", "e", "w", "y");
    ob_str(&g, 2, "chain");
    int64_t s64[2] = {6, 4}, ax0[1] = {0}, xd[3] = {2, 3, 4}, yd[2] = {6, 4}, wd[1] = {4};
    float w[4] = {0.5f, -1, 2, -3}, x[24], want[24];
    init_i64(&g, "s64", s64, 2);
    init_i64(&g, "ax0", ax0, 1);
    ob t = {0};
    ob_tensor_raw(&t, "w", OB_FLOAT, 1, wd, w, sizeof w);
    ob_msg(&g, 5, &t);
    ob_value_info(&g, 11, "x", OB_FLOAT, 3, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, yd, NULL);
    ob mb = ob_model(&g, 17);
    fill(x, 24, 1);
    for (int i = 0; i < 24; i++) want[i] = relu(x[i]) + w[i % 4];
    vn_named_tensor in = {"x", {{VN_F32, 3, {2, 3, 4}}, x}};
    check_model("chain", &mb, &in, 1, (expect){4, 0, want, 24, 0, 0}, NULL);
}

/* y = Neg(Flatten(Reshape(x, [3,4]), 0)); z = Unsqueeze(x, 0), a model
 * output (its view copies into the caller's buffer). */
static void test_input_views(void)
{
    ob g = {0};
    node(&g, "Reshape", "x", "s34", "b");
    flatten(&g, "b", "c", 0);
    node(&g, "Neg", "c", NULL, "y");
    node(&g, "Unsqueeze", "x", "ax0", "z");
    ob_str(&g, 2, "inputs");
    int64_t s34[2] = {3, 4}, ax0[1] = {0}, xd[2] = {2, 6}, yd[2] = {1, 12}, zd[3] = {1, 2, 6};
    init_i64(&g, "s34", s34, 2);
    init_i64(&g, "ax0", ax0, 1);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, yd, NULL);
    ob_value_info(&g, 12, "z", OB_FLOAT, 3, zd, NULL);
    ob mb = ob_model(&g, 17);
    float x[12], want[12];
    fill(x, 12, 2);
    for (int i = 0; i < 12; i++) want[i] = -x[i];
    vn_named_tensor in = {"x", {{VN_F32, 2, {2, 6}}, x}};
    check_model("inputs", &mb, &in, 1, (expect){0, 2, want, 12, 0, 0}, NULL);
}

/* y = Reshape(Relu(x), [3,4]) is a model output (a copy); z = Neg(Relu(x)). */
static void test_output_view(void)
{
    ob g = {0};
    node(&g, "Relu", "x", NULL, "a");
    node(&g, "Reshape", "a", "s34", "y");
    node(&g, "Neg", "a", NULL, "z");
    ob_str(&g, 2, "output");
    int64_t s34[2] = {3, 4}, xd[2] = {2, 6}, yd[2] = {3, 4};
    init_i64(&g, "s34", s34, 2);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, yd, NULL);
    ob_value_info(&g, 12, "z", OB_FLOAT, 2, xd, NULL);
    ob mb = ob_model(&g, 17);
    float x[12], want[12];
    fill(x, 12, 3);
    for (int i = 0; i < 12; i++) want[i] = relu(x[i]);
    vn_named_tensor in = {"x", {{VN_F32, 2, {2, 6}}, x}};
    check_model("output", &mb, &in, 1, (expect){0, 0, want, 12, 0, 0}, NULL);
}

/* a = Neg(x); b = Reshape(a); e = Relu(a) reads a last, but b is read after
 * it: e must not take a over in place. y = b + Reshape(e) = -x + relu(-x). */
static void test_in_place_hazard(void)
{
    ob g = {0};
    node(&g, "Neg", "x", NULL, "a");
    node(&g, "Reshape", "a", "s34", "b");
    node(&g, "Relu", "a", NULL, "e");
    node(&g, "Reshape", "e", "s34", "e2");
    node(&g, "Add", "b", "e2", "y");
    ob_str(&g, 2, "hazard");
    int64_t s34[2] = {3, 4}, xd[2] = {2, 6}, yd[2] = {3, 4};
    init_i64(&g, "s34", s34, 2);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, yd, NULL);
    ob mb = ob_model(&g, 17);
    float x[12], want[12];
    fill(x, 12, 4);
    for (int i = 0; i < 12; i++) want[i] = -x[i] + relu(-x[i]);
    vn_named_tensor in = {"x", {{VN_F32, 2, {2, 6}}, x}};
    check_model("hazard", &mb, &in, 1, (expect){2, 0, want, 12, 0, 0}, NULL);
}

/* y = Relu(Reshape(Neg(x), [3,4])) + 1: Relu is the last reader of Neg's
 * output and its view, so it may and does take their memory over. */
static void test_in_place_after_view(void)
{
    ob g = {0};
    node(&g, "Neg", "x", NULL, "a");
    node(&g, "Reshape", "a", "s34", "b");
    node(&g, "Relu", "b", NULL, "c");
    node(&g, "Add", "c", "one", "y");
    ob_str(&g, 2, "inplace");
    int64_t s34[2] = {3, 4}, xd[2] = {2, 6}, yd[2] = {3, 4}, od[1] = {1};
    float one = 1;
    init_i64(&g, "s34", s34, 2);
    ob t = {0};
    ob_tensor_raw(&t, "one", OB_FLOAT, 1, od, &one, 4);
    ob_msg(&g, 5, &t);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, yd, NULL);
    ob mb = ob_model(&g, 17);
    float x[12], want[12];
    fill(x, 12, 5);
    for (int i = 0; i < 12; i++) want[i] = relu(-x[i]) + 1;
    vn_named_tensor in = {"x", {{VN_F32, 2, {2, 6}}, x}};
    check_model("inplace", &mb, &in, 1, (expect){1, 0, want, 12, 1, 0}, NULL);
}

/* A constant just over constant folding's limit: y = x + Reshape(W, [1,N]),
 * z = Neg(W). The Reshape becomes a constant sharing W's bytes, which the
 * .vnm file stores once. */
#define BIG ((int64_t)(16 << 20) / 4 + 16)
static void test_const_view(void)
{
    ob g = {0};
    node(&g, "Reshape", "W", "s1n", "wr");
    node(&g, "Add", "x", "wr", "y");
    node(&g, "Neg", "W", NULL, "z");
    ob_str(&g, 2, "const");
    int64_t s1n[2] = {1, BIG}, xd[2] = {1, BIG}, wd[1] = {BIG};
    float *w = malloc(BIG * sizeof *w), *x = malloc(BIG * sizeof *x);
    float *want = malloc(BIG * sizeof *want);
    fill(w, (int)BIG, 6);
    fill(x, (int)BIG, 7);
    for (int64_t i = 0; i < BIG; i++) want[i] = x[i] + w[i];
    init_i64(&g, "s1n", s1n, 2);
    ob t = {0};
    ob_tensor_raw(&t, "W", OB_FLOAT, 1, wd, w, BIG * sizeof *w);
    ob_msg(&g, 5, &t);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "z", OB_FLOAT, 1, wd, NULL);
    ob mb = ob_model(&g, 17);
    vn_named_tensor in = {"x", {{VN_F32, 2, {1, BIG}}, x}};
    size_t file = 0;
    check_model("const", &mb, &in, 1, (expect){0, 0, want, (size_t)BIG, 0, 0}, &file);
    VT_CHECK(file > (size_t)BIG * 4 && file < (size_t)BIG * 4 + (1 << 20),
             "the .vnm file is %zu bytes for one %zu-byte constant", file, (size_t)BIG * 4);
    free(w);
    free(x);
    free(want);
}

static void value_info_4d(ob *g, int field, const char *name, int64_t n, int64_t c)
{
    int64_t d[4] = {n, c, 2, 2};
    ob_value_info(g, field, name, OB_FLOAT, 4, d, NULL);
}

static void one_const(ob *g)
{
    int64_t od[1] = {1};
    float one = 1;
    ob t = {0};
    ob_tensor_raw(&t, "one", OB_FLOAT, 1, od, &one, 4);
    ob_msg(g, 5, &t);
}

/* y = Concat(Relu(x), Neg(x)) + 1 on channels at batch 1: built in place. */
static void test_concat(void)
{
    ob g = {0};
    node(&g, "Relu", "x", NULL, "a");
    node(&g, "Neg", "x", NULL, "b");
    concat(&g, "a", "b", "c", 1);
    node(&g, "Add", "c", "one", "y");
    ob_str(&g, 2, "concat");
    one_const(&g);
    value_info_4d(&g, 11, "x", 1, 16);
    value_info_4d(&g, 12, "y", 1, 32);
    ob mb = ob_model(&g, 17);
    float x[64], want[128];
    fill(x, 64, 8);
    for (int i = 0; i < 64; i++) want[i] = relu(x[i]) + 1, want[64 + i] = -x[i] + 1;
    vn_named_tensor in = {"x", {{VN_F32, 4, {1, 16, 2, 2}}, x}};
    check_model("concat", &mb, &in, 1, (expect){0, 0, want, 128, 0, 1}, NULL);
}

/* c = Concat(a, b) in place; t = Abs(a) reads a last, but c is read after:
 * t must not take a's range over. Concat(t, t) repeats a value: a copy.
 * y = c + Concat(t, t). */
static void test_concat_hazard(void)
{
    ob g = {0};
    node(&g, "Relu", "x", NULL, "a");
    node(&g, "Neg", "x", NULL, "b");
    concat(&g, "a", "b", "c", 1);
    node(&g, "Abs", "a", NULL, "t");
    concat(&g, "t", "t", "tt", 1);
    node(&g, "Add", "c", "tt", "y");
    ob_str(&g, 2, "concathazard");
    value_info_4d(&g, 11, "x", 1, 16);
    value_info_4d(&g, 12, "y", 1, 32);
    ob mb = ob_model(&g, 17);
    float x[64], want[128];
    fill(x, 64, 9);
    for (int i = 0; i < 64; i++) want[i] = 2 * relu(x[i]), want[64 + i] = -x[i] + relu(x[i]);
    vn_named_tensor in = {"x", {{VN_F32, 4, {1, 16, 2, 2}}, x}};
    check_model("concathazard", &mb, &in, 1, (expect){0, 0, want, 128, 0, 1}, NULL);
}

/* At batch 2 a channel Concat interleaves its inputs (a copy); a batch
 * Concat of the same values does not (in place). y = c1 + Reshape(c0). */
static void test_concat_batch(void)
{
    ob g = {0};
    node(&g, "Relu", "x", NULL, "a");
    node(&g, "Neg", "x", NULL, "b");
    concat(&g, "a", "b", "c1", 1);
    concat(&g, "a", "b", "c0", 0);
    node(&g, "Reshape", "c0", "shape", "r0");
    node(&g, "Add", "c1", "r0", "y");
    ob_str(&g, 2, "concatbatch");
    int64_t shape[4] = {2, 32, 2, 2};
    init_i64(&g, "shape", shape, 4);
    value_info_4d(&g, 11, "x", 2, 16);
    value_info_4d(&g, 12, "y", 2, 32);
    ob mb = ob_model(&g, 17);
    float x[128], want[256], c0[256];
    fill(x, 128, 10);
    for (int i = 0; i < 128; i++) c0[i] = relu(x[i]), c0[128 + i] = -x[i];
    for (int n = 0; n < 2; n++)
        for (int i = 0; i < 64; i++) {
            want[n * 128 + i] = relu(x[n * 64 + i]) + c0[n * 128 + i];
            want[n * 128 + 64 + i] = -x[n * 64 + i] + c0[n * 128 + 64 + i];
        }
    vn_named_tensor in = {"x", {{VN_F32, 4, {2, 16, 2, 2}}, x}};
    check_model("concatbatch", &mb, &in, 1, (expect){1, 0, want, 256, 0, 1}, NULL);
}

/* o = Concat(Concat(a, b), e): the inner one in place, the outer a copy (its
 * first input is an alias); w = Concat(x, e) reads a model input: a copy.
 * y = o + 1, z = w + 1. */
static void test_concat_nested(void)
{
    ob g = {0};
    node(&g, "Relu", "x", NULL, "a");
    node(&g, "Neg", "x", NULL, "b");
    node(&g, "Abs", "x", NULL, "e");
    concat(&g, "a", "b", "i", 1);
    concat(&g, "i", "e", "o", 1);
    concat(&g, "x", "e", "w", 1);
    node(&g, "Add", "o", "one", "y");
    node(&g, "Add", "w", "one", "z");
    ob_str(&g, 2, "concatnested");
    one_const(&g);
    value_info_4d(&g, 11, "x", 1, 16);
    value_info_4d(&g, 12, "y", 1, 48);
    value_info_4d(&g, 12, "z", 1, 32);
    ob mb = ob_model(&g, 17);
    float x[64], want[192];
    fill(x, 64, 11);
    for (int i = 0; i < 64; i++) {
        want[i] = relu(x[i]) + 1;
        want[64 + i] = -x[i] + 1;
        want[128 + i] = fabsf(x[i]) + 1;
    }
    vn_named_tensor in = {"x", {{VN_F32, 4, {1, 16, 2, 2}}, x}};
    check_model("concatnested", &mb, &in, 1, (expect){0, 0, want, 192, 0, 1}, NULL);
}

/* Ranges must start 64-byte aligned: Concat(Relu(x) [1,16], Neg(u) [1,3])
 * is built in place (only the last range is short), Concat(Abs(u), Neg(x))
 * is a copy. y1 = c1 + 1, y2 = c2 + 1. */
static void test_concat_alignment(void)
{
    ob g = {0};
    node(&g, "Relu", "x", NULL, "a");
    node(&g, "Neg", "u", NULL, "b");
    node(&g, "Abs", "u", NULL, "e");
    node(&g, "Neg", "x", NULL, "f");
    concat(&g, "a", "b", "c1", 1);
    concat(&g, "e", "f", "c2", 1);
    node(&g, "Add", "c1", "one", "y1");
    node(&g, "Add", "c2", "one", "y2");
    ob_str(&g, 2, "concatalign");
    one_const(&g);
    int64_t xd[2] = {1, 16}, ud[2] = {1, 3}, yd[2] = {1, 19};
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 11, "u", OB_FLOAT, 2, ud, NULL);
    ob_value_info(&g, 12, "y1", OB_FLOAT, 2, yd, NULL);
    ob_value_info(&g, 12, "y2", OB_FLOAT, 2, yd, NULL);
    ob mb = ob_model(&g, 17);
    float x[16], u[3], want[19];
    fill(x, 16, 12);
    fill(u, 3, 13);
    for (int i = 0; i < 16; i++) want[i] = relu(x[i]) + 1;
    for (int i = 0; i < 3; i++) want[16 + i] = -u[i] + 1;
    vn_named_tensor in[2] = {{"x", {{VN_F32, 2, {1, 16}}, x}}, {"u", {{VN_F32, 2, {1, 3}}, u}}};
    check_model("concatalign", &mb, in, 2, (expect){0, 0, want, 19, 0, 1}, NULL);
}

/* At O1 the constant's view is no node any more. */
static void test_const_view_node_gone(void)
{
    ob g = {0};
    node(&g, "Reshape", "W", "s1n", "wr");
    node(&g, "Add", "x", "wr", "y");
    ob_str(&g, 2, "constnode");
    int64_t s1n[2] = {1, BIG}, xd[2] = {1, BIG}, wd[1] = {BIG};
    float *w = calloc(BIG, sizeof *w);
    init_i64(&g, "s1n", s1n, 2);
    ob t = {0};
    ob_tensor_raw(&t, "W", OB_FLOAT, 1, wd, w, BIG * sizeof *w);
    ob_msg(&g, 5, &t);
    free(w);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, xd, NULL);
    ob mb = ob_model(&g, 17);
    vn_graph *gr = NULL;
    VT_OK(vn_graph_load_onnx_bytes(mb.p, mb.n, "constnode", NULL, &gr));
    ob_free(&mb);
    for (int level = 0; gr && level <= 1; level++) {
        vn_compile_options o = {.opt_level = level};
        vn_model *m = NULL;
        VT_OK(vn_model_compile(gr, &o, &m));
        if (m)
            VT_CHECK(vn_model_num_nodes(m) == 2 - level, "O%d: %d nodes", level,
                     (int)vn_model_num_nodes(m));
        vn_model_destroy(m);
    }
    vn_graph_destroy(gr);
}

int main(void)
{
    VT_RUN(test_chain);
    VT_RUN(test_input_views);
    VT_RUN(test_output_view);
    VT_RUN(test_in_place_hazard);
    VT_RUN(test_in_place_after_view);
    VT_RUN(test_const_view);
    VT_RUN(test_const_view_node_gone);
    VT_RUN(test_concat);
    VT_RUN(test_concat_hazard);
    VT_RUN(test_concat_batch);
    VT_RUN(test_concat_nested);
    VT_RUN(test_concat_alignment);
    return vt_summary();
}
