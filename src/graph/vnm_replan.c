/*
 * vnm_replan.c — the loader's last step: every node gets its operator again
 * (by op type and domain), is re-inferred from the stored input shapes and
 * constant data (the stored output shapes must agree exactly: kernels trust
 * them) and re-planned (plans hold pointers, so files never store them).
 * Order is checked too: a node reads only inputs, constants and values
 * produced by an earlier node, and writes only fresh activation values (or,
 * a view, its input's memory: an alias, run as a pointer copy; an in-place
 * Concat, its inputs' memory: an alias that runs nothing).
 * Checks and inference run in node order first; the plans (which pack
 * constant weights, most of a load's time) then run on several threads.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/cf.h"
#include "graph/vnm_load.h"

#define W           "vn_model_load"
#define MAXIO       64
#define MAX_THREADS 16

static uint64_t node_at(const vnm_loader *ld, int32_t i)
{
    return ld->off[VNM_SEC_NODES] + (uint64_t)i * sizeof(vnm_node);
}

static bool same_desc(const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* The operator, and the node's shape of inputs and outputs against it. */
static vn_status bind_def(vnm_loader *ld, int32_t i, const char *label)
{
    vn_cnode *n = &ld->m->nodes[i];
    if (vn_cf_kind(n->op_type, n->domain)) /* the writer refuses them: a crafted file */
        return vn_error(VN_ERR_UNSUPPORTED, W,
                        "%s: byte %" PRIu64 ": %s: control flow needs subgraphs, which .vnm "
                        "files do not carry",
                        ld->name, node_at(ld, i) + 4, label);
    n->def = vn_op_find(n->op_type, n->domain);
    if (!n->def) n->def = vn_graph_engine_op(n->op_type, n->domain);
    if (!n->def)
        return vn_error(VN_ERR_UNSUPPORTED, W,
                        "%s: byte %" PRIu64 ": %s: the operator is not "
                        "registered in this vinci",
                        ld->name, node_at(ld, i) + 4, label);
    if (n->num_inputs < n->def->min_inputs || n->num_inputs > n->def->max_inputs ||
        n->num_outputs != n->def->num_outputs)
        return vn_vnm_bad(ld, node_at(ld, i) + 12,
                          "%s: %d inputs and %d outputs do not fit the operator", label,
                          (int)n->num_inputs, (int)n->num_outputs);
    return VN_OK;
}

/* Inputs exist already; outputs are fresh activations with memory. */
static vn_status check_flow(vnm_loader *ld, int32_t i, const char *label)
{
    vn_model *m = ld->m;
    vn_cnode *n = &m->nodes[i];
    for (int32_t k = 0; k < n->num_inputs; k++) {
        int32_t v = n->inputs[k];
        if (v < 0) continue;
        const vn_cvalue *val = &m->values[v];
        if (val->mem == VN_MEM_NONE || (val->kind == VN_CV_ACT && !ld->produced[v]))
            return vn_vnm_bad(ld, node_at(ld, i) + 24,
                              "%s: input %d ('%s') has no memory or is read before it is produced",
                              label, (int)k, val->name);
    }
    /* what the compiler aliased: a view to its input, a Concat to its inputs */
    n->alias = vn_cg_view_shares(m, i)     ? VN_ALIAS_VIEW
               : vn_cg_concat_shares(m, i) ? VN_ALIAS_CONCAT
                                           : VN_ALIAS_NONE;
    for (int32_t k = 0; k < n->num_outputs; k++) {
        int32_t v = n->outputs[k];
        vn_cvalue *val = &m->values[v];
        bool fresh = val->mem == VN_MEM_ARENA || val->mem == VN_MEM_OUTPUT || n->alias;
        if (!fresh || ld->produced[v])
            return vn_vnm_bad(
                ld, node_at(ld, i) + 24,
                "%s: output %d ('%s') is not a fresh activation value or a view's alias", label,
                (int)k, val->name);
        ld->produced[v] = 1;
        val->producer = i;
    }
    return VN_OK;
}

