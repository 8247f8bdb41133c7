/*
 * signal_core.c — the direct discrete Fourier transform shared by DFT and
 * STFT: O(n * nout) per line with a table of n exact twiddles, accumulated
 * in double, so any length works (no power-of-two restriction) and the
 * result is as accurate as the f32 inputs allow.
 */
#include <math.h>
#include <stdlib.h>

#include "ops/signal.h"

vn_status vn_dft_twiddles_init(const char *where, int64_t n, vn_dft_twiddles *tw)
{
    tw->n = n;
    tw->cos = malloc((size_t)vn_ops_max(n, 1) * sizeof(double));
    tw->sin = malloc((size_t)vn_ops_max(n, 1) * sizeof(double));
    if (!tw->cos || !tw->sin) {
        vn_dft_twiddles_free(tw);
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for %lld twiddles", (long long)n);
    }
    const double two_pi = 6.283185307179586476925286766559;
    for (int64_t k = 0; k < n; k++) {
        tw->cos[k] = cos(two_pi * (double)k / (double)n);
        tw->sin[k] = sin(two_pi * (double)k / (double)n);
    }
    return VN_OK;
}

void vn_dft_twiddles_free(vn_dft_twiddles *tw)
{
    free(tw->cos);
    free(tw->sin);
    tw->cos = tw->sin = NULL;
}

void vn_dft_direct(const vn_dft_twiddles *tw, const double *re, const double *im, double sign,
                   int64_t nout, double *out_re, double *out_im)
{
    int64_t n = tw->n;
    for (int64_t k = 0; k < nout; k++) {
        double sr = 0, si = 0;
        int64_t idx = 0, step = k % n;
        for (int64_t t = 0; t < n; t++) {
            double c = tw->cos[idx], s = sign * tw->sin[idx];
            sr += re[t] * c - im[t] * s;
            si += re[t] * s + im[t] * c;
            idx += step;
            if (idx >= n) idx -= n;
        }
        out_re[k] = sr;
        out_im[k] = si;
    }
}
