"""The original MEDUSA C program on the report's offset example, timed beside jaxmedusa.

    python benchmarks/medusa_c_baseline.py [--runs 3] [--end-time 3] [--with-jaxmedusa]
                                           [--geometries superellipsoid,medusa_search]
                                           [--jax-cpus 0|all] [--c-cores 1,2]
                                           [--compare-with DIR] [--json out.json]

Builds benchmarks/medusa_c (the report's 1999 listing, repaired: see its README.md) with make
or gcc if needed, then runs it on the offset example (studies/medusa/offset: model.dat,
platoon.dat; road: benchmarks/medusa_c/offset_road.dat, a straight level road, because the
printed road.dat makes the program stop at once) for --end-time simulated seconds:
  * on one core (`taskset -c 0` where available), --runs times one after the other;
  * as two independent copies at once on cores 0 and 1 (the "C program on both cores"
    figure), --runs rounds.
It reports wall and CPU seconds per run, simulated seconds per wall second, scenarios/s and
vehicle-steps/s. The step counts come from one run of the instrumented build
(build/medusa_trace, the same program plus counters), whose outputs are checked to be byte-
identical to the timed program's. With --with-jaxmedusa the same process then times
`jaxmedusa.run.run_scenario` on the same example twice (first call: compile included; second
call: compiled), for each --geometries entry (the default superellipsoid solver, and
contact_geometry = "medusa_search", MEDUSA's own contact search), pinned to CPU 0 unless
--jax-cpus all, so the per-core ratio is measured side by side. The persistent compilation
cache is left off (a library call does not turn it on), so the first call compiles.
With --compare-with DIR (a folder holding another version's `jaxmedusa` package, e.g.
`git archive main | tar -x -C DIR`), each geometry is also timed with that version, in a
child process (PYTHONPATH=DIR) pinned to the same CPU, right after this version: a before /
after comparison in one run. --c-cores 1 skips the two-copy C figure.

Every figure carries the 1-minute load average before and after it: the machine may be
shared; compare figures taken at similar loads only.

Importable: `time_c_offset(cores=2)` returns the C figure as a dict, for another benchmark to
put beside its own in the same run. Exits 2 with a message when gcc is missing.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
C_DIR = ROOT / "benchmarks" / "medusa_c"
BUILD = C_DIR / "build"
OFFSET = ROOT / "studies" / "medusa" / "offset"
ROAD = C_DIR / "offset_road.dat"
N_VEHICLES = 2  # the offset example's platoon
SOURCES = ("main.c", "init.c", "vehicle.c", "road.c", "contact.c", "common.c", "common.h")
# The Makefile's flags (see its comment for why); used when make is missing.
CFLAGS = ["-O2", "-ffp-contract=off", "-std=gnu89", "-w"]
CFILES = [s for s in SOURCES if s.endswith(".c")]


class CBaselineError(RuntimeError):
    """The C program cannot be built or run (exit code 2 in main())."""


# ----------------------------------------------------------------------------------------
# building and running the C program
# ----------------------------------------------------------------------------------------
def build(trace: bool = False, build_dir: Path | None = None) -> Path:
    """Path of build/medusa (or build/medusa_trace), built if missing or older than a source.
    build_dir: another folder for the executable (tests build into their own, so that
    parallel workers never write the same file); built with gcc directly there."""
    folder = BUILD if build_dir is None else Path(build_dir)
    exe = folder / ("medusa_trace" if trace else "medusa")
    newest = max((C_DIR / s).stat().st_mtime for s in SOURCES)
    if exe.exists() and exe.stat().st_mtime >= newest:
        return exe
    if shutil.which("gcc") is None:
        raise CBaselineError("gcc not found on PATH: the original MEDUSA program (benchmarks/medusa_c) "
                             "cannot be built; install gcc (e.g. apt-get install gcc make)")
    if shutil.which("make") and build_dir is None:
        cmd = ["make", "-C", str(C_DIR), "trace" if trace else "all"]
    else:
        folder.mkdir(parents=True, exist_ok=True)
        cmd = ["gcc", *CFLAGS, *(["-DMEDUSA_TRACE"] if trace else []), "-o", str(exe),
               *[str(C_DIR / c) for c in CFILES], "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not exe.exists():
        raise CBaselineError(f"building {exe} failed ({' '.join(cmd)}):\n{proc.stdout}{proc.stderr}")
    return exe


def prepare_run_dir(folder: Path) -> Path:
    """Fill `folder` with the offset example's input files as MEDUSA reads them (cwd)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(OFFSET / "model.dat", folder / "model.dat")
    shutil.copy(OFFSET / "platoon.dat", folder / "platoon.dat")
    shutil.copy(ROAD, folder / "road.dat")
    return folder


