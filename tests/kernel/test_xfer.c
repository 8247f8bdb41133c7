/*
 * test_xfer.c — the copy engine (src/kernel/xfer.c): copies into VECIN and
 * out of VECOUT queue buffers are deferred in release mode and executed
 * interleaved; every result must equal program order.
 *
 * The kernels run in release mode (copies deferred) and in checked mode
 * (copies immediate); the summing kernel also in release mode with a
 * vn_pipe_barrier after every copy. All must give the reference values.
 */
#include <stdlib.h>
#include <string.h>

#include "vinci/kernel.h"
#include "vt.h"

static vn_device *dev;

enum { MAX_IN = 9, LEN = 3000 }; /* LEN: a multiple of 8 */

/* ---- n inputs summed tile by tile -------------------------------------------- */

typedef struct sum_args {
    vn_gm in[MAX_IN];
    vn_gm out;
    int32_t n_in;
    int64_t len, tile, in_off;
    bool barrier;
} sum_args;

/* out[i] = sum_k in_k[in_off + i] for i < len; tiles of `tile` floats (the
 * last one shorter, still a multiple of 8 floats: vn_copy_in's 32-byte rule),
 * tile j on block j % block_num. */
static void sum_kernel(vn_core *c, const void *p)
{
    const sum_args *a = p;
    vn_queue *q[MAX_IN];
    for (int32_t k = 0; k < a->n_in; k++) q[k] = vn_queue_new(c, VN_VECIN, 2, a->tile, VN_F32);
    vn_queue *qo = vn_queue_new(c, VN_VECOUT, 2, a->tile, VN_F32);
    int64_t step = a->tile * vn_block_num(c);
    for (int64_t t = a->tile * vn_block_idx(c); t < a->len; t += step) {
        int64_t n = a->len - t < a->tile ? a->len - t : a->tile;
        for (int32_t k = 0; k < a->n_in; k++) {
            vn_local x = vn_alloc(c, q[k]);
            vn_copy_in(c, x, a->in[k], a->in_off + t, n);
            if (a->barrier) vn_pipe_barrier(c);
            vn_enque(c, q[k], x);
        }
        vn_local o = vn_alloc(c, qo);
        for (int32_t k = 0; k < a->n_in; k++) {
            vn_local x = vn_deque(c, q[k]);
            if (k == 0)
                vn_vscalar(c, VN_VOP_ADDS, o, x, 0.0, n);
            else
                vn_vbinary(c, VN_VOP_ADD, o, o, x, n);
            vn_free(c, q[k], x);
        }
        vn_enque(c, qo, o);
        o = vn_deque(c, qo);
        vn_copy_out(c, a->out, t, o, n);
        if (a->barrier) vn_pipe_barrier(c);
        vn_free(c, qo, o);
    }
}

static float *filled(int64_t n, int seed)
{
    float *x = vn_aligned_alloc((size_t)n * sizeof(float), 64);
    for (int64_t i = 0; i < n; i++) x[i] = (float)((i * 7 + seed * 13) % 101) - 50.0f;
    return x;
}

/* One configuration, run deferred, checked and with barriers. */
static void check_sum(int32_t n_in, int64_t tile, int64_t in_off, int64_t out_off, bool stream)
{
    int64_t total = LEN + 1088; /* room for the largest offset and a guard */
    float *in[MAX_IN], *out = vn_aligned_alloc((size_t)total * sizeof(float), 64);
    sum_args a = {0};
    a.n_in = n_in, a.len = LEN, a.tile = tile, a.in_off = in_off;
    for (int32_t k = 0; k < n_in; k++) {
        in[k] = filled(total, k);
        a.in[k] = vn_gm_make(in[k], VN_F32, total);
    }
    vn_gm og = vn_gm_make(out + out_off, VN_F32, total - out_off);
    a.out = stream ? vn_gm_with_hint(og, VN_CACHE_STREAM) : og;
    for (int mode = 0; mode < 3; mode++) {
        for (int64_t i = 0; i < total; i++) out[i] = -999.0f;
        a.barrier = mode == 2;
        vn_launch_desc d = {sum_kernel, "xfer_sum", 3, &a, mode == 1, 0};
        VT_OK(vn_launch(dev, &d, NULL));
        int64_t bad = -1;
        for (int64_t i = 0; i < a.len && bad < 0; i++) {
            float want = 0.0f;
            for (int32_t k = 0; k < n_in; k++) want += in[k][in_off + i];
            if (out[out_off + i] != want) bad = i;
        }
        VT_CHECK(bad < 0,
                 "%d inputs, tile %lld, offsets %lld/%lld, stream %d, mode %d: element %lld",
                 (int)n_in, (long long)tile, (long long)in_off, (long long)out_off, (int)stream,
                 mode, (long long)bad);
        VT_CHECK(out[out_off + a.len] == -999.0f, "wrote past the end (mode %d)", mode);
    }
    for (int32_t k = 0; k < n_in; k++) vn_aligned_free(in[k]);
    vn_aligned_free(out);
}

