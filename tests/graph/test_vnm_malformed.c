/*
 * test_vnm_malformed.c — the .vnm loader against corrupt files: truncation
 * at every offset, a flipped byte at every offset (caught by the hashes),
 * and, with the hashes recomputed after the damage (vn_vnm_reseal) so the
 * structural checks are reached, every 32-bit word and every section-table
 * field set to hostile values. Every damaged file must fail cleanly with a
 * message naming a byte offset, or load as a model that still runs; never
 * crash (run under -DVINCI_SANITIZE=address,undefined).
 */
#include <unistd.h>

#include "graph/vnm.h"
#include "onnx_build.h"
#include "vt.h"

static uint8_t *g_file; /* the pristine image */
static size_t g_size;

/* A small model with every section non-empty: Pad (string attribute),
 * ConstantOfShape (tensor attribute), Add, initializers, two outputs. */
static ob small_model(void)
{
    ob g = {0}, pa = {0}, ca = {0}, a = {0}, b = {0}, t = {0}, p = {0}, s = {0};
    const char *i1[] = {"x", "pads", NULL}, *o1[] = {"p", NULL};
    const char *i2[] = {"shape", NULL}, *o2[] = {"c", NULL};
    const char *i3[] = {"p", "c", NULL}, *o3[] = {"y", NULL};
    ob_str(&a, 1, "mode");
    ob_int(&a, 20, 3);
    ob_bytes(&a, 4, "reflect", 7);
    ob_msg(&pa, 5, &a);
    float half = 0.5f;
    int64_t one = 1, four = 4, two = 2;
    ob_str(&b, 1, "value");
    ob_int(&b, 20, 4);
    ob_tensor_raw(&t, NULL, OB_FLOAT, 1, &one, &half, 4);
    ob_msg(&b, 5, &t);
    ob_msg(&ca, 5, &b);
    ob_node(&g, "Pad", "pad", i1, o1, &pa);
    ob_node(&g, "ConstantOfShape", "cos", i2, o2, &ca);
    ob_node(&g, "Add", "add", i3, o3, NULL);
    ob_str(&g, 2, "small");
    int64_t pads[4] = {0, 1, 0, 1}, shape[2] = {2, 6}, xd[2] = {2, 4}, yd[2] = {2, 6};
    ob_tensor_raw(&p, "pads", OB_INT64, 1, &four, pads, sizeof pads);
    ob_msg(&g, 5, &p);
    ob_tensor_raw(&s, "shape", OB_INT64, 1, &two, shape, sizeof shape);
    ob_msg(&g, 5, &s);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, yd, NULL);
    ob_value_info(&g, 12, "x", OB_FLOAT, 2, xd, NULL);
    return ob_model(&g, 17);
}

static void make_file(void)
{
    ob mb = small_model();
    vn_graph *g = NULL;
    vn_model *m = NULL;
    char path[256];
    snprintf(path, sizeof path, "/tmp/vinci_test_vnm_bad_%d.vnm", (int)getpid());
    VT_OK(vn_graph_load_onnx_bytes(mb.p, mb.n, "small.onnx", NULL, &g));
    ob_free(&mb);
    vn_compile_options o = {.opt_level = 0}; /* O0: every node and attribute stays */
    VT_OK(vn_model_compile(g, &o, &m));
    VT_OK(vn_model_save(m, path));
    vn_model_destroy(m);
    vn_graph_destroy(g);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    g_size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    g_file = malloc(g_size);
    VT_CHECK(g_file && fread(g_file, 1, g_size, f) == g_size, "read back %zu bytes", g_size);
    fclose(f);
    remove(path);
}

typedef struct outcome {
    int loaded, rejected, bad_message;
} outcome;

/* Load `n` bytes of `img`; a loaded model must run, a rejection must name a
 * byte offset. */
