"""`jaxmedusa run` as a user sees it: whole processes, cold and warm caches.

    python benchmarks/cli_start.py [SCENARIO] [--end-time 3] [--warm 2] [--json out.json]

Runs `jaxmedusa run SCENARIO -t END --out TMP` as a fresh process: once with an empty cache
folder (JAXMEDUSA_COMPILE_CACHE=TMP/cache: compilations and executables, cold), then
`--warm` more times with the same folder (what a user's second run costs). Each line gives
wall and CPU seconds of the whole process (imports, building, tracing or loading, compiling
or loading, the run, the tables), the real-time factor (simulated seconds per wall second)
and the load average before it (the machine may be shared: compare runs at similar load).
Default scenario: the report's offset example (studies/medusa/default.toml), 3 s.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def jaxmedusa_command(*args: str) -> list[str]:
    """The installed `jaxmedusa` command (or this interpreter's `-m jaxmedusa_cli.app`) with args."""
    exe = shutil.which("jaxmedusa")
    return ([exe] if exe else [sys.executable, "-m", "jaxmedusa_cli.app"]) + list(args)


def timed_process(cmd: list[str], cache: Path, extra_env: dict | None = None, cwd: Path | None = None) -> dict:
    """Run cmd as a fresh process (in cwd) with JAXMEDUSA_COMPILE_CACHE=cache (and extra_env): wall
    and CPU seconds of the whole process (children's rusage) and the load averages before and after."""
    env = dict(os.environ, JAXMEDUSA_COMPILE_CACHE=str(cache), **(extra_env or {}))
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=cwd)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return dict(wall=wall, cpu=cpu, load_before=round(load, 2), load_after=round(os.getloadavg()[0], 2))


def one_process(scenario: str, end_time: float, folder: Path) -> dict:
    r = timed_process(jaxmedusa_command("run", scenario, "-t", str(end_time), "--out", str(folder / "out")),
                      folder / "cache")
    return dict(wall_s=round(r["wall"], 2), cpu_s=round(r["cpu"], 2), real_time_factor=round(end_time / r["wall"], 3),
                load_before=r["load_before"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", nargs="?", default=str(ROOT / "studies" / "medusa" / "default.toml"))
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--warm", type=int, default=2)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(1 + a.warm):
            row = dict(run="cold" if k == 0 else f"warm {k}", **one_process(a.scenario, a.end_time, Path(tmp)))
            rows.append(row)
            print(json.dumps(row), flush=True)
    out = dict(scenario=a.scenario, end_time=a.end_time, date=time.strftime("%Y-%m-%d"), cpus=os.cpu_count(),
               rows=rows)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
