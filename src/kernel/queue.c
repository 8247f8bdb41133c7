/*
 * queue.c — the pipe's buffers (Ascend TPipe / TQue / TBuf): carving scratch
 * and the alloc -> enque -> deque -> free protocol.
 *
 * Carving is a bump pointer per arena, reset before each block; every carve
 * starts 32-byte aligned because every carve is a multiple of 32 bytes and the
 * arenas are 64-byte aligned. Overflow is checked in every mode: it would hand
 * out memory past the arena.
 *
 * Slot states are tracked in both modes (a few stores), so that release mode
 * still allocates a free buffer when a kernel frees out of order; only the
 * protocol checks are behind `core->checked`.
 */
#include <stdio.h>

#include "kernel/core_internal.h"

static const char *const state_names[] = {
    [VN_SLOT_FREE] = "free",
    [VN_SLOT_HELD] = "allocated, not enqueued",
    [VN_SLOT_QUEUED] = "enqueued, not dequeued",
    [VN_SLOT_TAKEN] = "dequeued, not freed",
};

/* Takes `num` x `each` bytes (a multiple of 32) from the arena of `position`
 * for a queue (num buffers) or a buffer (num 0). */
static uint8_t *carve(vn_core *core, vn_position position, int32_t num, int64_t each,
                      const char *call, vn_site site)
{
    vn_arena a = vn_position_arena(position);
    if (a == VN_ARENA_COUNT) vn_core_fail(core, site, call, "invalid position %d", (int)position);
    int64_t bytes = each * (num > 0 ? num : 1), left = core->arena_size[a] - core->arena_used[a];
    if (bytes > left) {
        char what[96];
        if (num > 0)
            snprintf(what, sizeof what, "a %s queue of %d x %lld bytes", vn_position_name(position),
                     (int)num, (long long)each);
        else
            snprintf(what, sizeof what, "a %s buffer of %lld bytes", vn_position_name(position),
                     (long long)each);
        vn_core_fail(core, site, call,
                     "scratch overflow: %s needs %lld bytes of %s but only %lld of %lld are left "
                     "(%lld already carved)",
                     what, (long long)bytes, vn_arena_name(a), (long long)left,
                     (long long)core->arena_size[a], (long long)core->arena_used[a]);
    }
    uint8_t *p = core->arena[a] + core->arena_used[a];
    core->arena_used[a] += bytes;
    if (core->arena_used[a] > core->counters.scratch_high_water[a])
        core->counters.scratch_high_water[a] = core->arena_used[a];
    return p;
}

/* Bytes of `count` elements rounded up to whole blocks; -1 when unreasonable. */
static int64_t buffer_bytes(int64_t count, vn_dtype dtype)
{
    int64_t size = (int64_t)vn_dtype_size(dtype);
    if (size == 0 || count <= 0 || count > ((int64_t)1 << 31) / size) return -1;
    return (count * size + VN_BLOCK_BYTES - 1) / VN_BLOCK_BYTES * VN_BLOCK_BYTES;
}

vn_queue *vn_queue_new_(vn_core *core, vn_position position, int32_t num, int64_t count,
                        vn_dtype dtype, vn_site site)
{
    const char *call = "vn_queue_new";
    if (core->num_queues >= VN_MAX_QUEUES)
        vn_core_fail(core, site, call, "more than %d queues in one block", VN_MAX_QUEUES);
    if (num < 1 || num > VN_MAX_QUEUE_BUFFERS)
        vn_core_fail(core, site, call, "%d buffers: a queue has 1..%d", (int)num,
                     VN_MAX_QUEUE_BUFFERS);
    int64_t bytes = buffer_bytes(count, dtype);
    if (bytes < 0)
        vn_core_fail(core, site, call, "bad buffer of %lld elements of dtype %s", (long long)count,
                     vn_dtype_name(dtype));
    uint8_t *base = carve(core, position, num, bytes, call, site);

    vn_queue *q = &core->queues[core->num_queues];
    *q = (struct vn_queue){0};
    q->id = (int16_t)core->num_queues++;
    q->position = position;
    q->dtype = dtype;
    q->num = num;
    q->depth = num;
    q->count = count;
    q->buf_bytes = bytes;
    q->base = base;
    q->site = site;
    return q;
}

