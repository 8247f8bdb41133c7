/*
 * matmul_layout.c — ONNX MatMul shapes onto GEMM launches: 1-D operands,
 * batch broadcasting, and the collapse of the batch dims into one GEMM batch
 * plus an outer loop (see matmul.h for why B-less batches fold into M).
 */
#include <string.h>

#include "ops/matmul.h"

/* The matrix of an operand: its two last dims as stored, 1-D promoted
 * (A [K] -> [1, K], B [K] -> [K, 1], so the added dim is removed after). */
typedef struct operand {
    int64_t rows, cols;
    int32_t batch_rank;
    const int64_t *batch; /* dims before the matrix */
} operand;

static operand operand_of(const vn_tensor_desc *t, bool is_a)
{
    operand o = {1, 1, 0, t->dims};
    if (t->rank == 1) {
        o.rows = is_a ? 1 : t->dims[0];
        o.cols = is_a ? t->dims[0] : 1;
        return o;
    }
    o.rows = t->dims[t->rank - 2];
    o.cols = t->dims[t->rank - 1];
    o.batch_rank = t->rank - 2;
    return o;
}

/* Batch dim `d` of `o` aligned right in an output batch of `rank` dims. */
static int64_t batch_dim(const operand *o, int32_t rank, int32_t d)
{
    int32_t k = d - (rank - o->batch_rank);
    return k < 0 ? 1 : o->batch[k];
}

static vn_status mismatch(const char *where, const vn_tensor_desc *a, const vn_tensor_desc *b,
                          const char *what, long long x, long long y)
{
    char sa[128], sb[128];
    return vn_error(VN_ERR_SHAPE, where, "A %s and B %s do not multiply: %s (%lld vs %lld)",
                    vn_desc_format(a, sa, sizeof sa), vn_desc_format(b, sb, sizeof sb), what, x, y);
}

/* Output batch dims and the per-dim element strides of A, B and C. */
typedef struct batch_space {
    int32_t rank;
    int64_t dims[VN_MAX_RANK], sa[VN_MAX_RANK], sb[VN_MAX_RANK], sc[VN_MAX_RANK];
} batch_space;

static vn_status broadcast_batch(const char *where, const vn_tensor_desc *a,
                                 const vn_tensor_desc *b, const operand *oa, const operand *ob,
                                 batch_space *s)
{
    s->rank = oa->batch_rank > ob->batch_rank ? oa->batch_rank : ob->batch_rank;
    for (int32_t d = 0; d < s->rank; d++) {
        int64_t x = batch_dim(oa, s->rank, d), y = batch_dim(ob, s->rank, d);
        if (x != y && x != 1 && y != 1) return mismatch(where, a, b, "batch dims differ", x, y);
        s->dims[d] = x == 1 ? y : x;
    }
    int64_t step_a = oa->rows * oa->cols, step_b = ob->rows * ob->cols;
    for (int32_t d = s->rank - 1; d >= 0; d--) {
        int64_t x = batch_dim(oa, s->rank, d), y = batch_dim(ob, s->rank, d);
        s->sa[d] = x == 1 ? 0 : step_a;
        s->sb[d] = y == 1 ? 0 : step_b;
        step_a *= x, step_b *= y;
    }
    return VN_OK;
}

/* Drop batch dims of size 1 (they move nothing) and set C's dense strides. */
static void squeeze_batch(batch_space *s, int64_t mat_c)
{
    int32_t r = 0;
    for (int32_t d = 0; d < s->rank; d++) {
        if (s->dims[d] == 1) continue;
        s->dims[r] = s->dims[d], s->sa[r] = s->sa[d], s->sb[r] = s->sb[d];
        r++;
    }
    s->rank = r;
    int64_t step = mat_c;
    for (int32_t d = r - 1; d >= 0; d--) {
        s->sc[d] = step;
        step *= s->dims[d];
    }
}

/* Innermost dims that collapse into one stride for every operand become the
 * GEMM batch; the rest the outer loop. */
static void collapse(const batch_space *s, vn_mm_layout *lay)
{
    lay->batch = 1;
    lay->outer_rank = 0;
    lay->outer_count = 1;
    if (s->rank == 0) return;
    int32_t in = s->rank - 1;
    int64_t count = s->dims[in];
    lay->stride_a = s->sa[in], lay->stride_b = s->sb[in], lay->stride_c = s->sc[in];
    while (in > 0 && s->sa[in - 1] == lay->stride_a * count &&
           s->sb[in - 1] == lay->stride_b * count && s->sc[in - 1] == lay->stride_c * count)
        count *= s->dims[--in];
    lay->batch = count;
    for (int32_t d = 0; d < in; d++) {
        lay->outer_dims[d] = s->dims[d];
        lay->outer_a[d] = s->sa[d], lay->outer_b[d] = s->sb[d], lay->outer_c[d] = s->sc[d];
        lay->outer_count *= s->dims[d];
        lay->b_outer |= s->sb[d] != 0;
    }
    lay->outer_rank = in;
}

void vn_mm_layout_2d(int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b, vn_mm_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    lay->M = M, lay->N = N, lay->K = K;
    lay->trans_a = trans_a, lay->trans_b = trans_b;
    lay->batch = 1;
    lay->outer_count = 1;
}

/* Output shape: the batch dims, then M unless A was 1-D, N unless B was. */
static void output_shape(const vn_tensor_desc *a, const vn_tensor_desc *b, const batch_space *s,
                         int64_t M, int64_t N, vn_tensor_desc *y)
{
    memset(y, 0, sizeof *y);
    y->dtype = a->dtype;
    for (int32_t d = 0; d < s->rank; d++) y->dims[y->rank++] = s->dims[d];
    if (a->rank > 1) y->dims[y->rank++] = M;
    if (b->rank > 1) y->dims[y->rank++] = N;
}

vn_status vn_mm_layout_nd(const char *where, const vn_tensor_desc *a, const vn_tensor_desc *b,
                          bool trans_a, bool trans_b, vn_tensor_desc *y, vn_mm_layout *lay)
{
    char sa[128], sb[128];
    if (a->rank < 1 || b->rank < 1)
        return vn_error(VN_ERR_SHAPE, where, "A %s and B %s: operands must have rank >= 1",
                        vn_desc_format(a, sa, sizeof sa), vn_desc_format(b, sb, sizeof sb));
    trans_a &= a->rank > 1, trans_b &= b->rank > 1; /* a vector has no transpose */
    operand oa = operand_of(a, true), ob = operand_of(b, false);
    int64_t M = trans_a ? oa.cols : oa.rows, Ka = trans_a ? oa.rows : oa.cols;
    int64_t Kb = trans_b ? ob.cols : ob.rows, N = trans_b ? ob.rows : ob.cols;
    if (Ka != Kb) return mismatch(where, a, b, "inner dims K differ", Ka, Kb);
    batch_space s;
    vn_status st = broadcast_batch(where, a, b, &oa, &ob, &s);
    if (st != VN_OK) return st;
    output_shape(a, b, &s, M, N, y);
    vn_mm_layout_2d(M, N, Ka, trans_a, trans_b, lay);
    squeeze_batch(&s, M * N);
    bool b_batched = false;
    for (int32_t d = 0; d < s.rank; d++) b_batched |= s.sb[d] != 0;
    if (!b_batched && !trans_a) { /* A is dense over the batch: one tall product */
        for (int32_t d = 0; d < s.rank; d++) lay->M *= s.dims[d];
        return VN_OK;
    }
    collapse(&s, lay);
    return VN_OK;
}
