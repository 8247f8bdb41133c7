/*
 * vector_program.c — vn_vprogram: an element-wise program run chunk by chunk
 * (see kernel.h), with the f32 kernels of the ISA table.
 *
 * Invariant: chunk i of every register is computed before chunk i + 1 of any;
 * an intermediate lives in a 512-byte stack row for one chunk only; the last
 * instruction writes dst (through a staging row and non-temporal stores when
 * dst is a streamed window). Element-wise, so chunking changes no result and
 * dst may be one of the inputs.
 */
#include "kernel/isa.h"
#include "kernel/vector_internal.h"

enum { CHUNK = 128 }; /* f32 elements: 512 bytes */

static const char call[] = "vn_vprogram";

/* Every mode: the shape of the program (sources defined, op kinds, f32). */
static void check_program(vn_core *core, vn_local dst, const vn_local *inputs, int32_t num_inputs,
                          const vn_vinstr *instrs, int32_t num_instrs, vn_site site)
{
    if (num_inputs < 0 || num_inputs > VN_VPROGRAM_MAX_INPUTS || num_instrs < 1 ||
        num_instrs > VN_VPROGRAM_MAX_INSTRS)
        vn_core_fail(core, site, call, "%d inputs and %d instructions (0..%d, 1..%d)",
                     (int)num_inputs, (int)num_instrs, VN_VPROGRAM_MAX_INPUTS,
                     VN_VPROGRAM_MAX_INSTRS);
    if (dst.dtype != VN_F32)
        vn_core_fail(core, site, call, "dst is %s: programs run on f32", vn_dtype_name(dst.dtype));
    for (int32_t i = 0; i < num_inputs; i++)
        if (inputs[i].dtype != VN_F32)
            vn_core_fail(core, site, call, "input %d is %s: programs run on f32", (int)i,
                         vn_dtype_name(inputs[i].dtype));
    for (int32_t k = 0; k < num_instrs; k++) {
        const vn_vinstr *in = &instrs[k];
        int32_t defined = num_inputs + k;
        bool known = (int)in->op >= 0 && in->op < VN_VOP_COUNT && vn_vop_supports(in->op, VN_F32);
        bool binary = known && vn_vop_kind_of(in->op) == VN_VOP_BINARY;
        if (!known || in->src0 < 0 || in->src0 >= defined ||
            (binary && (in->src1 < 0 || in->src1 >= defined)))
            vn_core_fail(core, site, call,
                         "instruction %d (op %d, r%d, r%d) is not an f32 op on registers r0..r%d",
                         (int)k, (int)in->op, (int)in->src0, (int)in->src1, (int)defined - 1);
    }
}

/* Checked mode: the operands and the bytes read and written. */
static void check_operands(vn_core *core, vn_local dst, const vn_local *inputs, int32_t num_inputs,
                           int64_t n, vn_site site)
{
    if (n < 0) vn_core_fail(core, site, call, "negative count %lld", (long long)n);
    for (int32_t i = 0; i < num_inputs; i++) {
        vn_vec_check_operand(core, inputs[i], VN_F32, "input", call, site);
        vn_vec_check_read_n(core, inputs[i], n, call, site);
    }
    vn_vec_check_operand(core, dst, VN_F32, "dst", call, site);
    vn_vec_check_write_n(core, dst, n, call, site);
}

/* One chunk of m elements at element i: each instruction in turn. */
static void run_chunk(const vn_isa_table *t, const vn_vinstr *instrs, int32_t num_instrs,
                      const float **in, int32_t num_inputs, float (*rows)[CHUNK], float *out,
                      int64_t i, int64_t m)
{
    for (int32_t k = 0; k < num_instrs; k++) {
        const vn_vinstr *ins = &instrs[k];
        const float *a = ins->src0 < num_inputs ? in[ins->src0] + i : rows[ins->src0 - num_inputs];
        float *d = k == num_instrs - 1 && out ? out + i : rows[k];
        switch (vn_vop_kind_of(ins->op)) {
        case VN_VOP_UNARY:
            t->unary[ins->op](d, a, m);
            break;
        case VN_VOP_BINARY: {
            const float *b =
                ins->src1 < num_inputs ? in[ins->src1] + i : rows[ins->src1 - num_inputs];
            t->binary[ins->op](d, a, b, m);
            break;
        }
        case VN_VOP_SCALAR:
            t->scalar[ins->op](d, a, (float)ins->scalar, m);
            break;
        }
    }
}

void vn_vprogram_(vn_core *core, vn_local dst, const vn_local *inputs, int32_t num_inputs,
                  const vn_vinstr *instrs, int32_t num_instrs, int64_t n, vn_site site)
{
    vn_xfer_sync(core);
    check_program(core, dst, inputs, num_inputs, instrs, num_instrs, site);
    if (core->checked) check_operands(core, dst, inputs, num_inputs, n, site);
    if (n <= 0) return;
    const vn_isa_table *t = vn_isa_table_get();
    const float *in[VN_VPROGRAM_MAX_INPUTS];
    for (int32_t i = 0; i < num_inputs; i++) in[i] = inputs[i].data;
    _Alignas(64) float rows[VN_VPROGRAM_MAX_INSTRS][CHUNK];
    bool stream = vn_window_streamed(dst);
    core->xfer_streamed |= stream;
    float *y = dst.data;
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        run_chunk(t, instrs, num_instrs, in, num_inputs, rows, stream ? NULL : y, i, m);
        if (stream) t->stream_store(y + i, rows[num_instrs - 1], (size_t)m * 4);
    }
    core->counters.vector_elem_ops += n * num_instrs;
}
