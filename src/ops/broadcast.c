/*
 * broadcast.c — NumPy / ONNX broadcasting: shapes align on the right, a dim
 * of 1 stretches to the other operand's size (also to 0), other mismatches
 * are errors. The collapse then gives kernels the fewest, longest runs.
 */
#include <string.h>

#include "ops/broadcast.h"

/* Dim `d` of the output-aligned view of `in` (1 where `in` has no such dim). */
static int64_t aligned_dim(const vn_tensor_desc *in, int32_t out_rank, int32_t d)
{
    int32_t k = d - (out_rank - in->rank);
    return k < 0 ? 1 : in->dims[k];
}

vn_status vn_broadcast_shape(const char *where, const vn_tensor_desc *inputs, int32_t n,
                             vn_tensor_desc *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = inputs[0].dtype;
    for (int32_t i = 0; i < n; i++)
        if (inputs[i].rank > out->rank) out->rank = inputs[i].rank;
    for (int32_t d = 0; d < out->rank; d++) {
        int32_t owner = -1; /* input that fixed a non-1 size for this dim */
        out->dims[d] = 1;
        for (int32_t i = 0; i < n; i++) {
            int64_t v = aligned_dim(&inputs[i], out->rank, d);
            if (v == 1) continue;
            if (owner < 0) {
                owner = i;
                out->dims[d] = v;
            } else if (v != out->dims[d]) {
                char a[96], b[96];
                return vn_error(VN_ERR_SHAPE, where,
                                "inputs %s and %s do not broadcast (dim %d: %lld vs %lld)",
                                vn_desc_format(&inputs[owner], a, sizeof a),
                                vn_desc_format(&inputs[i], b, sizeof b), (int)d,
                                (long long)out->dims[d], (long long)v);
            }
        }
    }
    return VN_OK;
}

/* Strides of `in` in the output-aligned view; 0 on broadcast dims. */
static void aligned_strides(const vn_tensor_desc *in, const vn_tensor_desc *out, int64_t *s)
{
    int64_t step = 1;
    for (int32_t d = out->rank - 1; d >= 0; d--) {
        int64_t v = aligned_dim(in, out->rank, d);
        s[d] = (v == 1) ? 0 : step;
        step *= v;
    }
}

/* Every input contiguous across dims `outer` and `inner` (the output always is). */
static bool mergeable(const vn_bcast *b, int32_t outer, int32_t inner)
{
    for (int32_t i = 0; i < b->num_inputs; i++)
        if (b->strides[i][outer] != b->strides[i][inner] * b->dims[inner]) return false;
    return true;
}

static void move_dim(vn_bcast *b, int32_t to, int32_t from)
{
    b->dims[to] = b->dims[from];
    for (int32_t i = 0; i < b->num_inputs; i++) b->strides[i][to] = b->strides[i][from];
}

void vn_broadcast_collapse(const vn_tensor_desc *inputs, int32_t n, const vn_tensor_desc *out,
                           vn_bcast *b)
{
    int64_t s[VN_BCAST_MAX_INPUTS][VN_MAX_RANK];
    memset(b, 0, sizeof *b);
    b->num_inputs = n;
    for (int32_t i = 0; i < n; i++) aligned_strides(&inputs[i], out, s[i]);
    /* Drop size-1 dims: they move no pointer. */
    for (int32_t d = 0; d < out->rank; d++) {
        if (out->dims[d] == 1) continue;
        b->dims[b->rank] = out->dims[d];
        for (int32_t i = 0; i < n; i++) b->strides[i][b->rank] = s[i][d];
        b->rank++;
    }
    /* Fold each dim into the previous kept one when all inputs allow it. */
    int32_t r = 0;
    for (int32_t d = 0; d < b->rank; d++) {
        if (r > 0 && mergeable(b, r - 1, d)) {
            b->dims[r - 1] *= b->dims[d];
            for (int32_t i = 0; i < n; i++) b->strides[i][r - 1] = b->strides[i][d];
        } else {
            move_dim(b, r++, d);
        }
    }
    b->rank = r;
    if (b->rank == 0) { /* a single element */
        b->rank = 1;
        b->dims[0] = 1;
        for (int32_t i = 0; i < n; i++) b->strides[i][0] = 1;
    }
}
