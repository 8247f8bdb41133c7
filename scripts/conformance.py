#!/usr/bin/env python3
"""ONNX conformance runner for vinci.

Runs the ONNX backend tests shipped as files in the onnx==1.22.0 wheel
(onnx/backend/test/data/{node,light,pytorch-converted,pytorch-operator,simple})
through `vinci run` and compares every output with the test's expected output:

  * node, pytorch-*, simple: model.onnx + test_data_set_*/input_N.pb / output_N.pb;
  * light: data/light/light_<name>.onnx with the input onnx's own runner
    generates (arange(n)/n in the input's shape) and light_<name>_output_0.pb;
    tolerances from data/real/test_<name>/data.json.

Tolerances are onnx's (rtol 1e-3, atol 1e-7) unless TOLERANCES below, or the
test's data.json, overrides them; integer and bool outputs must be exact; NaN
positions must agree; shapes and dtypes must match. Tests whose outputs are
random by definition (RANDOM_TESTS) are checked by shape, dtype and properties.

Each test prints one line (PASS / FAIL / UNSUPPORTED), then a summary per group,
the operators behind most failing or unsupported tests, and the slowest tests.

tests/conformance/expected_failures.txt lists the tests expected to fail or be
unsupported, one per line: `test_name  # reason`. The run exits 1 when a test
outside the list fails or is unsupported; a listed test that passes is reported
as "now passing - remove it from the list" (the list only shrinks) and is not
an error. --write-list rewrites the list from this run.

vinci's convention (tools/cmd_run.c): `vinci run` writes DIR/<output name>.npy;
on error it exits non-zero and prints the error on stderr; an unsupported model
additionally prints an "unsupported operators:" block listing every one. A test
is UNSUPPORTED when that block (or another "not supported" error, or exit status
3) is reported, FAIL otherwise. Tests vinci cannot even be given (graph inputs or
outputs that are sequences, optionals, maps, or tensors of a dtype vinci's .npy
I/O does not carry: double, strings, 16/32/64-bit unsigned, float8, int4, ...)
are UNSUPPORTED (type) without running vinci.

Usage: .venv/bin/python scripts/conformance.py [--vinci build/vinci] [-j 2]
       [--groups node,light,...] [--filter REGEX] [--quiet] [--write-list]
"""
import argparse
import collections
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LIST = os.path.join(ROOT, "tests", "conformance", "expected_failures.txt")
GROUPS = ["node", "light", "pytorch-converted", "pytorch-operator", "simple"]
DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-7

# Per-test tolerance overrides: (regex on the test name, {"rtol"/"atol": value}, why).
# onnx's own backend test (onnx/test/test_backend_reference.py) loosens only the
# DFT tests (atol 1e-6 on Linux); data/real/*/data.json loosens densenet121.
TOLERANCES = [
    (r"^test_dft(_|$)", {"atol": 1e-6}, "onnx/test/test_backend_reference.py: dft_atol on Linux"),
]

# Tests whose expected outputs come from a random generator: only shape, dtype
# and the operator's invariants can be checked (onnx excludes test_bernoulli
# from its own reference-backend run for this reason).
RANDOM_TESTS = [
    (r"^test_bernoulli", "bernoulli"),
    (r"^test_training_dropout(_default)?(_mask)?$", "dropout"),
]

# ONNX TensorProto element types that vinci's .npy I/O carries
# (f32 f16 bf16 f64 i8 u8 i16 u16 i32 u32 i64 u64 bool).
VINCI_DTYPES = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
                9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64", 16: "bfloat16"}
ONNX_DTYPE_NAMES = {8: "string", 14: "complex64", 15: "complex128", 17: "float8e4m3fn",
                    18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz", 21: "uint4",
                    22: "int4", 23: "float4e2m1", 24: "float8e8m0", 25: "uint2", 26: "int2"}


# vinci errors that mean "a legal model vinci does not implement" rather than a
# wrong answer (VN_ERR_UNSUPPORTED / VN_ERR_DTYPE messages): such a test is
# UNSUPPORTED. Exit status 3 means the same, should `vinci run` adopt it.
UNSUPPORTED_ERRORS = (r"not supported|unsupported|not implemented|the operator does not take|"
                      r"must be a constant known at plan time")


def onnx_data_dir():
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")


# ---------------------------------------------------------------- discovery

