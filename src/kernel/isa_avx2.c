/*
 * isa_avx2.c — the f32 kernels compiled for the avx2 path (compile flags come from
 * the file name, see CMakeLists.txt); the code itself is isa_f32.inc.
 */
#define VN_ISA_TABLE_NAME vn_isa_table_avx2
#define VN_ISA_ID         VN_ISA_AVX2
#define VN_ISA_HAS_FMA    1
#include "kernel/isa_f32.inc"
