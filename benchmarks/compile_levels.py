"""What LLVM's optimisation level trades: compile time against run time, per program.

    python benchmarks/compile_levels.py --rounds 2                      # all cases, levels 1 and 3
    python benchmarks/compile_levels.py --cases study64 --levels 1,2,3,0

jaxmedusa sets `--xla_backend_optimization_level` (core/xla_flags.py, OPT_LEVEL); XLA's own
default is 3. Each (case, level) runs in a fresh process with the compilation cache off, the
level given in XLA_FLAGS (which wins over jaxmedusa's), all of jaxmedusa's other options as
they are; the levels alternate within each round, so that the machine's drift hits them alike.

Cases:
  study16, study64, study256   the crush-law offset study (studies/offset.toml), 3 s, its first
                               B scenarios as one chunk (benchmarks/chunk_timer.py);
  free256                      the same with contact off (free driving);
  default                      the README's default example (studies/medusa/default.toml, 3 s:
                               MEDUSA's law on the superellipsoid, benchmarks/run_speed.py);
  medusa_search                the report's offset files (studies/medusa/offset, 1.1 s), whose
                               MEDUSA law runs MEDUSA's own contact search.

Per row: the first call (trace, compile and run) and the best of the later calls (run only), in
wall seconds; for the study cases the chunk's metrics against the first level's: the same bits,
or how many differ and their largest relative difference over values above 1e-6
(llvm_unroll.compare).
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
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from llvm_unroll import compare  # noqa: E402  (the metrics' differences, over values above 1e-6)

STUDY = ROOT / "studies" / "offset.toml"
CASES = {
    "study16": ["chunk_timer.py", str(STUDY), "--batch", "16"],
    "study64": ["chunk_timer.py", str(STUDY), "--batch", "64"],
    "study256": ["chunk_timer.py", str(STUDY), "--batch", "256"],
    "free256": ["chunk_timer.py", str(STUDY), "--batch", "256", "--no-contact"],
    "default": ["run_speed.py", "--scenario", str(ROOT / "studies" / "medusa" / "default.toml"), "--end-time", "3"],
    "medusa_search": ["run_speed.py", "--scenario", str(ROOT / "studies" / "medusa" / "offset"), "--end-time", "1.1"],
}


def run_case(case: str, level: int, metrics: Path) -> dict:
    """One fresh process: {"first": s, "run": s} (wall), the metrics written for study cases."""
    cmd = [sys.executable, str(HERE / CASES[case][0]), *CASES[case][1:]]
    if CASES[case][0] == "chunk_timer.py":
        cmd += ["--end-time", "3", "--repeats", "2", "--metrics", str(metrics)]
    else:
        cmd += ["--repeats", "2"]
    env = dict(os.environ, XLA_FLAGS=f"--xla_backend_optimization_level={level}", JAXMEDUSA_COMPILE_CACHE="0",
               JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))
    out = json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.splitlines()[-1])
    if "first_call_s" in out:  # chunk_timer.py
        return dict(first=out["first_call_s"], run=min(out["wall_s"]))
    return dict(first=out["first"]["wall"], run=out["best_rerun"]["wall"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="study16,study64,study256,free256,default,medusa_search")
    ap.add_argument("--levels", default="1,3", help="optimisation levels, the first the reference for the bits")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    cases, levels = args.cases.split(","), [int(x) for x in args.levels.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="compile-levels-"))
    rows: dict[tuple[str, int], list[dict]] = {}
    for r in range(args.rounds):
        for case in cases:
            for level in levels:
                res = run_case(case, level, tmp / f"{case}_{level}.npz")
                rows.setdefault((case, level), []).append(res)
                print(json.dumps(dict(round=r, case=case, level=level, **res)), flush=True)
    print("\n| case | level | first call [s] | run [s] | metrics against level "
          f"{levels[0]} |\n|---|---|---|---|---|")
    for case in cases:
        for level in levels:
            rs = rows[(case, level)]
            diff = "-"
            if CASES[case][0] == "chunk_timer.py" and level != levels[0]:
                base, other = (dict(np.load(tmp / f"{case}_{x}.npz")) for x in (levels[0], level))
                diff = compare(base, other)
            first = " / ".join(f"{x['first']:.1f}" for x in rs)
            run = " / ".join(f"{x['run']:.2f}" for x in rs)
            print(f"| {case} | {level} | {first} | {run} | {diff} |")


if __name__ == "__main__":
    main()
