#!/usr/bin/env python3
"""End-to-end model check: vinci against onnxruntime on the models that
scripts/gen_models.py writes (generated on demand when missing).

For each model: one fixed random input (seeded), onnxruntime
(CPUExecutionProvider, graph optimisation 'all') gives the reference, then
`vinci run model.onnx --input name=file.npy --output-dir DIR` and every output
DIR/<name>.npy is compared. An output passes when
    max |vinci - ort| <= rtol * max |ort|          (rtol 1e-3 by default)
i.e. the error relative to the output's scale (element-wise relative error is
meaningless for outputs near zero); the max abs error, that relative error and
the worst element-wise relative error (over elements with |ort| >= 1e-2 * max |ort|)
are printed, and the argmax agreement over the last axis (top-1 of a
classifier, per token of an encoder). --precision bf16 checks vinci's bf16
matrix products against fp32 onnxruntime (rtol 5e-2 unless given): the
accuracy report of the reduced precision.

Per model: PASS, FAIL (wrong values, shape, NaN, or vinci crashed),
UNSUPPORTED (vinci listed unsupported operators; the list is printed).
Exit status: 1 when any model FAILs; UNSUPPORTED fails only with --strict.

Usage: .venv/bin/python scripts/check_models.py [--vinci build/vinci]
           [--models transformer,squeezenet11,...|all] [--models-dir build/models]
           [-O 1] [--strict]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = ["transformer", "squeezenet11", "mobilenetv2", "resnet18", "mobilenetv2_nobn",
         "resnet18_nobn"]
ALL = SMALL + ["resnet50", "resnet50_nobn", "bert_base"]


def make_inputs(sess, seed=1234):
    """A fixed random input for every model input (ids within the vocabulary,
    a padded attention mask), from onnxruntime's view of the model."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if i.type == "tensor(float)":
            feeds[i.name] = rng.standard_normal(shape, dtype=np.float32)
        elif i.type == "tensor(int64)":
            if "mask" in i.name:
                a = np.ones(shape, np.int64)
                a[..., shape[-1] * 7 // 8:] = 0  # padding at the end
            else:
                a = rng.integers(0, 30522, size=shape, dtype=np.int64)
            feeds[i.name] = a
        else:
            raise SystemExit(f"check_models: no input generator for {i.name} {i.type}")
    return feeds


def ort_session(path, threads=0):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def parse_unsupported(stderr):
    m = re.search(r"unsupported operators:\n(.*)", stderr, re.S)
    if not m:
        return None
    return [ln.strip() for ln in m.group(1).splitlines() if ln.strip()]


def argmax_agreement(o, r):
    """Share of rows (all axes but the last) whose argmax over the last axis is
    the reference's: top-1 agreement of a classifier, per-token for a sequence."""
    if o.ndim == 0 or o.shape[-1] < 2:
        return None
    return float(np.mean(np.argmax(o, axis=-1) == np.argmax(r, axis=-1)))


def compare(out, ref):
    if out.shape != ref.shape:
        return False, f"shape {out.shape} != ort {ref.shape}", None
    if not np.all(np.isfinite(out)):
        return False, f"{int(np.sum(~np.isfinite(out)))} non-finite values", None
    o, r = out.astype(np.float64), ref.astype(np.float64)
    scale = max(float(np.max(np.abs(r))), 1e-30)
    diff = np.abs(o - r)
    max_abs = float(diff.max()) if diff.size else 0.0
    big = np.abs(r) >= 1e-2 * scale
    elem_rel = float(np.max(diff[big] / np.abs(r[big]))) if np.any(big) else 0.0
    rel = max_abs / scale
    agree = argmax_agreement(o, r)
    top = "" if agree is None else f", argmax agreement {100 * agree:.1f}%"
    return True, f"max_abs {max_abs:.3e} rel {rel:.3e} (elem_rel {elem_rel:.3e}){top}", rel


def check(name, args):
    path = os.path.join(args.models_dir, name + ".onnx")
    t0 = time.time()
    sess = ort_session(path)
    feeds = make_inputs(sess)
    refs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    t_ort = time.time() - t0
    with tempfile.TemporaryDirectory(prefix="vinci_models_") as tmp:
        # --no-specialise: an encoder's token ids would otherwise become constants and
        # the whole model fold at compile time, checking the folding, not the run
        cmd = [args.vinci, "run", path, "--output-dir", tmp, "--precision", args.precision,
               "--no-specialise"]
        if args.opt is not None:
            cmd.append(f"-O{args.opt}")
        for k, v in feeds.items():
            f = os.path.join(tmp, f"in_{len(cmd)}.npy")
            np.save(f, v)
            cmd += ["--input", f"{k}={f}"]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return "FAIL", [f"vinci run timed out after {args.timeout} s"], t_ort, args.timeout
        t_vn = time.time() - t0
        if p.returncode != 0:
            uns = parse_unsupported(p.stderr)
            if uns is not None:
                return "UNSUPPORTED", uns, t_ort, t_vn
            err = (p.stderr.strip() or p.stdout.strip()).splitlines()[-3:]
            return "FAIL", [f"vinci run exited {p.returncode}"] + err, t_ort, t_vn
        status, notes = "PASS", []
        for oname, ref in refs.items():
            f = os.path.join(tmp, re.sub(r"[^A-Za-z0-9_.-]", "_", oname) + ".npy")
            if not os.path.exists(f):
                status = "FAIL"
                notes.append(f"{oname}: no output file")
                continue
            ok, msg, rel = compare(np.load(f), ref)
            if not ok or rel > args.rtol:
                status = "FAIL"
            notes.append(f"{oname}: {msg}")
        return status, notes, t_ort, t_vn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vinci", default="./build/vinci")
    ap.add_argument("--models-dir", default="build/models")
    ap.add_argument("--models", default=",".join(SMALL),
                    help="comma list or 'all' (default: the CI-sized ones: %(default)s)")
    ap.add_argument("--precision", default="f32", choices=["f32", "bf16"],
                    help="vinci run --precision (bf16: matrix products in bf16, compared with "
                         "fp32 onnxruntime; default rtol then 5e-2)")
    ap.add_argument("--rtol", type=float, default=None, help="default 1e-3 (f32), 5e-2 (bf16)")
    ap.add_argument("-O", dest="opt", type=int, default=None, help="vinci run -O level")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--strict", action="store_true", help="UNSUPPORTED fails too")
    args = ap.parse_args()
    if args.rtol is None:
        args.rtol = 1e-3 if args.precision == "f32" else 5e-2
    names = ALL if args.models == "all" else args.models.split(",")
    missing = [n for n in names if not os.path.exists(os.path.join(args.models_dir, n + ".onnx"))]
    if missing:
        subprocess.run([sys.executable, os.path.join(HERE, "gen_models.py"), "--out",
                        args.models_dir, "--models", ",".join(missing)], check=True)
    counts = {}
    for name in names:
        status, notes, t_ort, t_vn = check(name, args)
        counts[status] = counts.get(status, 0) + 1
        print(f"{status:11s} {name:14s} (ort {t_ort:.2f} s, vinci {t_vn:.2f} s)", flush=True)
        for n in notes:
            print(f"    {n}", flush=True)
    print("models: " + ", ".join(f"{v} {k.lower()}" for k, v in sorted(counts.items())))
    bad = counts.get("FAIL", 0) + (counts.get("UNSUPPORTED", 0) if args.strict else 0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
