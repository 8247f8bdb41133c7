/*
 * write_svg.c — roofline.svg: log-log axes of arithmetic intensity (FLOP/byte)
 * against achieved GFLOP/s with decade grid lines and tick labels, the
 * bandwidth roof (slope peak_gbs) meeting the compute roof (peak_gflops) at
 * the ridge, both labelled with their figures (and, dashed, the bf16 / int8
 * roofs when ops ran in those precisions), one circle per op (with FLOPs
 * and bytes counted) coloured by its bound and sized by its share of run
 * time, its figures as a tooltip. The ops that take most time carry a number
 * that the key on the right resolves (name, share, bound, fraction of roof);
 * a legend explains colours and sizes, and a footnote names the ops that
 * cannot be placed (no FLOPs or no bytes counted: layout changes, views).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/compile.h"
#include "profile/profiler.h"

enum { W = 960, H = 640, LEFT = 80, RIGHT = 300, TOP = 50, BOTTOM = 130 };
enum { NOTE_LINES = 4, NOTE_CHARS = 130 }; /* the footnote of ops not placed */
enum { KEYED = 12 };                       /* ops numbered on the plot and listed in the key */
#define MIN_DECADE -3                      /* log10 of the smallest axis value either way */
#define MAX_DECADE 5

/* The plot's decades: [x_lo, x_hi] x [y_lo, y_hi], log10. */
typedef struct axes {
    int x_lo, x_hi, y_lo, y_hi;
} axes;

static double px(const axes *a, double intensity)
{
    double l = log10(intensity > 0 ? intensity : 1e-30);
    l = l < a->x_lo ? a->x_lo : l > a->x_hi ? a->x_hi : l;
    return LEFT + (l - a->x_lo) / (a->x_hi - a->x_lo) * (W - LEFT - RIGHT);
}

static double py(const axes *a, double gflops)
{
    double l = log10(gflops > 0 ? gflops : 1e-30);
    l = l < a->y_lo ? a->y_lo : l > a->y_hi ? a->y_hi : l;
    return H - BOTTOM - (l - a->y_lo) / (a->y_hi - a->y_lo) * (H - TOP - BOTTOM);
}

static bool placed(const vn_profile_node *n)
{
    return n->calls > 0 && n->total_ms > 0 && n->flops > 0 && n->bytes > 0;
}

static double gflops_of(const vn_profile_node *n)
{
    return n->flops / (n->total_ms / (double)n->calls / 1e3) / 1e9;
}

static int clamp_decade(double v)
{
    return v < MIN_DECADE ? MIN_DECADE : v > MAX_DECADE ? MAX_DECADE : (int)v;
}

/* Decades that hold every placed op, the ridges and the roofs. */
static axes axes_for(const vn_profiler *p)
{
    double ridge = p->peak_gbs > 0 ? p->peak_gflops / p->peak_gbs : 1;
    double xl = ridge, xh = ridge, yl = p->peak_gflops > 0 ? p->peak_gflops : 1, yh = yl;
    for (int q = VN_PREC_BF16; q <= VN_PREC_INT8; q++) {
        double r = vn_prof_used_roof(p, (vn_prof_precision)q);
        if (r > 0) xh = r / p->peak_gbs > xh ? r / p->peak_gbs : xh, yh = r > yh ? r : yh;
    }
    for (int32_t i = 0; i < p->num_nodes; i++) {
        const vn_profile_node *n = &p->nodes[i];
        if (!placed(n)) continue;
        double x = n->flops / n->bytes, y = gflops_of(n);
        xl = x < xl ? x : xl, xh = x > xh ? x : xh;
        yl = y < yl ? y : yl, yh = y > yh ? y : yh;
    }
    axes a = {clamp_decade(floor(log10(xl))), clamp_decade(ceil(log10(xh) + 0.3)),
              clamp_decade(floor(log10(yl))), clamp_decade(ceil(log10(yh) + 0.3))};
    if (a.x_hi <= a.x_lo) a.x_hi = a.x_lo + 1;
    if (a.y_hi <= a.y_lo) a.y_hi = a.y_lo + 1;
    return a;
}

static void put_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<' || *s == '>' || *s == '&' || *s == '"')
            fprintf(f, "&#%d;", *s);
        else
            fputc(*s, f);
    }
}

static const char *name_of(const vn_profile_node *n)
{
    return n->name && n->name[0] ? n->name : n->op_type;
}

static void put_decade(FILE *f, int d)
{
    if (d >= 0)
        fprintf(f, "%.0f", pow(10, d));
    else
        fprintf(f, "%.*f", -d, pow(10, d));
}

