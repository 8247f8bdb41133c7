/*
 * fused_program.c — fused element-wise programs as data: validation, the
 * register assignment the kernel follows, and the attribute encoding.
 *
 * Register assignment invariant: two registers share a VECCALC slot only if
 * their live ranges [definition, last use] do not overlap, except that an
 * instruction may write the slot of an operand it reads for the last time
 * (element-wise instructions allow dst == src); likewise the VECOUT buffer
 * holds a chain of values ending in the result, one at a time (staged plans;
 * computed in place, OUT is the output window and holds only the result).
 */
#include <string.h>

#include "ops/fused.h"

static vn_dtype compute_dtype(vn_dtype io)
{
    return io == VN_I32 ? VN_I32 : VN_F32;
}

static vn_status check_src(const char *where, int32_t k, const char *name, int32_t src,
                           int32_t defined)
{
    if (src < 0 || src >= defined)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "instruction %d: %s = r%d is not defined yet (r0..r%d)", (int)k, name,
                        (int)src, (int)defined - 1);
    return VN_OK;
}

vn_status vn_fused_validate(const char *where, const vn_fused_program *prog, int32_t num_inputs,
                            vn_dtype dtype)
{
    if (!prog) return vn_error(VN_ERR_INVALID_ARG, where, "program is NULL");
    if (prog->num_inputs != num_inputs)
        return vn_error(VN_ERR_INVALID_ARG, where, "program has %d inputs, %d tensors given",
                        (int)prog->num_inputs, (int)num_inputs);
    if (num_inputs < 1 || num_inputs > VN_FUSED_MAX_INPUTS)
        return vn_error(VN_ERR_INVALID_ARG, where, "%d inputs (1..%d supported)", (int)num_inputs,
                        VN_FUSED_MAX_INPUTS);
    if (prog->num_instrs < 1 || prog->num_instrs > VN_FUSED_MAX_INSTRS)
        return vn_error(VN_ERR_INVALID_ARG, where, "%d instructions (1..%d supported)",
                        (int)prog->num_instrs, VN_FUSED_MAX_INSTRS);
    vn_dtype cdt = compute_dtype(dtype);
    for (int32_t k = 0; k < prog->num_instrs; k++) {
        const vn_fused_instr *in = &prog->instrs[k];
        if ((unsigned)in->op >= VN_VOP_COUNT)
            return vn_error(VN_ERR_INVALID_ARG, where, "instruction %d: invalid op %d", (int)k,
                            (int)in->op);
        vn_status st = check_src(where, k, "src0", in->src0, num_inputs + k);
        if (st == VN_OK && vn_vop_kind_of(in->op) == VN_VOP_BINARY)
            st = check_src(where, k, "src1", in->src1, num_inputs + k);
        if (st != VN_OK) return st;
        if (!vn_vop_supports(in->op, cdt))
            return vn_error(VN_ERR_DTYPE, where, "instruction %d: %s is not defined for %s", (int)k,
                            vn_vop_name(in->op), vn_dtype_name(dtype));
    }
    return VN_OK;
}

/* ---- register assignment ------------------------------------------------------ */

typedef struct slot_pool {
    int16_t free[VN_FUSED_MAX_REGS];
    int32_t num_free, num_slots;
} slot_pool;

static int16_t slot_take(slot_pool *s)
{
    return s->num_free > 0 ? s->free[--s->num_free] : (int16_t)s->num_slots++;
}

static void release_if_dead(vn_fused_plan *p, slot_pool *s, int32_t reg, int32_t k)
{
    if (p->reg_kind[reg] == VN_REG_SLOT && p->last_use[reg] == k) {
        s->free[s->num_free++] = p->reg_index[reg];
        p->last_use[reg] = (int16_t)(-2 - k); /* released once, even if read twice */
    }
}

static void compute_last_use(vn_fused_plan *p)
{
    const vn_fused_program *g = &p->prog;
    for (int32_t r = 0; r < VN_FUSED_MAX_REGS; r++) p->last_use[r] = -1;
    for (int32_t k = 0; k < g->num_instrs; k++) {
        p->last_use[g->instrs[k].src0] = (int16_t)k;
        if (vn_vop_kind_of(g->instrs[k].op) == VN_VOP_BINARY)
            p->last_use[g->instrs[k].src1] = (int16_t)k;
    }
}

static void assign_inputs(vn_fused_plan *p, slot_pool *s)
{
    p->num_consts = 0;
    for (int32_t i = 0; i < p->prog.num_inputs; i++) {
        if (p->last_use[i] < 0) {
            p->reg_kind[i] = VN_REG_UNUSED;
        } else if (p->cls[i] == VN_FUSED_SCALAR || p->cls[i] == VN_FUSED_ROWCONST) {
            p->reg_kind[i] = VN_REG_CONST;
            p->reg_index[i] = (int16_t)p->num_consts++;
        } else if (p->cdt != p->io) {
            p->reg_kind[i] = VN_REG_SLOT; /* the cast target */
            p->reg_index[i] = slot_take(s);
        } else {
            p->reg_kind[i] = VN_REG_QUEUE;
        }
    }
}

/* The values that live in the VECOUT buffer: the last instruction's result
 * and, backwards from it, each operand of an OUT instruction that is an
 * intermediate read there for the last time (the first eligible of src0,
 * src1). Each such value lives from its definition to the next one's, so
 * OUT holds one value at a time and each link writes OUT over the operand
 * it reads (dst == src), sparing a VECCALC slot and its UB per link. */
