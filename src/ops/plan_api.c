/*
 * plan_api.c — the two-phase single-operator API: plan (validate, infer,
 * tile) once, run many times.
 *
 * Invariant: a vn_op_plan is immutable after vn_op_plan_create returns, so
 * vn_op_run may be called on it from several threads at once; everything a
 * run needs per call (kernel arguments) lives on the caller's stack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_internal.h"

struct vn_op_plan {
    const vn_op_def *def;
    vn_device *device;
    int32_t num_inputs, num_outputs;
    vn_tensor_desc *inputs, *outputs; /* one allocation, inputs first */
    void *data;
    size_t workspace;
};

#define CREATE "vn_op_plan_create"

/* "vinci::RMSNormalization" names a domain; a bare name is looked up in the
 * ONNX default domain, then in vinci's own. */
static const vn_op_def *lookup(const char *op_name)
{
    const char *sep = strstr(op_name, "::");
    if (!sep) {
        const vn_op_def *d = vn_op_find(op_name, "");
        return d ? d : vn_op_find(op_name, "vinci");
    }
    char domain[128];
    size_t len = (size_t)(sep - op_name);
    if (len >= sizeof domain) return NULL;
    memcpy(domain, op_name, len);
    domain[len] = '\0';
    return vn_op_find(sep + 2, domain);
}

static vn_status check_input(const char *where, const vn_op_def *def, const vn_tensor_desc *in,
                             int32_t i)
{
    char buf[128];
    if (in->rank == -1) {
        if (i < def->min_inputs)
            return vn_error(VN_ERR_INVALID_ARG, where, "input %d is required but omitted (rank -1)",
                            (int)i);
        return VN_OK;
    }
    if (in->rank < 0 || in->rank > VN_MAX_RANK)
        return vn_error(VN_ERR_SHAPE, where, "input %d has rank %d (max %d)", (int)i, (int)in->rank,
                        VN_MAX_RANK);
    if (!vn_dtype_valid(in->dtype))
        return vn_error(VN_ERR_DTYPE, where, "input %d has invalid dtype %d", (int)i,
                        (int)in->dtype);
    for (int32_t d = 0; d < in->rank; d++)
        if (in->dims[d] < 0)
            return vn_error(VN_ERR_SHAPE, where, "input %d %s has negative dim %d", (int)i,
                            vn_desc_format(in, buf, sizeof buf), (int)d);
    if (i == 0 && !(def->dtypes & VN_DTYPE_BIT(in->dtype)))
        return vn_error(VN_ERR_DTYPE, where, "input 0 has dtype %s, which %s does not accept",
                        vn_dtype_name(in->dtype), def->name);
    return VN_OK;
}

