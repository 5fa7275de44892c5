"""Issue 13's headline ratio, side by side in one run: a 256-scenario offset study under the
crush law (`jaxmedusa sweep`, whole process, compile included) against the original C
program's best case on the same two cores (its offset example, two copies at once).

    python benchmarks/study_vs_c.py [--n 256] [--warm 1] [--batch B] [--json out.json]

1. C: `medusa_c_baseline.time_c_offset(cores=2, runs=1)`: two copies of the 1999 program
   (benchmarks/medusa_c, built on first use) run the report's offset example (3 s) at once,
   one per core; throughput = 2 / wall.
2. jaxmedusa: studies/offset.toml with n = N (its Sobol design, crush law, dt 4e-4 s by the
   crush law's study default, every outcome metric) as `jaxmedusa sweep` in a fresh process
   with an empty cache folder (cold: imports, tracing, compilation and the run), then `--warm`
   more times with that folder (a user's second sweep); throughput = N / wall. Two ways
   (`--ways`), alternating: "one chunk" (`--batch N`, JAXMEDUSA_WORKERS=1: one chunk of N on
   one core, as before study/workers.py) and "side by side" (the default: a chunk per core;
   `--batch B` sets its chunk size, e.g. `--n 4096 --batch 256`: the shipped study's size, over
   which the compile is spread; default the study's own choice, study/runner.auto_batch_size).
3. `--base REV`: the same sweeps, alternating, with the code of an earlier commit too (its tree
   exported with git archive, run as `python -m jaxmedusa_cli.app` on PYTHONPATH=that tree), so
   that a speed-up over that code is measured side by side, compile included.
Prints one JSON line per measurement and the ratios; the load average is recorded beside each
(the machine may be shared: a ratio means something only when both sides ran at similar load).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_start import jaxmedusa_command, timed_process  # noqa: E402
from medusa_c_baseline import time_c_offset  # noqa: E402


def study_copy(n: int, folder: Path) -> Path:
    """studies/offset.toml with n scenarios and its MEDUSA folder as an absolute path."""
    text = (ROOT / "studies" / "offset.toml").read_text()
    text = re.sub(r"(?m)^n = \d+", f"n = {n}", text)
    text = text.replace('folder = "medusa/offset"', f'folder = "{(ROOT / "studies" / "medusa" / "offset").as_posix()}"')
    path = folder / f"offset{n}.toml"
    path.write_text(text)
    return path


WAYS = {  # how jaxmedusa runs the study: (sweep arguments, environment)
    "one chunk": (lambda n: ["--batch", str(n)], {"JAXMEDUSA_WORKERS": "1"}),  # as before study/workers.py
    "side by side": (lambda n: [], {}),  # the default: a chunk per core (study/workers.py)
}


def export_tree(rev: str, into: Path) -> Path:
    """The tree of commit `rev` in `into`, importable as jaxmedusa and jaxmedusa_cli from there."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / "jaxmedusa_cli").symlink_to(into / "cli")  # pyproject's package-dir: jaxmedusa_cli = "cli"
    return into


def sweep(study: Path, n: int, folder: Path, run: str, way: str, tree: Path | None = None, label: str = "",
          batch: int | None = None) -> dict:
    tag = f"{way.replace(' ', '')}-{label}"
    out = folder / f"out-{tag}-{run.replace(' ', '')}"
    args, env = WAYS[way]
    cache = folder / f"cache-{tag}"
    chunk = ["--batch", str(batch)] if batch and way == "side by side" else []
    cmd = ["sweep", str(study), *args(n), *chunk, "--no-progress", "--out", str(out)]
    if tree is None:
        cmd = jaxmedusa_command(*cmd)
    else:  # an earlier commit's code, by path (run in its folder: `python -m` puts the working folder first)
        cmd, env = [sys.executable, "-m", "jaxmedusa_cli.app", *cmd], {**env, "PYTHONPATH": str(tree)}
    r = timed_process(cmd, cache, env, cwd=tree)
    return dict(program=f"jaxmedusa sweep ({way}){' ' + label if label else ''}", run=run, scenarios=n,
                wall_s=round(r["wall"], 1),
                cpu_s=round(r["cpu"], 1), scenarios_per_s=round(n / r["wall"], 3), load_before=r["load_before"],
                load_after=r["load_after"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--warm", type=int, default=1)
    ap.add_argument("--ways", nargs="+", default=list(WAYS), choices=list(WAYS))
    ap.add_argument("--batch", type=int, default=None, help="chunk size of the side-by-side sweeps")
    ap.add_argument("--base", default=None, help="also run the sweeps with this commit's code, alternating")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    c = time_c_offset(cores=2, runs=1)
    c_rate = c["scenarios_per_s"]
    rows = [dict(program="C (2 copies, 2 cores)", wall_s=round(c["wall_median"], 2), cpu_s=round(c["cpu_median"], 2),
                 scenarios_per_s=round(c_rate, 4), load_before=c["load_before"], load_after=c["load_after"])]
    print(json.dumps(rows[0]), flush=True)
    with tempfile.TemporaryDirectory(prefix="study_vs_c_") as tmp:
        study = study_copy(a.n, Path(tmp))
        trees = [(None, "")]
        if a.base:
            (Path(tmp) / "base").mkdir()
            trees = [(export_tree(a.base, Path(tmp) / "base"), a.base), (None, "this tree")]
        for k in range(1 + a.warm):
            for way in a.ways:
                for tree, label in trees:
                    row = sweep(study, a.n, Path(tmp), "cold" if k == 0 else f"warm {k}", way, tree, label, a.batch)
                    row["ratio_to_c"] = round(row["scenarios_per_s"] / c_rate, 2)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(dict(date=time.strftime("%Y-%m-%d %H:%M"), rows=rows), indent=1))


if __name__ == "__main__":
    main()