/* 1..9 transfers pending at once (9 > VN_MAX_XFERS: the table fills and
 * flushes), tiles that are and are not multiples of a chunk, offsets that put
 * global tensors at every alignment against scratch, plain and streaming. */
static void test_interleaved_results(void)
{
    const int64_t tiles[] = {8, 72, 1024};
    const int64_t offs[] = {0, 8, 24, 1016};
    for (int32_t n = 1; n <= MAX_IN; n++)
        for (int ti = 0; ti < 3; ti++)
            for (int oi = 0; oi < 4; oi++)
                for (int s = 0; s < 2; s++) check_sum(n, tiles[ti], offs[oi], offs[3 - oi], s);
}

/* ---- hazards through global memory ---------------------------------------------- */

typedef struct hazard_args {
    vn_gm buf; /* 2 x 64 floats */
    vn_gm out; /* 64 floats */
} hazard_args;

/* Copies out the doubled first half over the second half, then copies the
 * second half back in (read after write through GM) and writes it to out;
 * then copies the first half in and, while that copy may be pending, writes
 * the first half (write after read): the value read must be the old one. */
static void hazard_kernel(vn_core *c, const void *p)
{
    const hazard_args *a = p;
    vn_queue *qi = vn_queue_new(c, VN_VECIN, 2, 64, VN_F32);
    vn_queue *qo = vn_queue_new(c, VN_VECOUT, 2, 64, VN_F32);
    vn_local x = vn_alloc(c, qi);
    vn_copy_in(c, x, a->buf, 0, 64);
    vn_enque(c, qi, x);
    x = vn_deque(c, qi);
    vn_local o = vn_alloc(c, qo);
    vn_vbinary(c, VN_VOP_ADD, o, x, x, 64);
    vn_free(c, qi, x);
    vn_enque(c, qo, o);
    o = vn_deque(c, qo);
    vn_copy_out(c, a->buf, 64, o, 64); /* second half = 2 * first */
    vn_free(c, qo, o);

    x = vn_alloc(c, qi);
    vn_copy_in(c, x, a->buf, 64, 64); /* must see the copy-out above */
    vn_enque(c, qi, x);
    vn_local y = vn_alloc(c, qi);
    vn_copy_in(c, y, a->buf, 0, 64); /* old first half ... */
    vn_enque(c, qi, y);
    o = vn_alloc(c, qo);
    vn_duplicate(c, o, 5.0, 64);
    vn_enque(c, qo, o);
    o = vn_deque(c, qo);
    vn_copy_out(c, a->buf, 0, o, 64); /* ... overwritten after it was read */
    vn_free(c, qo, o);
    x = vn_deque(c, qi);
    y = vn_deque(c, qi);
    o = vn_alloc(c, qo);
    vn_vbinary(c, VN_VOP_SUB, o, x, y, 64); /* 2 * old - old = old */
    vn_free(c, qi, x);
    vn_free(c, qi, y);
    vn_enque(c, qo, o);
    o = vn_deque(c, qo);
    vn_copy_out(c, a->out, 0, o, 64);
    vn_free(c, qo, o);
}

static void test_global_hazards(void)
{
    float *buf = vn_aligned_alloc(128 * sizeof(float), 64), *out = filled(64, 0);
    for (int checked = 0; checked <= 1; checked++) {
        for (int i = 0; i < 128; i++) buf[i] = (float)(i + 1);
        hazard_args a = {vn_gm_make(buf, VN_F32, 128), vn_gm_make(out, VN_F32, 64)};
        vn_launch_desc d = {hazard_kernel, "xfer_hazard", 1, &a, checked, 0};
        VT_OK(vn_launch(dev, &d, NULL));
        int bad = -1;
        for (int i = 0; i < 64 && bad < 0; i++)
            if (out[i] != (float)(i + 1) || buf[i] != 5.0f || buf[64 + i] != 2.0f * (i + 1))
                bad = i;
        VT_CHECK(bad < 0, "checked %d: element %d: out %g buf %g / %g", checked, bad,
                 bad < 0 ? 0.0 : out[bad], bad < 0 ? 0.0 : buf[bad], bad < 0 ? 0.0 : buf[64 + bad]);
    }
    vn_aligned_free(buf);
    vn_aligned_free(out);
}

