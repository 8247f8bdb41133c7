/*
 * compile_infer.c — shape and dtype inference of one node of a model under
 * construction, through its operator's infer(). Unlike the front end's
 * inference, constant inputs show their data (vn_op_ctx.input_data), so
 * Reshape, Slice, Expand, ... can read shapes that constant folding has just
 * produced; the pass manager interleaves the two node by node.
 */
#include <stdio.h>
#include <string.h>

#include "graph/compile.h"

#define W     "vn_model_compile"
#define MAXIO 64

/* Non-NULL data for empty constants: "constant" must not read as "unknown". */
static const int64_t empty_const[8];

void vn_cg_op_ctx(const vn_model *m, int32_t node, vn_tensor_desc *in, const void **data,
                  vn_attrs *attrs, vn_op_ctx *ctx)
{
    const vn_cnode *n = &m->nodes[node];
    uint64_t packed = 0;
    for (int32_t k = 0; k < n->num_inputs; k++) {
        int32_t v = n->inputs[k];
        in[k].rank = -1;
        data[k] = NULL;
        if (v < 0) continue;
        in[k] = m->values[v].desc;
        if (m->values[v].kind == VN_CV_CONST && !m->values[v].packed_only)
            data[k] = m->values[v].data ? m->values[v].data : (const void *)empty_const;
        if (m->values[v].kind == VN_CV_CONST && m->values[v].packed_only && k < 64)
            packed |= (uint64_t)1 << k;
    }
    attrs->items = n->attrs;
    attrs->count = n->num_attrs;
    *ctx = (vn_op_ctx){n->def, m->device, in, n->num_inputs, attrs, n->name, data, packed};
}

/* "f32[2,3], (omitted), i64[4]" */
static const char *format_descs(const vn_tensor_desc *d, int32_t n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n && used < size; i++) {
        char one[160];
        int k = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                         d[i].rank < 0 ? "(omitted)" : vn_desc_format(&d[i], one, sizeof one));
        if (k < 0) break;
        used += (size_t)k;
    }
    return buf;
}

static vn_status check_node(const vn_model *m, int32_t node, const char *label)
{
    const vn_cnode *n = &m->nodes[node];
    const vn_op_def *def = n->def;
    if (!def)
        return vn_error(VN_ERR_UNSUPPORTED, W, "%s: %s: the operator is not supported", m->name,
                        label);
    if (n->num_inputs < def->min_inputs || n->num_inputs > def->max_inputs)
        return vn_error(VN_ERR_INVALID_ARG, W, "%s: %s: has %d inputs, the operator takes %d to %d",
                        m->name, label, (int)n->num_inputs, (int)def->min_inputs,
                        (int)def->max_inputs);
    if (n->num_outputs > def->num_outputs)
        return vn_error(VN_ERR_INVALID_ARG, W, "%s: %s: has %d outputs, the operator makes %d",
                        m->name, label, (int)n->num_outputs, (int)def->num_outputs);
    if (n->num_inputs > MAXIO || def->num_outputs > MAXIO)
        return vn_error(VN_ERR_UNSUPPORTED, W, "%s: %s: more than %d inputs or outputs", m->name,
                        label, MAXIO);
    for (int32_t k = 0; k < n->num_inputs; k++) {
        const vn_cvalue *v = n->inputs[k] >= 0 ? &m->values[n->inputs[k]] : NULL;
        if (v && v->dynamic) {
            char other[256];
            return vn_error(VN_ERR_UNSUPPORTED, W,
                            "%s: %s: input '%s' has a shape known only at run time (made by %s); "
                            "only If / Loop / Scan and graph outputs take such values",
                            m->name, label, v->name,
                            vn_cg_label(m, v->producer, other, sizeof other));
        }
        if (n->inputs[k] >= 0 && !m->values[n->inputs[k]].known)
            return vn_error(VN_ERR_INTERNAL, W, "%s: %s: input '%s' has no shape yet", m->name,
                            label, m->values[n->inputs[k]].name);
    }
    return VN_OK;
}

/* Give the node def->num_outputs outputs: unnamed ones become anonymous values. */
static vn_status widen_outputs(vn_model *m, int32_t node, const char *label)
{
    vn_cnode *n = &m->nodes[node];
    int32_t want = n->def->num_outputs;
    if (n->num_outputs < want) {
        int32_t *outs = vn_gmem_alloc(&m->mem, (size_t)want * sizeof *outs);
        if (!outs) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: %s: no memory", m->name, label);
        for (int32_t k = 0; k < want; k++) outs[k] = k < n->num_outputs ? n->outputs[k] : -1;
        n->outputs = outs;
        n->num_outputs = want;
    }
    for (int32_t k = 0; k < want; k++) {
        if (n->outputs[k] >= 0) continue;
        int32_t v = vn_cg_add_value(m, "", VN_CV_ACT); /* may move m->values, not m->nodes */
        if (v < 0) return VN_ERR_OUT_OF_MEMORY;
        m->values[v].producer = node;
        n->outputs[k] = v;
    }
    return VN_OK;
}

static bool value_read(const vn_model *m, int32_t v)
{
    if (m->values[v].output_index >= 0) return true;
    for (int32_t i = 0; i < m->num_nodes; i++)
        for (int32_t k = 0; !m->nodes[i].dead && k < m->nodes[i].num_inputs; k++)
            if (m->nodes[i].inputs[k] == v) return true;
    return false;
}

int32_t vn_cg_outputs_read(const vn_model *m, int32_t node)
{
    const vn_cnode *n = &m->nodes[node];
    int32_t count = n->num_outputs;
    while (count > 1 && (n->outputs[count - 1] < 0 || !value_read(m, n->outputs[count - 1])))
        count--;
    return count;
}

vn_status vn_cg_infer_node(vn_model *m, int32_t node)
{
    char label[256];
    vn_cg_label(m, node, label, sizeof label);
    vn_status st = check_node(m, node, label);
    if (st == VN_OK) st = widen_outputs(m, node, label);
    if (st != VN_OK) return st;
    const vn_cnode *n = &m->nodes[node];
    vn_tensor_desc in[MAXIO], out[MAXIO];
    const void *data[MAXIO];
    vn_attrs attrs;
    vn_op_ctx ctx;
    vn_cg_op_ctx(m, node, in, data, &attrs, &ctx);
    if (!ctx.node_name[0]) ctx.node_name = label;
    if (n->num_inputs > 0 && in[0].rank >= 0 && !(n->def->dtypes & VN_DTYPE_BIT(in[0].dtype)))
        return vn_error(VN_ERR_DTYPE, W, "%s: %s: input 0 is %s, which the operator does not take",
                        m->name, label, vn_dtype_name(in[0].dtype));
    memset(out, 0, sizeof out);
    if ((st = n->def->infer(&ctx, out)) != VN_OK) {
        char why[700], descs[512];
        snprintf(why, sizeof why, "%s", vn_last_error());
        return vn_error(st, W, "%s: %s: %s (inputs: %s)", m->name, label, why,
                        format_descs(in, n->num_inputs, descs, sizeof descs));
    }
    for (int32_t k = 0; k < n->num_outputs; k++) {
        vn_cvalue *v = &m->values[n->outputs[k]];
        v->desc = out[k];
        v->known = true;
    }
    return VN_OK;
}