def _cpu_pin(cpu: int | None) -> list[str]:
    """`taskset -c cpu` when taskset exists and the CPU is ours, else nothing."""
    if cpu is None or shutil.which("taskset") is None:
        return []
    if hasattr(os, "sched_getaffinity") and cpu not in os.sched_getaffinity(0):
        return []
    return ["taskset", "-c", str(cpu)]


def _start(exe: Path, folder: Path, end_time: float, cpu: int | None):
    cmd = [*_cpu_pin(cpu), str(exe), f"-t{end_time:g}"]
    return subprocess.Popen(cmd, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE), cmd


def _finish(proc, t0: float) -> dict:
    """Wait for `proc` (started at perf_counter t0): its wall and CPU seconds (wait4)."""
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise CBaselineError(f"the C program exited with {proc.returncode}: {err.strip()}")
    return dict(wall=wall, cpu=ru.ru_utime + ru.ru_stime)


def trace_collisions(trace: str, gap: float | None = None) -> tuple[int, float]:
    """(collisions, last contact [s]) from the instrumented build's STEP lines, as
    jaxmedusa's analysis/step_counts.py counts them: an accepted step in contact begins a
    collision when it ends more than `gap` [s] (default: its EPISODE_GAP) after the end of
    the last accepted step in contact (a step that continues a run ends one dt after it, so
    only a run's first step can); last contact: the end (t + dt) of the last accepted step in
    contact (-1: none). The trace logs every attempt in contact, so none is missed."""
    if gap is None:
        from jaxmedusa.analysis.step_counts import EPISODE_GAP as gap
    collisions, last = 0, -math.inf
    for ln in trace.splitlines():
        words = ln.split()
        if words[:1] != ["STEP"] or words[-1] != "accept":
            continue
        w = dict(kv.split("=") for kv in words[1:4])  # t=..., dt=..., contact=...
        if w["contact"] != "1":
            continue
        end = float(w["t"]) + float(w["dt"])
        if end - last > gap:
            collisions += 1
        last = end
    return collisions, (last if collisions else -1.0)


def state_energy(z, model) -> float:
    """Eq. (1.33)-(1.34) in full [J] (jaxmedusa's `vehicle.energy_total`, the figure of its
    `energy_end`) of one vehicle in the C program's state vector z (28 values, as
    medusa_states.txt prints it: r, d1, d2, d3, then v, w1, w2, w3, then the lagged slip
    angles), for a jaxmedusa `ModelSpec` (the directors are the columns of F)."""
    import numpy as np

    from jaxmedusa.physics.vehicle import energy_total, vehicle_params

    z = np.asarray(z, dtype=np.float64)
    F = z[3:12].reshape(3, 3).T  # F = d_i (x) E_i: column i is director d_i
    W = z[15:24].reshape(3, 3).T
    return float(energy_total(vehicle_params(model), z[0:3], F, z[12:15], W))