/* Frame, decade grid, tick labels and axis titles. */
static void put_axes(FILE *f, const axes *a)
{
    int x0 = LEFT, x1 = W - RIGHT, y0 = TOP, y1 = H - BOTTOM;
    fputs("<g stroke=\"#ddd\" stroke-width=\"1\">\n", f);
    for (int d = a->x_lo; d <= a->x_hi; d++)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", px(a, pow(10, d)), y0,
                px(a, pow(10, d)), y1);
    for (int d = a->y_lo; d <= a->y_hi; d++)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", x0, py(a, pow(10, d)),
                x1, py(a, pow(10, d)));
    fputs("</g>\n", f);
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n",
            x0, y0, x1 - x0, y1 - y0);
    fputs("<g font-size=\"12\" fill=\"#333\">\n", f);
    for (int d = a->x_lo; d <= a->x_hi; d++) {
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", px(a, pow(10, d)), y1 + 16);
        put_decade(f, d);
        fputs("</text>\n", f);
    }
    for (int d = a->y_lo; d <= a->y_hi; d++) {
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", x0 - 6, py(a, pow(10, d)) + 4);
        put_decade(f, d);
        fputs("</text>\n", f);
    }
    fprintf(f,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">arithmetic intensity "
            "(FLOP/byte, log scale)</text>\n",
            (x0 + x1) / 2, y1 + 36);
    fprintf(f,
            "<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\" "
            "font-size=\"13\">achieved GFLOP/s (log scale)</text>\n",
            x0 - 52, (y0 + y1) / 2);
    fputs("</g>\n", f);
}

/* The two roofs, clipped to the plot, with their figures and the ridge. */
static void put_roofs(FILE *f, const vn_profiler *p, const axes *a)
{
    if (!(p->peak_gflops > 0 && p->peak_gbs > 0)) {
        fprintf(f,
                "<text x=\"%d\" y=\"%d\" font-size=\"13\" fill=\"#a00\">no roofs measured for "
                "this ISA path</text>\n",
                LEFT + 10, TOP + 20);
        return;
    }
    double ridge = p->peak_gflops / p->peak_gbs;
    /* The bandwidth roof enters the plot at the left edge or the bottom, whichever is later. */
    double xs = pow(10, a->x_lo), ys = xs * p->peak_gbs;
    if (ys < pow(10, a->y_lo)) xs = pow(10, a->y_lo) / p->peak_gbs, ys = pow(10, a->y_lo);
    fprintf(f,
            "<polyline fill=\"none\" stroke=\"black\" stroke-width=\"2.5\" "
            "points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
            px(a, xs), py(a, ys), px(a, ridge), py(a, p->peak_gflops), px(a, pow(10, a->x_hi)),
            py(a, p->peak_gflops));
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\" "
            "stroke-dasharray=\"4,4\"/>\n",
            px(a, ridge), py(a, p->peak_gflops), px(a, ridge), H - BOTTOM);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">compute roof %.1f GFLOP/s</text>\n",
            px(a, ridge) + 6, py(a, p->peak_gflops) - 6, p->peak_gflops);
    fprintf(f,
            "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"#555\">ridge %.1f FLOP/B</text>\n",
            px(a, ridge) + 4, H - BOTTOM - 6, ridge);
    /* The bandwidth label sits on the slope, near its start (ops sit under it, on the right). */
    double lx = pow(10, log10(xs) + 0.08 * (log10(ridge) - log10(xs)));
    double x0 = px(a, xs), y0 = py(a, ys), x1 = px(a, ridge), y1 = py(a, p->peak_gflops);
    double angle = atan2(y1 - y0, x1 - x0) * 180 / 3.14159265358979;
    fprintf(f,
            "<text transform=\"translate(%.1f,%.1f) rotate(%.1f)\" font-size=\"12\">memory roof "
            "%.1f GB/s</text>\n",
            px(a, lx), py(a, lx * p->peak_gbs) - 8, angle, p->peak_gbs);
}

/* The bf16 / int8 roofs ops of those precisions are held to: dashed, from
 * the memory roof (extended to their ridge) to the right edge. */
static void put_low_roofs(FILE *f, const vn_profiler *p, const axes *a)
{
    for (int q = VN_PREC_BF16; q <= VN_PREC_INT8; q++) {
        double r = vn_prof_used_roof(p, (vn_prof_precision)q);
        if (!(r > 0 && p->peak_gflops > 0)) continue;
        double x0 = p->peak_gflops / p->peak_gbs, x1 = r / p->peak_gbs;
        fprintf(f,
                "<polyline fill=\"none\" stroke=\"#444\" stroke-width=\"1.5\" "
                "stroke-dasharray=\"6,4\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
                px(a, x0), py(a, p->peak_gflops), px(a, x1), py(a, r), px(a, pow(10, a->x_hi)),
                py(a, r));
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s roof %.1f G%s/s</text>\n",
                px(a, x1) + 6, py(a, r) - 6, vn_prof_precision_name((vn_prof_precision)q), r,
                q == VN_PREC_INT8 ? "OP" : "FLOP");
    }
}

