/*
 * fold_shape.c — Shape and Size folding: the model is compiled for fixed
 * input shapes, so every inferred shape is static and Shape / Size of any
 * tensor is a constant, whether or not the tensor's data is.
 */
#include <string.h>

#include "graph/compile.h"

static int64_t clamp_axis(int64_t a, int64_t rank)
{
    if (a < 0) a += rank;
    return a < 0 ? 0 : a > rank ? rank : a;
}

/* Shape's [start, end) slice of the dims (opset 15 attributes). */
static vn_status shape_value(const vn_cnode *n, const vn_tensor_desc *x, vn_tensor_desc *d,
                             int64_t *dims)
{
    vn_attrs attrs = {n->attrs, n->num_attrs};
    int64_t start, end;
    vn_status st = vn_attrs_int(&attrs, "start", 0, &start);
    if (st == VN_OK) st = vn_attrs_int(&attrs, "end", x->rank, &end);
    if (st != VN_OK) return st;
    start = clamp_axis(start, x->rank);
    end = clamp_axis(end, x->rank);
    *d = (vn_tensor_desc){VN_I64, 1, {end > start ? end - start : 0}};
    for (int64_t i = start; i < end; i++) dims[i - start] = x->dims[i];
    return VN_OK;
}

vn_status vn_fold_shape(vn_model *m, int32_t node, vn_pass_report *r, bool *changed)
{
    vn_cnode *n = &m->nodes[node];
    *changed = false;
    bool shape = !strcmp(n->op_type, "Shape"), size = !strcmp(n->op_type, "Size");
    if (n->domain[0] || !(shape || size) || n->num_inputs < 1 || n->inputs[0] < 0 ||
        n->num_outputs < 1 || n->outputs[0] < 0)
        return VN_OK;
    const vn_tensor_desc *x = &m->values[n->inputs[0]].desc;
    if (!m->values[n->inputs[0]].known || x->rank < 0) return VN_OK;
    vn_tensor_desc d = {VN_I64, 0, {0}};
    int64_t dims[VN_MAX_RANK];
    vn_status st = VN_OK;
    if (shape)
        st = shape_value(n, x, &d, dims);
    else
        dims[0] = vn_desc_numel(x);
    if (st == VN_OK) st = vn_cg_set_const(m, n->outputs[0], &d, dims);
    if (st != VN_OK) return st;
    char label[256];
    n->dead = true;
    *changed = true;
    vn_pass_note(r, vn_cg_label(m, node, label, sizeof label));
    return VN_OK;
}
