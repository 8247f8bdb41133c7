/*
 * layout_registry.c — the layouts operators accept and produce (ops.h,
 * "layouts"): a fixed table for the built-in layout-aware operators and a
 * small locked list for the ones declared at run time.
 *
 * Invariant: entries are never removed; a later vn_op_set_layouts of the same
 * operator overrides an earlier one.
 */
#include <pthread.h>
#include <string.h>

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

#define MAX_DECLARED 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    const vn_op_def *def;
    uint32_t in, out;
} declared[MAX_DECLARED];
static int32_t num_declared;

vn_status vn_op_set_layouts(const vn_op_def *def, uint32_t layouts_in, uint32_t layouts_out)
{
    if (!def) return vn_error(VN_ERR_INVALID_ARG, "vn_op_set_layouts", "def is NULL");
    pthread_mutex_lock(&lock);
    int32_t i = 0;
    while (i < num_declared && declared[i].def != def) i++;
    if (i == MAX_DECLARED) {
        pthread_mutex_unlock(&lock);
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_op_set_layouts",
                        "more than %d operators declare layouts", MAX_DECLARED);
    }
    declared[i].def = def;
    declared[i].in = layouts_in;
    declared[i].out = layouts_out;
    if (i == num_declared) num_declared++;
    pthread_mutex_unlock(&lock);
    return VN_OK;
}

void vn_op_layouts(const vn_op_def *def, uint32_t *layouts_in, uint32_t *layouts_out)
{
    uint32_t in = 0, out = 0;
    bool found = false;
    if (def) {
        pthread_mutex_lock(&lock);
        for (int32_t i = 0; i < num_declared && !found; i++)
            if (declared[i].def == def) in = declared[i].in, out = declared[i].out, found = true;
        pthread_mutex_unlock(&lock);
        const char *dom = def->domain ? def->domain : "";
        for (size_t i = 0; !found && i < sizeof builtin / sizeof builtin[0]; i++)
            if (strcmp(builtin[i].name, def->name) == 0 && strcmp(builtin[i].domain, dom) == 0)
                in = builtin[i].in, out = builtin[i].out, found = true;
    }
    if (layouts_in) *layouts_in = in;
    if (layouts_out) *layouts_out = out;
}
