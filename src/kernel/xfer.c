/*
 * xfer.c — the copy engine: copies into VECIN and out of VECOUT queue buffers
 * are asynchronous, as the hardware's MTE2 / MTE3 pipes are, and complete at
 * the queue protocol's synchronisation points.
 *
 * A CPU has no copy engine: a copy is done by the worker itself. Done one at
 * a time (memcpy of input a, memcpy of input b, compute, memcpy of the output)
 * each phase has a single stream of cache misses in flight, and one core
 * reaches about half the DRAM bandwidth that the STREAM triad loop (all
 * streams interleaved) gets. So contiguous copies that touch a queue buffer
 * are recorded here instead, and executed together, a few cache lines of each
 * in turn (xfer_turns.inc), when their data is needed: the previous tile's copy-out streams while
 * this tile's inputs arrive, as in the triad loop.
 *
 * Invariants:
 *   - a pending transfer is executed before anything can observe it: vn_deque
 *     (the protocol's "data has arrived"), vn_alloc of a buffer a transfer
 *     still uses, every vector / cube instruction and every immediate copy
 *     (they flush first, so all copies keep program order), and the block end;
 *   - two pending transfers never overlap where one of them writes (checked on
 *     push; an overlapping push flushes first), so executing them interleaved
 *     gives the bytes of executing them in program order;
 *   - checked mode executes every copy at once (vn_xfer_enabled is false), so
 *     the shadow map and error reports see memory as the program order says.
 * Scalar code that reads a VECIN buffer must do so after vn_deque (as on the
 * hardware, where the data lands only then) or after vn_pipe_barrier.
 */
#include <emmintrin.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "kernel/isa.h"
#include "kernel/xfer_internal.h"

/* VINCI_ASYNC_COPY=0 executes every copy at once (for A/B measurements and
 * for ruling the copy engine out when a kernel misbehaves). Read once. */
bool vn_xfer_async_enabled(void)
{
    static atomic_int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        const char *e = getenv("VINCI_ASYNC_COPY");
        v = !(e && e[0] == '0');
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v != 0;
}

static bool overlaps(const uint8_t *a, int64_t an, const uint8_t *b, int64_t bn)
{
    return a < b + bn && b < a + an;
}

/* Would a new transfer (writing `dst`, reading `src`) conflict with pending one x? */
static bool conflicts(const vn_xfer *x, const uint8_t *dst, const uint8_t *src, int64_t bytes)
{
    return overlaps(x->dst, x->bytes, dst, bytes) || overlaps(x->dst, x->bytes, src, bytes) ||
           overlaps(x->src, x->bytes, dst, bytes);
}

void vn_xfer_push(vn_core *core, void *dst, const void *src, int64_t bytes, bool stream)
{
    if (bytes <= 0) return;
    bool flush = core->num_xfers == VN_MAX_XFERS;
    for (int32_t i = 0; i < core->num_xfers && !flush; i++)
        flush = conflicts(&core->xfers[i], dst, src, bytes);
    if (flush) vn_xfer_flush(core);
    core->xfers[core->num_xfers++] = (vn_xfer){dst, src, bytes, stream};
}

bool vn_xfer_touches(const vn_core *core, const void *p, int64_t bytes)
{
    for (int32_t i = 0; i < core->num_xfers; i++) {
        const vn_xfer *x = &core->xfers[i];
        if (overlaps(x->dst, x->bytes, p, bytes) || overlaps(x->src, x->bytes, p, bytes))
            return true;
    }
    return false;
}

/* Streaming runs start with plain copies up to a 64-byte boundary of dst so
 * that their lines are whole (and aligned for every ISA's streaming store). */
static vn_xfer_run start_run(const vn_xfer *x)
{
    vn_xfer_run r = {x->dst, x->src, x->bytes, x->stream};
    if (!r.stream) return r;
    int64_t head = (int64_t)((64 - ((uintptr_t)r.dst & 63)) & 63);
    if (head > r.left) head = r.left;
    memcpy(r.dst, r.src, (size_t)head);
    r.dst += head, r.src += head, r.left -= head;
    return r;
}

_Static_assert(VN_MAX_XFER_RUNS == VN_MAX_XFERS, "xfer_internal.h and core_internal.h disagree");

static vn_xfer_turns_fn turns_fn(void)
{
    return (vn_xfer_turns_fn)(uintptr_t)vn_isa_pick((const void *)(uintptr_t)vn_xfer_turns_avx512,
                                                    (const void *)(uintptr_t)vn_xfer_turns_avx2,
                                                    (const void *)(uintptr_t)vn_xfer_turns_scalar);
}

void vn_xfer_flush(vn_core *core)
{
    int32_t n = core->num_xfers;
    if (n == 0) return;
    vn_xfer_run r[VN_MAX_XFERS];
    for (int32_t i = 0; i < n; i++) r[i] = start_run(&core->xfers[i]);
    core->num_xfers = 0;
    turns_fn()(r, n);
    for (int32_t i = 0; i < n; i++) {
        memcpy(r[i].dst, r[i].src, (size_t)r[i].left);
        core->xfer_streamed |= r[i].stream;
    }
}

/* The core sees its own non-temporal stores in program order; other threads
 * see them after the fence, so it comes before the block reports completion. */
void vn_xfer_finish(vn_core *core)
{
    vn_xfer_flush(core);
    if (core->xfer_streamed) _mm_sfence();
    core->xfer_streamed = false;
}
