/*
 * pass_fuse_qdq.c — "fuse_qdq" (O3): the QDQ form of an int8 model, as
 * onnxruntime's quantizer and most exporters write it,
 *
 *   DequantizeLinear(x_q, sx, zx) ──┐
 *   DequantizeLinear(w_q, sw, zw) ──┼── Conv [── Relu] ── QuantizeLinear(sy, zy)
 *   [f32 constant B | DequantizeLinear(b_i32, sb, zb)] ┘
 *
 * becomes one QLinearConv (DQ, DQ -> MatMul -> Q one QLinearMatMul), so the
 * product runs on the int8 GEMM (VNNI / AMX tiles) instead of in f32 after
 * dequantising. The rewrite reads the quantised tensors themselves: a
 * DequantizeLinear with other readers stays for them (as if duplicated, like
 * onnxruntime's EnsureUniqueDQForNodeUnit), one read only here dies.
 *
 * Only where the QLinear operator computes what the graph says (up to the
 * rounding of the final requantisation, one output step):
 *   - scales are f32 constants, finite and > 0; zero points constants (or
 *     absent: 0) of u8 / i8; x, y and the MatMul's A per tensor; w per tensor
 *     or per output channel (Conv: axis 0; MatMul: a constant 2-D B, axis 1)
 *     with one zero point value (the int8 GEMM takes one per operand; the
 *     QLinearConv scalar loops that take more are slower than f32); no blocked
 *     quantisation; DequantizeLinear outputs f32;
 *   - the Conv / MatMul output is read only by the Relu / QuantizeLinear;
 *   - a bias becomes i32 round(B[k] / (sx * sw[k])) (QLinearConv's B; sx*sw in
 *     f32 as onnxruntime's quantizer writes the bias scale, so its i32 bias
 *     comes back exactly); a value beyond i32 leaves the graph alone;
 *   - a Relu folds only where zy is the output type's lowest value: the
 *     QuantizeLinear is monotone, so Q(Relu(v)) = max(Q(v), zy), and the
 *     requantisation's saturation already clamps there (the QLinear operators
 *     have no clamp of their own).
 * Gemm is left alone: QLinearMatMul has no bias, alpha or transposes.
 * Only where int8 is the faster arithmetic (vn_cube_int8_native: VNNI or AMX;
 * VINCI_QDQ_INT8=1 forces the rewrite, 0 turns it off): on AVX2 the exact
 * int8 GEMM runs at about the f32 FMA rate, and with the im2col, transposes
 * and requantisation around it QDQ ResNet-18 took 68 ms rewritten against
 * 48 ms left in f32 (1 thread, Zen 3), whose results are as close to
 * onnxruntime (2 output steps).
 * DQ -> MaxPool -> Q with the same parameters on both sides becomes a MaxPool
 * on the quantised tensor (below).
 *
 * Why before inference (with fold_batchnorm): constant folding, which runs
 * during inference, would turn the weights' DequantizeLinear into f32
 * constants and lose the int8 weights. Every check is on constants and
 * attributes, and QLinearConv parses Conv's geometry (QLinearMatMul MatMul's
 * layout) from the same shapes, so the fused node infers wherever the
 * original did.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/pass_fuse.h"
#include "ops/cast.h"

#define MAX_ATTRS 32

/* A quantised operand: the integer tensor, its scale and zero point values
 * (zp -1: absent, a 0 of dtype dt is made at the rewrite). */
typedef struct qdq_operand {
    int32_t q, scale, zp;
    vn_dtype dt;
} qdq_operand;

typedef struct qdq_match {
    int32_t core, relu, quant; /* node indices; relu -1 when absent */
    int32_t dq[3];             /* the DequantizeLinear of x, w, bias (-1: none / f32 bias) */
    qdq_operand x, w, y;
    int32_t bias; /* Conv's input 2 (f32 constant or the bias DQ's output), -1 */
    int64_t per;  /* w's per-channel length (K or N), 1 when per tensor */
    bool is_conv;
} qdq_match;

static bool int8_type(vn_dtype dt)
{
    return dt == VN_U8 || dt == VN_I8;
}

static int32_t input(const vn_cnode *n, int32_t k)
{
    return k < n->num_inputs ? n->inputs[k] : -1;
}

