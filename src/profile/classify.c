/*
 * classify.c — the roofline bound of an op (the rule is in vinci/profile.h).
 * msprof calls an op under 80 % of its roof latency bound; CPU kernels rarely
 * reach that, so vinci keeps msprof's ridge test and calls an op latency bound
 * only when it is too short to measure well or far from both roofs.
 */
#include "vinci/profile.h"

const char *vn_bound_name(vn_bound b)
{
    return b == VN_BOUND_COMPUTE ? "compute" : b == VN_BOUND_MEMORY ? "memory" : "latency";
}

static double roof_fraction_of(double gflops, double gbs, double intensity, double flops,
                               double peak_gflops, double peak_gbs)
{
    if (flops <= 0) return peak_gbs > 0 ? gbs / peak_gbs : 0;
    double roof = intensity * peak_gbs;
    if (!(roof < peak_gflops)) roof = peak_gflops;
    return roof > 0 ? gflops / roof : 0;
}

vn_bound vn_profile_classify(double ms_per_call, double flops, double bytes, double peak_gflops,
                             double peak_gbs, double *roof_fraction)
{
    double s = ms_per_call / 1e3;
    double gflops = s > 0 ? flops / s / 1e9 : 0, gbs = s > 0 ? bytes / s / 1e9 : 0;
    /* No bytes counted: all arithmetic, as far as the counters can tell. */
    double intensity = bytes > 0 ? flops / bytes : (flops > 0 ? 1e30 : 0);
    double frac = roof_fraction_of(gflops, gbs, intensity, flops, peak_gflops, peak_gbs);
    if (roof_fraction) *roof_fraction = frac;
    bool low =
        gflops < VN_PROFILE_LOW_FRACTION * peak_gflops && gbs < VN_PROFILE_LOW_FRACTION * peak_gbs;
    if (ms_per_call * 1e3 < VN_PROFILE_LATENCY_US || low) return VN_BOUND_LATENCY;
    double ridge = peak_gbs > 0 ? peak_gflops / peak_gbs : 0;
    return intensity >= ridge ? VN_BOUND_COMPUTE : VN_BOUND_MEMORY;
}
