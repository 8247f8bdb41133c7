#!/usr/bin/env python3
"""QDQ int8 models end to end: vinci's fuse_qdq (O3: QLinearConv / QLinearMatMul
on the int8 GEMM) against onnxruntime on the same QDQ model.

Models (f32 graphs of scripts/gen_models.py's builder, quantised here with
onnxruntime.quantization.quantize_static: QDQ format, u8 activations, i8
weights per channel, MinMax calibration on 8 seeded random inputs):

  qdq_small     a ResNet-style conv net on 1x3x32x32: conv stem + Relu, three
                basic blocks (3x3 convs with bias, residual Add, one stride-2
                block with a 1x1 downsample), GlobalAveragePool, Gemm -> 10
  qdq_resnet18  resnet18_nobn quantised the same way (--models qdq_resnet18;
                calibration takes a while: not in the CI default)

Check: onnxruntime (graph optimisation 'all', which runs its own QDQ fusions)
gives the reference; `vinci run` at O3 with the int8 rewrite forced
(VINCI_QDQ_INT8=1: QLinearConv on the int8 GEMM), at O3 as this CPU decides
(int8 only where it multiplies int8 natively: VNNI / AMX; else the groups
stay f32) and at O2 (no fusion: f32 after dequantising) are compared in units
of the output's quantisation step (the scale of the DequantizeLinear writing
the output): PASS when both O3 runs are within --steps steps (default 4: a
1-LSB rounding difference in an early layer can move later ones) and the
forced run rewrote at least one node. Also prints the argmax agreement and
fuse_qdq's change count.

--bench: 1-thread latency medians (--iters runs, default 20) of vinci O2,
vinci O3 (this CPU's choice), vinci O3 int8 (forced) and onnxruntime on the
QDQ model, and onnxruntime on the f32 model.

Usage: .venv/bin/python scripts/check_qdq.py [--vinci build/vinci]
           [--models qdq_small,qdq_resnet18] [--models-dir build/models] [--bench]
"""
import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_models  # noqa: E402  (vinci_bench, ort_bench)
import check_models  # noqa: E402  (make_inputs, ort_session, argmax_agreement)
import gen_models  # noqa: E402  (the graph builder G, resnet)


def small_net():
    g = gen_models.G("qdq_small", seed=7)

    def block(x, cin, cout, stride, p):
        y = g.relu(g.conv(x, cin, cout, 3, stride, 1, bias=True, base=p + ".conv1"))
        y = g.conv(y, cout, cout, 3, 1, 1, bias=True, base=p + ".conv2")
        idt = x
        if stride != 1 or cin != cout:
            idt = g.conv(x, cin, cout, 1, stride, 0, bias=True, base=p + ".downsample")
        return g.relu(g.node("Add", [y, idt]))

    x = g.relu(g.conv("input", 3, 32, 3, 1, 1, bias=True, base="stem"))
    x = block(x, 32, 32, 1, "layer1")
    x = block(x, 32, 64, 2, "layer2")
    x = block(x, 64, 64, 1, "layer3")
    out = g.head(x, 64, ncls=10)
    ins = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])]
    outs = [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 10])]
    return g.model(ins, outs)


def f32_model(name, models_dir):
    path = os.path.join(models_dir, name + "_f32.onnx")
    if os.path.exists(path):
        return path
    os.makedirs(models_dir, exist_ok=True)
    if name == "qdq_small":
        onnx.save(small_net(), path)
        return path
    # resnet18 without BatchNormalization (folded, as quantizers are given it)
    src = os.path.join(models_dir, "resnet18_nobn.onnx")
    if not os.path.exists(src):
        subprocess.run([sys.executable, os.path.join(HERE, "gen_models.py"), "--out",
                        models_dir, "--models", "resnet18_nobn"], check=True)
    onnx.save(onnx.load(src), path)
    return path


class RandomReader:
    """Calibration: 8 seeded standard-normal inputs."""

    def __init__(self, path, count=8):
        sess = check_models.ort_session(path)
        self.feeds = [check_models.make_inputs(sess, seed=100 + i) for i in range(count)]

    def get_next(self):
        return self.feeds.pop() if self.feeds else None

    def rewind(self):
        pass


