/*
 * prepack_registry.c — which operators can export and re-adopt packed
 * constant data (vinci/ops.h, "pre-packed constants"): the built-in families
 * answer for their own defs, operators declared at run time sit in a side
 * table (op_side_table.h; they win over the built-in answer), and the
 * helpers the hooks share.
 */
#include <string.h>

#include "ops/conv_integer.h"
#include "ops/op_side_table.h"
#include "ops/prepack.h"

static vn_op_side_table declared = VN_OP_SIDE_TABLE_INIT; /* the hooks' address */

vn_status vn_op_set_prepack(const vn_op_def *def, const vn_op_prepack *hooks)
{
    if (!def || !hooks || !hooks->export_blobs || !hooks->plan_from_blobs)
        return vn_error(VN_ERR_INVALID_ARG, "vn_op_set_prepack", "def, hooks or a hook is NULL");
    return vn_op_side_set(&declared, def, (uint64_t)(uintptr_t)hooks, "vn_op_set_prepack",
                          "pre-pack hooks");
}

const vn_op_prepack *vn_op_prepack_hooks(const vn_op_def *def)
{
    if (!def) return NULL;
    uint64_t hooks = 0;
    if (vn_op_side_get(&declared, def, &hooks)) return (const vn_op_prepack *)(uintptr_t)hooks;
    const vn_op_prepack *h = vn_mm_prepack_hooks(def);
    if (!h) h = vn_conv_prepack_hooks(def);
    if (!h) h = vn_ci_prepack_hooks(def);
    return h;
}

vn_op_ctx vn_prepack_ctx(const vn_op_ctx *ctx, uint64_t consumed, const void **data)
{
    vn_op_ctx c = *ctx;
    for (int32_t k = 0; k < ctx->num_inputs && k < 64; k++)
        data[k] = ctx->input_data && !(consumed >> k & 1) ? ctx->input_data[k] : NULL;
    c.input_data = data;
    c.prepacked_inputs = consumed;
    return c;
}

vn_status vn_prepack_check_blob(const char *where, const vn_op_blob *blob, int32_t i, size_t size,
                                const char *layout)
{
    if (!blob->data || (uintptr_t)blob->data % 64)
        return vn_error(VN_ERR_FORMAT, where, "packed blob %d is not 64-byte aligned", (int)i);
    if (blob->size != size)
        return vn_error(VN_ERR_FORMAT, where,
                        "packed blob %d has %zu bytes, the shapes need %zu (layout %s)", (int)i,
                        blob->size, size, layout);
    if (strncmp(blob->layout, layout, sizeof blob->layout) != 0)
        return vn_error(VN_ERR_FORMAT, where,
                        "packed blob %d has layout '%.48s', this process packs '%s' (compiled "
                        "for another ISA? recompile the model)",
                        (int)i, blob->layout, layout);
    return VN_OK;
}
