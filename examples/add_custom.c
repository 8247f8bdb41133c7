/*
 * add_custom.c — a user-written Add kernel in the shape of the Ascend C
 * samples (Init / Process / CopyIn / Compute / CopyOut), launched with vinci.
 *
 *   add_custom                     z = x + y over 1M floats on 8 blocks, verified
 *   add_custom --checked           the same in checked mode
 *   add_custom --n 1000003         any length: the tail is copied with the _pad forms
 *   add_custom --bug tail          a length that is not whole 32-byte blocks, copied
 *                                  with vn_copy_in: the hardware would silently drop the
 *                                  tail; checked mode names the call and line
 *   add_custom --bug leak          a missing vn_free; checked mode reports the buffer
 *   add_custom ... --expect-error  exit 0 only if vinci reported an error (for ctest)
 *
 * A --bug turns checked mode on, as a developer would to find it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/kernel.h"

#define BUFFER_NUM 2    /* two buffers per queue: double buffering */
#define TILE       4096 /* max floats per tile: 3 x 2 buffers of 16 KiB fit the default UB */

typedef enum bug { BUG_NONE, BUG_TAIL, BUG_LEAK } bug;

/* Tiling, computed on the host and read by every block. */
typedef struct add_custom_args {
    vn_gm x, y, z;
    int64_t per_block; /* elements per block, a multiple of 8 (32 bytes) */
    int32_t tile;
    bug bug;
} add_custom_args;

/* The operator object of one block (the samples' KernelAdd class). */
typedef struct add_custom {
    vn_core *core;
    const add_custom_args *args;
    int64_t begin, length; /* this block's range of elements */
    vn_queue *in_x, *in_y, *out_z;
} add_custom;

static void add_custom_init(add_custom *op, vn_core *core, const add_custom_args *args)
{
    op->core = core;
    op->args = args;
    op->begin = args->per_block * vn_block_idx(core);
    int64_t end = op->begin + args->per_block;
    if (end > args->x.len) end = args->x.len;
    op->length = end > op->begin ? end - op->begin : 0;
    op->in_x = vn_queue_new(core, VN_VECIN, BUFFER_NUM, args->tile, VN_F32);
    op->in_y = vn_queue_new(core, VN_VECIN, BUFFER_NUM, args->tile, VN_F32);
    op->out_z = vn_queue_new(core, VN_VECOUT, BUFFER_NUM, args->tile, VN_F32);
}

/* Elements of tile i; the last tile of a block may be short. */
static int64_t tile_len(const add_custom *op, int64_t i)
{
    int64_t left = op->length - i * op->args->tile;
    return left < op->args->tile ? left : op->args->tile;
}

/* A tail that is not whole 32-byte blocks needs the padded copy. */
static bool needs_pad(const add_custom *op, int64_t n)
{
    return op->args->bug != BUG_TAIL && (n * (int64_t)sizeof(float)) % VN_BLOCK_BYTES != 0;
}

static vn_copy_pad_params row(int64_t n)
{
    vn_copy_pad_params p = {1, (uint32_t)(n * (int64_t)sizeof(float)), 0, 0};
    return p;
}

static void copy_in(add_custom *op, int64_t i)
{
    vn_core *c = op->core;
    int64_t off = op->begin + i * op->args->tile, n = tile_len(op, i);
    vn_local x = vn_alloc(c, op->in_x), y = vn_alloc(c, op->in_y);
    if (needs_pad(op, n)) {
        vn_pad zero = {false, 0, 0, 0.0};
        vn_copy_in_pad(c, x, op->args->x, off, row(n), zero);
        vn_copy_in_pad(c, y, op->args->y, off, row(n), zero);
    } else {
        vn_copy_in(c, x, op->args->x, off, n); /* --bug tail: n * 4 is not whole blocks */
        vn_copy_in(c, y, op->args->y, off, n);
    }
    vn_enque(c, op->in_x, x);
    vn_enque(c, op->in_y, y);
}

static void compute(add_custom *op, int64_t i)
{
    vn_core *c = op->core;
    vn_local x = vn_deque(c, op->in_x), y = vn_deque(c, op->in_y);
    vn_local z = vn_alloc(c, op->out_z);
    vn_add(c, z, x, y, tile_len(op, i));
    vn_enque(c, op->out_z, z);
    bool last = (i + 1) * op->args->tile >= op->length;
    if (!(op->args->bug == BUG_LEAK && last)) vn_free(c, op->in_x, x); /* --bug leak */
    vn_free(c, op->in_y, y);
}

static void copy_out(add_custom *op, int64_t i)
{
    vn_core *c = op->core;
    int64_t off = op->begin + i * op->args->tile, n = tile_len(op, i);
    vn_local z = vn_deque(c, op->out_z);
    if (needs_pad(op, n))
        vn_copy_out_pad(c, op->args->z, off, z, row(n));
    else
        vn_copy_out(c, op->args->z, off, z, n);
    vn_free(c, op->out_z, z);
}