static vn_status try_load(const uint8_t *img, size_t n, outcome *o)
{
    uint8_t *buf = vn_aligned_alloc(n ? n : 1, 64);
    if (!buf) return VN_ERR_OUT_OF_MEMORY;
    memcpy(buf, img, n);
    vn_model *m = NULL;
    vn_status st = vn_vnm_load_bytes(buf, n, "bad.vnm", NULL, &m);
    if (st == VN_OK) {
        o->loaded++;
        vn_model_ctx *ctx = NULL;
        float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        vn_named_tensor in = {"x", {{VN_F32, 2, {2, 4}}, x}};
        vn_model_stats s;
        vn_model_get_stats(m, &s); /* the arena is checked; keep damaged runs cheap anyway */
        if (s.arena_bytes < (1u << 20) && vn_model_ctx_create(m, &ctx) == VN_OK)
            vn_model_run(m, ctx, &in, 1, NULL, 0);
        vn_model_ctx_destroy(ctx);
        vn_model_destroy(m);
    } else {
        o->rejected++;
        if (!strstr(vn_last_error(), "byte ")) {
            if (o->bad_message++ < 5) printf("  no byte offset: %s\n", vn_last_error());
        }
    }
    vn_aligned_free(buf);
    return st;
}

static void test_pristine_loads(void)
{
    outcome o = {0};
    VT_CHECK(g_file && try_load(g_file, g_size, &o) == VN_OK, "pristine file: %s", vn_last_error());
    printf("  small model file: %zu bytes\n", g_size);
}

static void test_truncated(void)
{
    outcome o = {0};
    for (size_t n = 0; g_file && n < g_size; n++)
        VT_CHECK(try_load(g_file, n, &o) == VN_ERR_FORMAT, "truncated to %zu bytes loads", n);
    VT_CHECK(o.bad_message == 0, "%d messages without a byte offset", o.bad_message);
}

static void test_flipped_bytes(void)
{
    outcome o = {0};
    uint8_t *img = malloc(g_size);
    for (size_t i = 0; img && i < g_size; i++) {
        memcpy(img, g_file, g_size);
        img[i] ^= 0x5a;
        VT_CHECK(try_load(img, g_size, &o) == VN_ERR_FORMAT, "byte %zu flipped loads", i);
    }
    VT_CHECK(o.bad_message == 0, "%d messages without a byte offset", o.bad_message);
    free(img);
}

/* Every aligned 32-bit word set to hostile values, hashes recomputed. */
static void test_resealed_words(void)
{
    outcome o = {0};
    uint8_t *img = malloc(g_size);
    for (size_t i = 0; img && i + 4 <= g_size; i += 4) {
        uint32_t w;
        memcpy(&w, g_file + i, 4);
        const uint32_t vals[] = {0,     0xffffffffu, 0x7fffffffu, 0x80000000u,     w + 1,
                                 w - 1, w ^ 0x40u,   w + 64,      (uint32_t)g_size};
        for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
            if (vals[k] == w) continue;
            memcpy(img, g_file, g_size);
            memcpy(img + i, &vals[k], 4);
            vn_vnm_reseal(img, g_size);
            try_load(img, g_size, &o);
        }
    }
    printf("  resealed word damage: %d rejected, %d still load and run\n", o.rejected, o.loaded);
    VT_CHECK(o.bad_message == 0, "%d messages without a byte offset", o.bad_message);
    free(img);
}

/* Section table fields: misaligned, past the end, a record more or less. */
static void test_section_table(void)
{
    outcome o = {0};
    uint8_t *img = malloc(g_size);
    vnm_header h;
    memcpy(&h, g_file, sizeof h);
    for (uint32_t s = 0; img && s < h.num_sections; s++) {
        size_t at = sizeof h + s * sizeof(vnm_section);
        vnm_section sec;
        memcpy(&sec, g_file + at, sizeof sec);
        /* sections are packed (gaps under 64 bytes), so 64 more bytes
         * always overlap the next section or run past the end */
        struct {
            uint64_t off, size;
            bool must_fail;
        } cases[] = {
            {sec.offset + 1, sec.size, true},
            {sec.offset + 64, sec.size, true},
            {g_size, sec.size + 1, true},
            {sec.offset, g_size, true},
            {sec.offset, UINT64_MAX - 63, true},
            {UINT64_MAX - 63, sec.size, true},
            {sec.offset, sec.size + 64, true},
            {sec.offset, sec.size + 1, false},
            {sec.offset, sec.size ? sec.size - 1 : 0, false},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            vnm_section bad = sec;
            bad.offset = cases[c].off;
            bad.size = cases[c].size;
            memcpy(img, g_file, g_size);
            memcpy(img + at, &bad, sizeof bad);
            vn_vnm_reseal(img, g_size);
            vn_status st = try_load(img, g_size, &o);
            if (cases[c].must_fail)
                VT_CHECK(st != VN_OK, "section %u case %zu loads", (unsigned)sec.type, c);
        }
    }
    VT_CHECK(o.bad_message == 0, "%d messages without a byte offset", o.bad_message);
    free(img);
}

