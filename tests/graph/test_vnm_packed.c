/*
 * test_vnm_packed.c — pre-packed weights in .vnm offline models (vinci/ops.h
 * "pre-packed constants", src/graph/vnm_blobs.c):
 *   - compile -> save -> load -> run is bit-identical to the model compiled
 *     from ONNX (MatMul, Gemm, Conv direct / depthwise / 1x1-as-GEMM; O0 and
 *     O2, where they fuse into FusedMatMul / FusedConv), and a loaded model
 *     re-saves to a file that loads to the same results;
 *   - raw weights read only by packing operators are not stored (WEIGHTS
 *     shrinks by their size), weights also read raw are kept;
 *   - the packed (constant weights) and unpacked (weights as run-time inputs)
 *     paths give identical outputs;
 *   - damaged BLOBS records and value flags (hash-consistent, so the checks
 *     behind the hashes are reached) are rejected with a clear message, or
 *     load as a model that still runs; a flipped PACKED byte or a truncated
 *     file is refused; a version-1 file is refused with "recompile";
 *   - a compiled model gives back the constants it owns that only packing
 *     operators read (BatchNorm-folded Conv weights) and still runs and saves.
 */
#include <math.h>
#include <unistd.h>

#include "graph/compile.h"
#include "graph/vnm.h"
#include "onnx_build.h"
#include "vinci/graph.h"
#include "vt.h"

enum { WA = 0, WB, WBIAS, WC, WCB, WD, WE, NW }; /* the weights */
static const struct {
    const char *name;
    int rank;
    int64_t dims[4];
} wdef[NW] = {
    {"wa", 2, {32, 48}},       /* MatMul B (also read raw by a Relu) */
    {"wb", 2, {40, 48}},       /* Gemm B, transB */
    {"wbias", 1, {40}},        /* Gemm C (read raw by the epilogue) */
    {"wc", 4, {32, 16, 3, 3}}, /* Conv direct */
    {"wcb", 1, {32}},          /* its bias */
    {"wd", 4, {32, 1, 3, 3}},  /* Conv depthwise, group 32 */
    {"we", 4, {8, 32, 1, 1}},  /* Conv 1x1: GEMM path, weights used raw */
};
static float *g_w[NW];
static size_t g_wbytes[NW];

static void make_weights(void)
{
    uint32_t s = 12345u;
    for (int i = 0; i < NW; i++) {
        int64_t n = 1;
        for (int d = 0; d < wdef[i].rank; d++) n *= wdef[i].dims[d];
        g_wbytes[i] = (size_t)n * 4;
        g_w[i] = malloc(g_wbytes[i]);
        for (int64_t k = 0; k < n; k++) {
            s = s * 1664525u + 1013904223u;
            g_w[i][k] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 0.5f;
        }
    }
}

static void attr_ints(ob *attrs, const char *name, const int64_t *v, int n)
{
    ob a = {0};
    ob_str(&a, 1, name);
    ob_int(&a, 20, 7);
    for (int i = 0; i < n; i++) ob_int(&a, 8, v[i]);
    ob_msg(attrs, 5, &a);
}

/* x [4,32] -> MatMul wa -> Gemm wb (transB) + wbias -> Relu -> y1; Relu(wa) -> y2;
 * z [1,16,8,8] -> Conv wc + wcb (pad 1) -> Relu -> Conv wd (group 32, pad 1)
 * -> Conv we (1x1) -> y3. Weights are initializers, or graph inputs when
 * `as_inputs` (so no plan packs them). */