static vn_status check_inputs(const char *where, const vn_op_def *def, const vn_tensor_desc *inputs,
                              int32_t n)
{
    if (n < def->min_inputs || n > def->max_inputs) {
        if (def->min_inputs == def->max_inputs)
            return vn_error(VN_ERR_INVALID_ARG, where, "takes %d inputs, got %d",
                            (int)def->min_inputs, (int)n);
        return vn_error(VN_ERR_INVALID_ARG, where, "takes %d to %d inputs, got %d",
                        (int)def->min_inputs, (int)def->max_inputs, (int)n);
    }
    if (n > 0 && !inputs) return vn_error(VN_ERR_INVALID_ARG, where, "inputs is NULL");
    for (int32_t i = 0; i < n; i++) {
        vn_status st = check_input(where, def, &inputs[i], i);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

static vn_op_plan *plan_alloc(const vn_op_def *def, vn_device *dev, const vn_tensor_desc *inputs,
                              int32_t n)
{
    vn_op_plan *p = calloc(1, sizeof *p);
    vn_tensor_desc *descs = calloc((size_t)(n + def->num_outputs), sizeof *descs);
    if (!p || !descs) {
        free(p);
        free(descs);
        return NULL;
    }
    p->def = def;
    p->device = dev;
    p->num_inputs = n;
    p->num_outputs = def->num_outputs;
    p->inputs = descs;
    p->outputs = descs + n;
    if (n > 0) memcpy(descs, inputs, (size_t)n * sizeof *descs);
    return p;
}

vn_status vn_op_plan_create(vn_device *device, const char *op_name, const vn_tensor_desc *inputs,
                            int32_t num_inputs, const vn_attrs *attrs, vn_op_plan **out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, CREATE, "out is NULL");
    *out = NULL;
    if (!op_name) return vn_error(VN_ERR_INVALID_ARG, CREATE, "op_name is NULL");
    const vn_op_def *def = lookup(op_name);
    if (!def) return vn_error(VN_ERR_UNSUPPORTED, CREATE, "unknown operator '%s'", op_name);
    vn_op_ctx ctx = {def, device, inputs, num_inputs, attrs, "", NULL, 0};
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(&ctx, where, sizeof where);
    if (attrs && attrs->count > 0 && !attrs->items)
        return vn_error(VN_ERR_INVALID_ARG, where, "attrs has %d items but items is NULL",
                        (int)attrs->count);
    vn_status st = check_inputs(where, def, inputs, num_inputs);
    if (st != VN_OK) return st;
    if (!ctx.device && (st = vn_device_default(&ctx.device)) != VN_OK) return st;
    vn_op_plan *p = plan_alloc(def, ctx.device, inputs, num_inputs);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    st = def->infer(&ctx, p->outputs);
    if (st == VN_OK && def->plan) st = def->plan(&ctx, p->outputs, &p->data, &p->workspace);
    if (st != VN_OK) {
        vn_op_plan_destroy(p);
        return st;
    }
    *out = p;
    return VN_OK;
}

int32_t vn_op_plan_num_outputs(const vn_op_plan *plan)
{
    return plan ? plan->num_outputs : 0;
}

const vn_tensor_desc *vn_op_plan_output(const vn_op_plan *plan, int32_t index)
{
    if (!plan || index < 0 || index >= plan->num_outputs) return NULL;
    return &plan->outputs[index];
}

size_t vn_op_plan_workspace(const vn_op_plan *plan)
{
    return plan ? plan->workspace : 0;
}

void vn_op_plan_destroy(vn_op_plan *plan)
{
    if (!plan) return;
    if (plan->data && plan->def->plan_free) plan->def->plan_free(plan->data);
    free(plan->inputs);
    free(plan);
}

/* ---- run ------------------------------------------------------------------------- */

static bool same_desc(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->rank != b->rank) return false;
    if (a->rank < 0) return true; /* both omitted */
    if (a->dtype != b->dtype || a->rank > VN_MAX_RANK) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static vn_status check_tensor(const char *where, const char *what, int32_t i, const vn_tensor *t,
                              const vn_tensor_desc *planned)
{
    char a[128], b[128];
    if (!same_desc(&t->desc, planned))
        return vn_error(t->desc.dtype != planned->dtype ? VN_ERR_DTYPE : VN_ERR_SHAPE, where,
                        "%s %d is %s, planned %s", what, (int)i,
                        vn_desc_format(&t->desc, a, sizeof a),
                        vn_desc_format(planned, b, sizeof b));
    if (!t->data && vn_desc_numel(planned) > 0)
        return vn_error(VN_ERR_INVALID_ARG, where, "%s %d %s has no data (NULL)", what, (int)i,
                        vn_desc_format(planned, a, sizeof a));
    return VN_OK;
}

static vn_status check_run(const char *where, const vn_op_plan *plan, const vn_tensor *inputs,
                           int32_t ni, const vn_tensor *outputs, int32_t no, const void *ws)
{
    if (ni != plan->num_inputs || no != plan->num_outputs)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "given %d inputs and %d outputs, the plan has %d and %d", (int)ni, (int)no,
                        (int)plan->num_inputs, (int)plan->num_outputs);
    if ((ni > 0 && !inputs) || !outputs)
        return vn_error(VN_ERR_INVALID_ARG, where, "inputs or outputs is NULL");
    for (int32_t i = 0; i < ni; i++) {
        vn_status st = check_tensor(where, "input", i, &inputs[i], &plan->inputs[i]);
        if (st != VN_OK) return st;
    }
    for (int32_t i = 0; i < no; i++) {
        vn_status st = check_tensor(where, "output", i, &outputs[i], &plan->outputs[i]);
        if (st != VN_OK) return st;
    }
    if (plan->workspace > 0 && !ws)
        return vn_error(VN_ERR_INVALID_ARG, where, "workspace of %zu bytes is NULL",
                        plan->workspace);
    return VN_OK;
}

vn_status vn_op_run(const vn_op_plan *plan, const vn_tensor *inputs, int32_t num_inputs,
                    vn_tensor *outputs, int32_t num_outputs, void *workspace)
{
    if (!plan) return vn_error(VN_ERR_INVALID_ARG, "vn_op_run", "plan is NULL");
    char where[VN_OPS_WHERE_MAX];
    const char *dom = plan->def->domain && plan->def->domain[0] ? plan->def->domain : NULL;
    snprintf(where, sizeof where, "vn_op_run(%s%s%s)", dom ? dom : "", dom ? "::" : "",
             plan->def->name);
    vn_status st = check_run(where, plan, inputs, num_inputs, outputs, num_outputs, workspace);
    if (st != VN_OK) return st;
    bool any = false; /* empty outputs: nothing to compute, nothing launched */
    for (int32_t i = 0; i < num_outputs; i++) any |= vn_desc_numel(&plan->outputs[i]) > 0;
    if (!any) return VN_OK;
    vn_op_run_ctx ctx = {plan->def, plan->device, plan->data, inputs, num_inputs,
                         outputs,   num_outputs,  workspace,  NULL};
    return plan->def->run(&ctx);
}
