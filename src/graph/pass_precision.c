/*
 * pass_precision.c — a reduced precision for the matrix products
 * (vn_compile_options.precision): with VN_PRECISION_BF16 every f32 MatMul,
 * Gemm, vinci::FusedMatMul and convolution gets the attribute compute = "bf16", which its
 * plan turns into a bf16 GEMM with f32 accumulation (ops/matmul.c): the
 * constant weights are packed to bf16 once, activations are rounded to bf16
 * as the GEMM packs them, and epilogues, outputs and every other operator
 * stay f32. Runs last, on the fused graph, at every optimisation level.
 *
 * Convolutions get the attribute too: their direct kernel and Winograd's
 * GEMM then run in bf16 (vdpbf16ps, ops/conv_plan.c) where the CPU has
 * AVX512_BF16; depthwise, GEMM-path and stem (plain-input) convolutions
 * stay f32.
 */
#include <string.h>

#include "graph/compile.h"
#include "graph/pass_fuse.h"

static bool matrix_product(const vn_model *m, const vn_cnode *n)
{
    static const char *const ops[][2] = {{"MatMul", ""},
                                         {"Gemm", ""},
                                         {"FusedMatMul", "vinci"},
                                         {"Conv", ""},
                                         {"FusedConv", "vinci"},
                                         {"ConvNC1HWC0", "vinci"},
                                         {"FusedConvNC1HWC0", "vinci"}};
    if (n->dead || n->num_inputs < 2 || n->inputs[0] < 0 || !m->values[n->inputs[0]].known ||
        m->values[n->inputs[0]].desc.dtype != VN_F32)
        return false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(n->op_type, ops[i][0]) && !strcmp(n->domain ? n->domain : "", ops[i][1]))
            return vn_fuse_attr_str(n, "compute", NULL) == NULL; /* the model's own choice stays */
    return false;
}

vn_status vn_pass_precision(vn_model *m, vn_pass_report *r)
{
    if (m->precision != VN_PRECISION_BF16) return VN_OK;
    for (int32_t i = 0; i < m->num_nodes; i++) {
        vn_cnode *n = &m->nodes[i];
        if (!matrix_product(m, n)) continue;
        vn_status st = vn_fuse_add_attr_str(m, n, "compute", "bf16");
        if (st != VN_OK) return st;
        vn_pass_note(r, n->op_type);
    }
    return VN_OK;
}