static ob packed_model(bool as_inputs)
{
    ob g = {0}, ga = {0}, c1 = {0}, c2 = {0}, none = {0};
    const char *i1[] = {"x", "wa", NULL}, *o1[] = {"h1", NULL};
    const char *i2[] = {"h1", "wb", "wbias", NULL}, *o2[] = {"h2", NULL};
    const char *i3[] = {"h2", NULL}, *o3[] = {"y1", NULL};
    const char *i4[] = {"wa", NULL}, *o4[] = {"y2", NULL};
    const char *i5[] = {"z", "wc", "wcb", NULL}, *o5[] = {"c1", NULL};
    const char *i6[] = {"c1", NULL}, *o6[] = {"r1", NULL};
    const char *i7[] = {"r1", "wd", NULL}, *o7[] = {"c2", NULL};
    const char *i8[] = {"c2", "we", NULL}, *o8[] = {"y3", NULL};
    int64_t pads[4] = {1, 1, 1, 1};
    ob_attr_int(&ga, "transB", 1);
    attr_ints(&c1, "pads", pads, 4);
    attr_ints(&c2, "pads", pads, 4);
    ob_attr_int(&c2, "group", 32);
    ob_node(&g, "MatMul", "mm", i1, o1, &none);
    ob_node(&g, "Gemm", "gemm", i2, o2, &ga);
    ob_node(&g, "Relu", "relu1", i3, o3, NULL);
    ob_node(&g, "Relu", "relu_w", i4, o4, NULL);
    ob_node(&g, "Conv", "conv_direct", i5, o5, &c1);
    ob_node(&g, "Relu", "relu2", i6, o6, NULL);
    ob_node(&g, "Conv", "conv_dw", i7, o7, &c2);
    ob_node(&g, "Conv", "conv_1x1", i8, o8, NULL);
    ob_str(&g, 2, "packed");
    for (int i = 0; i < NW; i++) {
        if (as_inputs) {
            ob_value_info(&g, 11, wdef[i].name, OB_FLOAT, wdef[i].rank, wdef[i].dims, NULL);
            continue;
        }
        ob t = {0};
        ob_tensor_raw(&t, wdef[i].name, OB_FLOAT, wdef[i].rank, wdef[i].dims, g_w[i], g_wbytes[i]);
        ob_msg(&g, 5, &t);
    }
    int64_t xd[2] = {4, 32}, zd[4] = {1, 16, 8, 8}, y1[2] = {4, 40}, y3[4] = {1, 8, 8, 8};
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 11, "z", OB_FLOAT, 4, zd, NULL);
    ob_value_info(&g, 12, "y1", OB_FLOAT, 2, y1, NULL);
    ob_value_info(&g, 12, "y2", OB_FLOAT, 2, wdef[WA].dims, NULL);
    ob_value_info(&g, 12, "y3", OB_FLOAT, 4, y3, NULL);
    return ob_model(&g, 17);
}

static float g_x[4 * 32], g_z[16 * 64];

static vn_graph *g_graphs[2]; /* [as_inputs]: models borrow their graph */

static vn_model *compile(bool as_inputs, int level)
{
    vn_graph **g = &g_graphs[as_inputs];
    vn_model *m = NULL;
    if (!*g) {
        ob mb = packed_model(as_inputs);
        VT_OK(vn_graph_load_onnx_bytes(mb.p, mb.n, "packed.onnx", NULL, g));
        ob_free(&mb);
    }
    vn_compile_options o = {.opt_level = level};
    if (*g) VT_OK(vn_model_compile(*g, &o, &m));
    return m;
}

typedef struct outs {
    float y1[4 * 40], y2[32 * 48], y3[8 * 64];
} outs;

static vn_status run(const vn_model *m, bool with_weights, outs *o)
{
    vn_named_tensor in[2 + NW] = {{"x", {{VN_F32, 2, {4, 32}}, g_x}},
                                  {"z", {{VN_F32, 4, {1, 16, 8, 8}}, g_z}}};
    int32_t ni = 2;
    for (int i = 0; with_weights && i < NW; i++) {
        vn_tensor_desc d = {VN_F32, wdef[i].rank, {0}};
        memcpy(d.dims, wdef[i].dims, sizeof wdef[i].dims);
        in[ni++] = (vn_named_tensor){wdef[i].name, {d, g_w[i]}};
    }
    vn_named_tensor out[3] = {{"y1", {{VN_F32, 2, {4, 40}}, o->y1}},
                              {"y2", {{VN_F32, 2, {32, 48}}, o->y2}},
                              {"y3", {{VN_F32, 4, {1, 8, 8, 8}}, o->y3}}};
    vn_model_ctx *ctx = NULL;
    vn_status st = vn_model_ctx_create(m, &ctx);
    if (st == VN_OK) st = vn_model_run(m, ctx, in, ni, out, 3);
    vn_model_ctx_destroy(ctx);
    return st;
}

static bool same(const outs *a, const outs *b)
{
    return !memcmp(a, b, sizeof *a);
}

static void tmp_path(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "/tmp/vinci_test_vnm_packed_%d_%s.vnm", (int)getpid(), tag);
}

/* Save m to a temporary file, load it back. */
static vn_model *save_load(const vn_model *m, const char *tag)
{
    char path[256];
    vn_model *l = NULL;
    tmp_path(path, sizeof path, tag);
    VT_OK(vn_model_save(m, path));
    VT_OK(vn_model_load(path, NULL, &l));
    remove(path);
    return l;
}

