#!/usr/bin/env bash
# The main job: builds vinci, shows what it sees of the machine, runs the
# bundled example kernel (and its checked-mode demonstration) and the
# operator benchmark with its peer (STREAM triad) in the same run.
# Pass --small for a quick run.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
echo "== vinci info"; ./build/vinci info
echo "== example: user kernel add_custom (double-buffered Init/CopyIn/Compute/CopyOut)"
./build/add_custom
echo "== example: the same kernel with a planted bug, in checked mode"
./build/add_custom --bug tail --expect-error
echo "== operator benchmark"
./build/bench_ops "$@"
echo "== graph engine: the bundled model (models/mlp_tiny.onnx, from scripts/gen_bundled_model.py)"
./build/vinci compile models/mlp_tiny.onnx --input-shape x:4,64
mkdir -p build/mlp_tiny_out
./build/vinci run models/mlp_tiny.onnx --input x=models/mlp_tiny_input.npy --output-dir build/mlp_tiny_out
./build/vinci bench models/mlp_tiny.onnx --input-shape x:4,64 --iters 200
./build/vinci bench models/mlp_tiny.onnx --input-shape x:256,64 --iters 50 --threads 2
