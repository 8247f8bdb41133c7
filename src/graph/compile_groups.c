/*
 * compile_groups.c — nodes that run at once (issue [G] item 3: parallelism
 * across nodes, for branches too small to fill the workers on their own:
 * SqueezeNet's expand pairs, ResNet's downsample beside its block's first
 * conv).
 *
 * A group is a run of consecutive nodes, at most VN_GROUP_MAX, each a kernel
 * node (no alias, no control flow, no dynamic value, no model output) that
 * reads nothing another member writes. The executor hands a group to
 * vn_device_run_hosted: every member runs on its own thread, launching its
 * kernels as usual, and the threads that finish first help with the others'
 * kernels.
 *
 * Three steps, all here:
 *   1. O3, before planning: vn_cg_schedule_branches moves a node up to just
 *      after an earlier node it does not depend on, so that branches become
 *      neighbours (topological order is kept: the node moved reads nothing
 *      the nodes it jumps over write).
 *   2. The memory plan (compile_memory.c) asks vn_cg_group_span for each
 *      node's steps: a group's members all live from its first step to its
 *      last, so no member's output takes memory another member still reads.
 *   3. vn_cg_plan_groups, on the final model (the compiler's and the loader's
 *      last step): a candidate group is kept only where the planned memory
 *      of each member's outputs overlaps nothing another member reads or
 *      writes (a loaded file is checked, not trusted); each member gets its
 *      own slice of the workspace.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "graph/compile.h"

#define WINDOW 32 /* how far down a node is looked for to move up */

bool vn_cg_groups_wanted(void)
{
    static atomic_int wanted = -1;
    int w = atomic_load_explicit(&wanted, memory_order_relaxed);
    if (w < 0) {
        const char *e = getenv("VINCI_CONCURRENT_NODES");
        w = e && !strcmp(e, "1");
        atomic_store_explicit(&wanted, w, memory_order_relaxed);
    }
    return w;
}

static bool value_plain(const vn_model *m, int32_t v)
{
    return v < 0 || !m->values[v].dynamic;
}

bool vn_cg_group_candidate(const vn_model *m, int32_t i)
{
    const vn_cnode *n = &m->nodes[i];
    if (n->dead || n->alias || n->cf || !n->def || !n->def->run || vn_cg_is_view(n) ||
        (!n->domain[0] && !strcmp(n->op_type, "Concat")))
        return false;
    for (int32_t k = 0; k < n->num_inputs; k++)
        if (!value_plain(m, n->inputs[k])) return false;
    for (int32_t k = 0; k < n->num_outputs; k++) {
        int32_t v = n->outputs[k];
        if (v < 0 || !value_plain(m, v) || m->values[v].output_index >= 0 ||
            m->values[v].kind != VN_CV_ACT)
            return false;
    }
    return true;
}

/* Node j reads no output of nodes first .. last. */
static bool reads_none_of(const vn_model *m, int32_t j, int32_t first, int32_t last)
{
    const vn_cnode *n = &m->nodes[j];
    for (int32_t k = 0; k < n->num_inputs; k++) {
        int32_t v = n->inputs[k];
        int32_t p = v >= 0 ? m->values[v].producer : -1;
        if (p >= first && p <= last) return false;
    }
    return true;
}

/* ---- planned memory ---- */

/* Value v's arena range meets value w's. */
static bool arena_overlap(const vn_model *m, int32_t v, int32_t w)
{
    if (v < 0 || w < 0) return false;
    const vn_cvalue *a = &m->values[v], *b = &m->values[w];
    if (a->mem != VN_MEM_ARENA || b->mem != VN_MEM_ARENA) return false;
    size_t na = vn_cg_desc_bytes(&a->desc), nb = vn_cg_desc_bytes(&b->desc);
    return na && nb && a->offset < b->offset + nb && b->offset < a->offset + na;
}

