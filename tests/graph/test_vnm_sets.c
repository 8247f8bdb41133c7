/*
 * test_vnm_sets.c — offline models for several input-shape sets: the bundled
 * mlp_tiny compiled for batch 1, 4 and 16, saved in one file, loaded, each
 * model picked by its shapes and run byte-identical to the model saved; a
 * shape with no model, an unknown input, a plain .vnm as a set of one,
 * vn_model_load refusing a set file; the writer refusing models that do not
 * belong together; and a corrupt set file (header, table, an image) refused
 * with the byte named, never a crash.
 */
#include <stdlib.h>

#include "onnx_build.h"
#include "vnm_fixture.h"

#define NSETS 3
static const int64_t batches[NSETS] = {1, 4, 16};

typedef struct sets {
    vn_graph *graph;
    vn_model *m[NSETS];
    float *x[NSETS];
} sets;

static vn_model *compile_batch(vn_graph *g, int64_t batch, int level)
{
    vn_input_shape s = {"x", 2, {batch, 64}};
    vn_compile_options o = {.opt_level = level, .shapes = &s, .num_shapes = 1};
    vn_model *m = NULL;
    VT_OK(vn_model_compile(g, &o, &m));
    return m;
}

static bool make_sets(sets *s)
{
    char path[1024];
    memset(s, 0, sizeof *s);
    if (model_path("mlp_tiny.onnx", path, sizeof path)) {
        VT_CHECK(0, "models/mlp_tiny.onnx not found");
        return false;
    }
    VT_OK(vn_graph_load_onnx(path, &s->graph));
    for (int k = 0; s->graph && k < NSETS; k++) {
        s->m[k] = compile_batch(s->graph, batches[k], 3);
        s->x[k] = malloc((size_t)batches[k] * 64 * sizeof(float));
        for (int64_t i = 0; s->x[k] && i < batches[k] * 64; i++)
            s->x[k][i] = (float)((i * 7919 + k * 31) % 101) / 50.0f - 1.0f;
    }
    for (int k = 0; k < NSETS; k++)
        if (!s->m[k] || !s->x[k]) return false;
    return true;
}

static void free_sets(sets *s)
{
    for (int k = 0; k < NSETS; k++) {
        vn_model_destroy(s->m[k]);
        free(s->x[k]);
    }
    vn_graph_destroy(s->graph);
}

static void save_sets(const sets *s, const char *path)
{
    VT_OK(vn_model_set_save((const vn_model *const *)s->m, NSETS, path));
}

static void test_pick_and_run(void)
{
    sets s;
    char path[256];
    tmp_path(path, sizeof path, "sets");
    if (!make_sets(&s)) return free_sets(&s);
    save_sets(&s, path);
    vn_model_set *set = NULL;
    VT_OK(vn_model_set_load(path, NULL, &set));
    VT_CHECK(vn_model_set_count(set) == NSETS, "count %d", (int)vn_model_set_count(set));
    VT_CHECK(!vn_model_set_model(set, NSETS) && !vn_model_set_model(set, -1), "index range");
    for (int k = 0; set && k < NSETS; k++) {
        vn_input_shape shape = {"x", 2, {batches[k], 64}};
        const vn_model *m = NULL;
        VT_OK(vn_model_set_pick(set, &shape, 1, &m));
        VT_CHECK(m == vn_model_set_model(set, k), "batch %lld picked the wrong model",
                 (long long)batches[k]);
        vn_named_tensor in = {"x", {{VN_F32, 2, {batches[k], 64}}, s.x[k]}};
        if (m) check_same(s.m[k], m, &in, 1);
        vn_model_file_info fi;
        VT_OK(vn_model_file_info_get(m, &fi));
        VT_CHECK(fi.load_ms > 0 && fi.weight_bytes > 0, "file info of a set's model");
    }
    vn_model_set_destroy(set);
    remove(path);
    free_sets(&s);
}

