/*
 * desc.c — tensor descriptors: element counts and the "f32[2,3,4]" text used
 * in every message of the ops layer.
 */
#include <stdio.h>

#include "vinci/ops.h"

int64_t vn_desc_numel(const vn_tensor_desc *desc)
{
    if (!desc || desc->rank < 0) return 0;
    int64_t n = 1;
    for (int32_t i = 0; i < desc->rank && i < VN_MAX_RANK; i++) n *= desc->dims[i];
    return n;
}

char *vn_desc_format(const vn_tensor_desc *desc, char *buf, size_t size)
{
    if (!buf || size == 0) return buf;
    if (!desc) {
        snprintf(buf, size, "(null)");
        return buf;
    }
    if (desc->rank < 0) {
        snprintf(buf, size, "(omitted)");
        return buf;
    }
    size_t used = (size_t)snprintf(buf, size, "%s[", vn_dtype_name(desc->dtype));
    for (int32_t i = 0; i < desc->rank && i < VN_MAX_RANK && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ",%lld" : "%lld",
                                 (long long)desc->dims[i]);
    if (desc->rank > VN_MAX_RANK && used < size)
        used += (size_t)snprintf(buf + used, size - used, ",... (rank %d)", (int)desc->rank);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}
