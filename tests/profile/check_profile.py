#!/usr/bin/env python3
"""Independent check of a `vinci profile` output directory with the standard
library's parsers: op_summary.csv (csv), trace.json (json, Chrome trace
schema), roofline.svg (xml.etree).

Usage: check_profile.py DIR --nodes N --runs R --run-ms MS [--own-ms MS] --workers W --ops K
Exits 0 when every check passes, else prints the failures and exits 1.
"""
import argparse
import csv
import json
import os
import sys
import xml.etree.ElementTree as ET

COUNTERS = ["cycles", "instructions", "cache_refs", "cache_misses", "l1d_read_misses",
            "llc_read_misses", "branch_misses", "task_clock_ns", "page_faults", "ctx_switches"]
COLUMNS = ["name", "op_type", "fused_from", "inputs", "outputs", "calls", "total_ms", "avg_ms",
           "median_ms", "min_ms", "max_ms", "share", "flops", "bytes", "gflops", "gbs", "intensity",
           "precision", "roof_gflops", "bound", "roof_fraction", "blocks",
           "block_imbalance"] + COUNTERS
ARENAS = ["UB", "L1", "L0A", "L0B", "L0C"]
BLOCK_ARGS = ["run", "node", "block", "worker", "bytes_in", "bytes_out", "vector_elem_ops",
              "cube_ops"] + ["scratch_" + a for a in ARENAS]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def untimed(r):
    """A node that ran no kernel (a view, a concatenation built in place): no
    time, no FLOPs, no bytes, and no slice in the trace."""
    return float(r["max_ms"]) == 0


def check_csv(path, a):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
        f.seek(0)
        header = next(csv.reader(f))
    a.rows = rows
    check(header == COLUMNS, f"CSV columns {header}")
    check(len(rows) == a.nodes, f"{len(rows)} rows for {a.nodes} nodes")
    total = sum(float(r["total_ms"]) for r in rows)
    # Node times cover all but 5 % of the run less the profiler's own work
    # between nodes, and with that work stay within the run (test_profiler.c
    # covers()). Asynchronous runs add the stream's hand-offs to the run:
    # only the upper bound holds.
    low = 0 if a.streams else 0.95 * (a.run_ms - a.own_ms)
    check(a.own_ms >= 0 and low <= total and total + a.own_ms <= a.run_ms * 1.0001,
          f"node times {total:.4f} ms, profiler {a.own_ms:.4f} ms vs runs {a.run_ms:.4f} ms")
    for r in rows:
        check(int(r["calls"]) == a.runs, f"{r['name']}: {r['calls']} calls")
        if untimed(r):
            check(float(r["total_ms"]) == 0 and float(r["flops"]) == 0 and
                  float(r["bytes"]) == 0, f"{r['name']}: no time but work counted")
        check(r["bound"] in ("compute", "memory", "latency"), f"{r['name']}: bound {r['bound']}")
        check(r["precision"] in ("f32", "bf16", "int8") and float(r["roof_gflops"]) >= 0,
              f"{r['name']}: precision {r['precision']}, roof {r['roof_gflops']}")
        check(float(r["min_ms"]) <= float(r["avg_ms"]) <= float(r["max_ms"]) + 1e-9,
              f"{r['name']}: min/avg/max")
        check(float(r["min_ms"]) - 1e-9 <= float(r["median_ms"]) <= float(r["max_ms"]) + 1e-9,
              f"{r['name']}: min/median/max")
        for k in COUNTERS:
            v = r[k]
            check(v == "unsupported" or int(v) >= 0, f"{r['name']}: {k} = {v}")
        check(r["task_clock_ns"] != "unsupported", "software counters are always supported")
        # Every kernel runs blocks; the longest is at least the median one.
        if untimed(r):
            check(float(r["blocks"]) == 0, f"{r['name']}: blocks without a kernel")
        else:
            check(float(r["blocks"]) >= 1 and float(r["block_imbalance"]) >= 1,
                  f"{r['name']}: blocks {r['blocks']}, imbalance {r['block_imbalance']}")
        check("[" in r["outputs"] and r["outputs"].split("[")[0].isalnum(),
              f"{r['name']}: outputs '{r['outputs']}' carry dtype and shape")


