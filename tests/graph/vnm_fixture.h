/*
 * vnm_fixture.h — what the .vnm tests share: the bundled models' paths, a
 * per-process temporary file name, reading a whole file, and comparing two models' runs byte for
 * byte (a loaded model against the model that was saved).
 */
#ifndef VINCI_TEST_VNM_FIXTURE_H
#define VINCI_TEST_VNM_FIXTURE_H

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "graph/vnm.h"
#include "vinci/graph.h"
#include "vt.h"

static inline int model_path(const char *file, char *buf, size_t size)
{
    const char *tail = strstr(__FILE__, "tests/graph/");
    if (!tail) return -1;
    snprintf(buf, size, "%.*smodels/%s", (int)(tail - __FILE__), __FILE__, file);
    FILE *f = fopen(buf, "rb");
    if (!f) return -1;
    fclose(f);
    return 0;
}

/* A whole file, malloc'ed (NULL when it cannot be read). */
static inline uint8_t *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n);
    if (b && fread(b, 1, *n, f) != *n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static inline void tmp_path(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "/tmp/vinci_test_vnm_%d_%s.vnm", (int)getpid(), tag);
}

static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline size_t desc_bytes(const vn_tensor_desc *d)
{
    int64_t n = vn_desc_numel(d);
    return n > 0 ? (size_t)n * vn_dtype_size(d->dtype) : 0;
}

/* Run both models on the same inputs; every output must be byte-identical. */
static inline void check_same(const vn_model *a, const vn_model *b, const vn_named_tensor *in,
                              int32_t ni)
{
    vn_model_ctx *ca = NULL, *cb = NULL;
    VT_OK(vn_model_ctx_create(a, &ca));
    VT_OK(vn_model_ctx_create(b, &cb));
    VT_OK(vn_model_run(a, ca, in, ni, NULL, 0));
    VT_OK(vn_model_run(b, cb, in, ni, NULL, 0));
    VT_CHECK(vn_model_num_outputs(a) == vn_model_num_outputs(b), "output counts differ");
    VT_CHECK(vn_model_num_nodes(a) == vn_model_num_nodes(b), "node counts differ");
    for (int32_t i = 0; ca && cb && i < vn_model_num_outputs(a); i++) {
        const char *name;
        vn_tensor ta, tb;
        VT_OK(vn_model_output(a, i, &name, NULL));
        VT_OK(vn_model_ctx_output(ca, name, &ta));
        VT_OK(vn_model_ctx_output(cb, name, &tb));
        VT_CHECK(desc_bytes(&ta.desc) == desc_bytes(&tb.desc) &&
                     !memcmp(ta.data, tb.data, desc_bytes(&ta.desc)),
                 "output '%s' differs after the round trip", name);
    }
    for (int32_t i = 0; i < a->num_nodes && i < b->num_nodes; i++) {
        const char *fa = a->nodes[i].fused_from, *fb = b->nodes[i].fused_from;
        VT_CHECK((!fa && !fb) || (fa && fb && !strcmp(fa, fb)),
                 "node %d: fused_from '%s' became '%s'", (int)i, fa ? fa : "(none)",
                 fb ? fb : "(none)");
    }
    vn_model_stats sa, sb;
    VT_OK(vn_model_get_stats(a, &sa));
    VT_OK(vn_model_get_stats(b, &sb));
    VT_CHECK(sa.arena_bytes == sb.arena_bytes && sa.workspace_bytes == sb.workspace_bytes,
             "arena %zu/%zu workspace %zu/%zu", sa.arena_bytes, sb.arena_bytes, sa.workspace_bytes,
             sb.workspace_bytes);
    vn_model_ctx_destroy(ca);
    vn_model_ctx_destroy(cb);
}

/* gr compiled at O3, saved to a .vnm (named after tag) and loaded back:
 * every output on `in` is byte-identical (check_same). */
static inline void check_o3_round_trip(vn_graph *gr, const vn_named_tensor *in, int32_t ni,
                                       const char *tag)
{
    vn_compile_options o = {.opt_level = 3};
    vn_model *m = NULL, *back = NULL;
    char path[256];
    tmp_path(path, sizeof path, tag);
    VT_OK(vn_model_compile(gr, &o, &m));
    if (m) VT_OK(vn_model_save(m, path));
    if (m) VT_OK(vn_model_load(path, NULL, &back));
    if (m && back) check_same(m, back, in, ni);
    vn_model_destroy(back);
    vn_model_destroy(m);
    remove(path);
}

#endif /* VINCI_TEST_VNM_FIXTURE_H */