static vn_status infer(vnm_loader *ld, int32_t i, const char *label, vn_op_ctx *ctx)
{
    vn_model *m = ld->m;
    const vn_cnode *n = &m->nodes[i];
    vn_tensor_desc out[MAXIO];
    char why[600], a[160], b[160];
    const vn_tensor_desc *in = ctx->inputs;
    if (n->num_inputs > 0 && in[0].rank >= 0 && !(n->def->dtypes & VN_DTYPE_BIT(in[0].dtype)))
        return vn_vnm_bad(ld, node_at(ld, i), "%s: input 0 is %s, which the operator does not take",
                          label, vn_dtype_name(in[0].dtype));
    memset(out, 0, sizeof out);
    if (n->def->infer(ctx, out) != VN_OK) {
        snprintf(why, sizeof why, "%s", vn_last_error());
        return vn_vnm_bad(ld, node_at(ld, i), "%s: the stored inputs do not infer: %s", label, why);
    }
    for (int32_t k = 0; k < n->num_outputs; k++) {
        const vn_cvalue *v = &m->values[n->outputs[k]];
        if (!same_desc(&v->desc, &out[k]))
            return vn_vnm_bad(
                ld, ld->off[VNM_SEC_VALUES] + (uint64_t)n->outputs[k] * sizeof(vnm_value),
                "%s: output %d is stored as %s, the operator infers %s", label, (int)k,
                vn_desc_format(&v->desc, a, sizeof a), vn_desc_format(&out[k], b, sizeof b));
    }
    return VN_OK;
}

/* Operator, data flow and inference: in node order (flow is order-dependent). */
static vn_status check_node(vnm_loader *ld, int32_t i)
{
    vn_model *m = ld->m;
    vn_cnode *n = &m->nodes[i];
    char label[256];
    vn_cg_label(m, i, label, sizeof label);
    vn_status st = bind_def(ld, i, label);
    if (st == VN_OK) st = check_flow(ld, i, label);
    if (st != VN_OK) return st;
    vn_tensor_desc in[MAXIO];
    const void *data[MAXIO];
    vn_attrs attrs;
    vn_op_ctx ctx;
    vn_cg_op_ctx(m, i, in, data, &attrs, &ctx);
    if (!ctx.node_name[0]) ctx.node_name = label;
    if ((st = infer(ld, i, label, &ctx)) != VN_OK) return st;
    if (n->num_inputs > m->max_io) m->max_io = n->num_inputs;
    if (n->num_outputs > m->max_io) m->max_io = n->num_outputs;
    n->run_outputs = vn_cg_outputs_read(m, i);
    return VN_OK;
}

/* The plans: independent per node (each writes only its own plan_data and
 * workspace, and reads the model), so they run on several threads; packing
 * constant weights dominates a load. */
typedef struct plan_job {
    vnm_loader *ld;
    atomic_int next;
    vn_status *status; /* per node */
    char (*why)[600];  /* per node: the error message, captured in its thread */
} plan_job;

/* The operator's plan, or for a node with blobs its plan around them (in
 * the mapping: no copy, no repack). */
static vn_status plan_node(const vnm_loader *ld, int32_t i, const vn_op_ctx *ctx,
                           const vn_tensor_desc *out)
{
    vn_cnode *n = &ld->m->nodes[i];
    if (!ld->blob_count[i]) return n->def->plan(ctx, out, &n->plan_data, &n->workspace);
    const vn_op_prepack *hooks = vn_op_prepack_hooks(n->def);
    if (!hooks)
        return vn_error(VN_ERR_FORMAT, W,
                        "the file has packed data for this node, but "
                        "operator %s has no pre-pack hook",
                        n->op_type);
    vn_op_blob blobs[VN_OP_MAX_BLOBS];
    int32_t nb = vn_vnm_node_blobs(ld, i, blobs);
    return hooks->plan_from_blobs(ctx, out, blobs, nb, ld->consumed[i], &n->plan_data,
                                  &n->workspace);
}

