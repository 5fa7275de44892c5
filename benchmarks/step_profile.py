"""Where a batched step's time goes: each phase of the step timed alone, per batch size.

    python benchmarks/step_profile.py --batch 1 16 64 256 1024 --out step_profile.md
    python benchmarks/step_profile.py --batch 1 4 --iterations 20 --reps 1   # a quick check

The state: the first B scenarios of a study (default studies/offset.toml, the crush-law
offset collision, float64) at t = 0 with vehicle 2 moved back along x until the two contact
shapes overlap by 5 cm ("touching"), so that every pair passes the broad phase and the law
carries force. Every phase is timed on that one state.

How a phase is timed, so that XLA can neither drop nor hoist its work: the phase runs
`--iterations` times in a `fori_loop` compiled whole (as the time loop: core/xla_flags.py)
whose carry is everything the phase reads except the batch's parameters (which the time
loop may hoist too); each iteration adds eps x (the sum of ALL the phase's outputs) to
EVERY floating leaf of that carry, eps = 0 a runtime argument. So each evaluation consumes
the previous one's result through inputs that XLA must treat as changing (nothing is
loop-invariant, nothing unused), while the values stay those of the one state. The same
loop with the phase replaced by its own outputs, computed once before the loop, plus a
scalar of the carry (the carry, the perturbation and the fold alone) is timed and subtracted. Times: the best of `--reps` loops, CPU
time of this process (the loop runs on one thread), per evaluation. Phases (solver/step.py,
solver/simulate.py):

    rates      vehicle rates of every vehicle: road frame, suspension, tires (physics/vehicle.py)
    tires      the tire model alone (part of rates: not in the sum)
    geometry   contact geometry of every pair: broad phase, compaction, narrow phase (contact/stage.py)
    law        the contact law and its per-vehicle sums, crash records, barriers
    control    corrector, step control and status (solver/step_control.py)
    trackers   the outcome tracker's update (analysis/outcomes.py, every metric group)
    masking    the loop's masking of done scenarios (state and metrics) and the end condition
    step       a whole loop iteration (solver/simulate.py _step_batch), trackers and masking included
    step-bare  a whole loop iteration without tracker
    broad-apart  contact geometry with the cars as built (2 m apart): the broad phase alone
               (another state: not in the sum; its flops count the narrow phase its
               condition skips, so its fraction of the peak is no measure)

"sum" is rates + geometry + law + control + trackers + masking, compared with `step`: the
phases overlap a little (each recomputes the predictor; law and control recompute what they
need of the rates) and XLA fuses across their boundaries in the real step, so the sum is
expected within some 25 % of the step, not equal; the script says when it is not.

Besides the times, XLA's cost analysis of one evaluation of each phase, compiled alone,
gives its floating-point operations and bytes accessed (a conditional's branches and a
loop's body counted once, whatever the data), and the table gives the fraction of one
core's float64 peak each phase reaches: flops per evaluation / time / (--flops-per-cycle x
clock) (16 float64 flops per cycle and core for AVX-512 FMA on two 256-bit pipes, AMD Zen 4;
the clock from /proc/cpuinfo unless --ghz). A fraction above 100 % means work was dropped
or hoisted after all: the script flags it. Writes a Markdown table (stdout, and --out).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from jaxmedusa import study as S  # noqa: E402
from jaxmedusa.contact.crash import with_barriers  # noqa: E402
from jaxmedusa.contact.stage import batch_geometry, contact_stage  # noqa: E402
from jaxmedusa.contact.types import ContactTerms  # noqa: E402
from jaxmedusa.core.pytree import replace  # noqa: E402
from jaxmedusa.physics.tire import tire_forces, tire_sliding  # noqa: E402
from jaxmedusa.solver.simulate import _end_condition, _step_batch, init_metrics  # noqa: E402
from jaxmedusa.solver.trackers import batch_map  # noqa: E402
from jaxmedusa.solver.step import corrector, predict, rates_of_vehicles, scenario_step, step_status  # noqa: E402
from jaxmedusa.solver.step_control import STEP_CONTROLS, StepProposal  # noqa: E402
from offset_layers import build_chunk  # noqa: E402

PHASES = ("rates", "tires", "geometry", "law", "control", "trackers", "masking", "step", "step-bare", "broad-apart")
SUMMED = ("rates", "geometry", "law", "control", "trackers", "masking")  # what a step is made of
OVERLAP = 0.05  # [m] overlap of the contact shapes in the "touching" state


def touching_state(batch, state):
    """Vehicle 2 moved along x until the contact shapes overlap by OVERLAP (module docstring)."""
    r = np.array(state.vehicles.r)
    ax = np.asarray(batch.vehicle.contact_axes)
    r[:, 1, 0] = r[:, 0, 0] + ax[:, 0, 0] + ax[:, 1, 0] - OVERLAP
    return replace(state, vehicles=replace(state.vehicles, r=jnp.asarray(r)))


def phases(batch, state, settings, tracker):
    """{phase: (function of one pytree `dyn`, dyn)}: every floating leaf of dyn but dyn["batch"] is
    what the timing loop perturbs (module docstring)."""
    near = touching_state(batch, state)
    control = STEP_CONTROLS.resolve(settings.step_control, where="Settings.step_control")
    metrics = init_metrics(batch, near, tracker)

    def rates(d):
        s = d["state"]
        r_pred, F_pred = jax.vmap(predict)(s)
        return jax.vmap(rates_of_vehicles, in_axes=(0, 0, 0, 0, None))(d["batch"], s, r_pred, F_pred, settings)[:2]

    _, wheels = jax.jit(rates)(dict(batch=batch, state=near))

    def tires(d):
        def one(p, fz, alpha, slip):
            return tire_forces(p.tire, fz, alpha, slip), tire_sliding(p.tire, fz, alpha, slip)
        fz = d["fz"] + d["state"].vehicles.r[..., :1]  # (the loop's perturbation reaches the tires)
        return jax.vmap(jax.vmap(one))(d["batch"].vehicle, fz, d["state"].vehicles.alpha_lag, d["slip"])

    def geometry(d):
        s = d["state"]
        r_pred, F_pred = jax.vmap(predict)(s)
        return batch_geometry(d["batch"], r_pred, F_pred, s.pairs.warm, settings)

    geom = jax.jit(geometry)(dict(batch=batch, state=near))

    def law(d):
        s = d["state"]
        r_pred, F_pred = jax.vmap(predict)(s)

        def one(b, st, rp, Fp, g):
            touching, pairs, c, info, failed = contact_stage(b, rp, Fp, st.vehicles.v, st.vehicles.W, st.pairs,
                                                             settings, g)
            return with_barriers(b, st, rp, Fp, c, info, settings), touching, pairs, failed
        return jax.vmap(one)(d["batch"], s, r_pred, F_pred, d["geom"])

    def step_control(d):
        s = d["state"]

        def one(b, st, rates_):
            vs, clk = st.vehicles, st.clock
            new = corrector(vs, rates_, _terms(rates_), clk.dt, b.valid, vs.road_seg, vs.road_s)
            accept, dt, hold = control.decide(clk, StepProposal(touching=jnp.asarray(True)), settings)
            return new, dt, hold, step_status(accept, jnp.asarray(False), new, jnp.asarray(False))
        return jax.vmap(one)(d["batch"], s, d["rates"])

    def trackers(d):
        return batch_map(tracker.update)(d["metrics"], d["batch"], d["state"], d["info"])

    def masking(d):
        s, new, m = d["state"], d["new"], d["metrics"]
        active = s.clock.t < settings.end_time

        def pick(n, o):
            return jnp.where(active.reshape(active.shape + (1,) * (n.ndim - 1)), n, o)
        state = _end_condition(d["batch"], s, jax.tree.map(pick, new, s), settings)
        return state, jax.tree.map(pick, d["updated"], m)

    def step(d):
        s = d["state"]
        return _step_batch(d["batch"], (s, d["metrics"]), s.clock.t < settings.end_time, settings, tracker)

    def step_bare(d):
        s = d["state"]
        return _step_batch(d["batch"], (s, None), s.clock.t < settings.end_time, settings, None)[0]

    one_step = jax.jit(lambda b, s: jax.vmap(scenario_step, in_axes=(0, 0, None))(b, s, settings))
    new, info = one_step(batch, near)
    rates_now = jax.jit(rates)(dict(batch=batch, state=near))[0]
    return {
        "rates": (rates, dict(batch=batch, state=near)),
        "tires": (tires, dict(batch=batch, state=near, fz=wheels.fz, slip=jnp.zeros_like(wheels.fz))),
        "geometry": (geometry, dict(batch=batch, state=near)),
        "broad-apart": (geometry, dict(batch=batch, state=state)),
        "law": (law, dict(batch=batch, state=near, geom=geom)),
        "control": (step_control, dict(batch=batch, state=near, rates=rates_now)),
        "trackers": (trackers, dict(batch=batch, state=near, metrics=metrics, info=info)),
        "masking": (masking, dict(batch=batch, state=near, new=new, metrics=metrics, updated=metrics)),
        "step": (step, dict(batch=batch, state=near, metrics=metrics)),
        "step-bare": (step_bare, dict(batch=batch, state=near)),
    }


def _terms(rates_):
    """Contact terms shaped like the vehicle rates' (zeros): what the corrector adds."""
    return ContactTerms(jnp.zeros_like(rates_.dr), jnp.zeros_like(rates_.dF), jnp.zeros_like(rates_.dv),
                        jnp.zeros_like(rates_.dW))


