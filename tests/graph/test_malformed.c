/*
 * test_malformed.c — untrusted model bytes: truncation at every offset,
 * flipped bytes, broken varints and lengths, bad tensor sizes, absurd
 * nesting. Each must give an error (never a crash or an out-of-bounds read —
 * run under ASan too), and the reader's messages carry the byte offset and
 * the field path.
 */
#include <stdio.h>
#include <string.h>

#include "graph/onnx_build.h"
#include "vinci/graph.h"
#include "vt.h"

static vn_status try_load(const void *p, size_t n)
{
    vn_graph *g = NULL;
    vn_status st = vn_graph_load_onnx_bytes(p, n, "bad.onnx", NULL, &g);
    if (st == VN_OK)
        vn_graph_destroy(g);
    else if (!g && vn_last_error()[0] == '\0')
        st = VN_ERR_INTERNAL; /* error without a message */
    return st;
}

/* A model with a subgraph, attributes of several types and typed data. */
static ob rich_model(void)
{
    ob g = {0}, attrs = {0}, a = {0}, sub = {0}, t = {0};
    const char *sin[] = {"x", "x", NULL}, *sout[] = {"t", NULL};
    ob_node(&sub, "Add", "inner", sin, sout, NULL);
    ob_value_info(&sub, 12, "t", OB_FLOAT, -1, NULL, NULL);
    ob_str(&a, 1, "then_branch");
    ob_int(&a, 20, 5);
    ob_msg(&a, 6, &sub);
    ob_msg(&attrs, 5, &a);
    ob_attr_int(&attrs, "axis", -1);
    ob_str(&a, 1, "scales");
    ob_int(&a, 20, 6);
    ob_float(&a, 7, 0.5f);
    ob_msg(&attrs, 5, &a);
    const char *in[] = {"c", NULL}, *out[] = {"y", NULL};
    ob_node(&g, "If", "if0", in, out, &attrs);
    ob_int(&t, 1, 2);
    ob_int(&t, 2, OB_INT64);
    ob_str(&t, 8, "k");
    ob_int(&t, 7, 5);
    ob_int(&t, 7, -6);
    ob_msg(&g, 5, &t);
    int64_t d[2] = {-1, 4};
    const char *s[2] = {"n", NULL};
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, d, s);
    ob_value_info(&g, 11, "c", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, -1, NULL, NULL);
    return ob_model(&g, 17);
}

static void check_truncations(ob *m, const char *what)
{
    int errors = 0, bad_messages = 0;
    /* The opset import is the last field: cutting before it leaves a valid
     * model only at field boundaries after the graph. */
    for (size_t n = 0; n < m->n; n++) {
        vn_status st = try_load(m->p, n);
        if (st == VN_OK) continue;
        errors++;
        if (st == VN_ERR_FORMAT && !strstr(vn_last_error(), "byte ")) bad_messages++;
        if (st == VN_ERR_INTERNAL) bad_messages++;
    }
    VT_CHECK(errors >= (int)m->n - 20, "%s: only %d of %zu truncations failed", what, errors, m->n);
    VT_CHECK(bad_messages == 0, "%s: %d messages without a byte offset", what, bad_messages);
    VT_OK(try_load(m->p, m->n));
}

static void test_truncation_at_every_offset(void)
{
    ob m = ob_sample_model();
    check_truncations(&m, "sample");
    ob_free(&m);
    m = rich_model();
    check_truncations(&m, "rich");
    ob_free(&m);
}

static void test_flipped_bytes(void)
{
    ob m = rich_model();
    vt_rng rng = {7};
    int errors = 0;
    for (int iter = 0; iter < 3000; iter++) {
        uint8_t copy[2048];
        memcpy(copy, m.p, m.n);
        int flips = 1 + (int)(vt_next(&rng) % 3);
        for (int f = 0; f < flips; f++) copy[vt_next(&rng) % m.n] = (uint8_t)vt_next(&rng);
        vn_status st = try_load(copy, m.n);
        errors += st != VN_OK;
        VT_CHECK(st != VN_ERR_INTERNAL, "iteration %d: internal error %s", iter, vn_last_error());
    }
    VT_CHECK(errors > 1000, "only %d of 3000 corruptions were errors", errors);
    ob_free(&m);
}

/* A graph field holding `body` as its bytes, inside a model. */
static vn_status graph_bytes(const uint8_t *body, size_t n)
{
    ob g = {0};
    ob_raw(&g, body, n);
    ob m = ob_model(&g, 17);
    vn_status st = try_load(m.p, m.n);
    ob_free(&m);
    return st;
}