def check_trace(path, a):
    with open(path) as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    for e in ev:
        check(e.get("ph") in ("X", "M") and isinstance(e.get("pid"), int) and
              isinstance(e.get("tid"), int) and isinstance(e.get("name"), str), f"event {e}")
        if e["ph"] == "X":
            check(isinstance(e["ts"], (int, float)) and e["dur"] >= 0, f"slice {e}")
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "process_name"}
    workers = {t for (p, t), n in names.items() if n.startswith("worker ")}
    check(len(workers) == a.workers, f"{len(workers)} worker tracks for {a.workers} workers")
    check(len(procs) == 3, f"processes {procs}")
    x = [e for e in ev if e["ph"] == "X"]
    runs = [e for e in x if e["name"] == "model run"]
    nodes = [e for e in x if e.get("cat") == "node"]
    on_workers = [e for e in x if e.get("cat") == "worker"]
    check(len(runs) == a.runs, f"{len(runs)} run slices")
    timed = [r for r in a.rows if not untimed(r)]
    check(len(nodes) == a.runs * len(timed), f"{len(nodes)} node slices, {len(timed)} timed nodes")
    per_node = {}
    for n in nodes:
        per_node.setdefault(n["name"], []).append(n["dur"])
    for r in timed:
        name = r["name"] or r["op_type"]
        durs = sorted(per_node.get(name, []))
        check(len(durs) >= a.runs, f"{name}: {len(durs)} slices")
        # the CSV's median is the median of the node's slices (us in the trace)
        if durs and len(durs) == int(r["calls"]):  # one node of that name
            k = len(durs)
            med = durs[k // 2] if k % 2 else (durs[k // 2 - 1] + durs[k // 2]) / 2
            check(abs(med / 1000 - float(r["median_ms"])) <= 2e-5,
                  f"{name}: median {r['median_ms']} ms, trace {med / 1000:.6f} ms")
    check(len(on_workers) > 0, "slices on worker tracks")
    for e in x:
        check((e["pid"], e["tid"]) in names, f"slice on an unnamed track {e['pid']}/{e['tid']}")
    # Every node slice lies inside its run's slice, on the same track.
    by_run = {(r["pid"], r["tid"], r["args"]["run"]): r for r in runs}
    eps = 0.01  # us, the printed precision
    for n in nodes:
        r = by_run.get((n["pid"], n["tid"], n["args"]["run"]))
        check(r is not None and r["ts"] - eps <= n["ts"] and
              n["ts"] + n["dur"] <= r["ts"] + r["dur"] + eps, f"node {n['name']} outside its run")
        check(all(k in n["args"] for k in COUNTERS + ["op_type", "bound"]), "node args")
    for w in on_workers:
        check(w["args"]["blocks"] >= 1 and all(k in w["args"] for k in COUNTERS), "worker args")
    check_blocks(doc, x, on_workers, names, a)
    if a.streams:
        streams = {t for (p, t), n in names.items() if n.startswith("stream ")}
        check(len(streams) >= 1, "a stream track")
        check(any(e.get("cat") == "task" for e in x), "stream task slices")


def check_blocks(doc, x, on_workers, names, a):
    """Block slices: on a worker's (or the host's caller-run) track, for the
    runs the trace's otherData names; a node's blocks inside that node's
    slice on that track, as many per run as the CSV's blocks per call, with
    their kernel counters (not the node's: an operator may count its tensors'
    bytes once itself, as convolutions do)."""
    other = doc.get("otherData", {})
    kept = other.get("block_slice_runs", -1)
    check(1 <= kept <= a.runs and "block_slices" in other, f"otherData {other}")
    blocks = [e for e in x if e.get("cat") == "block"]
    check(len(blocks) > 0, "block slices")
    spans = {}
    for w in on_workers:
        spans.setdefault((w["tid"], w["name"], w["args"]["run"]), []).append(w)
    per_run = {}
    for b in blocks:
        args = b["args"]
        check(b["pid"] == 2 and (2, b["tid"]) in names and all(k in args for k in BLOCK_ARGS),
              f"block slice {b}")
        check(0 <= args["run"] < kept, f"block of run {args['run']} past {kept}")
        check(b["tid"] == min(args["worker"], a.workers), f"block of worker {args['worker']} "
              f"on track {b['tid']}")
        if not args["node"]:
            continue
        eps = 0.01
        check(any(w["ts"] - eps <= b["ts"] and b["ts"] + b["dur"] <= w["ts"] + w["dur"] + eps
                  for w in spans.get((b["tid"], args["node"], args["run"]), [])),
              f"block {args['block']} of {args['node']} outside the node's worker slice")
        check(all(args[k] >= 0 for k in BLOCK_ARGS[2:]), f"block counters {args}")
        k = (args["node"], args["run"])
        per_run[k] = per_run.get(k, 0) + 1
    if other.get("blocks_dropped", 1) != 0:
        return
    rows = {r["name"] or r["op_type"]: r for r in a.rows}
    for (node, run), n in per_run.items():
        r = rows.get(node)
        check(r is not None and abs(float(r["blocks"]) - n) < 1e-6,
              f"{node} run {run}: {n} block slices, CSV {r and r['blocks']} per call")
    for r in a.rows:
        if not untimed(r):
            name = r["name"] or r["op_type"]
            check(all((name, run) in per_run for run in range(kept)),
                  f"{name}: block slices missing in a run")


def check_svg(path, a):
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    check(root.tag == ns + "svg", f"root {root.tag}")
    marks = [c for c in root.iter(ns + "circle") if c.get("class") == "op"]
    check(len(marks) == a.ops, f"{len(marks)} marks for {a.ops} ops")
    # Marks inside the plot's frame (the stroked rect), each naming its op.
    frame = [r for r in root.iter(ns + "rect") if r.get("stroke")]
    check(len(frame) == 1, "one plot frame")
    if frame:
        x0, y0 = float(frame[0].get("x")), float(frame[0].get("y"))
        x1, y1 = x0 + float(frame[0].get("width")), y0 + float(frame[0].get("height"))
        for m in marks:
            cx, cy = float(m.get("cx")), float(m.get("cy"))
            check(x0 <= cx <= x1 and y0 <= cy <= y1, f"mark at {cx},{cy} outside the plot")
    titles = [m.find(ns + "title") for m in marks]
    check(all(t is not None for t in titles), "each mark names its op")
    # Readable: both roofs labelled with their figures, tick labels on both
    # axes, and every op that has no place on the plot named under it.
    text = " ".join("".join(t.itertext()) for t in root.iter(ns + "text"))
    check("compute roof" in text and "memory roof" in text, "roof labels")
    check("FLOP/byte" in text and "GFLOP/s" in text, "axis titles")
    for r in getattr(a, "rows", []):
        name = r["name"] or r["op_type"]
        if float(r["flops"]) > 0 and float(r["bytes"]) > 0:
            check(any(t is not None and "".join(t.itertext()).startswith(name + " (")
                      for t in titles), f"{name} has a mark")
        else:
            check(name in text.split("not placed", 1)[-1], f"{name} named as not placed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    for k in ("nodes", "runs", "workers", "ops"):
        ap.add_argument("--" + k, type=int, required=True)
    ap.add_argument("--run-ms", type=float, required=True)
    ap.add_argument("--own-ms", type=float, default=0.0,
                    help="the profiler's own time inside the runs (vn_profiler_overhead_ms)")
    ap.add_argument("--streams", action="store_true")
    a = ap.parse_args()
    check_csv(os.path.join(a.dir, "op_summary.csv"), a)
    check_trace(os.path.join(a.dir, "trace.json"), a)
    check_svg(os.path.join(a.dir, "roofline.svg"), a)
    for f in failures[:20]:
        print("check_profile:", f)
    print(f"check_profile: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
