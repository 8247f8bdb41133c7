/*
 * vinci.h — everything: include this one header to use vinci.
 *
 * Layers, bottom up (each header includes only the ones below it):
 *   base.h     status and errors, dtypes and conversions, CPU features
 *   runtime.h  the device: worker threads ("AI cores") and their scratch arenas
 *   memory.h   the caching allocator for device memory (runtime layer)
 *   machine.h  this machine's measured peaks (the roofs of benchmarks and profiles)
 *   kernel.h   the tile programming model: queues, copies, vector and cube instructions, launch
 *   gemm.h     matrix multiply on the cube path: plan, pre-packed weights, fused epilogues
 *   ops.h      the operator registry and the two-phase single-operator API
 *   graph.h    ONNX models: reader, IR, shape inference, .npy files
 */
#ifndef VINCI_H
#define VINCI_H

#include "vinci/base.h"
#include "vinci/runtime.h"
#include "vinci/memory.h"
#include "vinci/machine.h"
#include "vinci/kernel.h"
#include "vinci/gemm.h"
#include "vinci/ops.h"
#include "vinci/graph.h"
#include "vinci/profile.h"

#define VINCI_VERSION_MAJOR 0
#define VINCI_VERSION_MINOR 1
#define VINCI_VERSION_PATCH 0

#endif /* VINCI_H */