/* Node a's outputs overlap nothing node b reads or writes. */
static bool writes_clear_of(const vn_model *m, int32_t a, int32_t b)
{
    const vn_cnode *x = &m->nodes[a], *y = &m->nodes[b];
    for (int32_t k = 0; k < x->num_outputs; k++) {
        if (m->values[x->outputs[k]].mem != VN_MEM_ARENA) return false;
        for (int32_t l = 0; l < y->num_inputs; l++)
            if (arena_overlap(m, x->outputs[k], y->inputs[l])) return false;
        for (int32_t l = 0; l < y->num_outputs; l++)
            if (arena_overlap(m, x->outputs[k], y->outputs[l])) return false;
    }
    return true;
}

/* ---- groups ---- */

/* Node j may join the members first .. j - 1. */
static bool may_join(const vn_model *m, int32_t first, int32_t j, bool planned)
{
    if (!vn_cg_group_candidate(m, j) || !reads_none_of(m, j, first, j - 1)) return false;
    for (int32_t a = first; planned && a < j; a++)
        if (!writes_clear_of(m, a, j) || !writes_clear_of(m, j, a)) return false;
    return true;
}

/* How many nodes from i on form a group (1: none). Before the memory plan
 * (planned false) only the graph counts. */
static int32_t group_size(const vn_model *m, int32_t i, bool planned)
{
    if (m->stats.opt_level < 3 || !vn_cg_groups_wanted() || !vn_cg_group_candidate(m, i)) return 1;
    int32_t j = i + 1;
    while (j < m->num_nodes && j - i < VN_GROUP_MAX && may_join(m, i, j, planned)) j++;
    return j - i;
}

void vn_cg_group_span(const vn_model *m, int32_t *first, int32_t *last)
{
    for (int32_t i = 0; i < m->num_nodes;) {
        int32_t size = group_size(m, i, false);
        for (int32_t k = i; k < i + size; k++) first[k] = i, last[k] = i + size - 1;
        i += size;
    }
}

/* Moves node j to position to (< j), shifting to .. j - 1 down one; value
 * producers follow their nodes. */
static void move_up(vn_model *m, int32_t j, int32_t to)
{
    vn_cnode moved = m->nodes[j];
    memmove(&m->nodes[to + 1], &m->nodes[to], (size_t)(j - to) * sizeof moved);
    m->nodes[to] = moved;
    for (int32_t i = to; i <= j; i++) {
        const vn_cnode *n = &m->nodes[i];
        for (int32_t k = 0; k < n->num_outputs; k++)
            if (n->outputs[k] >= 0) m->values[n->outputs[k]].producer = i;
    }
}

/* A later node, within WINDOW, that may run beside the group at i .. end - 1
 * and reads nothing written from i on: moved to `end`. */
static bool pull_branch(vn_model *m, int32_t i, int32_t end)
{
    for (int32_t j = end + 1; j < m->num_nodes && j <= end + WINDOW; j++) {
        if (!vn_cg_group_candidate(m, j) || !reads_none_of(m, j, i, j - 1)) continue;
        move_up(m, j, end);
        return true;
    }
    return false;
}

int32_t vn_cg_schedule_branches(vn_model *m)
{
    int32_t moved = 0;
    if (!vn_cg_groups_wanted()) return 0; /* order unchanged: nothing will run at once */
    for (int32_t i = 0; i < m->num_nodes;) {
        int32_t size = group_size(m, i, false);
        if (size == 1 && vn_cg_group_candidate(m, i) && pull_branch(m, i, i + 1)) {
            moved++;
            size = group_size(m, i, false);
        }
        i += size;
    }
    return moved;
}

int32_t vn_cg_plan_groups(vn_model *m)
{
    int32_t groups = 0;
    m->workspace_bytes = 0;
    for (int32_t i = 0; i < m->num_nodes;) {
        int32_t size = group_size(m, i, true);
        size_t at = 0;
        for (int32_t k = i; k < i + size; k++) {
            vn_cnode *n = &m->nodes[k];
            n->concurrent = k == i ? size : 1;
            n->ws_offset = at;
            at += (n->workspace + 63) & ~(size_t)63;
        }
        if (at > m->workspace_bytes) m->workspace_bytes = at;
        groups += size > 1;
        i += size;
    }
    return groups;
}