static void plan_one(plan_job *job, int32_t i)
{
    vn_model *m = job->ld->m;
    vn_cnode *n = &m->nodes[i];
    if (!n->def->plan && !job->ld->blob_count[i]) return;
    char label[256];
    vn_tensor_desc in[MAXIO], out[MAXIO];
    const void *data[MAXIO];
    vn_attrs attrs;
    vn_op_ctx ctx;
    vn_cg_label(m, i, label, sizeof label);
    vn_cg_op_ctx(m, i, in, data, &attrs, &ctx);
    if (!ctx.node_name[0]) ctx.node_name = label;
    for (int32_t k = 0; k < n->num_outputs; k++) out[k] = m->values[n->outputs[k]].desc;
    job->status[i] = plan_node(job->ld, i, &ctx, out);
    if (job->status[i] != VN_OK) snprintf(job->why[i], sizeof job->why[i], "%s", vn_last_error());
}

static void *plan_worker(void *arg)
{
    plan_job *job = arg;
    for (int32_t i; (i = atomic_fetch_add(&job->next, 1)) < job->ld->m->num_nodes;)
        plan_one(job, i);
    return NULL;
}

/* Threads: the device's worker count, at most one per node and MAX_THREADS. */
static int32_t plan_threads(const vn_model *m)
{
    int32_t t = m->device ? vn_device_num_workers(m->device) : 1;
    if (t > MAX_THREADS) t = MAX_THREADS;
    if (t > m->num_nodes) t = m->num_nodes;
    return t < 1 ? 1 : t;
}

static vn_status plan_all(vnm_loader *ld)
{
    vn_model *m = ld->m;
    size_t nn = (size_t)m->num_nodes + 1;
    plan_job job = {ld, 0, calloc(nn, sizeof *job.status), calloc(nn, sizeof *job.why)};
    if (!job.status || !job.why) {
        free(job.status);
        free(job.why);
        return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", ld->name);
    }
    atomic_init(&job.next, 0);
    pthread_t tid[MAX_THREADS];
    int32_t started = 0, want = plan_threads(m) - 1; /* this thread works too */
    while (started < want && !pthread_create(&tid[started], NULL, plan_worker, &job)) started++;
    plan_worker(&job);
    for (int32_t t = 0; t < started; t++) pthread_join(tid[t], NULL);
    vn_status st = VN_OK;
    for (int32_t i = 0; i < m->num_nodes && st == VN_OK; i++) {
        if ((st = job.status[i]) != VN_OK) {
            char label[256];
            vn_error(st, W, "%s: byte %" PRIu64 ": %s: plan failed: %s", ld->name, node_at(ld, i),
                     vn_cg_label(m, i, label, sizeof label), job.why[i]);
        } else if (m->nodes[i].workspace > m->workspace_bytes) {
            m->workspace_bytes = m->nodes[i].workspace;
        }
    }
    free(job.status);
    free(job.why);
    return st;
}

/* As the compiler's memory plan: outputs not written in place are copied. */
static vn_status output_copies(vnm_loader *ld)
{
    vn_model *m = ld->m;
    m->copies = vn_gmem_alloc(&m->mem, ((size_t)m->num_outputs + 1) * sizeof *m->copies);
    if (!m->copies) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < m->num_outputs; i++) {
        const vn_cvalue *v = &m->values[m->outputs[i]];
        if (v->kind == VN_CV_ACT && !ld->produced[m->outputs[i]])
            return vn_vnm_bad(ld, ld->off[VNM_SEC_META] + 16,
                              "model output %d ('%s') is never produced", (int)i, v->name);
        if (v->mem == VN_MEM_OUTPUT && v->io_index == i) continue;
        m->copies[m->num_copies++] = (vn_out_copy){i, m->outputs[i]};
    }
    return VN_OK;
}

vn_status vn_vnm_replan(vnm_loader *ld)
{
    vn_model *m = ld->m;
    ld->produced = calloc((size_t)m->num_values + 1, 1);
    if (!ld->produced) return VN_ERR_OUT_OF_MEMORY;
    vn_status st = VN_OK;
    for (int32_t i = 0; i < m->num_nodes && st == VN_OK; i++) st = check_node(ld, i);
    if (st == VN_OK) st = output_copies(ld);
    if (st == VN_OK) st = plan_all(ld);
    if (st == VN_OK) vn_cg_plan_groups(m); /* checked against the file's memory plan */
    free(ld->produced);
    ld->produced = NULL;
    return st;
}
