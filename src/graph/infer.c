/*
 * infer.c — shape and dtype inference: the main graph's nodes in topological
 * order, each through its registry entry's infer() (vinci/ops.h). Errors name
 * the node, its operator and the descriptors involved.
 */
#include <stdio.h>
#include <string.h>

#include "graph/infer.h"

#define W "vn_graph_infer"

/* "f32[2,3], (omitted), i64[4]" */
static const char *format_descs(const vn_tensor_desc *d, int32_t n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n && used < size; i++) {
        char one[160];
        int k = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                         vn_desc_format(&d[i], one, sizeof one));
        if (k < 0) break;
        used += (size_t)k;
    }
    return buf;
}

static vn_status check_arity(vn_graph *g, const char *label, const vn_op_def *def,
                             int32_t num_inputs, int32_t num_outputs)
{
    if (num_inputs < def->min_inputs || num_inputs > def->max_inputs)
        return vn_error(VN_ERR_INVALID_ARG, W, "%s: %s: has %d inputs, the operator takes %d to %d",
                        g->file, label, (int)num_inputs, (int)def->min_inputs,
                        (int)def->max_inputs);
    if (num_outputs > def->num_outputs)
        return vn_error(VN_ERR_INVALID_ARG, W, "%s: %s: has %d outputs, the operator makes %d",
                        g->file, label, (int)num_outputs, (int)def->num_outputs);
    return VN_OK;
}

static vn_status gather_inputs(vn_graph *g, vn_gbody *b, const vn_gnode *n, const char *label,
                               vn_tensor_desc *in, int32_t count)
{
    for (int32_t k = 0; k < count; k++) {
        int32_t v = n->inputs[k];
        in[k].rank = -1;
        if (v < 0) continue;
        if (!b->values[v].known)
            return vn_error(VN_ERR_INTERNAL, W, "%s: %s: input '%s' has no shape yet", g->file,
                            label, b->values[v].name);
        in[k] = b->values[v].desc;
    }
    return VN_OK;
}

/* An output the model declares with a fixed shape or a dtype must agree. */
static vn_status check_declared(vn_graph *g, const char *label, const vn_gvalue *val)
{
    const vn_value_info *decl = &val->info;
    const vn_tensor_desc *d = &val->desc;
    bool bad = decl->desc.rank >= 0 && decl->desc.rank != d->rank;
    for (int32_t i = 0; !bad && decl->desc.rank >= 0 && i < d->rank; i++)
        bad = decl->desc.dims[i] >= 0 && decl->desc.dims[i] != d->dims[i];
    bad = bad || (decl->onnx_dtype && decl->desc.dtype != d->dtype);
    if (!bad) return VN_OK;
    char got[160], want[160];
    return vn_error(VN_ERR_SHAPE, W, "%s: %s: output '%s' is inferred as %s, the model declares %s",
                    g->file, label, val->name, vn_desc_format(d, got, sizeof got),
                    vn_desc_format(&decl->desc, want, sizeof want));
}

static vn_status run_infer(vn_graph *g, const vn_gnode *n, const char *label,
                           const vn_tensor_desc *in, int32_t count, vn_tensor_desc *out)
{
    const vn_op_def *def = n->def;
    if (count > 0 && in[0].rank >= 0 && !(def->dtypes & VN_DTYPE_BIT(in[0].dtype))) {
        char d[160];
        return vn_error(VN_ERR_DTYPE, W, "%s: %s: input 0 is %s; the operator does not take %s",
                        g->file, label, vn_desc_format(&in[0], d, sizeof d),
                        vn_dtype_name(in[0].dtype));
    }
    vn_attrs attrs = {n->reg_attrs, n->num_reg_attrs};
    vn_op_ctx ctx = {def, NULL, in, count, &attrs, n->name[0] ? n->name : label, NULL, 0};
    vn_status st = def->infer(&ctx, out);
    if (st == VN_OK) return VN_OK;
    char why[700], descs[512];
    snprintf(why, sizeof why, "%s", vn_last_error());
    return vn_error(st, W, "%s: %s: %s (inputs: %s)", g->file, label, why,
                    format_descs(in, count, descs, sizeof descs));
}

vn_status vn_infer_node(vn_graph *g, vn_gbody *b, int32_t node)
{
    const vn_gnode *n = &b->nodes[node];
    if (vn_graph_builtin_op(n)) return VN_OK; /* Constant: known since loading */
    char label[256];
    vn_ir_node_label(b, node, label, sizeof label);
    int32_t count = n->num_inputs;
    while (count > 0 && n->inputs[count - 1] < 0) count--; /* trailing omitted inputs */
    vn_status st = check_arity(g, label, n->def, count, n->num_outputs);
    vn_tensor_desc in[64], out[64];
    if (st == VN_OK && (count > 64 || n->def->num_outputs > 64))
        st = vn_error(VN_ERR_UNSUPPORTED, W, "%s: %s: more than 64 inputs or outputs", g->file,
                      label);
    if (st == VN_OK) st = gather_inputs(g, b, n, label, in, count);
    if (st == VN_OK) st = run_infer(g, n, label, in, count, out);
    for (int32_t k = 0; k < n->num_outputs && st == VN_OK; k++) {
        int32_t v = n->outputs[k];
        if (v < 0) continue;
        b->values[v].desc = out[k];
        b->values[v].known = true;
        st = check_declared(g, label, &b->values[v]);
    }
    return st;
}

static void reset(vn_gbody *b)
{
    for (int32_t v = 0; v < b->num_values; v++) b->values[v].known = b->values[v].constant != NULL;
}

vn_status vn_graph_infer(vn_graph *graph, const vn_input_shape *shapes, int32_t num_shapes)
{
    if (!graph) return vn_error(VN_ERR_INVALID_ARG, W, "graph is NULL");
    if (num_shapes < 0 || (num_shapes > 0 && !shapes))
        return vn_error(VN_ERR_INVALID_ARG, W, "%d shapes at %p", (int)num_shapes,
                        (const void *)shapes);
    graph->inferred = false;
    vn_status st = vn_graph_check_supported(graph);
    if (st != VN_OK) return st;
    vn_gbody *b = graph->main;
    reset(b);
    if ((st = vn_infer_bind_inputs(graph, shapes, num_shapes)) != VN_OK) return st;
    for (int32_t i = 0; i < b->num_nodes && st == VN_OK; i++)
        st = vn_infer_node(graph, b, b->order[i]);
    graph->inferred = st == VN_OK;
    return st;
}
