/*
 * layout_registry.c — the layouts operators accept and produce (ops.h,
 * "layouts"): a fixed table for the built-in layout-aware operators and a
 * side table (op_side_table.h) for the ones declared at run time, which win.
 */
#include "ops/op_side_table.h"
#include "ops/ops_internal.h"

typedef struct layout_entry {
    const char *name, *domain;
    uint32_t in, out;
} layout_entry;

static const layout_entry builtin[] = {
    {"Conv", "", VN_LAYOUT_NCHW, VN_LAYOUT_NCHW},
    {"FusedConv", "vinci", VN_LAYOUT_NCHW, VN_LAYOUT_NCHW},
    {"ConvNC1HWC0", "vinci", VN_LAYOUT_NC1HWC0, VN_LAYOUT_NC1HWC0},
    {"FusedConvNC1HWC0", "vinci", VN_LAYOUT_NC1HWC0, VN_LAYOUT_NC1HWC0},
    {"MaxPoolNC1HWC0", "vinci", VN_LAYOUT_NC1HWC0, VN_LAYOUT_NC1HWC0},
    {"AveragePoolNC1HWC0", "vinci", VN_LAYOUT_NC1HWC0, VN_LAYOUT_NC1HWC0},
    {"LpPoolNC1HWC0", "vinci", VN_LAYOUT_NC1HWC0, VN_LAYOUT_NC1HWC0},
    {"GlobalAveragePoolNC1HWC0", "vinci", VN_LAYOUT_NC1HWC0, VN_LAYOUT_NC1HWC0},
    {"GlobalMaxPoolNC1HWC0", "vinci", VN_LAYOUT_NC1HWC0, VN_LAYOUT_NC1HWC0},
    {"ToNC1HWC0", "vinci", VN_LAYOUT_NCHW, VN_LAYOUT_NC1HWC0},
    {"FromNC1HWC0", "vinci", VN_LAYOUT_NC1HWC0, VN_LAYOUT_NCHW},
};

static vn_op_side_table declared = VN_OP_SIDE_TABLE_INIT; /* in << 32 | out */

vn_status vn_op_set_layouts(const vn_op_def *def, uint32_t layouts_in, uint32_t layouts_out)
{
    if (!def) return vn_error(VN_ERR_INVALID_ARG, "vn_op_set_layouts", "def is NULL");
    return vn_op_side_set(&declared, def, (uint64_t)layouts_in << 32 | layouts_out,
                          "vn_op_set_layouts", "layouts");
}

void vn_op_layouts(const vn_op_def *def, uint32_t *layouts_in, uint32_t *layouts_out)
{
    uint32_t in = 0, out = 0;
    uint64_t both = 0;
    if (def && vn_op_side_get(&declared, def, &both)) {
        in = (uint32_t)(both >> 32), out = (uint32_t)both;
    } else if (def) {
        for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
            if (vn_op_def_is(def, builtin[i].name, builtin[i].domain)) {
                in = builtin[i].in, out = builtin[i].out;
                break;
            }
    }
    if (layouts_in) *layouts_in = in;
    if (layouts_out) *layouts_out = out;
}