def tolerance(name, rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL):
    for pattern, over, _why in TOLERANCES:
        if re.search(pattern, name):
            rtol, atol = over.get("rtol", rtol), over.get("atol", atol)
    return rtol, atol


def discover(data, groups):
    """[(name, group, model path, test dir or None, rtol, atol)] in a stable order."""
    specs = []
    for group in groups:
        if group == "light":
            real = os.path.join(data, "real")
            for d in sorted(os.listdir(real)):
                with open(os.path.join(real, d, "data.json")) as f:
                    info = json.load(f)
                model = os.path.join(data, "light", "light_%s.onnx" % info["model_name"])
                rtol, atol = tolerance(d, info.get("rtol", DEFAULT_RTOL),
                                       info.get("atol", DEFAULT_ATOL))
                specs.append(("light/light_%s" % info["model_name"], group, model, None, rtol, atol))
            continue
        base = os.path.join(data, group)
        for d in sorted(os.listdir(base)):
            tdir = os.path.join(base, d)
            if not os.path.isfile(os.path.join(tdir, "model.onnx")):
                continue
            name = d if group == "node" else "%s/%s" % (group, d)
            rtol, atol = tolerance(d)
            specs.append((name, group, os.path.join(tdir, "model.onnx"), tdir, rtol, atol))
    return specs


# ---------------------------------------------------------------- one test

def op_types(graph, out):
    for node in graph.node:
        out.add(node.op_type if node.domain in ("", "ai.onnx") else "%s::%s" % (node.domain, node.op_type))
        for a in node.attribute:
            if a.HasField("g"):
                op_types(a.g, out)
            for g in a.graphs:
                op_types(g, out)
    return out


def value_type(vi):
    """None when vinci can carry the value; else a short description of its type."""
    t = vi.type
    kind = t.WhichOneof("value")
    if kind != "tensor_type":
        return {"sequence_type": "sequence", "optional_type": "optional", "map_type": "map",
                "sparse_tensor_type": "sparse tensor"}.get(kind, str(kind))
    et = t.tensor_type.elem_type
    if et in VINCI_DTYPES:
        return None
    return "tensor(%s)" % ONNX_DTYPE_NAMES.get(et, "type %d" % et)


def read_tensor(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def npy_safe(name):
    """The file name tools/cmd_run.c gives an output: one safe path component."""
    s = "".join(c if (c.isascii() and (c.isalnum() or c in "_-")) or (c == "." and i > 0) else "_"
                for i, c in enumerate(name[:199]))
    return s or "output"


def to_vinci(a):
    """An array as vinci reads it: bfloat16 as 2-byte void ('<V2')."""
    if a.dtype.name == "bfloat16":
        return a.view(np.uint16).view("V2")
    return a


def from_vinci(a, want):
    if a.dtype.kind == "V" and a.dtype.itemsize == 2 and want.dtype.name == "bfloat16":
        return a.view(np.uint16).view(want.dtype)
    return a


def dummy_input(vi):
    """onnx.backend.test.runner's generate_dummy_data(random=False)."""
    shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in vi.type.tensor_type.shape.dim)
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


def fmt_index(idx):
    return "(" + ",".join(str(int(i)) for i in idx) + ")"


