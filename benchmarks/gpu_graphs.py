"""The offset study on a GPU with XLA's command buffers (CUDA graphs) around the time loop.

    python benchmarks/gpu_graphs.py --out results_dir            # on a machine with a GPU
    python benchmarks/gpu_graphs.py --out DIR --only "contact 10240" "contact 10240 graphs" --again 2
    python benchmarks/gpu_graphs.py --out DIR --census     # kernels per loop iteration

Why: on a GPU each iteration of the time loop launches its kernels one by one, and each
data-dependent condition (the loop's own test, the contact stage's `lax.cond`s and search
loops) makes the host wait for a flag copied back from the device. XLA can instead record a
while loop and its conditions as one CUDA graph with conditional nodes
(`--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL`), evaluated on the device. This
script runs `benchmarks/study_throughput.py` (the crush-law offset study, 3 s at 4e-4 s,
float64) in fresh processes under several XLA option sets, each with a time limit, and
compares the outcome metrics of each variant with the default program's on the same
samples. Writes results.json (one row per run) and prints a Markdown table. --census
instead dumps three programs (XLA's --xla_dump_to) and counts the kernels each loop launches
per iteration (census.json).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from llvm_unroll import compare  # noqa: E402  (the metrics' differences, over values above 1e-6)

GRAPHS = "--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL --xla_gpu_graph_min_graph_size=1"
LEVEL3 = "--xla_backend_optimization_level=3"  # XLA's own default; jaxmedusa sets 1 (core/xla_flags.py)

# Runs the contact stage dense (every pair, iterations written out) above DENSE_MAX_PAIRS too
DENSE = ("import sys, runpy; import jaxmedusa.core.control_flow as c; c.DENSE_MAX_PAIRS = 1 << 30; "
         "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
C10240 = ["--batch", "10240", "--n", "20480"]
C1024 = ["--batch", "1024", "--n", "2048"]
FREE = ["--batch", "64", "10240", "--n", "20480", "--no-contact"]

# (name, XLA_FLAGS, extra environment, study_throughput arguments, the run it is compared with,
#  dense above DENSE_MAX_PAIRS). B = 10240 is 10,240 pairs: compacted unless dense; B = 1024 is
# dense on a GPU (core/control_flow.py), compacted with JAXMEDUSA_BRANCHLESS=0.
RUNS = [
    ("contact 10240", "", {}, C10240, None, False),
    ("contact 10240 graphs", GRAPHS, {}, C10240, "contact 10240", False),
    ("contact 1024", "", {}, C1024, None, False),
    ("contact 1024 graphs", GRAPHS, {}, C1024, "contact 1024", False),
    ("free 64/10240", "", {}, FREE, None, False),
    ("free 64/10240 graphs", GRAPHS, {}, FREE, "free 64/10240", False),
    ("contact 10240 level 3", LEVEL3, {}, C10240, "contact 10240", False),
    ("contact 10240 graphs again", GRAPHS, {}, C10240, "contact 10240", False),
    ("contact 1024 graphs compacted", GRAPHS, {"JAXMEDUSA_BRANCHLESS": "0"}, C1024, "contact 1024", False),
    ("contact 10240 graphs dense", GRAPHS, {}, C10240, "contact 10240 graphs again", True),
    ("contact 10240 graphs third", GRAPHS, {}, C10240, "contact 10240 graphs again", False),
]


def outcome_difference(a: Path, b: Path) -> str:
    """llvm_unroll.compare of the metrics saved in two .npz files."""
    with np.load(a) as x, np.load(b) as y:
        return compare(dict(x), dict(y))


LAUNCHES = ("kCustomKernel", "kKernel", "kCopy", "kGemm", "kCublasLtMatmul")  # thunks that launch GPU work


def census(thunks: str) -> list[dict]:
    """Per while loop of an XLA:GPU thunk sequence (the dump's `*thunk_sequence_after_thunk_passes.txt`),
    the launches in its condition and in one iteration of its body (nested loops counted
    apart; a condition's branches counted in), the gemm fusions among them, and its
    conditions: [{id, depth, condition, body, gemm, conditionals}], outermost first."""
    stack, rows = [], []
    for line in thunks.splitlines():
        marker = line.strip()
        if marker in ("condition:", "body:"):
            if stack:
                stack[-1]["section"] = marker[:-1]
            continue
        m = re.match(r"^(\s*)(\d+): (k\w+)(.*)$", line)
        if not m:
            continue
        indent, kind = len(m.group(1)), m.group(3)
        while stack and stack[-1]["indent"] >= indent:
            rows.append(stack.pop())
        if stack and kind in LAUNCHES:
            stack[-1][stack[-1]["section"]] += 1
            stack[-1]["gemm"] += stack[-1]["section"] == "body" and "gemm" in m.group(4)
        if stack and kind == "kConditional":
            stack[-1]["conditionals"] += 1
        if kind == "kWhile":
            stack.append(dict(id=m.group(2), depth=len(stack), indent=indent, section="condition", condition=0,
                              body=0, gemm=0, conditionals=0))
    rows += stack
    return [{k: v for k, v in r.items() if k not in ("indent", "section")}
            for r in sorted(rows, key=lambda r: (r["depth"], r["id"]))]


def run_census(out: Path, timeout: float):
    """The programs of three runs (contact B = 1024 dense, B = 10240 compacted, free B = 1024,
    command buffers on) dumped by XLA for a 0.02-s run; prints each loop's census."""
    found = {}
    free1024 = ["--batch", "1024", "--n", "2048", "--no-contact"]
    for name, extra in (("contact 1024", C1024), ("contact 10240", C10240), ("free 1024", free1024)):
        dump = Path(tempfile.mkdtemp(prefix="gpu_census_"))
        env = dict(os.environ, XLA_FLAGS=f"{GRAPHS} --xla_dump_to={dump} --xla_dump_hlo_as_text",
                   PYTHONPATH=str(ROOT))
        cmd = [sys.executable, str(ROOT / "benchmarks" / "study_throughput.py"), "--end-time", "0.02", *extra]
        subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        files = sorted(dump.glob("*jit_run_batch*thunk_sequence_after_thunk_passes.txt"))
        found[name] = census(files[-1].read_text()) if files else "no thunk sequence dumped"
        print(name, json.dumps(found[name], indent=None), flush=True)
    (out / "census.json").write_text(json.dumps(found, indent=1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for results.json")
    ap.add_argument("--end-time", default="3.0")
    ap.add_argument("--timeout", type=float, default=100.0, help="[s] per run")
    ap.add_argument("--only", nargs="*", default=None, help="run names to run (default: all)")
    ap.add_argument("--again", type=int, default=0,
                    help="then N more runs each of the default and the graphs program at B = 10240, alternating, "
                         "each compared with the first run of its program (is it reproducible?)")
    ap.add_argument("--census", action="store_true",
                    help="only count the kernels per loop iteration of three programs (XLA's dumps; census.json)")
    args = ap.parse_args(argv)
    if args.census:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        return run_census(out, args.timeout)
    runs = list(RUNS)
    for k in range(args.again):
        runs += [(f"contact 10240 #{k + 2}", "", {}, C10240, "contact 10240", False),
                 (f"contact 10240 graphs #{k + 2}", GRAPHS, {}, C10240, "contact 10240 graphs", False)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpu_graphs_"))
    rows = []
    for i, (name, flags, env_extra, extra, base, dense) in enumerate(runs):
        if args.only is not None and name not in args.only and "#" not in name:
            continue
        env = dict(os.environ, XLA_FLAGS=flags, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT), **env_extra)
        jpath, mpath = work / f"{i}.json", work / f"{i}_{{batch}}.npz"
        cmd = [sys.executable, *(["-c", DENSE] if dense else []), str(ROOT / "benchmarks" / "study_throughput.py"),
               "--end-time", args.end_time, *extra, "--json", str(jpath), "--metrics", str(mpath)]
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
            rc, tail = p.returncode, (p.stdout + p.stderr)[-1500:]
        except subprocess.TimeoutExpired:
            rc, tail = "timeout", ""
        wall = time.perf_counter() - t0
        found = json.loads(jpath.read_text()) if jpath.exists() else []
        for r in found:
            r.update(name=name, xla_flags=flags, env=env_extra, process_s=wall)
            if base is not None:
                j = [k for k, x in enumerate(runs) if x[0] == base][0]
                pa, pb = work / f"{j}_{r['batch']}.npz", work / f"{i}_{r['batch']}.npz"
                if pa.exists() and pb.exists():
                    r["against"] = dict(run=base, outcomes=outcome_difference(pa, pb))
            rows.append(r)
        if not found:
            rows.append(dict(name=name, xla_flags=flags, env=env_extra, rc=rc, tail=tail, process_s=wall))
        print(f"{name}: rc {rc}, {wall:.0f} s", flush=True)
        if rc != 0:
            print(tail, flush=True)
        (out / "results.json").write_text(json.dumps(rows, indent=1))

    print("\n| run | B | first call [s] | run [s] | wall [s] | scenarios/s | vehicle-steps/s | outcomes against |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "batch" not in r:
            print(f"| {r['name']} | - | failed: rc {r['rc']} | | | | | |")
            continue
        a = r.get("against")
        print(f"| {r['name']} | {r['batch']} | {r['first_call_s']:.1f} | {r['run_s']:.2f} | {r['wall_s']:.2f} | "
              f"{r['scenarios_per_s']:.0f} | {r['vehicle_steps_per_s']:.3g} | "
              f"{a['run'] + ': ' + a['outcomes'] if a else ''} |")


if __name__ == "__main__":
    main()
