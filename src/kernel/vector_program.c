/*
 * vector_program.c — vn_vprogram: an element-wise program run chunk by chunk
 * (see kernel.h), with the f32 kernels of the ISA table.
 *
 * Invariant: chunk i of every register is computed before chunk i + 1 of any;
 * an intermediate lives in a stack row for one chunk only; the last
 * instruction writes dst (through a staging row and non-temporal stores when
 * dst is a streamed window). Element-wise, so chunking changes no result, and
 * dst may be one of the inputs (identical, not partly overlapping: checked).
 */
#include "kernel/vector_internal.h"

enum { CHUNK = VN_VEC_STREAM_BYTES / 4 }; /* f32 elements of a row */

static const char call[] = "vn_vprogram";

/* A program's registers as the loop uses them: inputs, then one row per instruction. */
typedef struct prog_run {
    const vn_vinstr *instrs;
    int32_t num_instrs, num_inputs;
    vn_vop_kind kind[VN_VPROGRAM_MAX_INSTRS];
    const float *in[VN_VPROGRAM_MAX_INPUTS];
    float (*rows)[CHUNK];
} prog_run;

/* Every mode: the shape of the program (sources defined, f32 ops); fills the
 * op kinds and `used` (the inputs some instruction reads). */
static void check_program(vn_core *core, vn_local dst, const vn_local *inputs, prog_run *r,
                          int64_t n, bool *used, vn_site site)
{
    if (r->num_inputs < 0 || r->num_inputs > VN_VPROGRAM_MAX_INPUTS || r->num_instrs < 1 ||
        r->num_instrs > VN_VPROGRAM_MAX_INSTRS || n < 0)
        vn_core_fail(core, site, call, "%d inputs, %d instructions, n %lld (0..%d, 1..%d, >= 0)",
                     (int)r->num_inputs, (int)r->num_instrs, (long long)n, VN_VPROGRAM_MAX_INPUTS,
                     VN_VPROGRAM_MAX_INSTRS);
    if (dst.dtype != VN_F32)
        vn_core_fail(core, site, call, "dst is %s: programs run on f32", vn_dtype_name(dst.dtype));
    for (int32_t i = 0; i < r->num_inputs; i++) used[i] = false;
    for (int32_t k = 0; k < r->num_instrs; k++) {
        const vn_vinstr *in = &r->instrs[k];
        int32_t defined = r->num_inputs + k;
        bool known = (int)in->op >= 0 && in->op < VN_VOP_COUNT && vn_vop_supports(in->op, VN_F32);
        r->kind[k] = known ? vn_vop_kind_of(in->op) : VN_VOP_UNARY;
        bool binary = r->kind[k] == VN_VOP_BINARY;
        if (!known || in->src0 < 0 || in->src0 >= defined ||
            (binary && (in->src1 < 0 || in->src1 >= defined)))
            vn_core_fail(core, site, call,
                         "instruction %d (op %d, r%d, r%d) is not an f32 op on registers r0..r%d",
                         (int)k, (int)in->op, (int)in->src0, (int)in->src1, (int)defined - 1);
        if (in->src0 < r->num_inputs) used[in->src0] = true;
        if (binary && in->src1 < r->num_inputs) used[in->src1] = true;
    }
    for (int32_t i = 0; i < r->num_inputs; i++)
        if (used[i] && inputs[i].dtype != VN_F32)
            vn_core_fail(core, site, call, "input %d is %s: programs run on f32", (int)i,
                         vn_dtype_name(inputs[i].dtype));
}

/* Checked mode: the operands read and written, and no input partly overlapping dst. */
static void check_operands(vn_core *core, vn_local dst, const vn_local *inputs, int32_t num,
                           const bool *used, int64_t n, vn_site site)
{
    const uint8_t *d0 = dst.data, *d1 = d0 + n * 4;
    for (int32_t i = 0; i < num; i++) {
        if (!used[i]) continue;
        vn_vec_check_operand(core, inputs[i], VN_F32, "input", call, site);
        vn_vec_check_read_n(core, inputs[i], n, call, site);
        const uint8_t *a0 = inputs[i].data, *a1 = a0 + n * 4;
        if (a0 != d0 && a0 < d1 && d0 < a1)
            vn_core_fail(core, site, call,
                         "input %d partly overlaps dst (they must be one or apart)", (int)i);
    }
    vn_vec_check_operand(core, dst, VN_F32, "dst", call, site);
    vn_vec_check_write_n(core, dst, n, call, site);
}