/* The live ONNX node `op` producing v, or -1. */
static int32_t producer_op(const vn_model *m, int32_t v, const char *op)
{
    int32_t p = v >= 0 ? m->values[v].producer : -1;
    return p >= 0 && vn_fuse_is_op(&m->nodes[p], op) ? p : -1;
}

/* The output type of QuantizeLinear q: its zero point's, else output_dtype,
 * else u8 (ONNX); -1 when not u8 / i8. */
static int32_t quant_dtype(const vn_model *m, const vn_cnode *q)
{
    int32_t zp = input(q, 2);
    if (zp >= 0) return m->values[zp].kind == VN_CV_CONST ? (int32_t)m->values[zp].desc.dtype : -1;
    int64_t code = vn_fuse_attr_int(q, "output_dtype", 0);
    return code == 0 ? VN_U8 : vn_cast_dtype_from_onnx(code);
}

/* v's integer dtype before inference: known (a constant or a model input), or
 * the type of the QuantizeLinear producing it; -1 otherwise. */
static int32_t dtype_of(const vn_model *m, int32_t v)
{
    if (m->values[v].known) return (int32_t)m->values[v].desc.dtype;
    int32_t q = producer_op(m, v, "QuantizeLinear");
    return q >= 0 ? quant_dtype(m, &m->nodes[q]) : -1;
}

/* Every element of f32 constant v finite and > 0 (requantisation divides by it). */
static bool positive_scales(const vn_model *m, int32_t v)
{
    if (!vn_fuse_is_const(m, v, VN_F32)) return false;
    const float *s = m->values[v].data;
    for (int64_t i = 0; i < vn_desc_numel(&m->values[v].desc); i++)
        if (!(s[i] > 0.0f) || !isfinite(s[i])) return false;
    return true;
}

/* Integer constant v of dtype dt holds one value in every element. */
static bool uniform(const vn_model *m, int32_t v, vn_dtype dt)
{
    if (!vn_fuse_is_const(m, v, dt)) return false;
    const vn_cvalue *c = &m->values[v];
    for (int64_t i = 1; i < vn_desc_numel(&c->desc); i++)
        if (vn_cast_load_i64(dt, c->data, i) != vn_cast_load_i64(dt, c->data, 0)) return false;
    return true;
}

/* Scale / zero point of DequantizeLinear `dq` over a tensor of rank `rank`:
 * one value, or (per > 1) `per` values along axis `axis`. */
static bool dq_params(const vn_model *m, int32_t dq, int32_t rank, int64_t axis, int64_t per,
                      qdq_operand *o)
{
    const vn_cnode *n = &m->nodes[dq];
    o->q = input(n, 0), o->scale = input(n, 1), o->zp = input(n, 2);
    int64_t out_code = vn_fuse_attr_int(n, "output_dtype", 0);
    if (vn_fuse_attr_int(n, "block_size", 0) != 0 || (out_code != 0 && out_code != 1)) return false;
    if (o->q < 0 || !positive_scales(m, o->scale)) return false;
    const vn_tensor_desc *s = &m->values[o->scale].desc;
    int64_t numel = vn_desc_numel(s), a = vn_fuse_attr_int(n, "axis", 1);
    a += a < 0 ? rank : 0;
    bool ok = numel == 1 ? s->rank <= 1 : per > 1 && s->rank == 1 && numel == per && a == axis;
    if (!ok || o->zp < 0) return ok;
    const vn_tensor_desc *z = &m->values[o->zp].desc;
    return vn_fuse_is_const(m, o->zp, z->dtype) && vn_desc_numel(z) == numel;
}

/* Operand `k` of the core: a DequantizeLinear of a u8 / i8 tensor with one
 * zero point value; w may be per channel (per > 1) along `axis`. */
static bool read_operand(const vn_model *m, int32_t core, int32_t k, int64_t axis, int64_t per,
                         qdq_match *mt, qdq_operand *o)
{
    int32_t dq = producer_op(m, input(&m->nodes[core], k), "DequantizeLinear");
    if (dq < 0) return false;
    int32_t q = input(&m->nodes[dq], 0);
    int32_t rank = q >= 0 && m->values[q].known ? m->values[q].desc.rank : -1;
    if (!dq_params(m, dq, rank, axis, per, o)) return false;
    int32_t dt = o->zp >= 0 ? (int32_t)m->values[o->zp].desc.dtype : dtype_of(m, o->q);
    if (dt < 0 || !int8_type((vn_dtype)dt) || (o->zp >= 0 && !uniform(m, o->zp, (vn_dtype)dt)))
        return false;
    if (m->values[o->q].known && m->values[o->q].desc.dtype != (vn_dtype)dt) return false;
    o->dt = (vn_dtype)dt;
    mt->dq[k] = dq;
    return true;
}

