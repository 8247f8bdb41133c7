/*
 * op_side_table.c — the locked per-operator lists of op_side_table.h.
 */
#include "ops/op_side_table.h"

vn_status vn_op_side_set(vn_op_side_table *t, const vn_op_def *def, uint64_t value,
                         const char *call, const char *what)
{
    pthread_mutex_lock(&t->lock);
    int32_t i = 0;
    while (i < t->count && t->defs[i] != def) i++;
    if (i == VN_OP_SIDE_MAX) {
        pthread_mutex_unlock(&t->lock);
        return vn_error(VN_ERR_OUT_OF_MEMORY, call, "more than %d operators declare %s",
                        VN_OP_SIDE_MAX, what);
    }
    t->defs[i] = def;
    t->values[i] = value;
    if (i == t->count) t->count++;
    pthread_mutex_unlock(&t->lock);
    return VN_OK;
}

bool vn_op_side_get(vn_op_side_table *t, const vn_op_def *def, uint64_t *value)
{
    bool found = false;
    pthread_mutex_lock(&t->lock);
    for (int32_t i = 0; i < t->count && !found; i++)
        if (t->defs[i] == def) *value = t->values[i], found = true;
    pthread_mutex_unlock(&t->lock);
    return found;
}