def compare(name, ref, out, rtol, atol):
    """None when out matches ref; else one line saying how it differs."""
    if out.shape != ref.shape:
        return "output '%s': shape %s, expected %s" % (name, list(out.shape), list(ref.shape))
    if out.dtype != ref.dtype:
        return "output '%s': dtype %s, expected %s" % (name, out.dtype.name, ref.dtype.name)
    if out.size == 0:
        return None
    if ref.dtype.kind in "biu":
        bad = out != ref
        if not bad.any():
            return None
        i = np.argwhere(bad)[0]
        return "output '%s': %d/%d elements differ (exact dtype %s), first at %s: got %s, expected %s" % (
            name, int(bad.sum()), ref.size, ref.dtype.name, fmt_index(i), out[tuple(i)], ref[tuple(i)])
    r, o = ref.astype(np.float64), out.astype(np.float64)
    rn, on = np.isnan(r), np.isnan(o)
    with np.errstate(invalid="ignore", over="ignore"):
        same = (r == o) | (rn & on)  # covers equal infinities
        diff = np.abs(o - r)
        ok = same | (np.isfinite(r) & (diff <= atol + rtol * np.abs(r)))  # infinities must be equal
    if ok.all():
        return None
    bad = ~ok
    d = np.where(bad & np.isfinite(diff), diff, 0.0)
    i = np.unravel_index(int(np.argmax(d)), d.shape) if d.any() else tuple(np.argwhere(bad)[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = float(np.max(np.where(bad & (r != 0) & np.isfinite(r), d / np.abs(r), 0.0)))
    nan_note = ""
    if (rn != on).any():
        nan_note = ", NaN positions differ (%d)" % int((rn != on).sum())
    err = "max abs err %.3g (rel %.3g)" % (float(d[i]), rel) if d.any() else "non-finite mismatch"
    return ("output '%s': wrong result: %d/%d elements out of tolerance (rtol %g atol %g), %s "
            "at %s: got %r, expected %r%s") % (
        name, int(bad.sum()), ref.size, rtol, atol, err, fmt_index(i), float(o[i]), float(r[i]), nan_note)


def check_random(kind, ins, refs, outs):
    """Shape, dtype and invariants for tests whose expected values are random."""
    for name, ref in refs:
        out = outs[name]
        if out.shape != ref.shape or out.dtype != ref.dtype:
            return "output '%s': %s %s, expected %s %s" % (name, out.dtype.name, list(out.shape),
                                                          ref.dtype.name, list(ref.shape))
    if kind == "bernoulli":
        o = outs[refs[0][0]].astype(np.float64)
        if not np.isin(o, (0.0, 1.0)).all():
            return "bernoulli output has values other than 0 and 1"
    elif kind == "dropout":
        x = ins[0].astype(np.float64)
        ratio = float(ins[1]) if len(ins) > 1 else 0.5
        y = outs[refs[0][0]].astype(np.float64)
        scaled = x / (1.0 - ratio)
        if not (np.isclose(y, 0.0) | np.isclose(y, scaled, rtol=1e-5, atol=1e-6)).all():
            return "dropout output is neither 0 nor x/(1-ratio) somewhere"
        if len(refs) > 1:
            mask = outs[refs[1][0]]
            if not np.array_equal(np.where(mask, scaled, 0.0), y) and \
                    not np.allclose(np.where(mask, scaled, 0.0), y, rtol=1e-5, atol=1e-6):
                return "dropout mask does not match the output"
    return None


def clean_error(text, spec, tmp):
    """The first meaningful line of vinci's stderr, without machine-specific paths."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    line = lines[0] if lines else "(no message)"
    line = line.replace(os.path.dirname(spec[2]) + "/", "").replace(spec[2], "model.onnx")
    line = line.replace(tmp + "/", "").replace(tmp, "<tmp>")
    return line[:300]


def unsupported_ops(text):
    """Operator names from vinci's 'unsupported operators:' block."""
    ops, inside = [], False
    for l in text.splitlines():
        if l.startswith("unsupported operators:"):
            inside = True
            continue
        if inside:
            m = re.match(r"\s+(\S+)\s+\(domain '([^']*)'(?:, opset (\d+))?", l)
            if not m:
                if l.strip():
                    break
                continue
            op = m.group(1) if m.group(2) in ("", "ai.onnx") else "%s::%s" % (m.group(2), m.group(1))
            ops.append((op, m.group(3)))
    return ops


def run_one(spec, vinci, timeout, opt, tmp_root):
    import onnx
    name, group, model_path, tdir, rtol, atol = spec
    t0 = time.monotonic()
    res = {"name": name, "group": group, "status": "FAIL", "msg": "", "ops": [], "unsupported": []}
    try:
        model = onnx.load(model_path)
    except Exception as e:  # noqa: BLE001
        res["msg"] = "onnx cannot load the model: %s" % e
        return res
    res["ops"] = sorted(op_types(model.graph, set()) |
                        set(o for f in model.functions for o in op_types(f, set())))
    inits = {i.name for i in model.graph.initializer}
    inputs = [vi for vi in model.graph.input if vi.name not in inits] if tdir is None else list(model.graph.input)
    # The values the test feeds and checks.
    if tdir is None:
        feeds = [(vi, None) for vi in inputs]
        outs_vi = list(model.graph.output[:1])
        ref_files = [os.path.splitext(model_path)[0] + "_output_0.pb"]
    else:
        ds = os.path.join(tdir, "test_data_set_0")
        n_in = len([f for f in os.listdir(ds) if re.match(r"input_\d+\.pb$", f)])
        n_out = len([f for f in os.listdir(ds) if re.match(r"output_\d+\.pb$", f)])
        if n_in > len(inputs) or n_out > len(model.graph.output):
            res["msg"] = "test data has more inputs/outputs than the model"
            return res
        feeds = [(inputs[i], os.path.join(ds, "input_%d.pb" % i)) for i in range(n_in)]
        outs_vi = list(model.graph.output[:n_out])
        ref_files = [os.path.join(ds, "output_%d.pb" % i) for i in range(n_out)]
    for kind, vis in (("input", [vi for vi, _ in feeds]), ("output", outs_vi)):
        for vi in vis:
            why = value_type(vi)
            if why:
                res["status"] = "UNSUPPORTED"
                res["msg"] = "(type) %s '%s' is a %s" % (kind, vi.name, why)
                res["unsupported"] = ["type:" + why]
                return res
    tmp = tempfile.mkdtemp(prefix="conf-", dir=tmp_root)
    try:
        ins, cmd = [], [vinci, "run", model_path]
        for i, (vi, path) in enumerate(feeds):
            a = dummy_input(vi) if path is None else read_tensor(path)
            ins.append(a)
            f = os.path.join(tmp, "in%d.npy" % i)
            np.save(f, to_vinci(a))  # (np.ascontiguousarray would make a 0-d array 1-d)
            cmd += ["--input", "%s=%s" % (vi.name, f)]
        out_dir = os.path.join(tmp, "out")
        os.mkdir(out_dir)
        cmd += ["--output-dir", out_dir]
        if opt is not None:
            cmd.append("-O%d" % opt)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            res["msg"] = "timeout after %g s" % timeout
            return res
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != 0:
            ops = unsupported_ops(err)
            if p.returncode < 0:
                res["msg"] = "crash: vinci killed by signal %d" % -p.returncode
                if err.strip():
                    res["msg"] += " (%s)" % clean_error(err, spec, tmp)
            elif ops:
                res["status"] = "UNSUPPORTED"
                res["unsupported"] = [o for o, _ in ops]
                res["msg"] = "op " + ", ".join(o + (" (opset %s)" % v if v else "") for o, v in ops)
            elif p.returncode == 3 or re.search(UNSUPPORTED_ERRORS, err, re.I):
                res["status"] = "UNSUPPORTED"
                res["msg"] = clean_error(err, spec, tmp)
            else:
                res["msg"] = "error: " + clean_error(err, spec, tmp)
            m = re.search(r"node #\d+ \(([\w.:]+)\)", err)
            if m and not ops:
                res["unsupported" if res["status"] == "UNSUPPORTED" else "failed_op"] = [m.group(1)]
            return res
        refs = []
        for vi, f in zip(outs_vi, ref_files):
            refs.append((vi.name, read_tensor(f)))
        outs = {}
        for oname, ref in refs:
            f = os.path.join(out_dir, npy_safe(oname) + ".npy")
            if not os.path.exists(f):
                res["msg"] = "output '%s' was not written" % oname
                return res
            outs[oname] = from_vinci(np.load(f), ref)
        rand = next((k for pat, k in RANDOM_TESTS if re.search(pat, name.split("/")[-1])), None)
        if rand:
            msg = check_random(rand, ins, refs, outs)
        else:
            msg = next((m for m in (compare(n, r, outs[n], rtol, atol) for n, r in refs) if m), None)
        if msg:
            res["msg"] = msg
        else:
            res["status"] = "PASS"
            if rand:
                res["msg"] = "(random outputs: shape, dtype and %s invariants checked)" % rand
        return res
    except Exception as e:  # noqa: BLE001 - a broken test must not stop the run
        res["msg"] = "runner error: %s: %s" % (type(e).__name__, e)
        return res
    finally:
        res["secs"] = time.monotonic() - t0
        shutil.rmtree(tmp, ignore_errors=True)


def _worker(args):
    spec, vinci, timeout, opt, tmp_root = args
    r = run_one(spec, vinci, timeout, opt, tmp_root)
    r.setdefault("secs", 0.0)
    return r


# ---------------------------------------------------------------- the list

def read_list(path):
    """{test name: reason} from the expected-failure list."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            name, _, reason = s.partition("#")
            name = name.strip()
            if not name or " " in name:
                sys.exit("%s:%d: expected 'test_name  # reason'" % (path, n))
            out[name] = reason.strip()
    return out


def list_reason(r):
    msg = re.sub(r"^(error: )?vinci run: (vn_\w+: )?(model\.onnx: )?", "", r["msg"].replace("\n", " "))
    msg = re.sub(r" \(inputs: [^)]*\)$", "", msg)  # the shapes vinci appends to operator errors
    msg = re.sub(r"^node #\d+ \(([\w.:]+)\): \1 \(node '[^']*'\): ", r"\1: ", msg)
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return ("unsupported: " if r["status"] == "UNSUPPORTED" else "fail: ") + msg


def write_list(path, results, old, ran):
    """Rewrite the list: this run's non-passing tests, plus the old entries of tests not run."""
    entries = {n: reason for n, reason in old.items() if n not in ran}
    for r in results:
        if r["status"] != "PASS":
            entries[r["name"]] = list_reason(r)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    order = {g: i for i, g in enumerate(GROUPS)}

    def key(n):
        return (order.get(n.split("/")[0] if "/" in n else "node", 99), n)

    width = 56  # longer names overflow by two spaces
    with open(path, "w") as f:
        f.write("# ONNX conformance: tests expected to fail or be unsupported by vinci.\n"
                "# Run by scripts/conformance.py (scripts/test.sh job 1b). One test a line:\n"
                "#   test_name  # fail|unsupported: reason\n"
                "# A test not listed here that fails makes the run fail; a listed test that\n"
                "# passes is reported as \"now passing\": delete its line (the list only shrinks).\n"
                "# Regenerate: .venv/bin/python scripts/conformance.py --write-list\n")
        for n in sorted(entries, key=key):
            f.write("%-*s  # %s\n" % (width - 2, n, entries[n]))


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vinci", default=os.path.join(ROOT, "build", "vinci"), help="vinci binary (default build/vinci)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="tests run at once (default 2)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per test (default 60)")
    ap.add_argument("--threads", default="1", help="VINCI_NUM_THREADS for each vinci run (default 1)")
    ap.add_argument("-O", dest="opt", type=int, choices=(0, 1), help="pass -O0/-O1 to vinci run")
    ap.add_argument("--groups", default=",".join(GROUPS), help="comma-separated subset of " + ",".join(GROUPS))
    ap.add_argument("--filter", help="only tests whose name matches this regex")
    ap.add_argument("--data", help="onnx/backend/test/data directory (default: the installed onnx's)")
    ap.add_argument("--list", default=DEFAULT_LIST, help="expected-failure list")
    ap.add_argument("--write-list", action="store_true", help="rewrite the list from this run and exit 0")
    ap.add_argument("--quiet", action="store_true", help="print only unexpected results (tests outside the list that do not pass, listed tests that now pass) and the summary")
    ap.add_argument("--json", help="write every result to this JSON file")
    ap.add_argument("--top", type=int, default=20, help="operators shown in the summary (default 20)")
    a = ap.parse_args()

    import onnx
    if onnx.__version__ != "1.22.0":
        print("warning: onnx %s; the test set is pinned to onnx 1.22.0" % onnx.__version__, file=sys.stderr)
    vinci = os.path.abspath(a.vinci)
    if not os.access(vinci, os.X_OK):
        sys.exit("conformance: %s is not an executable vinci binary (build it, or pass --vinci)" % vinci)
    groups = [g for g in a.groups.split(",") if g]
    for g in groups:
        if g not in GROUPS:
            sys.exit("conformance: unknown group '%s' (groups: %s)" % (g, ", ".join(GROUPS)))
    specs = discover(a.data or onnx_data_dir(), groups)
    if a.filter:
        specs = [s for s in specs if re.search(a.filter, s[0])]
    expected = read_list(a.list)
    os.environ["VINCI_NUM_THREADS"] = os.environ.get("VINCI_NUM_THREADS", a.threads)

    t0 = time.monotonic()
    tmp_root = tempfile.mkdtemp(prefix="vinci-conformance-")
    results = []
    unexpected, now_passing = [], []
    try:
        work = [(s, vinci, a.timeout, a.opt, tmp_root) for s in specs]
        with multiprocessing.Pool(max(1, a.jobs)) as pool:
            for r in pool.imap(_worker, work, chunksize=1):
                results.append(r)
                listed = r["name"] in expected
                if r["status"] == "PASS":
                    tag = ""
                    if listed:
                        now_passing.append(r["name"])
                        tag = "  (now passing - remove it from %s)" % os.path.relpath(a.list, ROOT)
                    if not a.quiet or listed:
                        print("PASS %s%s%s" % (r["name"], " " + r["msg"] if r["msg"] else "", tag), flush=True)
                else:
                    if not listed:
                        unexpected.append(r)
                    if not a.quiet or not listed:
                        print("%s %s: %s%s" % (r["status"], r["name"], r["msg"],
                                               "" if listed else "  [NOT IN THE LIST]"), flush=True)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    elapsed = time.monotonic() - t0

    # ---- summary
    print("\n== ONNX conformance summary (onnx %s, vinci %s)" % (onnx.__version__, os.path.relpath(vinci, os.getcwd())))
    tot = collections.Counter()
    for g in groups:
        c = collections.Counter(r["status"] for r in results if r["group"] == g)
        n = sum(c.values())
        if not n:
            continue
        tot.update(c)
        print("  %-18s %5d tests: %5d pass, %4d fail, %4d unsupported  (%.1f%% pass)" % (
            g, n, c["PASS"], c["FAIL"], c["UNSUPPORTED"], 100.0 * c["PASS"] / n))
    n = sum(tot.values())
    print("  %-18s %5d tests: %5d pass, %4d fail, %4d unsupported  (%.1f%% pass)" % (
        "total", n, tot["PASS"], tot["FAIL"], tot["UNSUPPORTED"], 100.0 * tot["PASS"] / max(n, 1)))

    # Operators behind the most non-passing tests, two ways:
    #  - under test: a node test's operator (an _expanded test counts for the
    #    operator whose function it expands); every operator of a model test;
    #  - named by vinci: the unsupported operators it lists, the node its error
    #    names, or the value type the CLI cannot carry.
    by_name = {r["name"]: r for r in results}
    tested = collections.defaultdict(lambda: [0, 0])
    named = collections.defaultdict(lambda: [0, 0])
    for r in results:
        if r["status"] == "PASS":
            continue
        col = 1 if r["status"] == "UNSUPPORTED" else 0
        base = by_name.get(re.sub(r"_expanded(_ver\d+)?$", "", r["name"]), r)
        for o in base["ops"] or ["(model not loaded)"]:
            tested[o][col] += 1
        for o in r["unsupported"] or r.get("failed_op") or ["(none named: wrong result or other)"]:
            named[o][col] += 1
    for title, table in (("operators under test", tested), ("named by vinci", named)):
        if not table:
            continue
        print("\n  top %d %s, by non-passing tests:" % (a.top, title))
        top = sorted(table.items(), key=lambda kv: (-(kv[1][0] + kv[1][1]), kv[0]))[:a.top]
        for op, (f, u) in top:
            print("    %-32s %4d  (%d fail, %d unsupported)" % (op, f + u, f, u))
    slow = sorted(results, key=lambda r: -r["secs"])[:5]
    print("\n  slowest: " + ", ".join("%s %.1fs" % (r["name"], r["secs"]) for r in slow))
    print("  time: %.1f s with %d jobs" % (elapsed, a.jobs))

    if a.json:
        with open(a.json, "w") as f:
            json.dump({"elapsed_s": elapsed, "results": results}, f, indent=1)
    if a.write_list:
        write_list(a.list, results, expected, {r["name"] for r in results})
        print("  wrote %s (%d entries)" % (os.path.relpath(a.list, ROOT), len(read_list(a.list))))
        return 0
    known = {s[0] for s in discover(a.data or onnx_data_dir(), GROUPS)}
    stale = sorted(n for n in expected if n not in known)
    if stale:
        print("  warning: %d listed tests do not exist: %s" % (len(stale), ", ".join(stale[:10])))
    if now_passing:
        print("  %d listed tests now pass - remove them from %s: %s" % (
            len(now_passing), os.path.relpath(a.list, ROOT), " ".join(now_passing)))
    if unexpected:
        print("  FAILED: %d tests outside %s do not pass: %s" % (
            len(unexpected), os.path.relpath(a.list, ROOT), " ".join(r["name"] for r in unexpected[:50])
            + (" ..." if len(unexpected) > 50 else "")))
        return 1
    print("  OK: every test passes or is in %s (%d listed)" % (os.path.relpath(a.list, ROOT), len(expected)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
