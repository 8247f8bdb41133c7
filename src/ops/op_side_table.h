/*
 * op_side_table.h — what operators declare beside their vn_op_def at run
 * time (layouts, pre-pack hooks, in-place inputs: vinci/ops.h keeps these out
 * of vn_op_def so positional initialisers stay complete): one small locked
 * list per kind, keyed by the def, each entry one 64-bit value.
 *
 * Invariant: entries are never removed; a later declaration of the same def
 * overrides an earlier one.
 */
#ifndef VINCI_OPS_OP_SIDE_TABLE_H
#define VINCI_OPS_OP_SIDE_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "vinci/ops.h"

#define VN_OP_SIDE_MAX 256

typedef struct vn_op_side_table {
    pthread_mutex_t lock;
    int32_t count;
    const vn_op_def *defs[VN_OP_SIDE_MAX];
    uint64_t values[VN_OP_SIDE_MAX];
} vn_op_side_table;

#define VN_OP_SIDE_TABLE_INIT                                                                      \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, 0, {0},                                                         \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

/* Declare def's value; VN_ERR_OUT_OF_MEMORY (naming `call` and `what`, e.g.
 * "layouts") when VN_OP_SIDE_MAX operators have declared one already. */
vn_status vn_op_side_set(vn_op_side_table *t, const vn_op_def *def, uint64_t value,
                         const char *call, const char *what);
/* def's declared value into *value; false when def declared none. */
bool vn_op_side_get(vn_op_side_table *t, const vn_op_def *def, uint64_t *value);

/* Whether def is the operator `name` of `domain` ("" = ONNX default), as the
 * built-in tables beside the side tables name their operators. */
static inline bool vn_op_def_is(const vn_op_def *def, const char *name, const char *domain)
{
    return strcmp(def->name, name) == 0 && strcmp(def->domain ? def->domain : "", domain) == 0;
}

#endif /* VINCI_OPS_OP_SIDE_TABLE_H */