static void process(add_custom *op)
{
    int64_t tiles = (op->length + op->args->tile - 1) / op->args->tile;
    for (int64_t i = 0; i < tiles; i++) {
        vn_set_loop(op->core, i);
        copy_in(op, i);
        compute(op, i);
        copy_out(op, i);
    }
}

static void add_custom_kernel(vn_core *core, const void *args)
{
    add_custom op;
    add_custom_init(&op, core, args);
    process(&op);
}

/* ---- host ----------------------------------------------------------------------- */

typedef struct options {
    bug bug;
    bool checked, expect_error;
    int64_t n; /* elements; 0: 1M (+3 for --bug tail) */
} options;

static int parse(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--checked") == 0) {
            o->checked = true;
        } else if (strcmp(argv[i], "--expect-error") == 0) {
            o->expect_error = true;
        } else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            o->n = strtoll(argv[++i], NULL, 10);
            if (o->n <= 0) return -1;
        } else if (strcmp(argv[i], "--bug") == 0 && i + 1 < argc) {
            const char *b = argv[++i];
            if (strcmp(b, "tail") == 0)
                o->bug = BUG_TAIL;
            else if (strcmp(b, "leak") == 0)
                o->bug = BUG_LEAK;
            else
                return -1;
            o->checked = true;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Index of the first wrong element, or -1. */
static int64_t verify(const float *x, const float *y, const float *z, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (z[i] != x[i] + y[i]) return i;
    return -1;
}

static void print_counters(const vn_kernel_counters *k)
{
    printf("  bytes in    %lld\n  bytes out   %lld\n  elem ops    %lld\n", (long long)k->bytes_in,
           (long long)k->bytes_out, (long long)k->vector_elem_ops);
    printf("  UB high-water %lld bytes of scratch\n",
           (long long)k->scratch_high_water[VN_ARENA_UB]);
    double gb = (double)(k->bytes_in + k->bytes_out) / 1e9;
    printf("  time        %.3f ms (%.1f GB/s)\n", k->wall_ms,
           k->wall_ms > 0 ? gb / (k->wall_ms / 1e3) : 0.0);
}

/* Tiling: the largest tile up to TILE whose 3 queues x BUFFER_NUM buffers fit
 * this device's UB (VINCI_UB_SIZE may shrink it), in whole 32-byte blocks. */
static int32_t tile_for(vn_device *dev)
{
    int64_t ub = vn_device_arena_size(dev, VN_ARENA_UB);
    int64_t fit = ub / (3 * BUFFER_NUM * (int64_t)sizeof(float)) / 8 * 8;
    return (int32_t)(fit < TILE ? (fit < 8 ? 8 : fit) : TILE);
}

static int run(const options *o, float *x, float *y, float *z, int64_t n)
{
    const int32_t blocks = 8;
    vn_device *dev = NULL;
    if (vn_device_default(&dev) != VN_OK) {
        printf("add_custom: %s\n", vn_last_error());
        return 1;
    }
    add_custom_args args;
    args.x = vn_gm_make(x, VN_F32, n);
    args.y = vn_gm_make(y, VN_F32, n);
    args.z = vn_gm_make(z, VN_F32, n);
    args.tile = tile_for(dev);
    args.bug = o->bug;
    /* per block: whole 32-byte blocks, so only the last block has a tail */
    args.per_block = ((n + blocks - 1) / blocks + 7) / 8 * 8;
    vn_launch_desc desc = {add_custom_kernel, "add_custom", blocks, &args, o->checked ? 1 : -1, 0};
    vn_kernel_counters k;
    vn_status st = vn_launch(dev, &desc, &k);
    if (st != VN_OK) {
        printf("add_custom: vinci reported %s:\n  %s\n", vn_status_name(st), vn_last_error());
        return o->expect_error ? 0 : 1;
    }
    int64_t bad = verify(x, y, z, n);
    printf("add_custom: %lld floats on %d blocks (%s mode): %s\n", (long long)n, (int)blocks,
           o->checked ? "checked" : "release", bad < 0 ? "correct" : "WRONG");
    if (bad >= 0) printf("  first wrong element: %lld\n", (long long)bad);
    print_counters(&k);
    if (o->expect_error) {
        printf("add_custom: expected an error, but the launch succeeded\n");
        return 1;
    }
    return bad < 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    options o = {BUG_NONE, false, false, 0};
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr,
                "usage: add_custom [--checked] [--n N] [--bug tail|leak] [--expect-error]\n");
        return 2;
    }
    /* the tail bug needs a length that is not whole 32-byte blocks */
    int64_t n = o.n > 0 ? o.n : (1 << 20) + (o.bug == BUG_TAIL ? 3 : 0);
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    float *z = calloc((size_t)n, sizeof *z);
    if (!x || !y || !z) {
        fprintf(stderr, "add_custom: out of memory\n");
        return 1;
    }
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)(i % 1000) * 0.5f;
        y[i] = (float)(i % 77) - 30.0f;
    }
    int rc = run(&o, x, y, z, n);
    free(x);
    free(y);
    free(z);
    return rc;
}
