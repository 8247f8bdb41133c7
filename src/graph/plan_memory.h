/*
 * plan_memory.h — the static memory plan: offsets in one activation arena
 * from tensor lifetimes (plan_memory.c). Independent of the graph so it can
 * be tested on random lifetimes.
 */
#ifndef VINCI_GRAPH_PLAN_MEMORY_H
#define VINCI_GRAPH_PLAN_MEMORY_H

#include "vinci/base.h"

#define VN_MEMPLAN_ALIGN 64

typedef struct vn_mp_item {
    size_t size;         /* bytes; rounded up to VN_MEMPLAN_ALIGN by the planner */
    int32_t first, last; /* live from step `first` (written) to step `last` (last read) */
    int32_t share;       /* -1, or an item whose memory this one takes over in place */
    size_t offset;       /* out: VN_MEMPLAN_ALIGN-aligned offset in the arena */
} vn_mp_item;

/*
 * Assign offsets so that no two items live at the same step overlap in memory,
 * except an item and the item it takes over (`share`), which is honoured only
 * when that one's last step is this one's first step, their rounded sizes are
 * equal and no other item took it over. Greedy best-fit by size: the largest
 * buffers are placed first, each in the smallest gap left by placed buffers
 * whose lifetimes overlap its own. *peak: the arena size; *sum: the sum of all
 * rounded sizes (what no reuse would cost); *shared: in-place items honoured.
 */
vn_status vn_memplan_solve(vn_mp_item *items, int32_t n, size_t *peak, size_t *sum, size_t *shared);

#endif /* VINCI_GRAPH_PLAN_MEMORY_H */
