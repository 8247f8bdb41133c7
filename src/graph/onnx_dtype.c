/*
 * onnx_dtype.c — ONNX element types and the vinci dtype each is read as.
 * Every type vinci has is read as itself (f64, i16, u16, u32 and u64 too).
 */
#include "graph/onnx.h"

typedef struct dtype_entry {
    const char *name;
    int32_t vinci; /* -1: not supported */
    uint8_t bytes;
} dtype_entry;

static const dtype_entry table[] = {
    [VN_ONNX_UNDEFINED] = {"undefined", -1, 0},
    [VN_ONNX_FLOAT] = {"float", VN_F32, 4},
    [VN_ONNX_UINT8] = {"uint8", VN_U8, 1},
    [VN_ONNX_INT8] = {"int8", VN_I8, 1},
    [VN_ONNX_UINT16] = {"uint16", VN_U16, 2},
    [VN_ONNX_INT16] = {"int16", VN_I16, 2},
    [VN_ONNX_INT32] = {"int32", VN_I32, 4},
    [VN_ONNX_INT64] = {"int64", VN_I64, 8},
    [VN_ONNX_STRING] = {"string", -1, 0},
    [VN_ONNX_BOOL] = {"bool", VN_BOOL, 1},
    [VN_ONNX_FLOAT16] = {"float16", VN_F16, 2},
    [VN_ONNX_DOUBLE] = {"double", VN_F64, 8},
    [VN_ONNX_UINT32] = {"uint32", VN_U32, 4},
    [VN_ONNX_UINT64] = {"uint64", VN_U64, 8},
    [14] = {"complex64", -1, 0},
    [15] = {"complex128", -1, 0},
    [VN_ONNX_BFLOAT16] = {"bfloat16", VN_BF16, 2},
    [17] = {"float8e4m3fn", -1, 0},
    [18] = {"float8e4m3fnuz", -1, 0},
    [19] = {"float8e5m2", -1, 0},
    [20] = {"float8e5m2fnuz", -1, 0},
    [21] = {"uint4", -1, 0},
    [22] = {"int4", -1, 0},
    [23] = {"float4e2m1", -1, 0},
};
enum { TABLE_LEN = sizeof table / sizeof table[0] };

bool vn_onnx_dtype(int32_t onnx_dtype, vn_dtype *dtype, size_t *elem_bytes)
{
    if (onnx_dtype < 0 || onnx_dtype >= TABLE_LEN || table[onnx_dtype].vinci < 0) return false;
    if (dtype) *dtype = (vn_dtype)table[onnx_dtype].vinci;
    if (elem_bytes) *elem_bytes = table[onnx_dtype].bytes;
    return true;
}

const char *vn_onnx_dtype_name(int32_t onnx_dtype)
{
    if (onnx_dtype < 0 || onnx_dtype >= TABLE_LEN || !table[onnx_dtype].name) return "unknown";
    return table[onnx_dtype].name;
}
