#!/usr/bin/env bash
# The main job: builds vinci, then
#   1. compiles and runs the bundled model (models/mlp_tiny.onnx, made by
#      scripts/gen_bundled_model.py), prints its output and its timing;
#   2. runs the example user kernel and its checked-mode demonstration;
#   3. runs the operator benchmark with its peer (STREAM triad) in the same run.
# Pass --small for a quick operator benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
echo "== vinci info"; ./build/vinci info

echo "== the bundled model: compile (O3), run, bench"
./build/vinci compile models/mlp_tiny.onnx --input-shape x:4,64
mkdir -p build/mlp_tiny_out
./build/vinci run models/mlp_tiny.onnx --input x=models/mlp_tiny_input.npy --output-dir build/mlp_tiny_out
echo "first rows of y (softmax over 10 classes; numpy's are in models/mlp_tiny_expected.npy):"
# .npy v1 files written by vinci have a 128-byte header; the data is f32[4,10].
od -A n -t f4 -w40 -j 128 -N 80 build/mlp_tiny_out/y.npy
./build/vinci bench models/mlp_tiny.onnx --input-shape x:4,64 --iters 200
./build/vinci bench models/mlp_tiny.onnx --input-shape x:256,64 --iters 50 --threads 2

echo "== example: user kernel add_custom (double-buffered Init/CopyIn/Compute/CopyOut)"
./build/add_custom
echo "== example: the same kernel with a planted bug, in checked mode"
./build/add_custom --bug tail --expect-error

echo "== operator benchmark"
./build/bench_ops "$@"
