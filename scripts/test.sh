#!/usr/bin/env bash
# Builds vinci and runs every test:
#   1. release build, every test under each ISA path (VINCI_ISA=avx512, avx2, scalar);
#   1b. ONNX conformance: the onnx 1.22.0 backend tests through build/vinci, against
#      tests/conformance/expected_failures.txt (scripts/conformance.py);
#   1c. end-to-end models (scripts/gen_models.py) against onnxruntime (scripts/check_models.py),
#       and a QDQ int8 model through fuse_qdq (scripts/check_qdq.py);
#   2. a build with -fsanitize=address,undefined running the unit tests again.
# Prints ctest's summary for each job and exits non-zero if any test failed.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --python # .venv with onnx + numpy: the graph tests read real ONNX files
jobs=$(nproc 2>/dev/null || echo 2)

echo "== job 1: release build, all tests, every ISA path"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

echo "== job 1a: operator and graph tests with every tile of a launch in one block's share (the others take them from its end: results must not depend on tile order)"
(cd build && VINCI_TILES_ONE_SHARE=1 ctest --output-on-failure -j"$jobs" -L 'ops|graph')

echo "== job 1b: ONNX conformance (onnx backend tests; fails on a test outside tests/conformance/expected_failures.txt)"
.venv/bin/python scripts/conformance.py --vinci build/vinci -j"$jobs" --quiet
echo "== job 1b': the same with every tile of a launch in one block's share (job 1a)"
VINCI_TILES_ONE_SHARE=1 .venv/bin/python scripts/conformance.py --vinci build/vinci -j"$jobs" --quiet

echo "== job 1c: end-to-end models vs onnxruntime (scripts/check_models.py; fails on FAIL, reports UNSUPPORTED)"
.venv/bin/python scripts/check_models.py --vinci build/vinci --models-dir build/models
# a QDQ int8 conv net (onnxruntime's quantizer): fuse_qdq's int8 path vs onnxruntime, ~2 s
.venv/bin/python scripts/check_qdq.py --vinci build/vinci --models-dir build/models

# The sanitizer builds are RelWithDebInfo, which CMakeLists.txt makes -O1 when
# VINCI_SANITIZE is set (compile time: see the comment there).
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DVINCI_BUILD_BENCH=OFF)

echo "== job 2: address + undefined-behaviour sanitizers, unit tests"
# (test_machine is left out: peak figures measured under ASan mean nothing.)
cmake -S . -B build-asan "${sanitizer_flags[@]}" -DVINCI_SANITIZE=address,undefined >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure -j"$jobs" -L unit -E test_machine)

echo "== job 3: thread sanitizer, runtime tests (streams, events, callbacks, allocator, hosted nodes)"
cmake -S . -B build-tsan "${sanitizer_flags[@]}" -DVINCI_SANITIZE=thread >/dev/null
cmake --build build-tsan -j"$jobs"
# Runtime tests do not depend on the ISA path: run each once. The stress test
# is scaled down under TSan, whose overhead is ~10-50x.
# test_node_groups: the graph executor's concurrent nodes (hosted launches).
(cd build-tsan && VINCI_STRESS_TASKS=2000 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --output-on-failure -j"$jobs" -L runtime -R '\.avx512$' -E test_machine &&
    TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -R '^test_node_groups\.avx512$')