/* w's per-channel extent: Conv K (axis 0), MatMul a constant 2-D B's N (axis 1). */
static int64_t weight_channels(const vn_model *m, const qdq_match *mt, int64_t *axis)
{
    int32_t dq = producer_op(m, input(&m->nodes[mt->core], 1), "DequantizeLinear");
    int32_t w = dq >= 0 ? input(&m->nodes[dq], 0) : -1;
    if (w < 0 || m->values[w].kind != VN_CV_CONST || !m->values[w].known) return 1;
    const vn_tensor_desc *d = &m->values[w].desc;
    *axis = mt->is_conv ? 0 : 1;
    if (mt->is_conv ? d->rank < 3 : d->rank != 2) return 1;
    return d->dims[*axis];
}

/* The QuantizeLinear's scale and zero point: per tensor, u8 / i8. */
static bool read_output(const vn_model *m, int32_t quant, qdq_operand *y)
{
    const vn_cnode *q = &m->nodes[quant];
    int32_t dt = quant_dtype(m, q);
    y->q = -1, y->scale = input(q, 1), y->zp = input(q, 2);
    if (dt < 0 || !int8_type((vn_dtype)dt) || vn_fuse_attr_int(q, "block_size", 0) != 0 ||
        !positive_scales(m, y->scale) || vn_desc_numel(&m->values[y->scale].desc) != 1 ||
        m->values[y->scale].desc.rank > 1)
        return false;
    y->dt = (vn_dtype)dt;
    return y->zp < 0 ||
           (vn_fuse_is_const(m, y->zp, y->dt) && vn_desc_numel(&m->values[y->zp].desc) == 1 &&
            m->values[y->zp].desc.rank <= 1);
}

/* y's zero point is its type's lowest value, where Relu changes nothing. */
static bool relu_foldable(const vn_model *m, const qdq_operand *y)
{
    int64_t zp = y->zp >= 0 ? vn_cast_load_i64(y->dt, m->values[y->zp].data, 0) : 0;
    return zp == (y->dt == VN_U8 ? 0 : -128);
}

/* The Conv / MatMul (through an optional Relu) whose output only `quant` reads. */
static bool find_core(const vn_model *m, int32_t quant, qdq_match *mt)
{
    int32_t v = input(&m->nodes[quant], 0);
    mt->relu = producer_op(m, v, "Relu");
    if (mt->relu >= 0) {
        if (vn_fuse_sole_reader(m, v) != quant || !relu_foldable(m, &mt->y)) return false;
        v = input(&m->nodes[mt->relu], 0);
    }
    int32_t p = v >= 0 ? m->values[v].producer : -1;
    if (p < 0 || vn_fuse_sole_reader(m, v) != (mt->relu >= 0 ? mt->relu : quant)) return false;
    const vn_cnode *n = &m->nodes[p];
    mt->is_conv = vn_fuse_is_op(n, "Conv");
    if (!mt->is_conv && !(vn_fuse_is_op(n, "MatMul") && n->num_inputs == 2)) return false;
    mt->core = p;
    return true;
}

static bool match(const vn_model *m, int32_t quant, qdq_match *mt)
{
    memset(mt, 0, sizeof *mt);
    mt->quant = quant, mt->bias = -1;
    mt->dq[0] = mt->dq[1] = mt->dq[2] = -1;
    if (!read_output(m, quant, &mt->y) || !find_core(m, quant, mt)) return false;
    int64_t axis = 0;
    mt->per = weight_channels(m, mt, &axis);
    if (!read_operand(m, mt->core, 0, 0, 1, mt, &mt->x) ||
        !read_operand(m, mt->core, 1, axis, mt->per, mt, &mt->w))
        return false;
    if (vn_desc_numel(&m->values[mt->w.scale].desc) == 1) mt->per = 1;
    mt->bias = mt->is_conv ? input(&m->nodes[mt->core], 2) : -1;
    return true;
}

