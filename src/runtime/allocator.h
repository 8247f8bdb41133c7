/*
 * allocator.h — the hooks the rest of the runtime calls so the caching
 * allocator (allocator*.c) never touches a dead stream or device.
 * Private to src/runtime.
 *
 * The allocator keys its caches by stream and device pointers it does not own.
 * It calls into a stream (record an event, query it) only while holding its
 * own lock, so once these hooks have run (they take that lock) it never uses
 * the pointer again.
 */
#ifndef VINCI_RUNTIME_ALLOCATOR_H
#define VINCI_RUNTIME_ALLOCATOR_H

#include "vinci/memory.h"

/* Call from vn_stream_destroy after the stream's pending work has finished and
 * before the stream is freed, without holding any stream lock (the hook records
 * no event, but takes the allocator lock, under which the allocator may query
 * and record on streams). Blocks cached on the stream become reusable by any
 * stream of the device; blocks it owns go to that shared cache when freed. */
void vn_mem_on_stream_destroy(vn_stream *stream);

/* Call from vn_device_destroy before its streams are destroyed (and after all
 * work has finished). Returns every block of the device to the OS, live ones
 * included (device memory dies with its device), and destroys the allocator's
 * events. */
void vn_mem_on_device_destroy(vn_device *device);

#endif /* VINCI_RUNTIME_ALLOCATOR_H */