static void test_round_trip(void)
{
    const int levels[] = {0, 2};
    outs ref, got, unpacked;
    for (int li = 0; li < 2; li++) {
        vn_model *mu = compile(true, levels[li]), *m = compile(false, levels[li]);
        VT_OK(mu ? run(mu, true, &unpacked) : VN_ERR_STATE);
        vn_model_destroy(mu);
        if (!m) continue;
        VT_OK(run(m, false, &ref));
        VT_CHECK(same(&ref, &unpacked), "O%d: packed and unpacked weights differ", levels[li]);
        vn_model *l = save_load(m, "rt");
        if (l) {
            VT_OK(run(l, false, &got));
            VT_CHECK(same(&ref, &got), "O%d: loaded model differs", levels[li]);
            vn_model_file_info fi;
            VT_OK(vn_model_file_info_get(l, &fi));
            /* stored raw: wa (a Relu reads it), wbias (Gemm's C), we (1x1 GEMM path) */
            size_t raw = g_wbytes[WA] + g_wbytes[WBIAS] + g_wbytes[WE];
            VT_CHECK(fi.version == VNM_VERSION && fi.weight_bytes >= raw &&
                         fi.weight_bytes < raw + 1024,
                     "O%d: WEIGHTS %zu bytes, want the %zu raw-read bytes only", levels[li],
                     fi.weight_bytes, raw);
            printf("  O%d: file %zu bytes, raw weights %zu, load %.3f ms\n", levels[li],
                   fi.file_bytes, fi.weight_bytes, fi.load_ms);
            vn_model *l2 = save_load(l, "again"); /* re-saving keeps the blobs */
            if (l2) {
                VT_OK(run(l2, false, &got));
                VT_CHECK(same(&ref, &got), "O%d: re-saved model differs", levels[li]);
            }
            vn_model_destroy(l2);
        }
        vn_model_destroy(l);
        vn_model_destroy(m);
    }
}

/* z [1,32,8,8] -> Conv (w 64x32x3x3, pad 1) -> BatchNormalization -> y: at
 * O2 the folded weights are the model's own and only the packed Conv reads
 * them, so the compile releases them. */
static ob bn_model(const float *w, const float *bn)
{
    ob g = {0}, ca = {0};
    const char *i1[] = {"z", "w", NULL}, *o1[] = {"c", NULL};
    const char *i2[] = {"c", "s", "b", "mu", "var", NULL}, *o2[] = {"y", NULL};
    int64_t pads[4] = {1, 1, 1, 1}, wd[4] = {64, 32, 3, 3}, kd = 64;
    attr_ints(&ca, "pads", pads, 4);
    ob_node(&g, "Conv", "conv", i1, o1, &ca);
    ob_node(&g, "BatchNormalization", "bn", i2, o2, NULL);
    ob_str(&g, 2, "bn");
    ob t = {0};
    ob_tensor_raw(&t, "w", OB_FLOAT, 4, wd, w, 64 * 32 * 9 * 4);
    ob_msg(&g, 5, &t);
    const char *names[4] = {"s", "b", "mu", "var"};
    for (int i = 0; i < 4; i++) {
        ob p = {0};
        ob_tensor_raw(&p, names[i], OB_FLOAT, 1, &kd, bn + 64 * i, 64 * 4);
        ob_msg(&g, 5, &p);
    }
    int64_t zd[4] = {1, 32, 8, 8}, yd[4] = {1, 64, 8, 8};
    ob_value_info(&g, 11, "z", OB_FLOAT, 4, zd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 4, yd, NULL);
    return ob_model(&g, 17);
}