static void test_pick_errors(void)
{
    sets s;
    char path[256];
    tmp_path(path, sizeof path, "pick");
    if (!make_sets(&s)) return free_sets(&s);
    save_sets(&s, path);
    vn_model_set *set = NULL;
    VT_OK(vn_model_set_load(path, NULL, &set));
    const vn_model *m = (const vn_model *)1;
    vn_input_shape three = {"x", 2, {3, 64}}, other = {"y", 2, {1, 64}};
    VT_CHECK(vn_model_set_pick(set, &three, 1, &m) == VN_ERR_SHAPE && !m, "no model for batch 3");
    VT_CONTAINS(vn_last_error(), "x[3,64]");
    VT_CONTAINS(vn_last_error(), "f32[16,64]"); /* the sets the file has */
    VT_CHECK(vn_model_set_pick(set, &other, 1, &m) == VN_ERR_INVALID_ARG, "unknown input");
    VT_CONTAINS(vn_last_error(), "'y'");
    VT_OK(vn_model_set_pick(set, NULL, 0, &m)); /* no constraint: the first */
    VT_CHECK(m == vn_model_set_model(set, 0), "no shapes picks model 0");
    vn_model_set_destroy(set);

    vn_model *one = NULL;
    VT_CHECK(vn_model_load(path, NULL, &one) == VN_ERR_FORMAT && !one, "vn_model_load of a set");
    VT_CONTAINS(vn_last_error(), "vn_model_set_load");
    remove(path);

    /* a plain .vnm is a set of one */
    VT_OK(vn_model_save(s.m[1], path));
    VT_OK(vn_model_set_load(path, NULL, &set));
    VT_CHECK(vn_model_set_count(set) == 1, "a plain .vnm: one model");
    vn_model_set_destroy(set);
    remove(path);
    free_sets(&s);
}

/* y = Relu(z): inputs named differently from mlp_tiny's. */
static vn_model *relu_model(vn_graph **g)
{
    ob gb = {0};
    const char *in[] = {"z", NULL}, *out[] = {"y", NULL};
    int64_t d[2] = {1, 64};
    ob_node(&gb, "Relu", "relu", in, out, NULL);
    ob_str(&gb, 2, "relu");
    ob_value_info(&gb, 11, "z", OB_FLOAT, 2, d, NULL);
    ob_value_info(&gb, 12, "y", OB_FLOAT, 2, d, NULL);
    ob mb = ob_model(&gb, 17);
    VT_OK(vn_graph_load_onnx_bytes(mb.p, mb.n, "relu.onnx", NULL, g));
    ob_free(&mb);
    vn_compile_options o = {.opt_level = 1};
    vn_model *m = NULL;
    if (*g) VT_OK(vn_model_compile(*g, &o, &m));
    return m;
}

static void test_writer_refuses(void)
{
    sets s;
    char path[256];
    tmp_path(path, sizeof path, "refuse");
    if (!make_sets(&s)) return free_sets(&s);
    vn_model *o2 = compile_batch(s.graph, 4, 2); /* the batch of s.m[1], at O2 */
    const vn_model *same[2] = {s.m[1], o2};
    VT_CHECK(vn_model_set_save(same, 2, path) == VN_ERR_INVALID_ARG, "two models for batch 4");
    VT_CONTAINS(vn_last_error(), "same input shapes");
    vn_graph *rg = NULL;
    vn_model *relu = relu_model(&rg);
    const vn_model *mixed[2] = {s.m[0], relu};
    VT_CHECK(vn_model_set_save(mixed, 2, path) == VN_ERR_INVALID_ARG, "different inputs");
    VT_CONTAINS(vn_last_error(), "'z'");
    VT_CHECK(vn_model_set_save(mixed, 0, path) == VN_ERR_INVALID_ARG, "no models");
    FILE *f = fopen(path, "rb");
    VT_CHECK(!f, "a refused set left a file behind");
    if (f) fclose(f);
    vn_model_destroy(relu);
    vn_graph_destroy(rg);
    vn_model_destroy(o2);
    free_sets(&s);
}

/* ---- malformed set files ---- */

/* Re-seal the set header hash after a deliberate change, so the checks
 * behind it are reached. */