def _fold(out):
    """One finite float64 scalar that depends on every output leaf (0 where the sum is not
    finite, so that eps x fold stays 0 whatever the outputs hold)."""
    leaves = [jnp.sum(x.astype(jnp.float64)) for x in jax.tree.leaves(out)]
    total = sum(leaves[1:], leaves[0]) if leaves else jnp.float64(0.0)
    return jnp.where(jnp.isfinite(total), total, 0.0)


FIXED = ("batch", "_out")  # not perturbed: the parameters, and the baseline's stored outputs


def _add(x):
    return lambda a: a + x.astype(a.dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a


def _perturbed(d, x):
    """dyn with x added to every floating leaf but those of FIXED."""
    return {k: v if k in FIXED else jax.tree.map(_add(x), v) for k, v in d.items()}


def _replay(d):
    """The baseline's phase: the phase's outputs, computed once before the loop (d["_out"]),
    plus a scalar of the carried state, so that the loop carries, perturbs and folds the same
    amount as the phase's loop but computes nothing."""
    x = [a for a in jax.tree.leaves(d["state"]) if jnp.issubdtype(a.dtype, jnp.floating)][0].ravel()[0]
    return jax.tree.map(_add(x), d["_out"])


def looped(f, n: int):
    """jit of (dyn, eps) -> dyn after n evaluations of f, each adding eps x fold(f(dyn)) to
    every carried floating leaf (module docstring)."""
    def run(d, eps):
        return jax.lax.fori_loop(0, n, lambda i, dd: _perturbed(dd, eps * _fold(f(dd))), d)
    return jax.jit(run)


def best_time(fn, args, reps: int) -> float:
    """Best of `reps` calls: this process's CPU seconds (the loop runs on one thread, so on an
    idle machine the wall time; on a busy one the steadier figure)."""
    jax.block_until_ready(fn(*args))  # compile and warm
    best = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        jax.block_until_ready(fn(*args))
        best = min(best, time.process_time() - t0)
    return best


def cost(f, d) -> tuple[float, float]:
    """(flops, bytes accessed) of one evaluation, from XLA's cost analysis of the compiled phase."""
    c = jax.jit(f).lower(d).compile().cost_analysis()
    c = c[0] if isinstance(c, (list, tuple)) else c
    return float(c.get("flops", float("nan"))), float(c.get("bytes accessed", float("nan")))


def clock_ghz() -> float:
    try:
        mhz = [float(line.split(":")[1]) for line in open("/proc/cpuinfo") if line.startswith("cpu MHz")]
        return max(mhz) / 1000.0
    except (OSError, ValueError):
        return float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default=str(ROOT / "studies" / "offset.toml"))
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 16, 64, 256, 1024])
    ap.add_argument("--iterations", type=int, default=200, help="evaluations per timed loop")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--phases", nargs="+", default=list(PHASES), choices=list(PHASES))
    ap.add_argument("--flops-per-cycle", type=float, default=16.0, help="float64 peak per cycle and core")
    ap.add_argument("--ghz", type=float, default=None, help="core clock [GHz] (default: /proc/cpuinfo)")
    ap.add_argument("--out", default=None, help="also write the Markdown table here")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*runs backwards.*")
    study = S.load_study(args.study)
    n_samples = len(S.design(study)[0])
    if max(args.batch) > n_samples:
        study.sampler = dataclasses.replace(study.sampler, n=max(args.batch))
    settings, tracker = study.settings, study.tracker
    ghz = args.ghz or clock_ghz()
    peak = args.flops_per_cycle * ghz * 1e9  # one core: the loop runs on one thread
    times, costs = {}, {}
    for b in args.batch:
        batch, state = build_chunk(study, b)
        table = phases(batch, state, settings, tracker)
        for name in args.phases:
            f, d = table[name]
            base = {**d, "_out": jax.jit(f)(d)}
            empty = best_time(looped(_replay, args.iterations), (base, jnp.float64(0.0)), args.reps)
            t = best_time(looped(f, args.iterations), (d, jnp.float64(0.0)), args.reps)
            times[name, b] = max(t - empty, 0.0) / args.iterations
            costs[name, b] = cost(f, d)
            print(f"B={b} {name}: {times[name, b] * 1e6:.1f} us per step, {costs[name, b][0]:.3g} flops, "
                  f"{costs[name, b][1]:.3g} bytes", flush=True)
    lines = [f"{study.name}: dt {settings.dt:g} s, {settings.contact_law} law, float64, "
             f"{jax.device_count()} x {jax.devices()[0].device_kind} ({jax.default_backend()}), "
             f"load average {os.getloadavg()[0]:.2f}; {args.iterations} evaluations per loop, best of {args.reps}; "
             f"peak {peak / 1e9:.1f} GFLOP/s (one core, {args.flops_per_cycle:g} flops/cycle x {ghz:.2f} GHz)", "",
             "Time per step [us] (per scenario-step in brackets):", "",
             "| phase | " + " | ".join(f"B = {b}" for b in args.batch) + " |",
             "|---|" + "---|" * len(args.batch)]
    for name in args.phases:
        lines.append(f"| {name} | " + " | ".join(f"{times[name, b] * 1e6:.1f} ({times[name, b] * 1e6 / b:.2f})"
                                                  for b in args.batch) + " |")
    notes = []
    if set(SUMMED) <= set(args.phases):
        sums = {b: sum(times[p, b] for p in SUMMED) for b in args.batch}
        lines.append("| sum (" + " + ".join(SUMMED) + ") | "
                     + " | ".join(f"{sums[b] * 1e6:.1f} ({sums[b] * 1e6 / b:.2f})" for b in args.batch) + " |")
        if "step" in args.phases:
            ratio = {b: sums[b] / times["step", b] if times["step", b] > 0 else float("nan") for b in args.batch}
            lines.append("| sum / step | " + " | ".join(f"{ratio[b]:.2f}" for b in args.batch) + " |")
            notes += [f"B = {b}: the phases add up to {ratio[b]:.2f} x the step (expected 0.75-1.25)"
                      for b in args.batch if not 0.75 <= ratio[b] <= 1.25]
    if "step" in args.phases and "step-bare" in args.phases:
        notes += [f"B = {b}: the step without tracker ({times['step-bare', b] * 1e6:.1f} us) is slower than with it "
                  f"({times['step', b] * 1e6:.1f} us)" for b in args.batch if times["step-bare", b] > times["step", b]]
    lines += ["", "XLA cost analysis of one evaluation: GFLOP per step / MB accessed per step; "
              "fraction of the float64 peak reached at the measured time:", "",
              "| phase | " + " | ".join(f"B = {b}" for b in args.batch) + " |",
              "|---|" + "---|" * len(args.batch)]
    for name in args.phases:
        cells = []
        for b in args.batch:
            fl, by = costs[name, b]
            t = times[name, b]
            frac = f"{100 * fl / t / peak:.2f} %" if t > 0 else "- (time below resolution)"
            cells.append(f"{fl / 1e9:.3g} / {by / 1e6:.3g} / {frac}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    # (broad-apart's flops count the narrow phase that its condition skips: not a measure)
    over = [f"{name} at B = {b}" for name in args.phases for b in args.batch
            if name != "broad-apart" and times[name, b] > 0 and costs[name, b][0] / times[name, b] > peak]
    if over:
        notes.append("above 100 % of the peak (work dropped or hoisted, or the clock/peak is wrong): "
                     + ", ".join(over))
    lines += ["", "Checks: " + ("; ".join(notes) if notes else "the phases add up to the step within 25 %, "
                                 "no phase above the peak, the bare step not slower than the full one")]
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