static const char *color_of(vn_bound b)
{
    return b == VN_BOUND_COMPUTE ? "#d62728" : b == VN_BOUND_MEMORY ? "#1f77b4" : "#7f7f7f";
}

static const vn_profiler *sort_p; /* qsort has no context argument in C11 */

static int by_time(const void *x, const void *y)
{
    double a = sort_p->nodes[*(const int32_t *)x].total_ms;
    double b = sort_p->nodes[*(const int32_t *)y].total_ms;
    return a < b ? 1 : a > b ? -1 : 0;
}

static double share_of(const vn_profiler *p, const vn_profile_node *n)
{
    return p->run_ms > 0 ? n->total_ms / p->run_ms : 0;
}

/* Where the numbers on the plot went, so that the next one avoids them. */
typedef struct labels {
    double x[KEYED], y[KEYED];
    int n;
} labels;

/* A spot for a number beside a circle at (cx, cy) of radius r: the first of
 * eight around it (then eight further out) that keeps clear of the numbers
 * placed so far. */
static void place_label(labels *l, double cx, double cy, double r, double *x, double *y)
{
    static const double dir[8][2] = {{1, -1}, {1, 1},  {-1, -1}, {-1, 1},
                                     {1, 0},  {-1, 0}, {0, -1},  {0, 1}};
    double d = r * 0.7 + 4;
    for (int k = 0; k < 16; k++) {
        double s = k < 8 ? 1 : 2;
        *x = cx + dir[k % 8][0] * d * s - (dir[k % 8][0] < 0 ? 12 : 0);
        *y = cy + dir[k % 8][1] * d * s + 4;
        bool clear = true;
        for (int i = 0; i < l->n && clear; i++)
            clear = fabs(*x - l->x[i]) >= 20 || fabs(*y - l->y[i]) >= 11;
        if (clear) break;
    }
    if (l->n < KEYED) l->x[l->n] = *x, l->y[l->n++] = *y;
}

/* One op's circle (key > 0: numbered on the plot). */
static void put_op(FILE *f, const vn_profiler *p, const axes *a, const vn_profile_node *n, int key,
                   labels *l)
{
    double frac = 0, share = share_of(p, n), x = n->flops / n->bytes, y = gflops_of(n);
    vn_bound b = vn_prof_node_bound(p, n, &frac);
    double cx = px(a, x), cy = py(a, y), r = 3 + 20 * sqrt(share);
    fprintf(f,
            "<circle class=\"op\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" "
            "fill-opacity=\"0.55\" stroke=\"%s\"><title>",
            cx, cy, r, color_of(b), color_of(b));
    put_text(f, name_of(n));
    fputs(" (", f);
    put_text(f, n->op_type);
    fprintf(f,
            "): %.1f%% of run time, %.2f GFLOP/s at %.3g FLOP/B, %s bound, %.0f%% of "
            "roof</title></circle>\n",
            100 * share, y, x, vn_bound_name(b), 100 * frac);
    if (key > 0) {
        double tx, ty;
        place_label(l, cx, cy, r, &tx, &ty);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" font-weight=\"bold\">%d</text>\n",
                tx, ty, key);
    }
}

/* The key of the numbered ops and the legend, in the right margin. */
static void put_key(FILE *f, const vn_profiler *p, const int32_t *order, int32_t keyed)
{
    int x = W - RIGHT + 16, y = TOP + 6;
    fprintf(f,
            "<g font-size=\"11\">\n<text x=\"%d\" y=\"%d\" font-size=\"13\">"
            "ops by time (share, bound, roof)</text>\n",
            x, y);
    for (int32_t k = 0; k < keyed; k++) {
        const vn_profile_node *n = &p->nodes[order[k]];
        double frac = 0;
        vn_bound b = vn_prof_node_bound(p, n, &frac);
        fprintf(f, "<text x=\"%d\" y=\"%d\"><tspan font-weight=\"bold\">%d</tspan> ", x,
                y + 18 * (k + 1), (int)k + 1);
        char name[24];
        snprintf(name, sizeof name, "%s", name_of(n));
        put_text(f, name);
        fprintf(f, " <tspan fill=\"%s\">%.1f%% %s %.0f%%</tspan></text>\n", color_of(b),
                100 * share_of(p, n), vn_bound_name(b), 100 * frac);
    }
    y += 18 * (keyed + 2);
    static const vn_bound kinds[3] = {VN_BOUND_COMPUTE, VN_BOUND_MEMORY, VN_BOUND_LATENCY};
    for (int k = 0; k < 3; k++)
        fprintf(f,
                "<circle cx=\"%d\" cy=\"%d\" r=\"6\" fill=\"%s\" fill-opacity=\"0.55\" "
                "stroke=\"%s\"/><text x=\"%d\" y=\"%d\">%s bound</text>\n",
                x + 6, y + 18 * k - 4, color_of(kinds[k]), color_of(kinds[k]), x + 18, y + 18 * k,
                vn_bound_name(kinds[k]));
    fprintf(f, "<text x=\"%d\" y=\"%d\">circle area: share of run time</text>\n</g>\n", x,
            y + 18 * 3);
}