static void chain_into_out(const vn_fused_plan *p, bool *out)
{
    const vn_fused_program *g = &p->prog;
    memset(out, 0, VN_FUSED_MAX_REGS * sizeof *out);
    if (p->cdt != p->io) return; /* the result is cast into OUT from a slot */
    int32_t k = g->num_instrs - 1;
    out[g->num_inputs + k] = true;
    if (p->in_place) return; /* OUT is global memory: nothing is read back from it */
    for (;;) {
        const vn_fused_instr *in = &g->instrs[k];
        int32_t srcs[2] = {in->src0, vn_vop_kind_of(in->op) == VN_VOP_BINARY ? in->src1 : -1};
        int32_t next = -1;
        for (int i = 0; i < 2 && next < 0; i++)
            if (srcs[i] >= g->num_inputs && p->last_use[srcs[i]] == k) next = srcs[i];
        if (next < 0) return;
        out[next] = true;
        k = next - g->num_inputs;
    }
}

void vn_fused_assign_registers(vn_fused_plan *p)
{
    const vn_fused_program *g = &p->prog;
    slot_pool s = {{0}, 0, 0};
    bool out[VN_FUSED_MAX_REGS];
    compute_last_use(p);
    chain_into_out(p, out);
    assign_inputs(p, &s);
    int16_t saved[VN_FUSED_MAX_REGS];
    memcpy(saved, p->last_use, sizeof saved);
    for (int32_t k = 0; k < g->num_instrs; k++) {
        int32_t dst = g->num_inputs + k;
        release_if_dead(p, &s, g->instrs[k].src0, k);
        if (vn_vop_kind_of(g->instrs[k].op) == VN_VOP_BINARY)
            release_if_dead(p, &s, g->instrs[k].src1, k);
        if (out[dst]) {
            p->reg_kind[dst] = VN_REG_OUT;
        } else {
            p->reg_kind[dst] = VN_REG_SLOT;
            p->reg_index[dst] = slot_take(&s);
        }
    }
    memcpy(p->last_use, saved, sizeof saved);
    p->num_slots = s.num_slots;
}

/* ---- attributes --------------------------------------------------------------------- */

void vn_fused_to_attrs(const vn_fused_program *prog, vn_fused_attr_store *st)
{
    int32_t n = prog->num_instrs;
    for (int32_t k = 0; k < n; k++) {
        st->ops[k] = prog->instrs[k].op;
        st->src0[k] = prog->instrs[k].src0;
        st->src1[k] = prog->instrs[k].src1;
        st->scalars[k] = (float)prog->instrs[k].scalar;
    }
    st->items[0] = (vn_attr){.name = "ops", .type = VN_ATTR_INTS, .ints = st->ops, .count = n};
    st->items[1] = (vn_attr){.name = "src0", .type = VN_ATTR_INTS, .ints = st->src0, .count = n};
    st->items[2] = (vn_attr){.name = "src1", .type = VN_ATTR_INTS, .ints = st->src1, .count = n};
    st->items[3] =
        (vn_attr){.name = "scalars", .type = VN_ATTR_FLOATS, .floats = st->scalars, .count = n};
    st->attrs = (vn_attrs){st->items, 4};
}

/* An attribute of `type` with exactly `n` values; NULL (message set) if not. */
static const vn_attr *list_attr(const char *where, const vn_attrs *attrs, const char *name,
                                vn_attr_type type, int32_t n, bool required, vn_status *st)
{
    const vn_attr *a = vn_attrs_find(attrs, name);
    *st = VN_OK;
    if (!a) {
        if (required)
            *st = vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' (the program) is missing",
                           name);
        return NULL;
    }
    bool ok = a->type == type && (n < 0 || a->count == n) &&
              (type == VN_ATTR_INTS ? a->ints != NULL : a->floats != NULL);
    if (!ok || a->count < 1 || a->count > VN_FUSED_MAX_INSTRS)
        *st = vn_error(VN_ERR_INVALID_ARG, where,
                       "attribute '%s' must be a list of %s with %s values (1..%d)", name,
                       type == VN_ATTR_INTS ? "ints" : "floats",
                       n < 0 ? "the program's" : "as many", VN_FUSED_MAX_INSTRS);
    return *st == VN_OK ? a : NULL;
}

/* Out-of-range register numbers become -1, which validation rejects. */
static int16_t reg16(int64_t v)
{
    return v < 0 || v > INT16_MAX ? -1 : (int16_t)v;
}

vn_status vn_fused_from_attrs(const char *where, const vn_attrs *attrs, int32_t num_inputs,
                              vn_fused_program *prog)
{
    vn_status st;
    const vn_attr *ops = list_attr(where, attrs, "ops", VN_ATTR_INTS, -1, true, &st);
    if (!ops) return st;
    int32_t n = ops->count;
    const vn_attr *s0 = list_attr(where, attrs, "src0", VN_ATTR_INTS, n, true, &st);
    if (!s0) return st;
    const vn_attr *s1 = list_attr(where, attrs, "src1", VN_ATTR_INTS, n, false, &st);
    if (st != VN_OK) return st;
    const vn_attr *sc = list_attr(where, attrs, "scalars", VN_ATTR_FLOATS, n, false, &st);
    if (st != VN_OK) return st;
    memset(prog, 0, sizeof *prog);
    prog->num_inputs = num_inputs;
    prog->num_instrs = n;
    for (int32_t k = 0; k < n; k++) {
        int64_t op = ops->ints[k];
        prog->instrs[k].op = (op >= 0 && op < VN_VOP_COUNT) ? (vn_vop)op : VN_VOP_COUNT;
        prog->instrs[k].src0 = reg16(s0->ints[k]);
        prog->instrs[k].src1 = s1 ? reg16(s1->ints[k]) : -1;
        prog->instrs[k].scalar = sc ? sc->floats[k] : 0.0;
    }
    return VN_OK;
}
