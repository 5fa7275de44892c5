"""The offset example's spread under tiny perturbations: the original program and jaxmedusa.

    python benchmarks/medusa_ensemble.py [--n 24] [--step 1e-9] [--k0 0] [--parts c,medusa_search,superellipsoid]
                                         [--batch 1] [--out results/medusa_ensemble] [--timeout 3000]
                                         [--also OTHER_OUT ...]

The MEDUSA law's outcome in the offset example is chaotic (docs/medusa-search.md, Results):
moving vehicle 2 by 1e-12 m before contact changes the speeds at 3 s by ~1 m/s and the contact
counts by 2x. One run of either program is then one draw of a random process, and the
question "does jaxmedusa reproduce MEDUSA" is a comparison of two distributions. This script
draws both over the same perturbations: vehicle 2's initial lateral position y = 0.4 m is
moved by dy_k = k * step, k = +-1 .. +-n/2 (no k = 0: the unperturbed run is the trace, kept
apart as the reference), and the offset example runs to 3 s

  * "c": in the original program (benchmarks/medusa_c, the instrumented build
    build/medusa_trace, through medusa_c_baseline.c_step_counts), one run per dy with
    platoon.dat's Y written with %.17g (init.c reads it with atof, so the double is exact);
    the initial state the program read is checked to be 0.4 + dy bit for bit;
  * "medusa_search" / "superellipsoid": in jaxmedusa, MEDUSA law, with that contact geometry,
    as one study (`jaxmedusa sweep`, chunks of --batch scenarios, --resume so that an
    interrupted run keeps its chunks) whose design is vehicles.2.y offset by the same dy
    values (0.4 + dy in float64: the same double as the C's).

Per run: episodes (runs of consecutive accepted steps in contact: the C's COUNTS line,
jaxmedusa's contact_runs), accepted steps in contact, rejected steps, speeds of vehicles 1
and 2 at 3 s (sqrt(vx^2 + vy^2), as main.c), and energy at the end, eq. (1.33) in full
summed over both vehicles, in both programs the same function: jaxmedusa's energy_end, and
for the C `medusa_c_baseline.state_energy` of its FINAL state (t = 3.00003 s). Until
2026-11-25 the C's figure was energy() of the last energy.asc row (t = 2.99 s, without the
centre of mass's kinetic energy) plus 1/2 m (vx^2 + vy^2) at the end, ~0.6 % lower; it is
kept as `energy_asc`. Also collisions (contact
after more than 10 ms without: jaxmedusa's `episodes`; for the C, from its trace's STEP lines,
medusa_c_baseline.trace_collisions) and the end of the last accepted step in contact [s].

Writes OUT/c.csv, OUT/<geometry>/scenarios.parquet (the study's table), OUT/ensemble.csv (all
runs, one table) and OUT/summary.md (per quantity and program: mean, std, median, 10-90 %
range; the reference's place in each ensemble; the share of runs within the issue's targets
of it; two-sample Kolmogorov-Smirnov and Mann-Whitney p-values against the C ensemble; the
difference of the means with its standard error, and whether it is within the issue's 10 %
and 0.05 m/s). A rerun skips what is already there (delete OUT to start over); `--parts none`
only redoes the comparison. `--k0 K` draws k = +-(K+1) .. into another folder, and
`--also DIR` joins such a folder's runs to the comparison. A C run that stops itself (the
listing's "too many iterations in minimize") is a failed row, left out of the statistics
and counted in N (failed). Figures of 2026-11-23 and 2026-11-25: docs/medusa-search.md,
benchmarks/RESULTS.md.
"""
from __future__ import annotations

import argparse
import functools
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import medusa_c_baseline as cb  # noqa: E402

from jaxmedusa.io.scenario_toml import load_scenario  # noqa: E402

Y2 = 0.4        # [m], vehicle 2's initial lateral position in studies/medusa/offset/platoon.dat
MASS = 1573.0   # [kg], both vehicles' MASS in studies/medusa/offset/model.dat
QUANTITIES = ("episodes", "contact_steps", "rejected_steps", "v1_speed", "v2_speed", "energy_end", "collisions",
              "last_contact")
GEOMETRIES = ("medusa_search", "superellipsoid")  # jaxmedusa's ensembles, in the summary's order
COUNTS = ("episodes", "contact_steps", "rejected_steps")
SPEED_TOL = 0.05   # [m/s], the target for the speeds at 3 s
COUNT_TOL = 0.10   # the target for the counts (relative)


def perturbations(n: int, step: float, k0: int = 0) -> list[float]:
    """dy_k = k * step [m], k = -(k0 + n/2) .. -(k0 + 1), k0 + 1 .. k0 + n/2 (n even)."""
    half = n // 2
    return [k * step for k in range(-(k0 + half), k0 + half + 1) if abs(k) > k0]


