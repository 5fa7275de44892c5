"""Where a cold `jaxmedusa sweep` spends its wall time: imports, tracing, each XLA compile, the chunks.

    python benchmarks/cold_timeline.py --n 256
    PYTHONPATH=/path/to/other/tree python benchmarks/cold_timeline.py --n 256   # another commit's code

Runs `jaxmedusa sweep` of the offset study (default studies/offset.toml, n scenarios, the
default chunks: one per core) in a fresh process with empty compilation caches, and records
in that process, against its start: when the package and the sweep's runner are imported,
each XLA compile of at least --min-compile seconds (JAX's `backend_compile_and_load`, named
by its program and thread) and when each chunk's `run_chunk` starts and returns (chunks run on
threads of their own, study/workers.py). Prints the events in order and a summary: imports,
what comes before the chunk loop's compile (building the first chunk, tracing and lowering
`advance`), the compile, the chunks after it, the rest. Issue 32's cold target is a ratio of
such sweeps; this says which part of one the steps are.
Only jaxmedusa's public runner names are wrapped (study.runner.run_chunk and write_chunk), so
PYTHONPATH can point at an earlier tree (its `cli` folder reachable as jaxmedusa_cli).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(argv: list[str], min_compile: float) -> None:
    """In the sweep's own process: wrap, run the CLI, print the events as one JSON line."""
    t_start = time.perf_counter()
    events = []

    def mark(what, t0):
        events.append(dict(start=round(t0 - t_start, 3), end=round(time.perf_counter() - t_start, 3),
                           thread=threading.current_thread().name, what=what))

    from jax._src import compiler

    original = compiler.backend_compile_and_load

    def timed(*a, **k):
        t0 = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            if time.perf_counter() - t0 >= min_compile:
                try:
                    name = str(a[1].operation.attributes["sym_name"]).strip('"')
                except Exception:  # noqa: BLE001  (a module without a name: still timed)
                    name = "?"
                mark(f"compile {name}", t0)

    compiler.backend_compile_and_load = timed
    t0 = time.perf_counter()
    from jaxmedusa.study import runner
    mark("import jaxmedusa.study.runner", t0)
    for fname in ("write_chunk", "run_chunk"):
        def wrap(f=getattr(runner, fname), fname=fname):
            def g(*a, **k):
                t0 = time.perf_counter()
                try:
                    return f(*a, **k)
                finally:
                    mark(fname, t0)
            return g
        setattr(runner, fname, wrap())
    t0 = time.perf_counter()
    from jaxmedusa_cli.app import app
    mark("import jaxmedusa_cli.app", t0)
    try:
        app(argv, standalone_mode=False)
    finally:
        mark("end", time.perf_counter())
        print(json.dumps(events))


def summary(events: list[dict]) -> dict:
    """The sweep's parts [s] from its events (times from the process's first Python line)."""
    compiles = [e for e in events if e["what"].startswith("compile ")]
    loop = max(compiles, key=lambda e: e["end"] - e["start"])  # the chunk loop's compile
    chunks = [e for e in events if e["what"] == "run_chunk"]
    end = next(e["end"] for e in events if e["what"] == "end")
    imports = max(e["end"] for e in events if e["what"].startswith("import"))
    return {"imports": imports, "first chunk until its loop's compile (build, trace, lower)": loop["start"] - imports,
            f"{loop['what']}": loop["end"] - loop["start"],
            "chunks after the compile (run, summaries, tables)": max(c["end"] for c in chunks) - loop["end"],
            "the rest (sweep tables, exit)": end - max(c["end"] for c in chunks), "total": end}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--min-compile", type=float, default=0.1, help="list compiles of at least this many seconds")
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        return child(args.child, args.min_compile)
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(args.study).read_text()
        text = re.sub(r"(?m)^n = \d+", f"n = {args.n}", text)
        folder = Path(args.study).parent
        text = re.sub(r'(?m)^folder = "([^"]+)"', lambda m: f'folder = "{(folder / m.group(1)).resolve().as_posix()}"',
                      text)
        study = Path(tmp) / f"study{args.n}.toml"
        study.write_text(text)
        env = {**os.environ, "JAXMEDUSA_COMPILE_CACHE": str(Path(tmp) / "cache")}
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--min-compile", str(args.min_compile), "--child", "sweep",
                               str(study), "--no-progress", "--out", str(Path(tmp) / "out")],
                              env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"sweep failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    events = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"`jaxmedusa sweep`, n = {args.n}, cold caches; process wall {wall:.1f} s; load before {load:.2f}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("\n| start [s] | end [s] | thread | event |\n|---|---|---|---|")
    for e in sorted(events, key=lambda e: e["start"]):
        print(f"| {e['start']:.2f} | {e['end']:.2f} | {e['thread']} | {e['what']} |")
    print("\n| part | seconds |\n|---|---|")
    for k, v in summary(events).items():
        print(f"| {k} | {v:.1f} |")


if __name__ == "__main__":
    main()
