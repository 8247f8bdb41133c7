/*
 * isa_avx512.c — the f32 kernels compiled for the avx512 path (compile flags come from
 * the file name, see CMakeLists.txt); the code itself is isa_f32.inc.
 */
#define VN_ISA_TABLE_NAME vn_isa_table_avx512
#define VN_ISA_ID         VN_ISA_AVX512
#define VN_ISA_HAS_FMA    1
#include "kernel/isa_f32.inc"