def platoon_with_y2(y2: float) -> str:
    """The offset example's platoon.dat with vehicle 2's Y line set to y2 (%.17g)."""
    lines = (cb.OFFSET / "platoon.dat").read_text().splitlines(keepends=True)
    ys = [i for i, ln in enumerate(lines) if ln.split()[:1] == ["Y"]]
    assert len(ys) == 2, "platoon.dat: expected one Y line per vehicle"
    lines[ys[1]] = f"  Y {y2:.17g}\n"
    return "".join(lines)


@functools.cache
def _offset_models() -> tuple:
    """The offset example's ModelSpec of each vehicle (vehicle 1 first)."""
    scenario, _ = load_scenario(cb.OFFSET)
    return tuple(scenario.models[v.model] for v in scenario.vehicles)


def c_row(dy: float, end_time: float) -> dict:
    """One run of the original program with vehicle 2 moved by dy [m]."""
    y2 = Y2 + dy
    t0 = time.perf_counter()
    try:
        c = cb.c_step_counts(end_time, platoon=platoon_with_y2(y2))
    except cb.CBaselineError as err:
        if "exited with" not in str(err):
            raise
        # the program stopped itself (nrerror(), e.g. "too many iterations in minimize" of
        # common.c): a failed run, as jaxmedusa's status column says, not a figure
        why = " ".join(ln.strip() for ln in str(err).splitlines()[1:] if ln.strip() and "..." not in ln)
        return dict(program="C", dy=dy, y2=y2, status=why or "failed", wall=time.perf_counter() - t0)
    read = c["initial_z"][2][1]
    if read != y2:
        raise cb.CBaselineError(f"dy={dy!r}: the program read y2 = {read!r}, expected {y2!r}")
    v1, v2 = c["final_speeds"]
    energy = sum(cb.state_energy(c["final_z"][i + 1], model) for i, model in enumerate(_offset_models()))
    return dict(program="C", dy=dy, y2=y2, episodes=c["episodes"], contact_steps=c["accepted_in_contact"],
                rejected_steps=c["rejected"], accepted_steps=c["accepted"], collisions=c["collisions"],
                last_contact=c["last_contact"], v1_speed=v1, v2_speed=v2, energy_end=energy,
                energy_asc=sum(c["energy_asc"][1:]) + 0.5 * MASS * (v1 ** 2 + v2 ** 2),
                final_t=c["final_t"], status="ok", wall=time.perf_counter() - t0)


C_COLUMNS = ["program", "dy", "y2", "episodes", "contact_steps", "rejected_steps", "accepted_steps", "collisions",
             "last_contact", "v1_speed", "v2_speed", "energy_end", "energy_asc", "final_t", "status", "wall"]


def run_c(dys: list[float], out: Path, end_time: float, reference: bool = False) -> pd.DataFrame:
    """The C ensemble, one row per dy, appended to OUT/c.csv as each run ends (a rerun skips
    the dy values already there). reference: also the unperturbed run (dy = 0)."""
    path = out / "c.csv"
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["dy"])
    if len(done) and list(done.columns) != C_COLUMNS:  # an earlier version's table: run again
        print(f"{path}: columns of an earlier version, the C runs start over", flush=True)
        path.unlink()
        done = pd.DataFrame(columns=["dy"])
    todo = ([0.0] if reference else []) + dys
    for dy in todo:
        if (done["dy"] == dy).any():
            continue
        row = pd.DataFrame([c_row(dy, end_time)], columns=C_COLUMNS)  # a failed run: NaN figures
        row.to_csv(path, mode="a", header=not path.exists(), index=False)
        done = pd.concat([done, row], ignore_index=True)
        r = row.iloc[0]
        if r.status != "ok":
            print(f"C dy={dy:+.3g}: failed: {r.status}", flush=True)
            continue
        print(f"C dy={dy:+.3g}: {r.episodes} episodes, {r.contact_steps} in contact, {r.rejected_steps} rejected, "
              f"{r.v1_speed:.3f} / {r.v2_speed:.3f} m/s ({r.wall:.1f} s)", flush=True)
    return done


