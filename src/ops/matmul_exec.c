/*
 * matmul_exec.c — the plan record of the matrix operators and its run: the
 * GEMM plan, the constant B packed once, and the loop of launches over the
 * outer batch dims (each launch covers the GEMM's own batch).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/matmul.h"

vn_mm_plan *vn_mm_plan_new(void)
{
    vn_mm_plan *p = calloc(1, sizeof *p);
    if (p) p->in_bias = p->in_residual = p->in_c = -1;
    return p;
}

void vn_mm_plan_free(void *plan_data)
{
    vn_mm_plan *p = plan_data;
    if (!p) return;
    vn_gemm_plan_destroy(p->gemm);
    if (!p->packed_borrowed) vn_aligned_free(p->packed_b);
    vn_op_plan_destroy(p->post_add);
    free(p);
}

vn_gemm_desc vn_mm_gemm_desc(const vn_mm_layout *lay)
{
    vn_gemm_desc d = vn_gemm_desc_default(lay->M, lay->N, lay->K);
    d.trans_a = lay->trans_a, d.trans_b = lay->trans_b;
    d.batch = lay->batch;
    d.stride_a = lay->stride_a, d.stride_b = lay->stride_b;
    d.stride_c = lay->batch > 1 ? lay->stride_c : lay->M * lay->N;
    d.stride_residual = d.stride_c;
    return d;
}

vn_status vn_mm_gemm_create(const char *where, vn_device *device, const vn_gemm_desc *desc,
                            vn_gemm_plan **out)
{
    vn_status st = vn_gemm_plan_create(device, desc, out);
    if (st == VN_OK) return VN_OK;
    char msg[512]; /* copied: vn_error formats into the buffer vn_last_error reads */
    snprintf(msg, sizeof msg, "%s", vn_last_error());
    return vn_error(st, where, "GEMM %lldx%lldx%lld: %s", (long long)desc->M, (long long)desc->N,
                    (long long)desc->K, msg);
}

vn_status vn_mm_plan_gemm(const char *where, vn_device *device, vn_mm_plan *p)
{
    return vn_mm_gemm_create(where, device, &p->desc, &p->gemm);
}

/* Element offsets of outer launch `it` for A, B and C. */
static void outer_offsets(const vn_mm_layout *lay, int64_t it, int64_t *oa, int64_t *ob,
                          int64_t *oc)
{
    *oa = *ob = *oc = 0;
    for (int32_t d = lay->outer_rank - 1; d >= 0; d--) {
        int64_t i = it % lay->outer_dims[d];
        it /= lay->outer_dims[d];
        *oa += i * lay->outer_a[d], *ob += i * lay->outer_b[d], *oc += i * lay->outer_c[d];
    }
}

vn_status vn_mm_pack_b(const char *where, vn_mm_plan *p, const void *b)
{
    if (!b) return vn_error(VN_ERR_INVALID_ARG, where, "constant B has no data (NULL)");
    if (!p->gemm) return vn_error(VN_ERR_INVALID_ARG, where, "the plan has no GEMM to pack for");
    int64_t packs = p->lay.b_outer ? p->lay.outer_count : 1;
    size_t one = vn_gemm_packed_b_size(p->gemm);
    /* at least one line: an empty B (K or N 0) packs to nothing */
    void *buf = vn_aligned_alloc(one * (size_t)(packs > 0 ? packs : 1) + 64, 64);
    if (!buf) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the packed B");
    size_t es = vn_dtype_size(p->desc.b_dtype);
    vn_status st = VN_OK;
    for (int64_t it = 0; it < packs && st == VN_OK; it++) {
        int64_t oa, ob, oc;
        outer_offsets(&p->lay, it, &oa, &ob, &oc);
        st = vn_gemm_pack_b(p->gemm, (const uint8_t *)b + ob * (int64_t)es,
                            (uint8_t *)buf + (size_t)it * one);
    }
    if (st != VN_OK) {
        vn_aligned_free(buf);
        return st;
    }
    if (!p->packed_borrowed) vn_aligned_free(p->packed_b);
    p->packed_borrowed = false;
    p->packed_b = buf;
    p->packed_one = one;
    return VN_OK;
}

