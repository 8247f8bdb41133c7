/*
 * write_svg.c — roofline.svg: log-log axes of arithmetic intensity (FLOP/byte)
 * against achieved GFLOP/s, the bandwidth roof (slope peak_gbs) meeting the
 * compute roof (peak_gflops) at the ridge, one circle per op (with FLOPs and
 * bytes counted) sized by its share of run time, its name as a tooltip.
 */
#include <math.h>

#include "profile/profiler.h"

enum { W = 800, H = 500, PAD = 60 };
#define X_LO -3.0 /* log10 FLOP/byte */
#define X_HI 4.0

static double px(double intensity)
{
    double l = log10(intensity > 1e-3 ? intensity : 1e-3);
    return PAD + (l - X_LO) / (X_HI - X_LO) * (W - 2 * PAD);
}

static double py(double gflops, double y_hi)
{
    double l = log10(gflops > 1e-3 ? gflops : 1e-3);
    return H - PAD - (l + 3.0) / (y_hi + 3.0) * (H - 2 * PAD);
}

static void put_roofs(FILE *f, const vn_profiler *p, double y_hi)
{
    double ridge = p->peak_gbs > 0 ? p->peak_gflops / p->peak_gbs : 1;
    double x0 = pow(10, X_LO);
    fprintf(f,
            "<polyline fill=\"none\" stroke=\"black\" stroke-width=\"2\" "
            "points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
            px(x0), py(x0 * p->peak_gbs, y_hi), px(ridge), py(p->peak_gflops, y_hi),
            px(pow(10, X_HI)), py(p->peak_gflops, y_hi));
    fprintf(f, "<text x=\"%d\" y=\"%d\">FLOP/byte (log)</text>\n", W / 2, H - 15);
    fprintf(f, "<text x=\"10\" y=\"%d\">GFLOP/s (log); roofs %.0f GFLOP/s, %.0f GB/s</text>\n",
            PAD / 2, p->peak_gflops, p->peak_gbs);
}

static void put_op(FILE *f, const vn_profiler *p, const vn_profile_node *n, double y_hi)
{
    double avg_s = n->calls ? n->total_ms / (double)n->calls / 1e3 : 0;
    if (avg_s <= 0 || n->flops <= 0 || n->bytes <= 0) return;
    double share = p->run_ms > 0 ? n->total_ms / p->run_ms : 0;
    double frac = 0;
    vn_bound b = vn_prof_node_bound(p, n, &frac);
    const char *color = b == VN_BOUND_COMPUTE ? "red" : b == VN_BOUND_MEMORY ? "blue" : "gray";
    fprintf(f,
            "<circle class=\"op\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" "
            "fill-opacity=\"0.5\"><title>",
            px(n->flops / n->bytes), py(n->flops / avg_s / 1e9, y_hi), 3 + 20 * sqrt(share), color);
    for (const char *s = n->name && n->name[0] ? n->name : n->op_type; *s; s++) {
        if (*s == '<' || *s == '>' || *s == '&')
            fprintf(f, "&#%d;", *s);
        else
            fputc(*s, f);
    }
    fprintf(f, " (%s, %s)</title></circle>\n", n->op_type, vn_bound_name(b));
}

vn_status vn_profiler_write_svg(const vn_profiler *p, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return vn_error(VN_ERR_IO, "vn_profiler_write_svg", "cannot write '%s'", path);
    double y_hi = ceil(log10(p->peak_gflops > 1 ? p->peak_gflops : 1)) + 0.5;
    fprintf(f,
            "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\">\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
            W, H, W, H);
    put_roofs(f, p, y_hi);
    for (int32_t i = 0; i < p->num_nodes; i++) put_op(f, p, &p->nodes[i], y_hi);
    fputs("</svg>\n", f);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return vn_error(VN_ERR_IO, "vn_profiler_write_svg", "error writing '%s'", path);
    return VN_OK;
}
