#!/usr/bin/env bash
# Installs what building and testing vinci needs (Debian packages), if missing.
# Idempotent; used by run.sh and test.sh so a fresh machine needs nothing else.
#   --python  also create .venv with the onnx and numpy packages that
#             scripts/gen_test_models.py needs (the graph tests skip without it),
#             and onnxruntime for scripts/check_models.py and bench_models.py.
#   --bench   also install the GEMM benchmark's peers (Debian's libdnnl-dev and
#             libopenblas-dev); bench_gemm loads them with dlopen and prints
#             "not installed" without them.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v cc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
if ((${#need[@]})); then
    echo "setup: installing ${need[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
if [ "${1:-}" = "--python" ]; then
    cd "$(dirname "$0")/.."
    # onnx 1.22.0 is pinned: it is the last release that ships the backend node
    # tests as files (the conformance runner reads them).
    if ! .venv/bin/python -c 'import onnx, numpy; assert onnx.__version__ == "1.22.0"' 2>/dev/null; then
        echo "setup: creating .venv with onnx==1.22.0 and numpy"
        python3 -m venv .venv
        .venv/bin/pip install -q onnx==1.22.0 numpy
    fi
    # onnxruntime (PyPI): the reference for the end-to-end model checks and the
    # model benchmark (scripts/check_models.py, scripts/bench_models.py).
    if ! .venv/bin/python -c 'import onnxruntime' 2>/dev/null; then
        echo "setup: installing onnxruntime into .venv"
        .venv/bin/pip install -q onnxruntime
    fi
fi
if [ "${1:-}" = "--bench" ]; then
    if ! ldconfig -p | grep -q 'libdnnl.so.2' || ! ldconfig -p | grep -q 'libopenblas.so.0'; then
        echo "setup: installing libdnnl-dev libopenblas-dev (benchmark peers)"
        SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libdnnl-dev libopenblas-dev
    fi
fi