static void test_release_folded(void)
{
    float *w = malloc(64 * 32 * 9 * 4), bn[4 * 64], z[32 * 64], y0[64 * 64], y2[64 * 64],
          yl[64 * 64];
    for (int i = 0; i < 64 * 32 * 9; i++) w[i] = g_w[WC][i % (32 * 16 * 9)];
    for (int k = 0; k < 64; k++)
        bn[k] = 0.5f + k / 64.0f, bn[64 + k] = 0.1f * (k % 5), bn[128 + k] = 0.01f * k,
        bn[192 + k] = 1.0f + 0.02f * k;
    for (int i = 0; i < 32 * 64; i++) z[i] = g_z[i % (16 * 64)];
    ob mb = bn_model(w, bn);
    vn_graph *g = NULL;
    vn_model *m0 = NULL, *m2 = NULL, *l = NULL;
    VT_OK(vn_graph_load_onnx_bytes(mb.p, mb.n, "bn.onnx", NULL, &g));
    ob_free(&mb);
    if (g) VT_OK(vn_model_compile(g, &(vn_compile_options){.opt_level = 0}, &m0));
    if (g) VT_OK(vn_model_compile(g, &(vn_compile_options){.opt_level = 2}, &m2));
    int released = 0;
    for (int32_t v = 0; m2 && v < m2->num_values; v++)
        released += m2->values[v].packed_only && m2->values[v].owned && !m2->values[v].data;
    VT_CHECK(released == 1, "%d folded constants released (want the Conv weights)", released);
    vn_named_tensor in = {"z", {{VN_F32, 4, {1, 32, 8, 8}}, z}};
    vn_named_tensor o0 = {"y", {{VN_F32, 4, {1, 64, 8, 8}}, y0}}, o2 = o0, ol = o0;
    o2.tensor.data = y2, ol.tensor.data = yl;
    vn_model_ctx *c = NULL;
    if (m0 && m2) {
        VT_OK(vn_model_ctx_create(m0, &c));
        VT_OK(vn_model_run(m0, c, &in, 1, &o0, 1));
        vn_model_ctx_destroy(c);
        VT_OK(vn_model_ctx_create(m2, &c));
        VT_OK(vn_model_run(m2, c, &in, 1, &o2, 1));
        vn_model_ctx_destroy(c);
        double worst = 0;
        for (int i = 0; i < 64 * 64; i++) {
            double d = fabs((double)y0[i] - y2[i]) / (1e-3 + fabs((double)y0[i]));
            worst = d > worst ? d : worst;
        }
        VT_CHECK(worst < 1e-3, "O2 (folded, released) vs O0: relative error %g", worst);
        l = save_load(m2, "bn");
    }
    if (l) {
        VT_OK(vn_model_ctx_create(l, &c));
        VT_OK(vn_model_run(l, c, &in, 1, &ol, 1));
        vn_model_ctx_destroy(c);
        VT_CHECK(!memcmp(y2, yl, sizeof y2), "released model saved and loaded differs");
    }
    vn_model_destroy(l);
    vn_model_destroy(m0);
    vn_model_destroy(m2);
    vn_graph_destroy(g);
    free(w);
}

/* The registry side: built-in hooks, none for Relu, declared ones win. */
static int32_t no_export(const void *plan, vn_op_blob blobs[VN_OP_MAX_BLOBS], uint64_t *consumed)
{
    (void)plan, (void)blobs;
    *consumed = 0;
    return 0;
}
static vn_status no_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs,
                         const vn_op_blob *blobs, int32_t num_blobs, uint64_t consumed,
                         void **plan_data, size_t *workspace)
{
    (void)ctx, (void)outputs, (void)blobs, (void)num_blobs, (void)consumed, (void)plan_data,
        (void)workspace;
    return VN_ERR_UNSUPPORTED;
}

static void test_hook_registry(void)
{
    static const vn_op_prepack mine = {no_export, no_plan};
    const char *packing[] = {"MatMul", "Gemm", "Conv"};
    for (int i = 0; i < 3; i++)
        VT_CHECK(vn_op_prepack_hooks(vn_op_find(packing[i], "")) != NULL, "%s has hooks",
                 packing[i]);
    VT_CHECK(vn_op_prepack_hooks(vn_op_find("FusedMatMul", "vinci")) &&
                 vn_op_prepack_hooks(vn_op_find("FusedConv", "vinci")),
             "the fused forms have hooks");
    const vn_op_def *relu = vn_op_find("Relu", "");
    VT_CHECK(relu && !vn_op_prepack_hooks(relu), "Relu has none");
    VT_CHECK(!vn_op_prepack_hooks(NULL), "NULL def");
    VT_CHECK(vn_op_set_prepack(relu, NULL) == VN_ERR_INVALID_ARG, "NULL hooks");
    VT_OK(vn_op_set_prepack(relu, &mine));
    VT_CHECK(vn_op_prepack_hooks(relu) == &mine, "declared hooks are found");
}

/* ---- damaged files ------------------------------------------------------------- */

static uint8_t *g_file;
static size_t g_size;

