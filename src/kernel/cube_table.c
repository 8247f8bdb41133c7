/*
 * cube_table.c — picks the cube table of the active ISA once per process, and
 * the shape queries of kernel.h.
 *
 * The AVX-512 path needs AVX512_BF16 for its bf16 kernel and VNNI for its int8
 * kernel; a CPU without them keeps the 12 x 32 shapes with generic kernels, so
 * a packed B never depends on those two features. Where the CPU and OS offer
 * AMX tiles (and VINCI_AMX is not 0) the bf16 and int8 rows run on them
 * instead: 32 x 32 micro-tiles over the same packed B layouts.
 */
#include <stdatomic.h>

#include "base/amx_tiles.h"
#include "kernel/cube_internal.h"

extern const vn_ukr_fn vn_cube_avx512_generic_bf16;
extern const vn_ukr_fn vn_cube_avx512_generic_i8;

static _Atomic(const vn_cube_table *) vn_cube_chosen;
static vn_cube_table vn_cube_avx512_fallback, vn_cube_amx;

static const vn_cube_table *choose(void)
{
    switch (vn_isa_active()) {
    case VN_ISA_AVX512: {
        const vn_cpu_features *f = vn_cpu_features_get();
        if (vn_amx_usable()) {
            vn_cube_amx = vn_cube_table_amx_from(&vn_cube_table_avx512);
            return &vn_cube_amx;
        }
        if (f->avx512_bf16 && f->avx512_vnni) return &vn_cube_table_avx512;
        /* Racing first callers write the same bytes. */
        vn_cube_table t = vn_cube_table_avx512;
        if (!f->avx512_bf16) {
            t.ukr[VN_CUBE_BF16] = vn_cube_avx512_generic_bf16;
            t.ukr_le8[VN_CUBE_BF16] = t.ukr_le4[VN_CUBE_BF16] = NULL;
        }
        if (!f->avx512_vnni) t.ukr[VN_CUBE_I8] = vn_cube_avx512_generic_i8;
        vn_cube_avx512_fallback = t;
        return &vn_cube_avx512_fallback;
    }
    case VN_ISA_AVX2:
        return &vn_cube_table_avx2;
    default:
        return &vn_cube_table_scalar;
    }
}

const vn_cube_table *vn_cube_table_get(void)
{
    const vn_cube_table *t = atomic_load_explicit(&vn_cube_chosen, memory_order_acquire);
    if (t) return t;
    t = choose();
    atomic_store_explicit(&vn_cube_chosen, t, memory_order_release);
    return t;
}

int vn_cube_kind_of(vn_dtype dtype)
{
    switch (dtype) {
    case VN_F32:
        return VN_CUBE_F32;
    case VN_BF16:
        return VN_CUBE_BF16;
    case VN_U8:
    case VN_I8:
        return VN_CUBE_I8;
    default:
        return -1;
    }
}

bool vn_cube_int8_native(void)
{
    return vn_isa_active() == VN_ISA_AVX512 &&
           (vn_amx_usable() || vn_cpu_features_get()->avx512_vnni);
}

vn_cube_shape vn_cube_shape_of(vn_dtype dtype)
{
    int kind = vn_cube_kind_of(dtype);
    vn_cube_shape none = {0, 0, 0};
    return kind < 0 ? none : vn_cube_table_get()->shape[kind];
}

static int64_t round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

int64_t vn_cube_a_elems(vn_dtype dtype, int64_t m, int64_t k)
{
    vn_cube_shape s = vn_cube_shape_of(dtype);
    if (s.mr == 0 || m < 0 || k < 0) return 0;
    return round_up(m, s.mr) * round_up(k, s.kp);
}

int64_t vn_cube_b_elems(vn_dtype dtype, int64_t k, int64_t n)
{
    vn_cube_shape s = vn_cube_shape_of(dtype);
    if (s.mr == 0 || n < 0 || k < 0) return 0;
    return round_up(n, s.nr) * round_up(k, s.kp);
}

int64_t vn_cube_c_elems(vn_dtype dtype, int64_t m, int64_t n)
{
    vn_cube_shape s = vn_cube_shape_of(dtype);
    if (s.mr == 0 || m < 0 || n < 0) return 0;
    return round_up(m, s.mr) * round_up(n, s.nr);
}
