/*
 * dtype.c — element sizes and names of vinci dtypes.
 *
 * One table indexed by the dtype keeps size and name together, so a new dtype
 * cannot get one without the other (the static assert catches a forgotten row).
 */
#include <string.h>

#include "vinci/base.h"

typedef struct dtype_info {
    const char *name;
    size_t size;
} dtype_info;

static const dtype_info dtype_table[VN_DTYPE_COUNT] = {
    [VN_F32] = {"f32", 4}, [VN_F16] = {"f16", 2}, [VN_BF16] = {"bf16", 2}, [VN_I8] = {"i8", 1},
    [VN_U8] = {"u8", 1},   [VN_I32] = {"i32", 4}, [VN_I64] = {"i64", 8},   [VN_BOOL] = {"bool", 1},
    [VN_F64] = {"f64", 8}, [VN_I16] = {"i16", 2}, [VN_U16] = {"u16", 2},   [VN_U32] = {"u32", 4},
    [VN_U64] = {"u64", 8},
};
_Static_assert(VN_DTYPE_COUNT == 13, "add the new dtype to dtype_table");

size_t vn_dtype_size(vn_dtype dtype)
{
    return vn_dtype_valid(dtype) ? dtype_table[dtype].size : 0;
}

const char *vn_dtype_name(vn_dtype dtype)
{
    return vn_dtype_valid(dtype) ? dtype_table[dtype].name : "invalid";
}

vn_status vn_dtype_from_name(const char *name, vn_dtype *out)
{
    if (!name || !out)
        return vn_error(VN_ERR_INVALID_ARG, "vn_dtype_from_name", "%s is NULL",
                        name ? "out" : "name");
    for (int d = 0; d < VN_DTYPE_COUNT; d++) {
        if (strcmp(name, dtype_table[d].name) == 0) {
            *out = (vn_dtype)d;
            return VN_OK;
        }
    }
    return vn_error(VN_ERR_INVALID_ARG, "vn_dtype_from_name",
                    "unknown dtype \"%.64s\" (expected f32, f16, bf16, f64, i8, u8, i16, u16, "
                    "i32, u32, i64, u64 or bool)",
                    name);
}