static void make_file(void)
{
    vn_model *m = compile(false, 0);
    char path[256];
    tmp_path(path, sizeof path, "fuzz");
    if (m) VT_OK(vn_model_save(m, path));
    vn_model_destroy(m);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    g_size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    g_file = vn_aligned_alloc(g_size, 64);
    VT_CHECK(g_file && fread(g_file, 1, g_size, f) == g_size, "read back");
    fclose(f);
    remove(path);
}

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

/* Load a damaged copy (resealed when asked): VN_OK only if it also runs. */
static vn_status try_image(const uint8_t *img, size_t n, bool reseal, int *ran)
{
    uint8_t *buf = vn_aligned_alloc(n ? n : 1, 64);
    if (!buf) return VN_ERR_OUT_OF_MEMORY;
    memcpy(buf, img, n);
    if (reseal) vn_vnm_reseal(buf, n);
    vn_model *m = NULL;
    vn_status st = vn_vnm_load_bytes(buf, n, "bad.vnm", NULL, &m);
    if (st == VN_OK) {
        outs o;
        if (run(m, false, &o) == VN_OK) ++*ran;
        vn_model_destroy(m);
    }
    vn_aligned_free(buf);
    return st;
}

/* Set `bytes` bytes at `at` to `v`, reseal, load: refused with `want`. */
static void expect_reject(uint64_t at, uint64_t v, int bytes, const char *want)
{
    uint8_t *img = malloc(g_size);
    int ran = 0;
    if (!img || at + (uint64_t)bytes > g_size) return free(img);
    memcpy(img, g_file, g_size);
    memcpy(img + at, &v, (size_t)bytes);
    vn_status st = try_image(img, g_size, true, &ran);
    VT_CHECK(st == VN_ERR_FORMAT, "field at %llu = %llu: status %d", (unsigned long long)at,
             (unsigned long long)v, (int)st);
    if (st != VN_OK) VT_CONTAINS(vn_last_error(), want);
    free(img);
}

static void test_pristine(void)
{
    int ran = 0;
    uint64_t blobs_size = 0;
    VT_CHECK(g_file && try_image(g_file, g_size, false, &ran) == VN_OK && ran == 1,
             "pristine file: %s", vn_last_error());
    section(VNM_SEC_BLOBS, &blobs_size);
    /* MatMul B, Gemm B, direct W + bias, depthwise W */
    VT_CHECK(blobs_size == 5 * sizeof(vnm_blob), "%llu bytes of blob records",
             (unsigned long long)blobs_size);
}

static void test_blob_records(void)
{
    uint64_t bsize = 0, psize = 0;
    uint64_t blobs = section(VNM_SEC_BLOBS, &bsize), packed = section(VNM_SEC_PACKED, &psize);
    if (!g_file || bsize < 2 * sizeof(vnm_blob)) return;
    vnm_blob r0, r1;
    memcpy(&r0, g_file + blobs, sizeof r0);
    memcpy(&r1, g_file + blobs + sizeof r0, sizeof r1);
    expect_reject(blobs + 32, r0.size + 64, 8, "the shapes need"); /* size */
    expect_reject(blobs + 32, r0.size - 4, 8, "the shapes need");
    expect_reject(blobs + 32, psize + 64, 8, "outside");       /* past PACKED */
    expect_reject(blobs + 24, r0.offset + 4, 8, "misaligned"); /* offset */
    expect_reject(blobs + 24, psize, 8, "outside");
    expect_reject(blobs + 24, UINT64_MAX - 63, 8, "outside");
    expect_reject(blobs + 32, 0, 8, "empty");
    expect_reject(blobs + 16, 0, 8, "consumed"); /* consumed */
    expect_reject(blobs + 16, 1, 8, "byte ");    /* x, not a constant */
    expect_reject(blobs + 16, 1ull << 40, 8, "consumed");
    expect_reject(blobs + 4, 1, 4, "blob number"); /* index */
    expect_reject(blobs + 4, VN_OP_MAX_BLOBS, 4, "blob number");
    expect_reject(blobs, 9999, 4, "out of range"); /* node */
    expect_reject(blobs, r1.node + 1, 4, "byte "); /* on another node */
    expect_reject(blobs + sizeof r0, r0.node > 0 ? r0.node - 1 : 9999, 4, "byte "); /* order */
    expect_reject(blobs + 8, r1.layout, 4, "layout"); /* layout string */
    expect_reject(blobs + 8, 1u << 30, 4, "string offset");
    (void)packed;
}