/* ---- the bias ------------------------------------------------------------------------- */

/* Conv's f32 bias as written: a constant, or DequantizeLinear of an i32
 * constant ((b - zb) * sb in f32, as the operator computes it). */
static bool bias_f32(const vn_model *m, qdq_match *mt, int64_t k_out, float *b)
{
    if (vn_fuse_is_const(m, mt->bias, VN_F32) &&
        vn_desc_numel(&m->values[mt->bias].desc) == k_out) {
        memcpy(b, m->values[mt->bias].data, (size_t)k_out * sizeof *b);
        return true;
    }
    int32_t dq = producer_op(m, mt->bias, "DequantizeLinear");
    qdq_operand o;
    if (dq < 0 || !dq_params(m, dq, 1, 0, k_out, &o) || !vn_fuse_is_const(m, o.q, VN_I32) ||
        vn_desc_numel(&m->values[o.q].desc) != k_out)
        return false;
    const vn_cvalue *q = &m->values[o.q], *s = &m->values[o.scale];
    bool per = vn_desc_numel(&s->desc) > 1;
    for (int64_t k = 0; k < k_out; k++) {
        int64_t zb = o.zp >= 0 ? vn_cast_load_i64(m->values[o.zp].desc.dtype, m->values[o.zp].data,
                                                  per ? k : 0)
                               : 0;
        b[k] = (float)(vn_cast_load_i64(VN_I32, q->data, k) - zb) *
               ((const float *)s->data)[per ? k : 0];
    }
    mt->dq[2] = dq;
    return true;
}

/* The i32 bias constant round(B[k] / (sx * sw[k])), or -1 (none); *ok false when the
 * bias has another form, a value beyond i32, w's channels are unknown, or no memory. */
static int32_t bias_i32(vn_model *m, qdq_match *mt, bool *ok)
{
    *ok = true;
    if (mt->bias < 0) return -1;
    const vn_cvalue *w = &m->values[mt->w.q];
    int64_t k_out = w->known && w->desc.rank >= 1 ? w->desc.dims[0] : 0;
    float *b = k_out > 0 ? malloc((size_t)k_out * (sizeof(float) + sizeof(int32_t))) : NULL;
    *ok = b && bias_f32(m, mt, k_out, b);
    int32_t *q = (int32_t *)(b + k_out);
    float sx = *(const float *)m->values[mt->x.scale].data;
    const float *sw = m->values[mt->w.scale].data;
    for (int64_t k = 0; *ok && k < k_out; k++) {
        double v = rint((double)b[k] / (double)(sx * sw[mt->per > 1 ? k : 0]));
        *ok = fabs(v) <= 2147483647.0;
        q[k] = *ok ? (int32_t)v : 0;
    }
    vn_tensor_desc d = {VN_I32, 1, {k_out}};
    int32_t v = *ok ? vn_fuse_new_const(m, &d, q) : -1;
    *ok = *ok && v >= 0;
    free(b);
    return v;
}

/* ---- the rewrite ---------------------------------------------------------------------- */

/* A missing zero point becomes a scalar 0 of the operand's type. */
static bool zero_point(vn_model *m, qdq_operand *o)
{
    if (o->zp >= 0) return true;
    vn_tensor_desc d = {o->dt, 0, {0}};
    uint8_t zero = 0;
    o->zp = vn_fuse_new_const(m, &d, &zero);
    return o->zp >= 0;
}

/* Members: the core first (it names the change), then each node read only
 * inside the group, the QuantizeLinear (the anchor) last. */
static int32_t members(const vn_model *m, const qdq_match *mt, int32_t *list)
{
    int32_t n = 0;
    list[n++] = mt->core;
    for (int32_t k = 0; k < 3; k++) {
        int32_t dq = mt->dq[k];
        if (dq >= 0 && vn_fuse_sole_reader(m, m->nodes[dq].outputs[0]) == mt->core) list[n++] = dq;
    }
    if (mt->relu >= 0) list[n++] = mt->relu;
    list[n++] = mt->quant;
    return n;
}

