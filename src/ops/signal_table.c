/*
 * signal_table.c — the registry table of the signal family (see signal.h).
 */
#include "ops/signal.h"

const vn_op_def *const *vn_ops_signal_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&vn_signal_dft_def,      &vn_signal_stft_def,
                                            &vn_signal_hann_def,     &vn_signal_hamming_def,
                                            &vn_signal_blackman_def, &vn_signal_mel_def};
    *count = (int32_t)(sizeof ptrs / sizeof ptrs[0]);
    return ptrs;
}