/* The packed-only flag of values: set on a raw one, cleared on a packed one. */
static void test_value_flags(void)
{
    uint64_t vsize = 0, values = section(VNM_SEC_VALUES, &vsize);
    int flipped_raw = 0, flipped_packed = 0;
    for (uint64_t v = 0; g_file && v < vsize / sizeof(vnm_value); v++) {
        vnm_value r;
        uint64_t at = values + v * sizeof r;
        memcpy(&r, g_file + at, sizeof r);
        if (r.mem != 2) continue; /* VN_MEM_CONST */
        if (r.io_index == VNM_CONST_PACKED) {
            expect_reject(at + 84, 0, 4, "bytes");         /* raw now, but no bytes */
            expect_reject(at + 84, 7, 4, "constant flag"); /* neither */
            flipped_packed++;
        } else if (r.nbytes) {
            expect_reject(at + 84, VNM_CONST_PACKED, 4, "packed-only");
            flipped_raw++;
        }
    }
    VT_CHECK(flipped_packed == 4 && flipped_raw >= 2, "%d packed-only, %d raw constants",
             flipped_packed, flipped_raw);
}

/* Every word of the records hostile (hashes recomputed): refused or runs. */
static void test_resealed_words(void)
{
    uint64_t bsize = 0, blobs = section(VNM_SEC_BLOBS, &bsize);
    uint8_t *img = malloc(g_size);
    int rejected = 0, loaded = 0, ran = 0;
    for (uint64_t i = blobs; img && i + 4 <= blobs + bsize; i += 4) {
        uint32_t w;
        memcpy(&w, g_file + i, 4);
        const uint32_t vals[] = {0, 0xffffffffu, 0x80000000u, w + 1, w - 1, w + 64, w ^ 2u};
        for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
            if (vals[k] == w) continue;
            memcpy(img, g_file, g_size);
            memcpy(img + i, &vals[k], 4);
            vn_status st = try_image(img, g_size, true, &ran);
            if (st == VN_OK) {
                loaded++;
            } else {
                rejected++;
                VT_CHECK(st == VN_ERR_FORMAT && strstr(vn_last_error(), "byte "),
                         "word %llu = %u: status %d, %s", (unsigned long long)i, vals[k], (int)st,
                         vn_last_error());
            }
        }
    }
    VT_CHECK(loaded == ran, "%d loaded, %d ran", loaded, ran);
    printf("  resealed BLOBS words: %d rejected, %d still load and run\n", rejected, loaded);
    free(img);
}

static void test_corrupt_and_truncated(void)
{
    uint64_t psize = 0, packed = section(VNM_SEC_PACKED, &psize);
    uint8_t *img = malloc(g_size);
    int ran = 0;
    for (uint64_t i = packed; img && i < packed + psize; i += psize / 7 + 1) {
        memcpy(img, g_file, g_size);
        img[i] ^= 0x10;
        VT_CHECK(try_image(img, g_size, false, &ran) == VN_ERR_FORMAT, "PACKED byte %llu flipped",
                 (unsigned long long)i);
        VT_CONTAINS(vn_last_error(), "hash");
    }
    for (uint64_t n = packed; g_file && n < g_size; n += psize / 5 + 1)
        VT_CHECK(try_image(g_file, (size_t)n, false, &ran) == VN_ERR_FORMAT, "truncated to %llu",
                 (unsigned long long)n);
    free(img);
    expect_reject(8, 1, 4, "recompile"); /* a version-1 file */
}

int main(void)
{
    make_weights();
    for (size_t i = 0; i < sizeof g_x / 4; i++) g_x[i] = (float)((i * 37) % 19) / 7.0f - 1.2f;
    for (size_t i = 0; i < sizeof g_z / 4; i++) g_z[i] = (float)((i * 53) % 23) / 9.0f - 1.1f;
    VT_RUN(test_round_trip);
    VT_RUN(test_release_folded);
    make_file();
    VT_RUN(test_pristine);
    VT_RUN(test_blob_records);
    VT_RUN(test_value_flags);
    VT_RUN(test_resealed_words);
    VT_RUN(test_corrupt_and_truncated);
    VT_RUN(test_hook_registry); /* last: it declares hooks for Relu */
    vn_aligned_free(g_file);
    for (int i = 0; i < NW; i++) free(g_w[i]);
    vn_graph_destroy(g_graphs[0]);
    vn_graph_destroy(g_graphs[1]);
    return vt_summary();
}
