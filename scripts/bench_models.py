#!/usr/bin/env python3
"""End-to-end model benchmark: vinci against onnxruntime, in one run,
alternating the two (round by round, model by model, thread count by thread
count; vinci first in odd rounds, ORT first in even ones), on the models of scripts/gen_models.py (generated on
demand when missing).

vinci:  VINCI_NUM_THREADS=N vinci bench model.onnx --threads 1 --iters I
        (N intra-op workers, one run at a time: latency, not throughput; `vinci
        bench --threads N` would run N models concurrently). Reports the median,
        min and max latency, compile time (vinci's own timer: graph -> compiled
        model, the ONNX file already parsed), the arena peak of the memory plan,
        and the process's peak RSS (os.wait4). Load+compile wall: the wall time
        of a whole `vinci compile model.onnx` process (parse + compile + exit).
        vnm load: the offline model's load time (`vinci compile -o model.vnm`,
        then the median of 3 `vinci info model.vnm` loads: mmap, hashes,
        checks, re-plan), the figure to set against ORT's session creation.
ORT:    a fresh Python subprocess per measurement: InferenceSession with
        graph optimisation 'all', intra_op_num_threads=N, inter_op 1,
        CPUExecutionProvider; session creation time (load + optimise), one
        warm-up run, I timed runs (median/min/max); peak RSS of that process
        (resource.getrusage maxrss) and the same process's RSS before the
        session was created (Python + numpy + onnxruntime import), so the
        session's own footprint is peak - base.
Inputs: random floats in [-1, 1) and integers in [0, 4) for both (what vinci
bench generates).

Work and peak: each model's GFLOP is counted from ONNX shape inference (Conv,
MatMul, Gemm; 2 FLOP per multiply-accumulate, direct-convolution count); %peak
is that work per second over the fp32 peak `vinci machine` saved (measured on
the spot when it saved none), for both vinci and ORT.

With --rounds R > 1 each figure is the median over rounds of the per-round
medians; the ratio is also given as the median of each round's own ratio
(per-round) and as the fastest vinci run over the fastest ORT run (of mins),
the steadier figures on a shared host whose speed moves for seconds at a
time. Prints a table; --json FILE also writes the raw numbers. --bf16 also
times `vinci bench --precision bf16` in every round and prints its speed-up
over vinci fp32 (its accuracy against fp32: check_models.py --precision bf16).
--busy-cpu C runs a busy loop pinned to CPU C for the whole benchmark (a
machine shared with another process): both engines then run beside it.

Usage: .venv/bin/python scripts/bench_models.py [--vinci build/vinci]
           [--models resnet18_nobn,...|all] [--threads 1,2] [--iters 20] [--rounds 1]
           [--json FILE] [--bf16] [--busy-cpu C]
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ALL = ["transformer", "squeezenet11", "mobilenetv2", "mobilenetv2_nobn", "resnet18",
       "resnet18_nobn", "resnet50", "resnet50_nobn", "bert_base"]

ORT_WORKER = r"""
import json, resource, sys, time
import numpy as np
import onnxruntime as ort
path, threads, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
so.intra_op_num_threads = threads
so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
t0 = time.perf_counter()
sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
create_ms = (time.perf_counter() - t0) * 1e3
rng = np.random.default_rng(42)
feeds = {}
for i in sess.get_inputs():
    shape = [d if isinstance(d, int) else 1 for d in i.shape]
    if i.type == "tensor(float)":
        feeds[i.name] = rng.uniform(-1, 1, shape).astype(np.float32)
    else:
        feeds[i.name] = rng.integers(0, 4, shape).astype(np.int64)
sess.run(None, feeds)  # warm-up
lat = []
for _ in range(iters):
    t0 = time.perf_counter()
    sess.run(None, feeds)
    lat.append((time.perf_counter() - t0) * 1e3)
