/*
 * isa.c — picks the f32 kernel table of the active ISA, once per process.
 *
 * vn_isa_active() is itself fixed after its first call, so the choice can be
 * cached in an atomic pointer: racing first callers compute the same value.
 */
#include <stdatomic.h>

#include "kernel/isa.h"

static _Atomic(const vn_isa_table *) vn_isa_chosen;

const vn_isa_table *vn_isa_table_for(vn_isa isa)
{
    switch (isa) {
    case VN_ISA_SCALAR:
        return &vn_isa_table_scalar;
    case VN_ISA_AVX2:
        return &vn_isa_table_avx2;
    case VN_ISA_AVX512:
        return &vn_isa_table_avx512;
    default:
        return NULL;
    }
}

const vn_isa_table *vn_isa_table_get(void)
{
    const vn_isa_table *t = atomic_load_explicit(&vn_isa_chosen, memory_order_acquire);
    if (t) return t;
    t = vn_isa_table_for(vn_isa_active());
    if (!t) t = &vn_isa_table_scalar;
    atomic_store_explicit(&vn_isa_chosen, t, memory_order_release);
    return t;
}
