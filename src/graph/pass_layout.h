/*
 * pass_layout.h — the O3 layout propagation pass (pass_layout.c): keeps
 * activations in NC1HWC0 across chains of blocked-capable operators and
 * inserts the reorders at the chain's boundaries.
 */
#ifndef VINCI_GRAPH_PASS_LAYOUT_H
#define VINCI_GRAPH_PASS_LAYOUT_H

#include "graph/compile.h"

/* Runs after the O2 fusions (it rewrites Conv / FusedConv into their
 * NC1HWC0 twins, so the epilogue fusions must have seen them first). */
vn_status vn_pass_layout(vn_model *m, vn_pass_report *r);

#endif /* VINCI_GRAPH_PASS_LAYOUT_H */