static void reseal(uint8_t *b)
{
    vnm_set_header h;
    memcpy(&h, b, sizeof h);
    size_t n = sizeof h + (size_t)(h.count <= VNM_SET_MAX_COUNT ? h.count : 0) * 16;
    memset(b + offsetof(vnm_set_header, header_hash), 0, 8);
    uint64_t x = vn_vnm_fnv1a(VNM_FNV_BASIS, b, n);
    memcpy(b + offsetof(vnm_set_header, header_hash), &x, 8);
}

/* The image must be refused with VN_ERR_FORMAT and a message holding `want`. */
static void expect_reject(const uint8_t *img, size_t n, const char *path, const char *want)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(img, 1, n, f) != n) VT_CHECK(0, "cannot write %s", path);
    if (f) fclose(f);
    vn_model_set *set = (vn_model_set *)1;
    vn_status st = vn_model_set_load(path, NULL, &set);
    VT_CHECK(st == VN_ERR_FORMAT && !set, "want VN_ERR_FORMAT (%s), got %s", want,
             vn_status_name(st));
    VT_CONTAINS(vn_last_error(), want);
}

static void test_malformed(void)
{
    sets s;
    char path[256], bad[256];
    tmp_path(path, sizeof path, "good");
    tmp_path(bad, sizeof bad, "bad");
    if (!make_sets(&s)) return free_sets(&s);
    save_sets(&s, path);
    size_t n = 0;
    uint8_t *good = read_all(path, &n), *b = good ? malloc(n) : NULL;
    if (!b) {
        VT_CHECK(0, "cannot read the set file");
        free(good);
        return free_sets(&s);
    }
    vnm_set_entry e1;
    memcpy(&e1, good + sizeof(vnm_set_header) + sizeof e1, sizeof e1);

    memcpy(b, good, n);
    b[sizeof(vnm_set_header) + 8] ^= 1; /* model 0's size, not resealed */
    expect_reject(b, n, bad, "header hash mismatch");
    memcpy(b, good, n);
    b[20] ^= 1; /* the file size */
    expect_reject(b, n, bad, "byte 16: the header says");
    expect_reject(good, n - 100, bad, "the file has"); /* truncated */
    expect_reject(good, 40, bad, "less than the 64-byte header");

    memcpy(b, good, n);
    uint32_t count = 0;
    memcpy(b + 24, &count, 4);
    reseal(b);
    expect_reject(b, n, bad, "0 models");

    memcpy(b, good, n);
    uint64_t past =
        (n + VNM_SET_ALIGN - 1) / VNM_SET_ALIGN * VNM_SET_ALIGN; /* aligned, past the end */
    memcpy(b + sizeof(vnm_set_header) + 16, &past, 8);
    reseal(b);
    expect_reject(b, n, bad, "model 1: ");
    VT_CONTAINS(vn_last_error(), "run past the end");

    memcpy(b, good, n);
    uint64_t huge = UINT64_MAX - 8; /* model 1's size: offset + size wraps */
    memcpy(b + sizeof(vnm_set_header) + 24, &huge, 8);
    reseal(b);
    expect_reject(b, n, bad, "run past the end");
    VT_CONTAINS(vn_last_error(), "vn_model_set_load");

    memcpy(b, good, n);
    uint64_t overlap = 0; /* model 1 over the header */
    memcpy(b + sizeof(vnm_set_header) + 16, &overlap, 8);
    reseal(b);
    expect_reject(b, n, bad, "not page-aligned after byte");

    memcpy(b, good, n);
    b[e1.offset + e1.size / 2] ^= 0x40; /* inside model 1's image: its own hash */
    expect_reject(b, n, bad, "[model 1]");

    memcpy(b, good, n);
    b[e1.offset + 8] = 9; /* model 1's .vnm version */
    expect_reject(b, n, bad, "[model 1]: byte 8");

    free(b);
    free(good);
    remove(path);
    remove(bad);
    free_sets(&s);
}

int main(void)
{
    VT_RUN(test_pick_and_run);
    VT_RUN(test_pick_errors);
    VT_RUN(test_writer_refuses);
    VT_RUN(test_malformed);
    return vt_summary();
}