vn_status vn_mm_plan_gemm_b(const char *where, const vn_op_ctx *ctx, int32_t b_index, vn_mm_plan *p)
{
    const void *data = ctx->input_data ? ctx->input_data[b_index] : NULL;
    const vn_attr *a = data ? NULL : vn_attrs_find(ctx->attrs, VN_MATMUL_CONST_B_ATTR);
    if (a && a->type != VN_ATTR_INT)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' must be an int (an address)",
                        VN_MATMUL_CONST_B_ATTR);
    if (a) data = (const void *)(intptr_t)a->i;
    p->desc.b_prepacked = data || (ctx->prepacked_inputs >> b_index & 1);
    vn_status st = vn_mm_plan_gemm(where, ctx->device, p);
    return st == VN_OK && data ? vn_mm_pack_b(where, p, data) : st;
}

vn_status vn_matmul_pack_constant_b(void *plan_data, const void *b)
{
    if (!plan_data)
        return vn_error(VN_ERR_INVALID_ARG, "vn_matmul_pack_constant_b", "plan data is NULL");
    return vn_mm_pack_b("vn_matmul_pack_constant_b", plan_data, b);
}

vn_status vn_matmul_plan_create_const_b(vn_device *device, const char *op_name,
                                        const vn_tensor_desc *inputs, int32_t num_inputs,
                                        const vn_attrs *attrs, const void *b, vn_op_plan **out)
{
    const char *w = "vn_matmul_plan_create_const_b";
    int32_t n = attrs ? attrs->count : 0;
    if (!b) return vn_error(VN_ERR_INVALID_ARG, w, "b is NULL");
    vn_attr *items = calloc((size_t)n + 1, sizeof *items);
    if (!items) return vn_error(VN_ERR_OUT_OF_MEMORY, w, "no memory for the attributes");
    if (n > 0) memcpy(items, attrs->items, (size_t)n * sizeof *items);
    items[n] =
        (vn_attr){.name = VN_MATMUL_CONST_B_ATTR, .type = VN_ATTR_INT, .i = (int64_t)(intptr_t)b};
    vn_attrs all = {items, n + 1};
    vn_status st = vn_op_plan_create(device, op_name, inputs, num_inputs, &all, out);
    free(items);
    return st;
}

static const void *at(const void *base, int64_t elems, size_t es)
{
    return base ? (const uint8_t *)base + elems * (int64_t)es : NULL;
}

vn_status vn_mm_execute(const vn_mm_plan *p, const vn_gemm_plan *gemm, const vn_mm_io *io,
                        vn_kernel_counters *counters)
{
    const vn_gemm_desc *d = &p->desc;
    size_t ea = vn_dtype_size(d->a_dtype), eb = vn_dtype_size(d->b_dtype);
    size_t ec = vn_dtype_size(d->c_dtype);
    vn_kernel_counters sum = {0};
    for (int64_t it = 0; it < p->lay.outer_count; it++) {
        int64_t oa, ob, oc;
        outer_offsets(&p->lay, it, &oa, &ob, &oc);
        vn_gemm_args g = {at(io->a, oa, ea),
                          at(io->b, ob, eb),
                          false,
                          (uint8_t *)io->c + oc * ec,
                          io->c_in,
                          io->bias,
                          at(io->residual, oc, sizeof(float)),
                          io->col_scale,
                          NULL};
        vn_kernel_counters c = {0};
        g.counters = &c;
        if (p->packed_b) {
            g.b = (const uint8_t *)p->packed_b + (p->lay.b_outer ? (size_t)it * p->packed_one : 0);
            g.b_packed = true;
        }
        vn_status st = vn_gemm_run(gemm, &g);
        if (st != VN_OK) return st;
        vn_kernel_counters_add(&sum, &c);
    }
    if (counters) *counters = sum;
    return VN_OK;
}

size_t vn_mm_f32_bytes(const vn_tensor_desc *d)
{
    if (d->rank < 0 || d->dtype == VN_F32) return 0;
    return (size_t)vn_ops_round_up(vn_desc_numel(d) * 4, 64);
}

const float *vn_mm_as_f32(const vn_tensor *t, void *ws)
{
    size_t n = (size_t)vn_desc_numel(&t->desc);
    if (t->desc.dtype == VN_F32) return t->data;
    if (t->desc.dtype == VN_BF16)
        vn_bf16_to_f32_array(t->data, ws, n);
    else
        vn_f16_to_f32_array(t->data, ws, n);
    return ws;
}