/* ---- a buffer whose copy-out is pending ------------------------------------------ */

typedef struct reuse_args {
    vn_gm out; /* 2 x 64 floats */
    uintptr_t first, second;
} reuse_args;

/* One output buffer of a 1-buffer queue written twice: the second alloc must
 * wait for the first copy-out (else tile 0 would hold tile 1's values); with
 * a 2-buffer queue the second alloc must take the other buffer. */
static void pending_out_kernel(vn_core *c, const void *p)
{
    reuse_args *a = (reuse_args *)p;
    vn_queue *q1 = vn_queue_new(c, VN_VECOUT, 1, 64, VN_F32);
    vn_queue *q2 = vn_queue_new(c, VN_VECOUT, 2, 64, VN_F32);
    for (int t = 0; t < 2; t++) {
        vn_local o = vn_alloc(c, q1);
        vn_duplicate(c, o, (double)(t + 1), 64);
        vn_enque(c, q1, o);
        o = vn_deque(c, q1);
        vn_copy_out(c, a->out, t * 64, o, 64);
        vn_free(c, q1, o);
    }
    for (int t = 0; t < 2; t++) {
        vn_local o = vn_alloc(c, q2);
        if (t == 0) a->first = (uintptr_t)o.data;
        if (t == 1) a->second = (uintptr_t)o.data;
        vn_duplicate(c, o, (double)(t + 3), 64);
        vn_enque(c, q2, o);
        o = vn_deque(c, q2);
        vn_copy_out(c, a->out, 128 + t * 64, o, 64);
        vn_free(c, q2, o);
    }
}

static void test_pending_copy_out(void)
{
    float *out = vn_aligned_alloc(256 * sizeof(float), 64);
    for (int checked = 0; checked <= 1; checked++) {
        memset(out, 0, 256 * sizeof(float));
        reuse_args a = {vn_gm_make(out, VN_F32, 256), 0, 0};
        vn_launch_desc d = {pending_out_kernel, "xfer_pending_out", 1, &a, checked, 0};
        VT_OK(vn_launch(dev, &d, NULL));
        int bad = -1;
        for (int i = 0; i < 256 && bad < 0; i++)
            if (out[i] != (float)(i / 64 + 1)) bad = i;
        VT_CHECK(bad < 0, "checked %d: element %d is %g", checked, bad, bad < 0 ? 0.0 : out[bad]);
        if (!checked) VT_CHECK(a.first != a.second, "a buffer with a pending copy-out was reused");
    }
    vn_aligned_free(out);
}

/* ---- scalar access after the protocol's sync points ---------------------------- */

typedef struct scalar_args {
    vn_gm in;
    float seen[2];
} scalar_args;

static void scalar_kernel(vn_core *c, const void *p)
{
    scalar_args *a = (scalar_args *)p;
    vn_queue *q = vn_queue_new(c, VN_VECIN, 2, 64, VN_F32);
    vn_local x = vn_alloc(c, q);
    vn_copy_in(c, x, a->in, 0, 64);
    vn_enque(c, q, x);
    x = vn_deque(c, q);
    a->seen[0] = vn_ptr(float, x)[63];
    vn_free(c, q, x);
    x = vn_alloc(c, q);
    vn_copy_in(c, x, a->in, 64, 64);
    vn_pipe_barrier(c);
    a->seen[1] = vn_ptr(float, x)[0];
    vn_free(c, q, x);
}

static void test_scalar_after_sync(void)
{
    float *in = filled(128, 3);
    scalar_args a = {vn_gm_make(in, VN_F32, 128), {0, 0}};
    vn_launch_desc d = {scalar_kernel, "xfer_scalar", 1, &a, 0, 0};
    VT_OK(vn_launch(dev, &d, NULL));
    VT_CHECK(a.seen[0] == in[63], "after vn_deque: %g, want %g", a.seen[0], in[63]);
    VT_CHECK(a.seen[1] == in[64], "after vn_pipe_barrier: %g, want %g", a.seen[1], in[64]);
    vn_aligned_free(in);
}

int main(void)
{
    vn_device_options o = {0};
    o.num_threads = 2;
    if (vn_device_create(&o, &dev) != VN_OK) {
        fprintf(stderr, "%s\n", vn_last_error());
        return 1;
    }
    VT_RUN(test_interleaved_results);
    VT_RUN(test_global_hazards);
    VT_RUN(test_pending_copy_out);
    VT_RUN(test_scalar_after_sync);
    vn_device_destroy(dev);
    return vt_summary();
}