def c_step_counts(end_time: float = 3.0, platoon: str | None = None) -> dict:
    """Accepted, rejected, accepted-in-contact steps and contact episodes of the C program on
    the offset example, from one run of the instrumented build; also the final speeds [m/s],
    the initial and final states (`initial_z`, `final_z`: vehicle -> state vector), the
    last row of energy.asc (`energy_asc`: t [s], then vehicle.c's energy() per vehicle [J],
    which leaves out the centre of mass's kinetic energy) and the velocity.asc file (to check
    the timed build against). platoon: the text of a platoon.dat to run instead of the
    example's (benchmarks/medusa_ensemble.py moves vehicle 2 by tiny amounts)."""
    exe = build(trace=True)
    with tempfile.TemporaryDirectory(prefix="medusa_c_count_") as tmp:
        folder = prepare_run_dir(Path(tmp))
        if platoon is not None:
            (folder / "platoon.dat").write_text(platoon)
        proc, _ = _start(exe, folder, end_time, None)
        res = _finish(proc, time.perf_counter())
        trace = (folder / "medusa_trace.txt").read_text()
        counts_line = trace.strip().splitlines()[-1]
        counts = {k: int(v) for k, v in (kv.split("=") for kv in counts_line.split()[1:])}
        counts["collisions"], counts["last_contact"] = trace_collisions(trace)
        states = (folder / "medusa_states.txt").read_text().splitlines()
        final = [ln.split() for ln in states if ln.startswith("FINAL")]
        counts["initial_z"] = {int(w[2][8:]): [float(x) for x in w[3][2:].split(",")]
                               for w in (ln.split() for ln in states if ln.startswith("SAVE t=0 "))}
        counts["energy_asc"] = [float(x) for x in (folder / "energy.asc").read_text().split("\n")[-2].split()]
        speeds, final_z = [], {}
        for ln in final:
            z = [float(x) for x in ln[3][2:].split(",")]
            speeds.append((z[12] ** 2 + z[13] ** 2) ** 0.5)
            final_z[int(ln[2][8:])] = z
        counts.update(final_t=float(final[0][1][2:]), final_speeds=speeds, final_z=final_z,
                      trace_build_wall=res["wall"], velocity_asc=(folder / "velocity.asc").read_text())
    return counts


def _loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def time_c_offset(cores: int = 1, runs: int = 3, end_time: float = 3.0, counts: dict | None = None,
                  platoon: str | None = None) -> dict:
    """Time the C program on the offset example: `cores` independent copies at once, one per
    CPU (0, 1, ...), `runs` rounds. Returns a dict: per-run wall/CPU seconds, median wall,
    simulated s per wall s per copy, scenarios/s and vehicle-steps/s of all copies together,
    step counts (from `counts`, or one instrumented run), load averages. platoon: the text of
    a platoon.dat to run instead of the example's (benchmarks/per_core.py: the cars apart)."""
    exe = build()
    if counts is None:
        counts = c_step_counts(end_time, platoon)
    out = dict(program="MEDUSA 1999 (benchmarks/medusa_c, gcc " + " ".join(CFLAGS) + ")", cores=cores,
               end_time=end_time, runs=[], load_before=_loadavg())
    same_outputs = True
    with tempfile.TemporaryDirectory(prefix="medusa_c_time_") as tmp:
        dirs = [prepare_run_dir(Path(tmp) / f"copy{i}") for i in range(cores)]
        for d in dirs if platoon is not None else ():
            (d / "platoon.dat").write_text(platoon)
        for _ in range(runs):
            load = _loadavg()
            t0 = time.perf_counter()
            started = [_start(exe, d, end_time, i) for i, d in enumerate(dirs)]
            results = [_finish(p, t0) for p, _ in started]
            out["runs"].append(dict(walls=[r["wall"] for r in results], cpus=[r["cpu"] for r in results],
                                    wall=max(r["wall"] for r in results), load=load))
            out["command"] = " & ".join(" ".join(cmd[:-2] + ["medusa", cmd[-1]]) for _, cmd in started)
            same_outputs &= all((d / "velocity.asc").read_text() == counts["velocity_asc"] for d in dirs)
    walls = [r["wall"] for r in out["runs"]]
    wall = statistics.median(walls)
    steps = counts["accepted"]
    out.update(load_after=_loadavg(), wall_median=wall, wall_min=min(walls),
               cpu_median=statistics.median(c for r in out["runs"] for c in r["cpus"]),
               sim_s_per_wall_s=end_time / wall, scenarios_per_s=cores / wall,
               accepted_steps=steps, rejected_steps=counts["rejected"],
               accepted_in_contact=counts["accepted_in_contact"], episodes=counts["episodes"],
               vehicle_steps_per_s=cores * steps * N_VEHICLES / wall,
               steps_checked=same_outputs,  # timed outputs byte-identical to the counted run's
               final_speeds=counts["final_speeds"])
    return out


