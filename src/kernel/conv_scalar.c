/*
 * conv_scalar.c — the convolution micro-kernels for baseline x86-64: the
 * "vector" is one float, so a C0 block is 16 of them (the compiler may still
 * use SSE for the 16-wide inner loops). Also the scalar activation every ISA
 * path follows, and the choice of the active table.
 */
#include <math.h>
#include <pthread.h>

#include "kernel/conv_kernels.h"
#include "base/amx_tiles.h"
#include "kernel/isa.h"
#include "kernel/vec_f32_scalar.h"

float vn_conv_act_scalar(float v, const vn_conv_epi *e)
{
    switch (e->act) {
    case VN_CONV_ACT_RELU:
        return vn_vec_maxf(v, 0.0f);
    case VN_CONV_ACT_CLIP:
        return vn_vec_minf(vn_vec_maxf(v, e->p0), e->p1);
    case VN_CONV_ACT_LEAKY_RELU:
        return v >= 0.0f ? v : e->p0 * v;
    case VN_CONV_ACT_HARD_SIGMOID:
        return vn_vec_minf(vn_vec_maxf(e->p0 * v + e->p1, 0.0f), 1.0f);
    case VN_CONV_ACT_HARD_SWISH:
        return v * vn_vec_minf(vn_vec_maxf(v / 6.0f + 0.5f, 0.0f), 1.0f);
    case VN_CONV_ACT_SIGMOID:
        return 1.0f / (1.0f + expf(-v));
    case VN_CONV_ACT_SILU:
        return v / (1.0f + expf(-v));
    default:
        return v;
    }
}

#define OWB_MAX    4
#define NCB_MAX    1
#define DW_OWB_MAX 4
#define TABLE_NAME vn_conv_table_scalar
#define TABLE_ISA  VN_ISA_SCALAR

/* X(w, ...) for w = 1 .. OWB_MAX, and 1 .. DW_OWB_MAX (instantiation lists,
 * conv_kernel.inc) */
// clang-format off
#define OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__)
#define DW_OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__)
// clang-format on

#include "kernel/conv_kernel.inc"

static vn_conv_table amx_table;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

/* The AVX-512 table with its bf16 rows on AMX tiles (conv_amx.c). */
static void make_amx_table(void)
{
    amx_table = vn_conv_table_avx512;
    amx_table.direct_row_bf16 = vn_conv_amx_row_bf16;
}

const vn_conv_table *vn_conv_table_get(void)
{
    const vn_conv_table *t =
        vn_isa_pick(&vn_conv_table_avx512, &vn_conv_table_avx2, &vn_conv_table_scalar);
    if (t != &vn_conv_table_avx512 || !vn_amx_usable()) return t;
    pthread_once(&amx_once, make_amx_table);
    return &amx_table;
}

bool vn_conv_bf16_available(void)
{
    return vn_conv_table_get()->direct_row_bf16 && vn_cpu_features_get()->avx512_bf16;
}