void vn_queue_set_depth_(vn_core *core, vn_queue *q, int32_t depth, vn_site site)
{
    if (depth < 1 || depth > q->num)
        vn_core_fail(core, site, "vn_queue_set_depth", "depth %d: must be 1..%d (the buffers)",
                     (int)depth, (int)q->num);
    if (q->fifo_len > depth)
        vn_core_fail(core, site, "vn_queue_set_depth", "depth %d < %d tensors already enqueued",
                     (int)depth, (int)q->fifo_len);
    q->depth = depth;
}

static vn_local slot_tensor(const vn_queue *q, int32_t slot)
{
    vn_local t = {q->base + slot * q->buf_bytes, (int32_t)q->buf_bytes, q->dtype, q->id,
                  (int16_t)slot};
    return t;
}

static void fail_full(vn_core *core, vn_queue *q, vn_site site)
{
    int n[4] = {0};
    for (int32_t i = 0; i < q->num; i++) n[q->state[i]]++;
    vn_core_fail(core, site, "vn_alloc",
                 "all %d buffers of %s queue %d are in use (%d allocated, %d enqueued, %d "
                 "dequeued and not freed): free one before allocating",
                 (int)q->num, vn_position_name(q->position), (int)q->id, n[VN_SLOT_HELD],
                 n[VN_SLOT_QUEUED], n[VN_SLOT_TAKEN]);
}

/* The free slot to hand out: the first one no pending copy still uses, so a
 * buffer freed after compute is reused at once (a small working set that
 * stays in L1) while one whose copy-out is in flight is left alone; if all
 * are in use by copies, the first free one after the copies complete. */
static int32_t pick_slot(vn_core *core, vn_queue *q)
{
    int32_t first_free = -1;
    for (int32_t s = 0; s < q->num; s++) {
        if (q->state[s] != VN_SLOT_FREE) continue;
        if (!vn_xfer_touches(core, q->base + s * q->buf_bytes, q->buf_bytes)) return s;
        if (first_free < 0) first_free = s;
    }
    if (first_free >= 0) vn_xfer_flush(core);
    return first_free;
}

vn_local vn_alloc_(vn_core *core, vn_queue *q, vn_site site)
{
    int32_t slot = pick_slot(core, q);
    if (slot < 0) {
        if (core->checked) fail_full(core, q, site);
        slot = 0; /* release mode: the hardware would hang; hand out buffer 0 */
    }
    q->state[slot] = VN_SLOT_HELD;
    q->slot_site[slot] = site;
    vn_local t = slot_tensor(q, slot);
    if (core->checked) vn_shadow_clear(core, t.data, q->buf_bytes);
    return t;
}

/* Checked mode: `t` is one of q's buffers (any view inside it when !at_start). */
static void check_owned(vn_core *core, vn_queue *q, vn_local t, bool at_start, const char *call,
                        vn_site site)
{
    if (t.owner == VN_OWNER_GM)
        vn_core_fail(core, site, call,
                     "the tensor is a window onto global memory, not a buffer of "
                     "this %s queue %d",
                     vn_position_name(q->position), (int)q->id);
    if (t.owner != q->id || t.slot < 0 || t.slot >= q->num)
        vn_core_fail(core, site, call,
                     "the tensor (queue %d, buffer %d) does not belong to this %s queue %d",
                     (int)t.owner, (int)t.slot, vn_position_name(q->position), (int)q->id);
    const uint8_t *start = q->base + t.slot * q->buf_bytes;
    const uint8_t *p = t.data;
    if (p < start || p >= start + q->buf_bytes || (at_start && p != start))
        vn_core_fail(core, site, call,
                     "the tensor is a view at byte %lld of buffer %d, not the tensor that "
                     "vn_alloc / vn_deque returned",
                     (long long)(p - start), (int)t.slot);
}

