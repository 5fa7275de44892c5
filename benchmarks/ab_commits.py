"""The offset study's throughput at an earlier commit and at this tree, alternating processes.

    python benchmarks/ab_commits.py --base 261cf7c --batch 256 --end-time 3.0 --rounds 3
    python benchmarks/ab_commits.py --base 261cf7c --batch 4 --end-time 0.2 --rounds 1   # a quick check

Exports the tree of `--base` (git archive) into a temporary folder and runs
benchmarks/chunk_timer.py against that tree's jaxmedusa and against this tree's, each in a
fresh process (a process's XLA options and compiled programs are its own), `--rounds`
times: base, this, base, this, ... so that a change in the machine's load hits both alike.
Each process compiles on the study's first B samples and times `--repeats` further runs of
the same chunk (`run_batch`: the jitted loop, compile excluded), wall and CPU time. Prints
each process's figures and a table with the best run of each tree and their ratios;
--json writes the raw rows.
Issue 27's check: the offset study (crush law, two-axle cars, no zones) within 10 % of
261cf7c, the code before the damage, vehicle, rest and trailer layers.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def export(rev: str, into: Path) -> Path:
    """The tree of `rev` extracted into `into` (git archive | tar)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_tree(tree: Path, args) -> dict:
    """One process: benchmarks/chunk_timer.py (this tree's) against `tree`'s jaxmedusa."""
    study = args.study or str(tree / "studies" / "offset.toml")
    cmd = [sys.executable, str(ROOT / "benchmarks" / "chunk_timer.py"), study, "--batch", str(args.batch),
           "--end-time", str(args.end_time), "--repeats", str(args.repeats)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(cmd, env=env, cwd=str(tree), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="261cf7c", help="the earlier commit")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per process (after the compiling one)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--study", default=None, help="a study file (default: each tree's studies/offset.toml)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = {"base": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "base").mkdir()
        base = export(args.base, Path(tmp) / "base")
        for k in range(args.rounds):
            for name, tree in (("base", base), ("this", ROOT)):
                r = run_tree(tree, args)
                r["load"] = os.getloadavg()[0]
                rows[name].append(r)
                print(json.dumps(dict(round=k, tree=name, wall_s=[round(x, 3) for x in r["wall_s"]],
                                      cpu_s=[round(x, 3) for x in r["cpu_s"]], first_call_s=round(r["first_call_s"], 2),
                                      load=round(r["load"], 2))), flush=True)
    best = {n: min(min(r["wall_s"]) for r in rs) for n, rs in rows.items()}
    cpu = {n: min(min(r["cpu_s"]) for r in rs) for n, rs in rows.items()}
    first = {n: min(r["first_call_s"] for r in rs) for n, rs in rows.items()}
    steps = {n: rs[0]["steps"] * rs[0]["n_vehicles"] for n, rs in rows.items()}
    print(f"\nB = {args.batch}, end_time {args.end_time:g} s, {args.repeats} timed run(s) per process, "
          f"best of {args.rounds} alternating rounds\n")
    print("| code | first call (compile + run) [s] | run [s] | vs base | CPU [s] | vs base | vehicle-steps/s |")
    print("|---|---|---|---|---|---|---|")
    for n, label in (("base", args.base), ("this", "this tree")):
        print(f"| {label} | {first[n]:.1f} | {best[n]:.2f} | {best[n] / best['base']:.3f} | {cpu[n]:.2f} | "
              f"{cpu[n] / cpu['base']:.3f} | {steps[n] / best[n]:.3g} |")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(base=args.base, rows=rows), indent=1))


if __name__ == "__main__":
    main()