def qdq_model(name, models_dir):
    path = os.path.join(models_dir, name + ".onnx")
    if os.path.exists(path):
        return path
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    src = f32_model(name, models_dir)
    quantize_static(src, path, RandomReader(src), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    return path


def output_steps(path):
    """Each graph output's quantisation step: the scale of the DequantizeLinear
    writing it (None when another node writes it)."""
    m = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    steps = {}
    for o in m.graph.output:
        node = next((n for n in m.graph.node if o.name in n.output), None)
        ok = node is not None and node.op_type == "DequantizeLinear" and node.input[1] in inits
        steps[o.name] = float(inits[node.input[1]].reshape(-1)[0]) if ok else None
    return steps


@contextlib.contextmanager
def int8_mode(mode):
    """VINCI_QDQ_INT8 = mode ("1", "0") or unset (None) for the vinci runs
    inside (they inherit os.environ); the caller's value is put back after."""
    saved = os.environ.pop("VINCI_QDQ_INT8", None)
    if mode is not None:
        os.environ["VINCI_QDQ_INT8"] = mode
    try:
        yield
    finally:
        os.environ.pop("VINCI_QDQ_INT8", None)
        if saved is not None:
            os.environ["VINCI_QDQ_INT8"] = saved


def vinci_run(args, path, feeds, level):
    """Outputs of `vinci run -O<level>` and fuse_qdq's change count (vinci compile)."""
    with tempfile.TemporaryDirectory(prefix="vinci_qdq_") as tmp:
        cmd = [args.vinci, "run", path, "--output-dir", tmp, f"-O{level}", "--no-specialise"]
        for k, v in feeds.items():
            f = os.path.join(tmp, f"in_{len(cmd)}.npy")
            np.save(f, v)
            cmd += ["--input", f"{k}={f}"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        if p.returncode != 0:
            raise RuntimeError(f"vinci run -O{level} exited {p.returncode}: {p.stderr.strip()}")
        outs = {f[:-4]: np.load(os.path.join(tmp, f)) for f in os.listdir(tmp)
                if f.endswith(".npy") and not f.startswith("in_")}
    c = subprocess.run([args.vinci, "compile", path, f"-O{level}"], capture_output=True,
                       text=True, timeout=args.timeout)
    fused = re.search(r"pass fuse_qdq\s+(\d+) change", c.stdout)
    return outs, int(fused.group(1)) if fused else 0


def check(name, args):
    path = qdq_model(name, args.models_dir)
    sess = check_models.ort_session(path)
    feeds = check_models.make_inputs(sess)
    refs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    steps = output_steps(path)
    status, notes = "PASS", []
    for label, level, int8 in (("O3 int8", 3, "1"), ("O3", 3, None), ("O2", 2, None)):
        with int8_mode(int8):
            outs, fused = vinci_run(args, path, feeds, level)
        if int8 == "1" and fused == 0:
            status = "FAIL"
        notes.append(f"{label}: fuse_qdq {fused} rewrites")
        for oname, ref in refs.items():
            got = outs.get(re.sub(r"[^A-Za-z0-9_.-]", "_", oname))
            if got is None or got.shape != ref.shape:
                status = "FAIL"
                notes.append(f"  {oname}: missing or wrong shape")
                continue
            diff = float(np.max(np.abs(got.astype(np.float64) - ref)))
            step = steps.get(oname) or max(float(np.max(np.abs(ref))), 1e-30) * 1e-2
            agree = check_models.argmax_agreement(got, ref)
            if level == 3 and diff > args.steps * step * 1.001:
                status = "FAIL"
            notes.append(f"  {oname}: max |vinci - ort| {diff:.4g} = {diff / step:.2f} steps "
                         f"(step {step:.4g}), argmax agreement {100 * agree:.0f}%")
    return status, notes


def bench(name, args):
    path = qdq_model(name, args.models_dir)
    f32 = f32_model(name, args.models_dir)
    rows = []
    for label, level, int8 in (("vinci O2", 2, None), ("vinci O3", 3, None),
                               ("O3 int8", 3, "1")):
        with int8_mode(int8):
            rows.append((label, bench_models.vinci_bench(args, path, 1, opt_level=level)))
    rows.append(("ort qdq", bench_models.ort_bench(args, path, 1)))
    rows.append(("ort f32", bench_models.ort_bench(args, f32, 1)))
    base = rows[0][1].get("median")
    print(f"  {name} latency, 1 thread, median of {args.iters} runs:")
    for label, r in rows:
        if r.get("status") != "ok":
            print(f"    {label:9s} {r.get('status')}")
            continue
        ratio = f"  (vinci O2 / this: {base / r['median']:.2f}x)" if base else ""
        print(f"    {label:9s} {r['median']:8.3f} ms  min {r['min']:.3f}{ratio}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vinci", default="./build/vinci")
    ap.add_argument("--models-dir", default="build/models")
    ap.add_argument("--models", default="qdq_small")
    ap.add_argument("--steps", type=float, default=4.0,
                    help="O3's tolerance in output quantisation steps (default %(default)s)")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    bad = 0
    for name in args.models.split(","):
        status, notes = check(name, args)
        bad += status != "PASS"
        print(f"{status:5s} {name}", flush=True)
        for n in notes:
            print(f"    {n}", flush=True)
        if args.bench:
            bench(name, args)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