void vn_enque_(vn_core *core, vn_queue *q, vn_local t, vn_site site)
{
    if (core->checked) {
        check_owned(core, q, t, false, "vn_enque", site);
        if (q->state[t.slot] != VN_SLOT_HELD)
            vn_core_fail(core, site, "vn_enque",
                         "buffer %d of %s queue %d is %s: only an allocated buffer can be "
                         "enqueued",
                         (int)t.slot, vn_position_name(q->position), (int)q->id,
                         state_names[q->state[t.slot]]);
        if (q->fifo_len >= q->depth)
            vn_core_fail(core, site, "vn_enque",
                         "enqueue past depth %d of %s queue %d: dequeue before enqueuing more",
                         (int)q->depth, vn_position_name(q->position), (int)q->id);
    }
    int32_t slot = (uint16_t)t.slot % VN_MAX_QUEUE_BUFFERS;
    int32_t tail = (q->fifo_head + q->fifo_len) % VN_MAX_QUEUE_BUFFERS;
    q->fifo[tail] = slot;
    if (q->fifo_len < VN_MAX_QUEUE_BUFFERS) q->fifo_len++;
    q->state[slot] = VN_SLOT_QUEUED;
    q->slot_site[slot] = site;
}

vn_local vn_deque_(vn_core *core, vn_queue *q, vn_site site)
{
    vn_xfer_sync(core); /* the protocol's "the data has arrived" */
    if (core->checked && q->fifo_len == 0)
        vn_core_fail(core, site, "vn_deque",
                     "dequeue from an empty %s queue %d: nothing was enqueued",
                     vn_position_name(q->position), (int)q->id);
    int32_t slot = q->fifo[q->fifo_head];
    if (q->fifo_len > 0) {
        q->fifo_head = (q->fifo_head + 1) % VN_MAX_QUEUE_BUFFERS;
        q->fifo_len--;
    }
    q->state[slot] = VN_SLOT_TAKEN;
    q->slot_site[slot] = site;
    return slot_tensor(q, slot);
}

void vn_free_(vn_core *core, vn_queue *q, vn_local t, vn_site site)
{
    if (core->checked) {
        check_owned(core, q, t, true, "vn_free", site);
        vn_slot_state s = q->state[t.slot];
        if (s == VN_SLOT_FREE)
            vn_core_fail(core, site, "vn_free", "double free of buffer %d of %s queue %d",
                         (int)t.slot, vn_position_name(q->position), (int)q->id);
        if (s == VN_SLOT_QUEUED)
            vn_core_fail(core, site, "vn_free",
                         "buffer %d of %s queue %d is still enqueued: dequeue it first",
                         (int)t.slot, vn_position_name(q->position), (int)q->id);
    }
    if (t.slot >= 0 && t.slot < q->num) q->state[t.slot] = VN_SLOT_FREE;
}

vn_local vn_buf_new_(vn_core *core, vn_position position, int64_t count, vn_dtype dtype,
                     vn_site site)
{
    int64_t bytes = buffer_bytes(count, dtype);
    if (bytes < 0)
        vn_core_fail(core, site, "vn_buf_new", "bad buffer of %lld elements of dtype %s",
                     (long long)count, vn_dtype_name(dtype));
    uint8_t *p = carve(core, position, 0, bytes, "vn_buf_new", site);
    if (core->checked) vn_shadow_clear(core, p, bytes);
    vn_local t = {p, (int32_t)bytes, dtype, -1, -1};
    return t;
}

/* Checked mode at kernel end: every queue buffer must be back to free. Called
 * by the launcher; names the call that last took the leaked buffer. */
void vn_queue_check_leaks(vn_core *core)
{
    for (int32_t i = 0; i < core->num_queues; i++) {
        struct vn_queue *q = &core->queues[i];
        for (int32_t s = 0; s < q->num; s++) {
            if (q->state[s] == VN_SLOT_FREE) continue;
            const char *call = q->state[s] == VN_SLOT_HELD     ? "vn_alloc"
                               : q->state[s] == VN_SLOT_QUEUED ? "vn_enque"
                                                               : "vn_deque";
            vn_core_fail(core, q->slot_site[s], call,
                         "buffers still held at kernel end: buffer %d of %s queue %d is %s; "
                         "missing vn_free?",
                         (int)s, vn_position_name(q->position), (int)q->id,
                         state_names[q->state[s]]);
        }
    }
}