static const float *reg(const prog_run *r, int32_t x, int64_t i)
{
    return x < r->num_inputs ? r->in[x] + i : r->rows[x - r->num_inputs];
}

/* One chunk of m elements at element i, each instruction in turn; the last
 * writes `out` (dst + i, or a staging row), streamed (non-temporal, straight
 * to dst + i) when `nt`. */
static void run_chunk(const vn_isa_table *t, const prog_run *r, float *out, int64_t i, int64_t m,
                      bool nt)
{
    for (int32_t k = 0; k < r->num_instrs; k++) {
        const vn_vinstr *in = &r->instrs[k];
        bool last = k == r->num_instrs - 1;
        float *d = last ? out : r->rows[k];
        const float *a = reg(r, in->src0, i);
        const float *b = r->kind[k] == VN_VOP_BINARY ? reg(r, in->src1, i) : NULL;
        if (last && nt)
            vn_f32_kernel_nt(t, r->kind[k], in->op, d, a, b, (float)in->scalar, m);
        else
            vn_f32_kernel(t, r->kind[k], in->op, d, a, b, (float)in->scalar, m);
    }
}

/* A program that is one binary op on two inputs and a ReLU of its result
 * (ReLU-Add) runs as one streamed kernel over the whole range, both ops in
 * registers (isa.h binary_relu_nt): no intermediate row. False when the
 * program is anything else. */
static bool run_binary_relu(const vn_isa_table *t, const prog_run *r, float *y, int64_t n)
{
    if (r->num_instrs != 2) return false;
    const vn_vinstr *op = &r->instrs[0], *act = &r->instrs[1];
    if (r->kind[0] != VN_VOP_BINARY || !t->binary_relu_nt[op->op] || act->op != VN_VOP_RELU ||
        act->src0 != r->num_inputs || op->src0 >= r->num_inputs || op->src1 >= r->num_inputs)
        return false;
    t->binary_relu_nt[op->op](y, r->in[op->src0], r->in[op->src1], n);
    return true;
}

void vn_vprogram_(vn_core *core, vn_local dst, const vn_local *inputs, int32_t num_inputs,
                  const vn_vinstr *instrs, int32_t num_instrs, int64_t n, vn_site site)
{
    vn_xfer_sync(core);
    _Alignas(64) float rows[VN_VPROGRAM_MAX_INSTRS][CHUNK];
    prog_run r = {instrs, num_instrs, num_inputs, {VN_VOP_UNARY}, {NULL}, rows};
    bool used[VN_VPROGRAM_MAX_INPUTS];
    check_program(core, dst, inputs, &r, n, used, site);
    if (core->checked) check_operands(core, dst, inputs, num_inputs, used, n, site);
    if (n == 0) return;
    for (int32_t i = 0; i < num_inputs; i++) r.in[i] = inputs[i].data;
    const vn_isa_table *t = vn_isa_table_get();
    bool stream = vn_window_streamed(dst);
    core->xfer_streamed |= stream;
    float *y = dst.data;
    core->counters.vector_elem_ops += n * num_instrs;
    if (stream && run_binary_relu(t, &r, y, n)) return;
    /* the last instruction streams straight to dst where it has a streamed
     * kernel; else it fills a staging row that stream_store copies out */
    bool nt = stream && vn_f32_has_nt(t, r.kind[num_instrs - 1], instrs[num_instrs - 1].op);
    bool staged = stream && !nt;
    for (int64_t i = 0, m; i < n; i += m) {
        m = stream ? vn_stream_chunk((uintptr_t)(y + i), 4, n - i)
                   : (n - i < CHUNK ? n - i : CHUNK);
        run_chunk(t, &r, staged ? rows[num_instrs - 1] : y + i, i, m, nt);
        if (staged) t->stream_store(y + i, rows[num_instrs - 1], (size_t)m * 4);
    }
}
