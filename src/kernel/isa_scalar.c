/*
 * isa_scalar.c — the f32 kernels compiled for the scalar path (compile flags come from
 * the file name, see CMakeLists.txt); the code itself is isa_f32.inc.
 */
#define VN_ISA_TABLE_NAME vn_isa_table_scalar
#define VN_ISA_ID         VN_ISA_SCALAR

#include "kernel/isa_f32.inc"