# ----------------------------------------------------------------------------------------
# jaxmedusa on the same example
# ----------------------------------------------------------------------------------------
def _scenario_path(geometry: str, tmp: Path) -> Path:
    """A copy of the offset scenario's TOML naming the contact geometry (the folder alone runs
    the MEDUSA law's default shape, medusa_search)."""
    toml = tmp / f"offset_{geometry}" / "scenario.toml"
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(f'[medusa]\nfolder = "{OFFSET.as_posix()}"\nplatoon = "platoon.dat"\n\n'
                    f'[road]\nflat = true\n\n[simulation]\ncontact_geometry = "{geometry}"\n')
    return toml


def time_jaxmedusa_offset(geometry: str = "superellipsoid", end_time: float = 3.0, calls: int = 2) -> dict:
    """`jaxmedusa.run.run_scenario` on the offset example, `calls` times in this process:
    wall and CPU seconds of each call (the first compiles), accepted steps, final speeds."""
    import numpy as np

    from jaxmedusa.run import run_scenario

    out = dict(program=f"jaxmedusa run_scenario, contact_geometry={geometry}", end_time=end_time, calls=[])
    with tempfile.TemporaryDirectory(prefix="medusa_c_jm_") as tmp:
        path = _scenario_path(geometry, Path(tmp))
        for _ in range(calls):
            load = _loadavg()
            w0, c0 = time.perf_counter(), time.process_time()
            res = run_scenario(path, end_time=end_time, out_root=None)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            final = res.result.final
            v = np.asarray(final.vehicles.v[0]) if hasattr(final.vehicles, "v") else None
            out["calls"].append(dict(wall=wall, cpu=cpu, load=load, steps=int(final.clock.steps[0]),
                                     status=int(final.clock.status[0]), law=res.settings.contact_law,
                                     geometry=res.settings.contact_geometry,
                                     final_speeds=None if v is None else [float(np.hypot(*v[i, :2]))
                                                                          for i in range(v.shape[0])]))
    second = out["calls"][-1]
    out.update(first_wall=out["calls"][0]["wall"], compiled_wall=second["wall"],
               sim_s_per_wall_s_compiled=end_time / second["wall"],
               sim_s_per_wall_s_first=end_time / out["calls"][0]["wall"],
               vehicle_steps_per_s_compiled=second["steps"] * N_VEHICLES / second["wall"])
    return out


def time_jaxmedusa_offset_version(folder: str, geometry: str, end_time: float = 3.0, calls: int = 2) -> dict:
    """`time_jaxmedusa_offset` in a child process that imports jaxmedusa from `folder`
    (another version of the package), with this process's CPU affinity."""
    code = ("import json, medusa_c_baseline as m; "
            f"print('RESULT ' + json.dumps(m.time_jaxmedusa_offset({geometry!r}, {end_time!r}, {calls!r})))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(folder).resolve()), str(ROOT / "benchmarks")]))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise CBaselineError(f"timing jaxmedusa from {folder} failed:\n{proc.stderr[-2000:]}")
    out = json.loads(lines[-1][len("RESULT "):])
    out["program"] += f" (version in {folder})"
    return out


# ----------------------------------------------------------------------------------------
def machine_info() -> dict:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0] \
        if shutil.which("gcc") else None
    return dict(date=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), cpu=cpu,
                n_cpus=os.cpu_count(), gcc=gcc, python=platform.python_version())


