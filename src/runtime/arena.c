/*
 * arena.c — names and default sizes of the scratch arenas.
 *
 * The defaults are the Ascend 910B on-chip sizes: together (960 KiB) they fit
 * a server core's L2, so a kernel tiled for the NPU stays in cache on a CPU.
 */
#include "vinci/runtime.h"

static const char *const arena_names[VN_ARENA_COUNT] = {
    [VN_ARENA_UB] = "UB",   [VN_ARENA_L1] = "L1",   [VN_ARENA_L0A] = "L0A",
    [VN_ARENA_L0B] = "L0B", [VN_ARENA_L0C] = "L0C",
};

static const int64_t arena_defaults[VN_ARENA_COUNT] = {
    [VN_ARENA_UB] = 192 * 1024, [VN_ARENA_L1] = 512 * 1024,  [VN_ARENA_L0A] = 64 * 1024,
    [VN_ARENA_L0B] = 64 * 1024, [VN_ARENA_L0C] = 128 * 1024,
};

const char *vn_arena_name(vn_arena arena)
{
    if ((unsigned)arena >= VN_ARENA_COUNT) return "invalid";
    return arena_names[arena];
}

int64_t vn_arena_default_size(vn_arena arena)
{
    if ((unsigned)arena >= VN_ARENA_COUNT) return 0;
    return arena_defaults[arena];
}