def study_toml(geometry: str, dys: list[float], end_time: float) -> str:
    """The study: the offset scenario, MEDUSA law, `geometry`, vehicles.2.y offset by each dy."""
    values = ", ".join(repr(dy) for dy in dys)
    return (f'name = "medusa_ensemble_{geometry}"\n'
            f'description = "offset example, MEDUSA law, {geometry}: vehicle 2 moved by tiny dy"\n\n'
            f'[scenario]\npath = "{(cb.OFFSET / "scenario.toml").as_posix()}"\n\n'
            f'[simulation]\nend_time = {end_time!r}\ndt = 5e-5\nstep_control = "medusa"\n'
            f'contact_law = "medusa"\ncontact_geometry = "{geometry}"\nsave_every = 0.01\n\n'
            f'[sampler]\nkind = "grid"\n\n'
            f'[parameters]\ndy = {{ values = [{values}], mode = "offset", path = "vehicles.2.y" }}\n\n'
            f'[outputs]\nmetrics = ["contact", "final", "energy"]\ntrajectories = false\n')


def run_jax(geometry: str, dys: list[float], out: Path, end_time: float, batch: int, timeout: float,
            run: bool = True) -> pd.DataFrame:
    """The jaxmedusa ensemble for one contact geometry, through `jaxmedusa sweep` (run=False:
    only the table of an earlier run, if any)."""
    folder = out / geometry
    table = folder / "results" / "scenarios.parquet"
    if run and not table.exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "study.toml").write_text(study_toml(geometry, dys, end_time))
        cmd = [str(Path(sys.executable).parent / "jaxmedusa"), "sweep", str(folder / "study.toml"), "--out",
               str(folder / "results"), "--batch", str(batch), "--resume", "--no-progress"]
        t0 = time.perf_counter()
        with open(folder / "sweep.log", "a") as log:
            proc = subprocess.run(["timeout", str(int(timeout)), *cmd], stdout=log, stderr=subprocess.STDOUT)
        print(f"{geometry}: jaxmedusa sweep exited {proc.returncode} after {time.perf_counter() - t0:.0f} s "
              f"(log {folder / 'sweep.log'})", flush=True)
    if not table.exists():
        return pd.DataFrame()
    s = pd.read_parquet(table)
    return pd.DataFrame(dict(
        program=f"jaxmedusa {geometry}", dy=s["dy"], y2=Y2 + s["dy"], episodes=s["contact_runs"],
        contact_steps=s["contact_steps"], rejected_steps=s["rejected_steps"], accepted_steps=s["steps"],
        collisions=s["episodes"], last_contact=s[["v1_last_contact_time", "v2_last_contact_time"]].max(axis=1),
        v1_speed=s["v1_final_speed"], v2_speed=s["v2_final_speed"],
        energy_end=s["v1_energy_end"] + s["v2_energy_end"], final_t=s["end_time"], status=s["status_name"]))


# ----------------------------------------------------------------------------------------
# comparison
# ----------------------------------------------------------------------------------------
def describe(x: np.ndarray) -> dict:
    return dict(n=len(x), mean=float(np.mean(x)), std=float(np.std(x, ddof=1)) if len(x) > 1 else math.nan,
                median=float(np.median(x)), p10=float(np.quantile(x, 0.1)), p90=float(np.quantile(x, 0.9)),
                min=float(np.min(x)), max=float(np.max(x)))


def compare(table: pd.DataFrame, reference: dict) -> pd.DataFrame:
    """Per program and quantity: statistics, the reference's percentile in the ensemble, and
    (against the C ensemble) KS and Mann-Whitney p-values and the difference of the means."""
    from scipy import stats

    # a failed C run (the listing's own abort) has no outcome: compare with the finished ones
    c = table[(table.program == "C") & (table.dy != 0.0) & (table.status == "ok")]
    rows = []
    for prog, g in table[table.dy != 0.0].groupby("program", sort=False):
        failed = int((g.status != "ok").sum())
        g = g[g.status == "ok"]
        for q in QUANTITIES:
            x = g[q].to_numpy(float)
            if len(x) == 0:
                continue
            r = dict(program=prog, quantity=q, failed=failed, **describe(x), reference=reference[q],
                     reference_percentile=float(stats.percentileofscore(x, reference[q])),
                     reference_in_range=bool(x.min() <= reference[q] <= x.max()))
            # share of the runs that meet the target against the reference (the trace)
            tol_ref = COUNT_TOL * abs(reference[q]) if q in COUNTS else SPEED_TOL if q.endswith("speed") else None
            r["share_near_reference"] = None if tol_ref is None else float(np.mean(np.abs(x - reference[q]) <= tol_ref))
            y = c[q].to_numpy(float)
            if prog != "C" and len(y) > 1 and len(x) > 1:
                r["ks_p"] = float(stats.ks_2samp(x, y).pvalue)
                r["mannwhitney_p"] = float(stats.mannwhitneyu(x, y).pvalue)
                r["mean_minus_c_mean"] = float(x.mean() - y.mean())
                # standard error of that difference (independent samples): a target smaller
                # than ~2 of these cannot be decided by ensembles of this size
                r["diff_se"] = float(math.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y)))
                tol = COUNT_TOL * abs(y.mean()) if q in COUNTS else SPEED_TOL if q.endswith("speed") else math.nan
                r["means_within_target"] = bool(abs(x.mean() - y.mean()) <= tol) if tol == tol else None
            rows.append(r)
    return pd.DataFrame(rows)