/* The offset of section `type` in the pristine image. */
static uint64_t section(uint32_t type, uint64_t *size)
{
    vnm_header h;
    memcpy(&h, g_file, sizeof h);
    for (uint32_t i = 0; i < h.num_sections; i++) {
        vnm_section sec;
        memcpy(&sec, g_file + sizeof h + i * sizeof sec, sizeof sec);
        if (sec.type == type) return (void)(size && (*size = sec.size)), sec.offset;
    }
    return 0;
}

/* Set the 32-bit field at `at`, reseal, load: must fail naming `want`. */
static void expect_reject(uint64_t at, uint32_t v, const char *want)
{
    outcome o = {0};
    uint8_t *img = malloc(g_size);
    if (!img || at + 4 > g_size) return free(img);
    memcpy(img, g_file, g_size);
    memcpy(img + at, &v, 4);
    vn_vnm_reseal(img, g_size);
    vn_status st = try_load(img, g_size, &o);
    VT_CHECK(st != VN_OK, "field at %llu = %u loads", (unsigned long long)at, (unsigned)v);
    if (st != VN_OK) VT_CONTAINS(vn_last_error(), want);
    free(img);
}

/* Hostile but hash-consistent edits aimed at the run-time dangers: a node
 * writing a read-only constant, an index out of range, a shape that does not
 * infer, a missing operator, io counts past the indices. */
static void test_targeted(void)
{
    uint64_t nodes = section(VNM_SEC_NODES, NULL), values_size = 0;
    uint64_t values = section(VNM_SEC_VALUES, &values_size), idx = section(VNM_SEC_INDICES, NULL);
    uint64_t meta = section(VNM_SEC_META, NULL);
    vnm_node n0;
    memcpy(&n0, g_file + nodes, sizeof n0);
    int32_t konst = -1, out0;
    for (uint64_t v = 0; v < values_size / sizeof(vnm_value); v++) {
        vnm_value r;
        memcpy(&r, g_file + values + v * sizeof r, sizeof r);
        if (r.mem == 2 && konst < 0) konst = (int32_t)v; /* VN_MEM_CONST */
    }
    uint64_t out_at = idx + 4 * ((uint64_t)n0.first_index + n0.num_inputs);
    memcpy(&out0, g_file + out_at, 4);
    VT_CHECK(konst >= 0, "the small model has a constant");
    expect_reject(out_at, (uint32_t)konst, "byte ");
    expect_reject(idx + 4 * (uint64_t)n0.first_index, 9999, "outside");
    expect_reject(values + (uint64_t)out0 * sizeof(vnm_value) + 16, 3, "byte ");
    expect_reject(nodes + 4, n0.name, "not registered");
    expect_reject(meta + 12, 1000, "runs past");
    expect_reject(nodes + 12, 65, "inputs and");
    /* an arena larger than its values need (each context would zero it all) */
    uint64_t plan = section(VNM_SEC_PLAN, NULL), arena;
    memcpy(&arena, g_file + plan, sizeof arena);
    VT_CHECK(arena > 0 && arena % 64 == 0 && arena < (1u << 20), "arena %llu",
             (unsigned long long)arena);
    expect_reject(plan, (uint32_t)arena + 64, "arena of");
    expect_reject(plan + 4, 1, "arena of"); /* 4 GiB more */
}

int main(void)
{
    make_file();
    VT_RUN(test_pristine_loads);
    VT_RUN(test_truncated);
    VT_RUN(test_flipped_bytes);
    VT_RUN(test_resealed_words);
    VT_RUN(test_section_table);
    VT_RUN(test_targeted);
    free(g_file);
    return vt_summary();
}
