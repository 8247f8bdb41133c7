#!/usr/bin/env bash
# cli_shape_sets.sh VINCI MODELS_DIR — `vinci compile --shape-set` end to end:
# one .vnm with models for batch 1, 4 and 16; `vinci run` picks the batch-4
# model for the bundled batch-4 input and writes exactly what running the
# .onnx writes; `vinci info` lists the three sets; `vinci bench` picks by
# --input-shape; an input shape the file lacks is refused with the sets named;
# more shapes than a model takes (--input-shape's plus a set's) are refused.
set -euo pipefail
vinci=$1
models=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$vinci" compile "$models/mlp_tiny.onnx" -o "$tmp/sets.vnm" \
    --shape-set x:1,64 --shape-set x:4,64 --shape-set x:16,64 >"$tmp/compile.txt"
grep -q "one model per shape set" "$tmp/compile.txt" || fail "compile did not write a set file"

"$vinci" info "$tmp/sets.vnm" >"$tmp/info.txt"
grep -q "3 input-shape sets" "$tmp/info.txt" || fail "info does not list 3 sets"
for b in 1 4 16; do
    grep -q "x  *f32\[$b,64\]" "$tmp/info.txt" || fail "info lacks the batch-$b set"
done

"$vinci" run "$tmp/sets.vnm" --input x="$models/mlp_tiny_input.npy" --output-dir "$tmp/vnm" \
    >"$tmp/run.txt"
grep -q "picked by shapes" "$tmp/run.txt" || fail "run did not pick from the set"
"$vinci" run "$models/mlp_tiny.onnx" --input x="$models/mlp_tiny_input.npy" \
    --output-dir "$tmp/onnx" >/dev/null
cmp -s "$tmp/vnm/y.npy" "$tmp/onnx/y.npy" || fail "the picked model's output differs from the .onnx run's"

"$vinci" bench "$tmp/sets.vnm" --input-shape x:16,64 --iters 3 >"$tmp/bench.txt"
grep -q "picked from 3 shape sets" "$tmp/bench.txt" || fail "bench did not pick"

"$vinci" compile "$models/mlp_tiny.onnx" -o "$tmp/no4.vnm" --shape-set x:1,64 --shape-set x:8,64 \
    >/dev/null
if "$vinci" run "$tmp/no4.vnm" --input x="$models/mlp_tiny_input.npy" --output-dir "$tmp/x" \
    2>"$tmp/err.txt"; then
    fail "a batch-4 input ran on a file without a batch-4 model"
fi
grep -q "no model was compiled for x\[4,64\]" "$tmp/err.txt" || fail "error: $(cat "$tmp/err.txt")"
grep -q "f32\[8,64\]" "$tmp/err.txt" || fail "the error does not list the file's sets"
many=()
for i in $(seq 64); do many+=(--input-shape "i$i:1"); done
if "$vinci" compile "$models/mlp_tiny.onnx" -o "$tmp/many.vnm" --shape-set x:1,64 "${many[@]}" \
    2>"$tmp/err.txt"; then
    fail "65 shapes in one set were accepted"
fi
grep -q "shape set 1 has 65 shapes" "$tmp/err.txt" || fail "error: $(cat "$tmp/err.txt")"
long=$(printf 'x%d:1;' $(seq 65))
if "$vinci" compile "$models/mlp_tiny.onnx" -o "$tmp/many.vnm" --shape-set "${long%;}" \
    2>"$tmp/err.txt"; then
    fail "a set of 65 shapes was accepted"
fi
echo "cli_shape_sets: ok"