lat.sort()
n = len(lat)
print(json.dumps({"median": lat[n // 2] if n % 2 else (lat[n // 2 - 1] + lat[n // 2]) / 2,
                  "min": lat[0], "max": lat[-1], "create_ms": create_ms,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "base_rss_mib": base / 1024}))
"""


def run_measured(cmd, env=None, timeout=None):
    """Like subprocess.run but returns the child's own peak RSS (os.wait4)."""
    t0 = time.perf_counter()
    r, w = os.pipe()
    re_, we = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(re_)
        os.dup2(w, 1)
        os.dup2(we, 2)
        try:
            os.execvpe(cmd[0], cmd, env if env is not None else os.environ)
        finally:
            os._exit(127)
    os.close(w)
    os.close(we)
    import selectors
    sel = selectors.DefaultSelector()
    bufs = {r: b"", re_: b""}
    sel.register(r, selectors.EVENT_READ)
    sel.register(re_, selectors.EVENT_READ)
    deadline = t0 + (timeout or 1e9)
    killed = False
    while sel.get_map():
        left = deadline - time.perf_counter()
        if left <= 0 and not killed:
            os.kill(pid, 9)
            killed = True
        for key, _ in sel.select(timeout=max(0.1, min(left, 1.0))):
            chunk = os.read(key.fd, 65536)
            if chunk:
                bufs[key.fd] += chunk
            else:
                sel.unregister(key.fd)
                os.close(key.fd)
    _, status, ru = os.wait4(pid, 0)
    rc = 124 if killed else os.waitstatus_to_exitcode(status)
    return (rc, bufs[r].decode(errors="replace"), bufs[re_].decode(errors="replace"),
            ru.ru_maxrss / 1024.0, time.perf_counter() - t0)


def vinci_bench(args, path, threads, precision="f32", opt_level=None):
    env = dict(os.environ, VINCI_NUM_THREADS=str(threads))
    level = [] if opt_level is None else [f"-O{opt_level}"]
    rc, out, err, rss, _ = run_measured([args.vinci, "bench", path, "--threads", "1", "--iters",
                                         str(args.iters), "--precision", precision] + level, env,
                                        args.timeout)
    if rc != 0:
        if "unsupported operators:" in err:
            ops = re.findall(r"^\s+(\S+) \(domain", err.split("unsupported operators:")[1], re.M)
            return {"status": "UNSUPPORTED: " + ",".join(ops)}
        return {"status": f"FAIL rc {rc}: " + " ".join(err.strip().splitlines()[-2:])}
    m = re.search(r"compile: ([\d.]+) ms, (\d+) nodes \(of (\d+)\), arena ([\d.]+) MiB", out)
    lat = re.search(r"latency: median ([\d.]+) ms, min ([\d.]+) ms, max ([\d.]+) ms", out)
    if not m or not lat:
        return {"status": "FAIL: cannot parse vinci bench output"}
    return {"status": "ok", "compile_ms": float(m.group(1)), "nodes": int(m.group(2)),
            "arena_mib": float(m.group(4)), "median": float(lat.group(1)),
            "min": float(lat.group(2)), "max": float(lat.group(3)), "rss_mib": rss}


def vinci_load_compile(args, path):
    rc, out, err, rss, wall = run_measured([args.vinci, "compile", path], None, args.timeout)
    return wall * 1e3 if rc == 0 else None


def vinci_vnm_load(args, path, loads=3):
    """Median load time of the model's .vnm offline model (`vinci compile -o`, then
    `vinci info model.vnm` `loads` times: the loader's own timer, mmap to runnable
    model, hashes and checks included), and the .vnm's size in MiB."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="vinci-bench-") as tmp:
        vnm = os.path.join(tmp, "model.vnm")
        rc, _, _, _, _ = run_measured([args.vinci, "compile", path, "-o", vnm], None, args.timeout)
        if rc != 0:
            return None, None
        ms = []
        for _ in range(loads):
            rc, out, _, _, _ = run_measured([args.vinci, "info", vnm], None, args.timeout)
            m = re.search(r"^load: ([\d.]+) ms", out, re.M)
            if rc == 0 and m:
                ms.append(float(m.group(1)))
        return med(ms), os.path.getsize(vnm) / 2**20


def ort_bench(args, path, threads):
    rc, out, err, rss, _ = run_measured([sys.executable, "-c", ORT_WORKER, path, str(threads),
                                         str(args.iters)], None, args.timeout)
    if rc != 0:
        return {"status": f"FAIL rc {rc}: " + " ".join(err.strip().splitlines()[-2:])}
    d = json.loads(out.strip().splitlines()[-1])
    d["status"] = "ok"
    d["rss_mib"] = max(d["rss_mib"], rss)
    return d


def model_gflop(path):
    """Multiply-add work of the model's Conv / MatMul / Gemm nodes in GFLOP (2 per
    multiply-accumulate, direct-convolution count), from ONNX shape inference:
    independent of how vinci computes it (Winograd does fewer multiplies)."""
    import onnx
    m = onnx.shape_inference.infer_shapes(onnx.load(path))
    shapes = {t.name: list(t.dims) for t in m.graph.initializer}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else 1
                           for d in vi.type.tensor_type.shape.dim]
    prod = lambda xs: float(eval("*".join(map(str, xs)) or "1"))
    flop = 0.0
    for n in m.graph.node:
        y = shapes.get(n.output[0])
        a = shapes.get(n.input[0])
        if not y or not a:
            continue
        if n.op_type == "Conv" and shapes.get(n.input[1]):
            flop += 2 * prod(y) * prod(shapes[n.input[1]][1:])
        elif n.op_type == "MatMul":
            flop += 2 * prod(y) * a[-1]
        elif n.op_type == "Gemm":
            trans_a = any(at.name == "transA" and at.i for at in n.attribute)
            flop += 2 * prod(y) * (a[0] if trans_a else a[1])
    return flop / 1e9


def fp32_peaks(args):
    """(1-thread GFLOP/s, {threads: GFLOP/s}) from the peaks file `vinci machine` saves
    (measured now if there is none)."""
    path = os.environ.get("VINCI_MACHINE_FILE") or os.path.expanduser(
        "~/.cache/vinci-machine-peaks.txt")
    if not os.path.exists(path):  # measure now, without keeping what a busy run sees
        import tempfile
        path = os.path.join(tempfile.mkdtemp(), "peaks.txt")
        subprocess.run([args.vinci, "machine"], check=False, capture_output=True,
                       env=dict(os.environ, VINCI_MACHINE_FILE=path))
    vals = {}
    try:
        with open(path) as f:
            for line in f:
                k, *v = line.split()
                vals[k] = v
        one, many = (float(x) for x in vals["fp32_gflops"])
        if one <= 0:
            one, many = (float(x) for x in vals["fp32_avx2_gflops"])
        return one, {int(vals["threads"][0]): many}
    except (OSError, KeyError, ValueError):
        return None, {}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, f="{:.2f}"):
    return "-" if x is None else f.format(x)


def print_bf16(raw, gflop, peak_of):
    """vinci --precision bf16 against vinci fp32 and onnxruntime fp32, per model and
    thread count (medians over rounds of per-round medians)."""
    print("\nvinci --precision bf16 (matrix products and direct convolutions in bf16, f32 "
          "accumulation): speed-up over vinci fp32 (higher is better)")
    print(f"{'model':12}  thr  fp32 ms  bf16 ms  bf16 speed-up  bf16/ort  bf16 %fp32-peak")
    for (name, t), d in raw.items():
        ok = lambda xs: [x["median"] for x in xs if x["status"] == "ok"]
        f, b, o = med(ok(d["vinci"])), med(ok(d["bf16"])), med(ok(d["ort"]))
        pct = 100 * gflop[name] / (b / 1e3) / peak_of(t) if b and peak_of(t) else None
        print(f"{name:12}  {t:3}  {fmt(f):>7}  {fmt(b):>7}  "
              f"{fmt(f / b if f and b else None, '{:.2f}x'):>13}  "
              f"{fmt(b / o if b and o else None):>8}  {fmt(pct, '{:.1f}%'):>15}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vinci", default="./build/vinci")
    ap.add_argument("--models-dir", default="build/models")
    ap.add_argument("--models", default="all", help="comma list or 'all': " + ",".join(ALL))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--iters", type=int, default=20, help="timed runs per measurement (>= 20)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--json", help="also write the raw numbers here")
    ap.add_argument("--bf16", action="store_true",
                    help="also time vinci --precision bf16 in the same rounds and print its "
                         "speed-up over vinci fp32 (accuracy: check_models.py --precision bf16)")
    ap.add_argument("--busy-cpu", type=int, default=None,
                    help="run a busy loop pinned to this CPU throughout (a loaded machine)")
    args = ap.parse_args()
    if args.busy_cpu is not None and args.busy_cpu not in os.sched_getaffinity(0):
        ap.error(f"--busy-cpu {args.busy_cpu}: not one of this process's CPUs "
                 f"{sorted(os.sched_getaffinity(0))}")
    # the peaks before any busy loop starts (they may have to be measured now)
    peaks = fp32_peaks(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` runs
    busy = None
    try:
        if args.busy_cpu is not None:
            busy = start_busy_loop(args.busy_cpu)
        status = run(args, peaks)
        if busy and busy.poll() is not None:
            print(f"note: the busy loop on CPU {args.busy_cpu} stopped early "
                  f"(exit {busy.returncode})")
            status = 1
        return status
    finally:
        if busy:
            busy.kill()
            busy.wait()


# A child that pins itself to one CPU, says so, and spins until killed or
# orphaned (it checks its parent now and then, so it cannot outlive a killed
# benchmark).
BUSY_LOOP = """import os, sys
parent = os.getppid()
os.sched_setaffinity(0, {%d})
print("ready", flush=True)
while os.getppid() == parent:
    for _ in range(1000000):
        pass
