"""The offset study's throughput at an earlier commit and at this tree, alternating processes.

    python benchmarks/ab_commits.py --base 261cf7c --batch 256 --end-time 3.0 --rounds 3
    python benchmarks/ab_commits.py --base 261cf7c --batch 4 --end-time 0.2 --rounds 1   # a quick check

Exports the tree of `--base` (git archive) into a temporary folder and runs
benchmarks/chunk_timer.py against that tree's jaxmedusa and against this tree's, each in a
fresh process (a process's XLA options and compiled programs are its own), `--rounds`
times: base, this, base, this, ... so that a change in the machine's load hits both alike.
Each process compiles on the study's first B samples and times `--repeats` further runs of
the same chunk (`run_batch`: the jitted loop, compile excluded), wall and CPU time. Prints
each process's figures and a table with the best run of each tree and their ratios, and
whether the first round's metrics of the two trees are the same bits (or their largest
relative difference); --json writes the raw rows. --no-contact times free driving.
--base-tree DIR takes the earlier tree from a folder instead (`git archive REV | tar -x -C DIR`
made beforehand: a machine with the working tree but no git history, as the GPU machine's
copy, benchmarks/gpu/check.sh).
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

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def export(rev: str, into: Path) -> Path:
    """The tree of `rev` extracted into `into` (git archive | tar)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_tree(tree: Path, args, metrics: Path | None = None) -> dict:
    """One process: benchmarks/chunk_timer.py (this tree's) against `tree`'s jaxmedusa; the chunk's
    metrics written to `metrics` (.npz) when given."""
    study = args.study or str(tree / "studies" / "offset.toml")
    cmd = [sys.executable, str(ROOT / "benchmarks" / "chunk_timer.py"), study, "--batch", str(args.batch),
           "--end-time", str(args.end_time), "--repeats", str(args.repeats)]
    if args.no_contact:
        cmd.append("--no-contact")
    if metrics:
        cmd += ["--metrics", str(metrics)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(cmd, env=env, cwd=str(tree), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare_metrics(a: Path, b: Path) -> str:
    """'the same bits', or the largest relative difference of the metrics both trees report."""
    return metrics_difference(dict(np.load(a)), dict(np.load(b)))


def metrics_difference(ma: dict, mb: dict) -> str:
    """'the same bits', or the largest relative difference of the metrics {name: array} both hold."""
    worst, name = 0.0, None
    for k in sorted(set(ma) & set(mb)):
        x, y = np.asarray(ma[k], float), np.asarray(mb[k], float)
        if x.shape != y.shape:
            return f"{k}: shapes {x.shape} and {y.shape}"
        if np.array_equal(x, y, equal_nan=True):
            continue
        d = float(np.nanmax(np.abs(x - y) / np.maximum(np.maximum(np.abs(x), np.abs(y)), 1e-300)))
        if d > worst:
            worst, name = d, k
    common = set(ma) & set(mb)
    if not common:
        return "no metric in common"
    return f"the same bits ({len(common)} metrics)" if name is None else f"max relative difference {worst:.1e} ({name})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="261cf7c", help="the earlier commit")
    ap.add_argument("--base-tree", default=None, help="the earlier tree, already extracted (instead of --base)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per process (after the compiling one)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--study", default=None, help="a study file (default: each tree's studies/offset.toml)")
    ap.add_argument("--no-contact", action="store_true", help="simulation.contact = false (free driving)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = {"base": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp:
        if args.base_tree:
            base = Path(args.base_tree).resolve()
        else:
            (Path(tmp) / "base").mkdir()
            base = export(args.base, Path(tmp) / "base")
        for k in range(args.rounds):
            for name, tree in (("base", base), ("this", ROOT)):
                r = run_tree(tree, args, Path(tmp) / f"{name}.npz" if k == 0 else None)
                r["load"] = os.getloadavg()[0]
                rows[name].append(r)
                print(json.dumps(dict(round=k, tree=name, wall_s=[round(x, 3) for x in r["wall_s"]],
                                      cpu_s=[round(x, 3) for x in r["cpu_s"]], first_call_s=round(r["first_call_s"], 2),
                                      load=round(r["load"], 2))), flush=True)
        same = compare_metrics(Path(tmp) / "base.npz", Path(tmp) / "this.npz")
    best = {n: min(min(r["wall_s"]) for r in rs) for n, rs in rows.items()}
    cpu = {n: min(min(r["cpu_s"]) for r in rs) for n, rs in rows.items()}
    first = {n: min(r["first_call_s"] for r in rs) for n, rs in rows.items()}
    steps = {n: rs[0]["steps"] * rs[0]["n_vehicles"] for n, rs in rows.items()}
    print(f"\nmetrics of the two trees: {same}")
    print(f"\nB = {args.batch}, end_time {args.end_time:g} s, {args.repeats} timed run(s) per process, "
          f"best of {args.rounds} alternating rounds\n")
    print("| code | first call (compile + run) [s] | run [s] | vs base | CPU [s] | vs base | vehicle-steps/s |")
    print("|---|---|---|---|---|---|---|")
    for n, label in (("base", args.base_tree or args.base), ("this", "this tree")):
        print(f"| {label} | {first[n]:.1f} | {best[n]:.2f} | {best[n] / best['base']:.3f} | {cpu[n]:.2f} | "
              f"{cpu[n] / cpu['base']:.3f} | {steps[n] / best[n]:.3g} |")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(base=args.base, rows=rows), indent=1))


if __name__ == "__main__":
    main()
