/*
 * signal.h — the signal-processing operators: DFT (signal_dft.c), STFT
 * (signal_stft.c), the Hann / Hamming / Blackman windows (signal_window.c)
 * and MelWeightMatrix (signal_mel.c), gathered into one registry table by
 * signal_table.c. The transforms share the direct DFT of signal_core.c.
 */
#ifndef VINCI_OPS_SIGNAL_H
#define VINCI_OPS_SIGNAL_H

#include "ops/shape_ops.h"

/* cos and sin of 2*pi*k/n for k in [0, n), in double. */
typedef struct vn_dft_twiddles {
    int64_t n;
    double *cos, *sin;
} vn_dft_twiddles;

vn_status vn_dft_twiddles_init(const char *where, int64_t n, vn_dft_twiddles *tw);
void vn_dft_twiddles_free(vn_dft_twiddles *tw);

/* out[k] = sum_t (re[t] + i im[t]) * exp(sign * 2*pi*i*k*t/n), k in [0, nout),
 * t in [0, n): a direct transform in double (exact twiddles, index k*t mod n). */
void vn_dft_direct(const vn_dft_twiddles *tw, const double *re, const double *im, double sign,
                   int64_t nout, double *out_re, double *out_im);

extern const vn_op_def vn_signal_dft_def, vn_signal_stft_def, vn_signal_hann_def,
    vn_signal_hamming_def, vn_signal_blackman_def, vn_signal_mel_def;

const vn_op_def *const *vn_ops_signal_table(int32_t *count);

#endif /* VINCI_OPS_SIGNAL_H */