/* The ops the plot cannot place, named under it on up to NOTE_LINES lines. */
static void put_unplaced(FILE *f, const vn_profiler *p, const int32_t *order)
{
    int32_t shown = 0, skipped = 0, line = 0;
    size_t used = 0;
    for (int32_t k = 0; k < p->num_nodes; k++) {
        const vn_profile_node *n = &p->nodes[order[k]];
        if (placed(n)) continue;
        size_t len = strlen(name_of(n)) + 8;
        if (shown && used + len > NOTE_CHARS) { /* next line */
            if (line + 1 == NOTE_LINES) {
                skipped++;
                continue;
            }
            fputs(",</text>\n", f);
            line++, used = 0;
        }
        if (shown == 0)
            fprintf(f,
                    "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">not placed (no FLOPs "
                    "or bytes counted): ",
                    LEFT, H - BOTTOM + 58);
        else if (used == 0)
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">", LEFT,
                    H - BOTTOM + 58 + 14 * line);
        fputs(used && shown ? ", " : "", f);
        put_text(f, name_of(n));
        fprintf(f, " %.1f%%", 100 * share_of(p, n));
        used += len + (shown == 0 ? 40 : 0);
        shown++;
    }
    if (skipped) fprintf(f, " and %d more", (int)skipped);
    if (shown) fputs("</text>\n", f);
}

static void put_title(FILE *f, const vn_profiler *p)
{
    fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"16\">roofline: ", LEFT);
    put_text(f, p->model->name ? p->model->name : "model");
    fprintf(f, " (%lld runs, %.3f ms per run, %d workers)</text>\n", (long long)p->runs,
            p->runs ? p->run_ms / (double)p->runs : 0, (int)vn_device_num_workers(p->device));
}

vn_status vn_profiler_write_svg(const vn_profiler *p, const char *path)
{
    int32_t *order = malloc((size_t)(p->num_nodes ? p->num_nodes : 1) * sizeof *order);
    if (!order) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_profiler_write_svg", "no memory");
    for (int32_t i = 0; i < p->num_nodes; i++) order[i] = i;
    sort_p = p;
    qsort(order, (size_t)p->num_nodes, sizeof *order, by_time);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(order);
        return vn_error(VN_ERR_IO, "vn_profiler_write_svg", "cannot write '%s'", path);
    }
    axes a = axes_for(p);
    fprintf(f,
            "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" font-family=\"sans-serif\">\n<rect width=\"%d\" height=\"%d\" "
            "fill=\"white\"/>\n",
            W, H, W, H);
    put_title(f, p);
    put_axes(f, &a);
    put_roofs(f, p, &a);
    put_low_roofs(f, p, &a);
    /* Largest first, so small circles stay visible on top of large ones. */
    int32_t keyed = 0;
    labels l = {.n = 0};
    for (int32_t k = 0; k < p->num_nodes; k++) {
        const vn_profile_node *n = &p->nodes[order[k]];
        if (!placed(n)) continue;
        order[keyed] = order[k]; /* placed ops first, by time (k >= keyed) */
        put_op(f, p, &a, n, keyed < KEYED ? keyed + 1 : 0, &l);
        keyed++;
    }
    int32_t num_placed = keyed;
    put_key(f, p, order, num_placed < KEYED ? num_placed : KEYED);
    /* put_unplaced wants every op by time again. */
    for (int32_t i = 0; i < p->num_nodes; i++) order[i] = i;
    qsort(order, (size_t)p->num_nodes, sizeof *order, by_time);
    put_unplaced(f, p, order);
    fputs("</svg>\n", f);
    free(order);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return vn_error(VN_ERR_IO, "vn_profiler_write_svg", "error writing '%s'", path);
    return VN_OK;
}