def summary_markdown(cmp: pd.DataFrame, reference: dict, dys: list[float]) -> str:
    lines = [f"Perturbations: vehicle 2's initial y = 0.4 m + dy, dy in [{min(dys):.3g}, {max(dys):.3g}] m "
             f"({len(dys)} values, smallest |dy| {min(map(abs, dys)):.3g} m, no 0). Reference: the unperturbed "
             "C run. Percentile: of the reference in each ensemble. KS, MW: two-sample Kolmogorov-Smirnov and "
             "Mann-Whitney p-values against the C ensemble; SE: standard error of the difference of the means. "
             "Near ref.: share of the runs within the issue's target of the reference (10 % for counts, "
             "0.05 m/s for speeds).",
             "", "| program | quantity | N (failed) | mean | std | median | 10-90 % | min-max | reference (percentile) "
             "| near ref. | KS p | MW p | mean - C mean (SE) | within target |", "|" + "---|" * 14]
    for r in cmp.itertuples():
        def f(v, d=3):
            return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{d}f}"
        lines.append(f"| {r.program} | {r.quantity} | {r.n} ({r.failed}) | {f(r.mean)} | {f(r.std)} | {f(r.median)} | "
                     f"{f(r.p10)}-{f(r.p90)} | {f(r.min)}-{f(r.max)} | {f(r.reference)} "
                     f"({f(r.reference_percentile, 0)}) | {f(r.share_near_reference, 2)} | {f(getattr(r, 'ks_p', None))} | "
                     f"{f(getattr(r, 'mannwhitney_p', None))} | {f(getattr(r, 'mean_minus_c_mean', None))}"
                     f"{' (' + f(r.diff_se) + ')' if 'diff_se' in cmp and r.diff_se == r.diff_se else ''} | "
                     f"{'' if 'means_within_target' not in cmp or r.means_within_target is None or r.means_within_target != r.means_within_target else r.means_within_target} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=24, help="ensemble size (even)")
    ap.add_argument("--step", type=float, default=1e-9, help="[m], dy_k = k * step")
    ap.add_argument("--parts", default="c,medusa_search,superellipsoid")
    ap.add_argument("--batch", type=int, default=1, help="jaxmedusa scenarios per chunk")
    ap.add_argument("--end-time", type=float, default=3.0)
    ap.add_argument("--timeout", type=float, default=3000.0, help="[s] per jaxmedusa study")
    ap.add_argument("--k0", type=int, default=0, help="skip |k| <= k0 (to extend an ensemble in another folder)")
    ap.add_argument("--also", action="append", default=[],
                    help="another OUT folder (e.g. an extension with --k0) whose ensemble.csv joins the comparison")
    ap.add_argument("--out", default="results/medusa_ensemble")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    dys = perturbations(a.n, a.step, a.k0)
    parts = [p for p in a.parts.split(",") if p]
    try:
        c = run_c(dys, out, a.end_time, reference=True) if "c" in parts else \
            (pd.read_csv(out / "c.csv") if (out / "c.csv").exists() else pd.DataFrame())
    except cb.CBaselineError as err:
        print(f"medusa_ensemble: {err}", file=sys.stderr)
        return 2
    tables = [c] + [run_jax(g, dys, out, a.end_time, a.batch, a.timeout, run=g in parts) for g in GEOMETRIES]
    table = pd.concat([t for t in tables if len(t)], ignore_index=True)
    table.to_csv(out / "ensemble.csv", index=False)
    if a.also:  # the comparison over this folder's runs and the others' (each dy once per program)
        table = pd.concat([table] + [pd.read_csv(Path(d) / "ensemble.csv") for d in a.also], ignore_index=True)
        table = table.drop_duplicates(subset=["program", "dy"], ignore_index=True)
        dys = sorted(set(table.dy) - {0.0})
    ref = c[c.dy == 0.0] if "dy" in c else c
    if len(ref) == 0:
        print("medusa_ensemble: no unperturbed C run in c.csv (run with --parts c)", file=sys.stderr)
        return 2
    reference = {q: float(ref.iloc[0][q]) for q in QUANTITIES}
    cmp = compare(table, reference)
    cmp.to_csv(out / "comparison.csv", index=False)
    (out / "summary.md").write_text(summary_markdown(cmp, reference, dys))
    print((out / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