def _fmt_c(r: dict) -> str:
    walls = ", ".join(f"{w:.2f}" for w in (x["wall"] for x in r["runs"]))
    return (f"C, {r['cores']} core(s): wall per run [s] {walls} (median {r['wall_median']:.2f}, CPU "
            f"{r['cpu_median']:.2f} per copy); {r['sim_s_per_wall_s']:.3f} sim s/wall s per copy; "
            f"{r['scenarios_per_s']:.4f} scenarios/s; {r['vehicle_steps_per_s']:.3g} vehicle-steps/s "
            f"({r['accepted_steps']} accepted + {r['rejected_steps']} rejected steps per scenario, "
            f"checked={r['steps_checked']}); load {r['load_before']:.2f} -> {r['load_after']:.2f}")


def _fmt_jm(r: dict) -> str:
    calls = "; ".join(f"call {i + 1}: {c['wall']:.1f} s wall, {c['cpu']:.1f} s CPU, {c['steps']} steps, "
                      f"load {c['load']:.2f}" for i, c in enumerate(r["calls"]))
    return (f"{r['program']}: {calls}; compiled {r['sim_s_per_wall_s_compiled']:.3f} sim s/wall s, "
            f"{r['vehicle_steps_per_s_compiled']:.3g} vehicle-steps/s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--with-jaxmedusa", action="store_true")
    ap.add_argument("--geometries", default="superellipsoid,medusa_search")
    ap.add_argument("--jax-cpus", default="0", help="CPU to pin jaxmedusa to (default 0), or 'all'")
    ap.add_argument("--c-cores", default="1,2", help="C figures to take: copies at once (1: one core, 2: both)")
    ap.add_argument("--compare-with", default=None,
                    help="folder with another version's jaxmedusa package, timed the same way in a child process")
    ap.add_argument("--json", default=None, help="append the results as one JSON line to this file")
    a = ap.parse_args(argv)
    try:
        info = machine_info()
        print(json.dumps(info), flush=True)
        counts = c_step_counts(a.end_time)
        res = dict(machine=info, c={})
        for cores in [int(c) for c in a.c_cores.split(",") if c]:
            r = time_c_offset(cores=cores, runs=a.runs, end_time=a.end_time, counts=counts)
            res["c"][cores] = r
            print(_fmt_c(r), flush=True)
    except CBaselineError as err:
        print(f"medusa_c_baseline: {err}", file=sys.stderr)
        return 2
    if a.with_jaxmedusa and 1 not in res["c"]:
        print("medusa_c_baseline: --with-jaxmedusa compares with the one-core C figure: --c-cores must include 1",
              file=sys.stderr)
        return 2
    if a.with_jaxmedusa:
        if a.jax_cpus != "all" and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {int(a.jax_cpus)})  # before jax starts its thread pools
        res["jaxmedusa"] = {}
        c1 = res["c"][1]["wall_median"]
        c1_cpu = res["c"][1]["cpu_median"]
        versions = [("this", None)] + ([("other", a.compare_with)] if a.compare_with else [])
        for geometry in [g for g in a.geometries.split(",") if g]:
            for tag, folder in versions:
                try:
                    r = (time_jaxmedusa_offset(geometry, a.end_time) if folder is None
                         else time_jaxmedusa_offset_version(folder, geometry, a.end_time))
                except CBaselineError as err:
                    print(f"medusa_c_baseline: {err}", file=sys.stderr)
                    return 2
                r["cpus"] = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
                r["ratio_to_c_one_core_compiled"] = r["compiled_wall"] / c1
                r["ratio_to_c_one_core_first"] = r["first_wall"] / c1
                r["cpu_ratio_to_c_one_core_compiled"] = r["calls"][-1]["cpu"] / c1_cpu
                res["jaxmedusa"][geometry if tag == "this" else f"{geometry} ({folder})"] = r
                print(_fmt_jm(r) + f"; jaxmedusa/C one core: {r['ratio_to_c_one_core_compiled']:.2f}x compiled "
                      f"(CPU {r['cpu_ratio_to_c_one_core_compiled']:.2f}x), {r['ratio_to_c_one_core_first']:.2f}x "
                      "first call", flush=True)
    for r in res["c"].values():
        r.pop("velocity_asc", None)
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