static void expect(vn_status st, vn_status want, const char *msg)
{
    VT_CHECK(st == want, "%s: got %s: %s", msg, vn_status_name(st), vn_last_error());
    VT_CONTAINS(vn_last_error(), msg);
    if (want == VN_ERR_FORMAT) VT_CONTAINS(vn_last_error(), "byte ");
}

static void test_varints_and_lengths(void)
{
    const uint8_t overlong[] = {0x10, 0x80, 0x80, 0x80, 0x80, 0x80,
                                0x80, 0x80, 0x80, 0x80, 0x80, 0x01}; /* field 2, 11-byte varint */
    expect(graph_bytes(overlong, sizeof overlong), VN_ERR_FORMAT, "varint longer than 10 bytes");
    const uint8_t overflow[] = {0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    expect(graph_bytes(overflow, sizeof overflow), VN_ERR_FORMAT, "overflows 64 bits");
    const uint8_t negative[] = {0x12, 0xff, 0xff, 0xff, 0xff, 0xff,
                                0xff, 0xff, 0xff, 0xff, 0x01, 'a'}; /* length -1 */
    expect(graph_bytes(negative, sizeof negative), VN_ERR_FORMAT, "runs past the end");
    const uint8_t huge[] = {0x0a, 0x9f, 0x8d, 0x06, 0x00}; /* node, length 99999 */
    expect(graph_bytes(huge, sizeof huge), VN_ERR_FORMAT, "length 99999 runs past the end");
    const uint8_t group[] = {0x0b, 0x0c};
    expect(graph_bytes(group, sizeof group), VN_ERR_FORMAT, "wire type 3");
    const uint8_t zero[] = {0x00, 0x01};
    expect(graph_bytes(zero, sizeof zero), VN_ERR_FORMAT, "invalid field number 0");
    const uint8_t wrong[] = {0x10, 0x05}; /* name (2) as a varint */
    expect(graph_bytes(wrong, sizeof wrong), VN_ERR_FORMAT, "field 'name' (2) is varint");
    const uint8_t cut_fixed[] = {0x0a, 0x04, 0x2a, 0x02, 0x15, 0x00}; /* 32-bit value cut */
    expect(graph_bytes(cut_fixed, sizeof cut_fixed), VN_ERR_FORMAT, "graph.node[0].attribute[0]");
    expect(try_load("\x08", 1), VN_ERR_FORMAT, "varint runs past the end");
    expect(try_load("", 0), VN_ERR_FORMAT, "no graph");
}

/* An If node whose then_branch holds `sub` (raw GraphProto bytes, freed);
 * as a GRAPHS attribute (second element) when `list`. */
static vn_status subgraph_model(ob *sub, bool list)
{
    ob g = {0}, attrs = {0}, a = {0}, good = {0};
    ob_str(&a, 1, list ? "branches" : "then_branch");
    ob_int(&a, 20, list ? 10 : 5);
    if (list) ob_msg(&a, 11, &good);
    ob_msg(&a, list ? 11 : 6, sub);
    ob_msg(&attrs, 5, &a);
    const char *in[] = {"c", NULL}, *out[] = {"y", NULL};
    ob_node(&g, "If", "if0", in, out, &attrs);
    ob_value_info(&g, 11, "c", OB_BOOL, 0, NULL, NULL);
    ob m = ob_model(&g, 17);
    vn_status st = try_load(m.p, m.n);
    ob_free(&m);
    return st;
}

/* Malformed subgraphs get the byte offset and the path through the attribute. */
static void test_malformed_subgraphs(void)
{
    static const uint8_t huge_node[] = {0x0a, 0x9f, 0x8d, 0x06, 0x00}; /* node, length 99999 */
    ob sub = {0};
    ob_raw(&sub, huge_node, sizeof huge_node);
    expect(subgraph_model(&sub, false), VN_ERR_FORMAT, "graph.node[0].attribute[0].g");
    VT_CONTAINS(vn_last_error(), "length 99999 runs past the end");
    ob_raw(&sub, huge_node, sizeof huge_node);
    expect(subgraph_model(&sub, true), VN_ERR_FORMAT, "graph.node[0].attribute[0].graphs[1]");
    ob t = {0};
    float f[3] = {1, 2, 3};
    int64_t d2[2] = {2, 2};
    ob_tensor_raw(&t, "w", OB_FLOAT, 2, d2, f, sizeof f); /* 4 elements, 3 present */
    ob_msg(&sub, 5, &t);
    expect(subgraph_model(&sub, false), VN_ERR_FORMAT,
           "graph.node[0].attribute[0].g.initializer[0]");
    const char *in[] = {"nowhere", NULL}, *out[] = {"t", NULL};
    ob_node(&sub, "Relu", "inner", in, out, NULL);
    ob_value_info(&sub, 12, "t", OB_FLOAT, -1, NULL, NULL);
    VT_CHECK(subgraph_model(&sub, false) == VN_ERR_FORMAT, "undefined name in a subgraph");
    VT_CONTAINS(vn_last_error(), "node 'inner' (Relu): input 0 'nowhere' is not defined");
    ob a = {0}, attrs = {0}, g = {0};
    ob_str(&a, 1, "then_branch");
    ob_int(&a, 20, 5); /* GRAPH without its graph */
    ob_msg(&attrs, 5, &a);
    const char *c[] = {"c", NULL}, *y[] = {"y", NULL};
    ob_node(&g, "If", "if0", c, y, &attrs);
    ob m = ob_model(&g, 17);
    expect(try_load(m.p, m.n), VN_ERR_FORMAT, "attribute 'then_branch' has 0 values, expected one");
    ob_free(&m);
}

static vn_status tensor_model(ob *t)
{
    ob g = {0};
    ob_msg(&g, 5, t);
    ob m = ob_model(&g, 17);
    vn_status st = try_load(m.p, m.n);
    ob_free(&m);
    return st;
}

static void test_tensor_sizes(void)
{
    ob t = {0};
    float f[3] = {1, 2, 3};
    int64_t d2[2] = {2, 2};
    ob_tensor_raw(&t, "w", OB_FLOAT, 2, d2, f, sizeof f);
    expect(tensor_model(&t), VN_ERR_FORMAT, "raw_data has 12 bytes, its dims need 16");
    int64_t big[2] = {INT64_C(1) << 31, INT64_C(1) << 31};
    ob_tensor_raw(&t, "w", OB_FLOAT, 2, big, f, sizeof f);
    expect(tensor_model(&t), VN_ERR_FORMAT, "negative or too large");
    int64_t neg[1] = {-3};
    ob_tensor_raw(&t, "w", OB_FLOAT, 1, neg, f, sizeof f);
    expect(tensor_model(&t), VN_ERR_FORMAT, "dim 0 is -3");
    ob_int(&t, 1, 4);
    ob_int(&t, 2, OB_INT64);
    ob_str(&t, 8, "w");
    ob_int(&t, 7, 1);
    expect(tensor_model(&t), VN_ERR_FORMAT, "has 1 typed elements, its dims need 4");
    ob_int(&t, 1, 1);
    ob_int(&t, 2, OB_FLOAT);
    ob_str(&t, 8, "w");
    ob_bytes(&t, 4, "abc", 3); /* packed floats, 3 bytes */
    expect(tensor_model(&t), VN_ERR_FORMAT, "not a multiple of 4");
    ob_int(&t, 1, 1);
    ob_int(&t, 2, OB_STRING);
    ob_str(&t, 8, "s");
    ob_str(&t, 6, "text");
    expect(tensor_model(&t), VN_ERR_UNSUPPORTED, "element type string");
    int64_t many[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    ob_tensor_raw(&t, "w", OB_FLOAT, 9, many, f, 4);
    expect(tensor_model(&t), VN_ERR_UNSUPPORTED, "rank 9 is above");
}

static void test_absurd_nesting(void)
{
    ob g = {0};
    for (int depth = 0; depth < 40; depth++) {
        ob attrs = {0}, a = {0}, outer = {0};
        ob_str(&a, 1, "body");
        ob_int(&a, 20, 5);
        ob_msg(&a, 6, &g);
        ob_msg(&attrs, 5, &a);
        ob_node(&outer, "Loop", NULL, NULL, NULL, &attrs);
        g = outer;
    }
    ob m = ob_model(&g, 17);
    expect(try_load(m.p, m.n), VN_ERR_FORMAT, "nested deeper than");
    ob_free(&m);
    ob vi = {0}, type = {0}, tensor = {0}, shape = {0};
    for (int i = 0; i < 70; i++) {
        ob dim = {0};
        ob_int(&dim, 1, 1);
        ob_msg(&shape, 1, &dim);
    }
    ob_str(&vi, 1, "x");
    ob_int(&tensor, 1, OB_FLOAT);
    ob_msg(&tensor, 2, &shape);
    ob_msg(&type, 1, &tensor);
    ob_msg(&vi, 2, &type);
    ob_msg(&g, 11, &vi);
    m = ob_model(&g, 17);
    expect(try_load(m.p, m.n), VN_ERR_FORMAT, "graph.input[0].type.tensor_type.shape.dim[64]");
    ob_free(&m);
}

int main(void)
{
    VT_RUN(test_truncation_at_every_offset);
    VT_RUN(test_flipped_bytes);
    VT_RUN(test_varints_and_lengths);
    VT_RUN(test_tensor_sizes);
    VT_RUN(test_malformed_subgraphs);
    VT_RUN(test_absurd_nesting);
    return vt_summary();
}