static vn_status rewrite(vn_model *m, qdq_match *mt, vn_pass_report *r)
{
    const vn_cnode *core = &m->nodes[mt->core];
    bool ok = core->num_attrs <= MAX_ATTRS;
    int32_t bias = ok ? bias_i32(m, mt, &ok) : -1;
    if (!ok || !zero_point(m, &mt->x) || !zero_point(m, &mt->w) || !zero_point(m, &mt->y))
        return VN_OK; /* new constants nobody reads are harmless */
    core = &m->nodes[mt->core];
    vn_attr attrs[MAX_ATTRS];
    int32_t na = mt->is_conv ? core->num_attrs : 0;
    memcpy(attrs, core->attrs, (size_t)na * sizeof *attrs);
    int32_t ins[9] = {mt->x.q,  mt->x.scale, mt->x.zp, mt->w.q, mt->w.scale,
                      mt->w.zp, mt->y.scale, mt->y.zp, bias};
    vn_fuse_rewrite rw = {mt->is_conv ? "QLinearConv" : "QLinearMatMul",
                          "",
                          core->name,
                          ins,
                          mt->is_conv ? 9 : 8,
                          attrs,
                          na,
                          true};
    int32_t list[8];
    int32_t count = members(m, mt, list);
    bool done;
    return vn_fuse_apply(m, mt->quant, &rw, list, count, r, &done);
}

/* ---- DequantizeLinear -> MaxPool -> QuantizeLinear ----------------------------------
 * With the same scale and zero point on both sides the pool runs on the
 * quantised tensor (MaxPool takes u8 / i8), exactly: dequantising is
 * increasing (scale > 0), so the max of the dequantised values is the
 * dequantised max, and quantising a dequantised value with its own
 * parameters gives it back. */

/* Constants a and b hold the same one value of the same dtype, or both are absent. */
static bool same_param(const vn_model *m, int32_t a, int32_t b)
{
    if (a < 0 || b < 0) return a == b;
    const vn_cvalue *x = &m->values[a], *y = &m->values[b];
    return x->desc.dtype == y->desc.dtype && vn_desc_numel(&x->desc) == 1 &&
           vn_desc_numel(&y->desc) == 1 && !memcmp(x->data, y->data, vn_dtype_size(x->desc.dtype));
}

static bool pool_match(const vn_model *m, int32_t quant, qdq_match *mt)
{
    memset(mt, 0, sizeof *mt);
    mt->quant = quant, mt->relu = -1, mt->bias = -1;
    mt->dq[0] = mt->dq[1] = mt->dq[2] = -1;
    int32_t v = input(&m->nodes[quant], 0), p = producer_op(m, v, "MaxPool");
    if (p < 0 || (m->nodes[p].num_outputs > 1 && m->nodes[p].outputs[1] >= 0) ||
        vn_fuse_sole_reader(m, v) != quant || !read_output(m, quant, &mt->y))
        return false;
    mt->core = p;
    return read_operand(m, p, 0, 0, 1, mt, &mt->x) && mt->x.dt == mt->y.dt &&
           same_param(m, mt->x.scale, mt->y.scale) && same_param(m, mt->x.zp, mt->y.zp);
}

static vn_status pool_rewrite(vn_model *m, qdq_match *mt, vn_pass_report *r)
{
    const vn_cnode *pool = &m->nodes[mt->core];
    vn_fuse_rewrite rw = {"MaxPool", "",          pool->name,      &mt->x.q,
                          1,         pool->attrs, pool->num_attrs, true};
    int32_t list[8];
    int32_t count = members(m, mt, list);
    bool done;
    return vn_fuse_apply(m, mt->quant, &rw, list, count, r, &done);
}

/* Whether Conv / MatMul groups go to the int8 GEMM (see the header). */
static bool int8_wanted(void)
{
    const char *e = getenv("VINCI_QDQ_INT8");
    if (e && (!strcmp(e, "0") || !strcmp(e, "1"))) return e[0] == '1';
    return vn_cube_int8_native();
}

vn_status vn_pass_fuse_qdq(vn_model *m, vn_pass_report *r)
{
    bool int8 = int8_wanted();
    for (int32_t i = 0; i < m->num_nodes; i++) {
        qdq_match mt;
        if (!vn_fuse_is_op(&m->nodes[i], "QuantizeLinear")) continue;
        vn_status st = VN_OK;
        if (int8 && match(m, i, &mt))
            st = rewrite(m, &mt, r);
        else if (pool_match(m, i, &mt))
            st = pool_rewrite(m, &mt, r);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}
