/*
 * onnx_build.h — a tiny protobuf / ONNX encoder for the graph tests, so most
 * tests build their models byte by byte and need no Python. Field numbers
 * follow onnx.proto3. Out of memory aborts the test (this is test code).
 */
#ifndef VINCI_TESTS_ONNX_BUILD_H
#define VINCI_TESTS_ONNX_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct ob {
    uint8_t *p;
    size_t n, cap;
} ob;

static inline void ob_raw(ob *b, const void *data, size_t len)
{
    if (b->n + len > b->cap) {
        b->cap = (b->n + len) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    if (len) memcpy(b->p + b->n, data, len);
    b->n += len;
}
static inline void ob_varint(ob *b, uint64_t v)
{
    do {
        uint8_t byte = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) byte |= 0x80;
        ob_raw(b, &byte, 1);
    } while (v);
}
static inline void ob_tag(ob *b, uint32_t field, uint32_t wire)
{
    ob_varint(b, (uint64_t)field << 3 | wire);
}
static inline void ob_int(ob *b, uint32_t field, int64_t v)
{
    ob_tag(b, field, 0);
    ob_varint(b, (uint64_t)v);
}
static inline void ob_float(ob *b, uint32_t field, float v)
{
    ob_tag(b, field, 5);
    ob_raw(b, &v, 4);
}
static inline void ob_double(ob *b, uint32_t field, double v)
{
    ob_tag(b, field, 1);
    ob_raw(b, &v, 8);
}
static inline void ob_bytes(ob *b, uint32_t field, const void *d, size_t len)
{
    ob_tag(b, field, 2);
    ob_varint(b, len);
    ob_raw(b, d, len);
}
static inline void ob_str(ob *b, uint32_t field, const char *s)
{
    ob_bytes(b, field, s, strlen(s));
}
/* Append `sub` as a length-delimited field and free it. */
static inline void ob_msg(ob *b, uint32_t field, ob *sub)
{
    ob_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    memset(sub, 0, sizeof *sub);
}
static inline void ob_free(ob *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- ONNX messages ---------------------------------------------------------- */

enum {
    OB_FLOAT = 1,
    OB_UINT8 = 2,
    OB_INT8 = 3,
    OB_INT32 = 6,
    OB_INT64 = 7,
    OB_STRING = 8,
    OB_BOOL = 9,
    OB_FLOAT16 = 10,
    OB_DOUBLE = 11,
    OB_BFLOAT16 = 16
};

/* ValueInfoProto; dims < 0 use syms[i] (NULL: unknown); rank -1 = no shape. */
static inline void ob_value_info(ob *b, uint32_t field, const char *name, int elem, int rank,
                                 const int64_t *dims, const char *const *syms)
{
    ob vi = {0}, type = {0}, tensor = {0}, shape = {0};
    ob_str(&vi, 1, name);
    ob_int(&tensor, 1, elem);
    for (int i = 0; i < rank; i++) {
        ob dim = {0};
        if (dims[i] >= 0)
            ob_int(&dim, 1, dims[i]);
        else if (syms && syms[i])
            ob_str(&dim, 2, syms[i]);
        ob_msg(&shape, 1, &dim);
    }
    if (rank >= 0) ob_msg(&tensor, 2, &shape);
    ob_msg(&type, 1, &tensor);
    ob_msg(&vi, 2, &type);
    ob_msg(b, field, &vi);
}

/* TensorProto with raw_data. */
static inline void ob_tensor_raw(ob *t, const char *name, int elem, int rank, const int64_t *dims,
                                 const void *data, size_t bytes)
{
    for (int i = 0; i < rank; i++) ob_int(t, 1, dims[i]);
    ob_int(t, 2, elem);
    if (name) ob_str(t, 8, name);
    ob_bytes(t, 9, data, bytes);
}

/* NodeProto; inputs / outputs NULL-terminated; attrs already encoded (field 5). */
static inline void ob_node(ob *g, const char *op, const char *name, const char *const *inputs,
                           const char *const *outputs, ob *attrs)
{
    ob n = {0};
    for (int i = 0; inputs && inputs[i]; i++) ob_str(&n, 1, inputs[i]);
    for (int i = 0; outputs && outputs[i]; i++) ob_str(&n, 2, outputs[i]);
    if (name) ob_str(&n, 3, name);
    ob_str(&n, 4, op);
    if (attrs && attrs->n) ob_raw(&n, attrs->p, attrs->n);
    if (attrs) ob_free(attrs);
    ob_msg(g, 1, &n);
}

static inline void ob_attr_int(ob *attrs, const char *name, int64_t v)
{
    ob a = {0};
    ob_str(&a, 1, name);
    ob_int(&a, 20, 2);
    ob_int(&a, 3, v);
    ob_msg(attrs, 5, &a);
}

/* A GRAPH attribute (If branches, Loop / Scan bodies): `graph` holds a
 * GraphProto's fields and is freed. */
static inline void ob_attr_graph(ob *attrs, const char *name, ob *graph)
{
    ob a = {0};
    ob_str(&a, 1, name);
    ob_int(&a, 20, 5);
    ob_msg(&a, 6, graph);
    ob_msg(attrs, 5, &a);
}

static inline void ob_attr_ints(ob *attrs, const char *name, const int64_t *v, int n)
{
    ob a = {0};
    ob_str(&a, 1, name);
    ob_int(&a, 20, 7);
    for (int i = 0; i < n; i++) ob_int(&a, 8, v[i]);
    ob_msg(attrs, 5, &a);
}

/* ModelProto around a graph, importing the default domain at `opset`. */
static inline ob ob_model(ob *graph, int64_t opset)
{
    ob m = {0}, op = {0};
    ob_int(&m, 1, 8);
    ob_str(&m, 2, "vinci-test");
    ob_msg(&m, 7, graph);
    ob_str(&op, 1, "");
    ob_int(&op, 2, opset);
    ob_msg(&m, 8, &op);
    return m;
}

/* y = Relu(x + w): x f32[N,4] (N symbolic "batch"), w an initializer f32[4]. */
static inline ob ob_sample_model(void)
{
    ob g = {0}, none = {0};
    const char *in1[] = {"x", "w", NULL}, *out1[] = {"s", NULL};
    const char *in2[] = {"s", NULL}, *out2[] = {"y", NULL};
    ob_node(&g, "Add", "add0", in1, out1, &none);
    ob_node(&g, "Relu", "relu0", in2, out2, NULL);
    ob_str(&g, 2, "sample");
    float w[4] = {1, -2, 3, -4};
    int64_t wd[1] = {4};
    ob t = {0};
    ob_tensor_raw(&t, "w", OB_FLOAT, 1, wd, w, sizeof w);
    ob_msg(&g, 5, &t);
    int64_t xd[2] = {-1, 4};
    const char *xs[2] = {"batch", NULL};
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, xs);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, xd, xs);
    return ob_model(&g, 17);
}

#endif /* VINCI_TESTS_ONNX_BUILD_H */
