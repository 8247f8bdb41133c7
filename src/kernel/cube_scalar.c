/*
 * cube_scalar.c — the plain-C cube table (baseline x86-64): 4 x 16 tiles for
 * every operand family, built from the generic kernels.
 */
#include <string.h>

#include "kernel/cube_internal.h"

#include "kernel/cube_generic.inc"
#include "kernel/cube_pack_rows.inc"

CUBE_GENERIC_ENTRIES(4, 16)

const vn_cube_table vn_cube_table_scalar = {
    .isa = VN_ISA_SCALAR,
    .shape = {{4, 16, 1}, {4, 16, 2}, {4, 16, 4}},
    .ukr = {cube_gen_f32_4x16, cube_gen_bf16_4x16, cube_gen_i8_4x16},
    .gemv_rows = cube_gemv_rows,
    .gemv_panels = cube_gemv_panels,
    .gemv_trans = cube_gemv_trans,
    .pack_b_rows = cube_pack_b_rows,
};