"""


def start_busy_loop(cpu):
    """The busy-loop child, once it spins on `cpu`."""
    busy = subprocess.Popen([sys.executable, "-c", BUSY_LOOP % cpu], stdout=subprocess.PIPE,
                            text=True)
    if busy.stdout.readline().strip() != "ready":
        busy.kill()
        busy.wait()
        raise SystemExit(f"bench_models: the busy loop on CPU {cpu} did not start")
    return busy


def run(args, peaks):
    names = ALL if args.models == "all" else args.models.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    missing = [n for n in names if not os.path.exists(os.path.join(args.models_dir, n + ".onnx"))]
    if missing:
        subprocess.run([sys.executable, os.path.join(HERE, "gen_models.py"), "--out",
                        args.models_dir, "--models", ",".join(missing)], check=True)
    raw = {}  # (model, threads) -> {"vinci": [...], "ort": [...]}
    load, vnm_load, vnm_mib = {}, {}, {}
    for rnd in range(args.rounds):
        for name in names:
            path = os.path.join(args.models_dir, name + ".onnx")
            load.setdefault(name, []).append(vinci_load_compile(args, path))
            ms, vnm_mib[name] = vinci_vnm_load(args, path)
            vnm_load.setdefault(name, []).append(ms)
            for t in threads:
                # who goes first alternates by round, so a slow phase of the
                # shared host does not always land on the same side
                if rnd % 2 == 0:
                    v = vinci_bench(args, path, t)
                    o = ort_bench(args, path, t)
                else:
                    o = ort_bench(args, path, t)
                    v = vinci_bench(args, path, t)
                b = vinci_bench(args, path, t, "bf16") if args.bf16 else None
                raw.setdefault((name, t), {"vinci": [], "ort": [], "bf16": []})
                raw[(name, t)]["vinci"].append(v)
                raw[(name, t)]["ort"].append(o)
                if b:
                    raw[(name, t)]["bf16"].append(b)
                print(f"# round {rnd + 1} {name} threads {t}: vinci "
                      f"{fmt(v.get('median'))} ms ({v['status']}), ort {fmt(o.get('median'))} ms "
                      f"({o['status']})" + (f", vinci bf16 {fmt(b.get('median'))} ms "
                                            f"({b['status']})" if b else ""),
                      file=sys.stderr, flush=True)

    gflop = {name: model_gflop(os.path.join(args.models_dir, name + ".onnx")) for name in names}
    peak1, peaks = peaks
    peak_of = lambda t: peaks.get(t) or (peak1 * t if peak1 else None)
    hdr = ("model", "thr", "vinci ms", "ort ms", "vn/ort", "per-round", "of mins", "GFLOP",
           "vn %peak", "ort %peak",
           "vn min/max", "ort min/max",
           "vn compile", "vn load+cmp", "vnm load", "ort session", "vn arena", "vn RSS",
           "ort RSS (sess)")
    rows, notes = [], []
    for (name, t), d in raw.items():
        vs = [x for x in d["vinci"] if x["status"] == "ok"]
        os_ = [x for x in d["ort"] if x["status"] == "ok"]
        g = lambda xs, k: med([x.get(k) for x in xs])
        vm, om = g(vs, "median"), g(os_, "median")
        ratio = vm / om if vm and om else None
        # the same ratio taken within each round (the two sides measured
        # seconds apart) and between the fastest runs: on a host whose speed
        # moves by tens of percent for seconds at a time, these two are the
        # steadier figures
        pairs = [(a["median"], b["median"]) for a, b in zip(d["vinci"], d["ort"])
                 if a["status"] == "ok" and b["status"] == "ok"]
        per_round = med([a / b for a, b in pairs]) if pairs else None
        vmin = min(x["min"] for x in vs) if vs else None
        omin = min(x["min"] for x in os_) if os_ else None
        of_mins = vmin / omin if vmin and omin else None
        if not vs:
            notes.append(f"{name}: vinci {d['vinci'][0]['status']}")
        if not os_:
            notes.append(f"{name}: ort {d['ort'][0]['status']}")
        pct = lambda ms: (100 * gflop[name] / (ms / 1e3) / peak_of(t)
                          if ms and peak_of(t) else None)
        rows.append((name, str(t), fmt(vm), fmt(om), fmt(ratio), fmt(per_round), fmt(of_mins),
                     fmt(gflop[name]),
                     fmt(pct(vm), "{:.1f}%"), fmt(pct(om), "{:.1f}%"),
                     f"{fmt(g(vs, 'min'), '{:.1f}')}/{fmt(g(vs, 'max'), '{:.1f}')}",
                     f"{fmt(g(os_, 'min'), '{:.1f}')}/{fmt(g(os_, 'max'), '{:.1f}')}",
                     fmt(g(vs, "compile_ms"), "{:.1f} ms"), fmt(med(load[name]), "{:.0f} ms"),
                     fmt(med(vnm_load[name]), "{:.1f} ms"), fmt(g(os_, "create_ms"), "{:.0f} ms"),
                     fmt(g(vs, "arena_mib"), "{:.1f} MiB"), fmt(g(vs, "rss_mib"), "{:.0f} MiB"),
                     (fmt(g(os_, "rss_mib"), "{:.0f}") + " (" +
                      fmt(med([x["rss_mib"] - x["base_rss_mib"] for x in os_]), "{:.0f}") +
                      ") MiB") if os_ else "-"))
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(hdr)]
    line = lambda r: "  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(r))
    print(f"vinci vs onnxruntime: {args.iters} timed runs per measurement, {args.rounds} "
          f"round(s), latency medians in ms (lower is better); vn/ort = ratio of the medians, "
          f"per-round = median of each round's ratio, of mins = fastest run over fastest run; "
          f"%peak = Conv/MatMul/Gemm "
          f"GFLOP per second over the fp32 peak of `vinci machine` "
          f"({fmt(peak1, '{:.0f}')} GFLOP/s per thread)" +
          (f"; a busy loop ran on CPU {args.busy_cpu} throughout" if args.busy_cpu is not None
           else ""))
    print(line(hdr))
    print(line(["-" * x for x in w]))
    for r in rows:
        print(line(r))
    for n in sorted(set(notes)):
        print("note: " + n)
    if args.bf16:
        print_bf16(raw, gflop, peak_of)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{k[0]}@{k[1]}": v for k, v in raw.items()} |
                      {"load_compile_ms": load, "vnm_load_ms": vnm_load, "vnm_mib": vnm_mib,
                       "busy_cpu": args.busy_cpu},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
