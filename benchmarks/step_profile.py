"""Where a batched step's time goes: each phase of the step timed alone, per batch size.

    python benchmarks/step_profile.py --batch 1 16 64 256 1024 --out step_profile.md
    python benchmarks/step_profile.py --batch 1 4 --iterations 20 --reps 1   # a quick check

The state: the first B scenarios of a study (default studies/offset.toml, the crush-law
offset collision, float64) at t = 0, "apart" as built (the cars 2 m apart), or "touching":
vehicle 2 moved back along x until the two contact shapes overlap by 5 cm, so that every
pair passes the broad phase and the law carries force. Each phase below is jitted inside a
`fori_loop` of `--iterations` evaluations (XLA compiles the loop whole, as the time loop:
core/xla_flags.py); each iteration feeds 0 x (the sum of the phase's outputs) back into
the positions (0 a runtime argument), so that nothing is hoisted out of the loop that the
time loop could not hoist either. The time per evaluation is the best of `--reps` (CPU
time of this process: the loop runs on one thread), minus the empty loop's. Phases (solver/step.py, solver/simulate.py):

    rates      vehicle rates of every vehicle: road frame, suspension, tires (physics/vehicle.py)
    tires      the tire model alone: forces and skid flags of every wheel (physics/tire)
    broad      contact geometry of every pair, pairs apart: broad phase (and the compaction)
    narrow     contact geometry, pairs touching: broad + narrow phase (contact/stage.py)
    law        the contact law and its per-vehicle sums, crash records (pairs touching)
    control    corrector, step control and status (solver/step_control.py)
    trackers   the outcome tracker's update (analysis/outcomes.py, every metric group)
    masking    the loop's masking of done scenarios (state and metrics) and the end condition
    step       a whole loop iteration, trackers and masking included (pairs touching)
    step-bare  a whole loop iteration without tracker (pairs touching)

The phases overlap in places (narrow includes broad; step includes everything), so the
rows do not add up exactly to `step`; XLA fuses across phase boundaries in the real loop.
Besides the times, XLA's cost analysis of one evaluation of each phase gives its
floating-point operations and bytes accessed, and the table gives the fraction of one
core's float64 peak that the whole step reaches: flops per step x steps per second /
(--flops-per-cycle x clock) (16 float64 flops per cycle and core for AVX-512 FMA on two
256-bit pipes, AMD Zen 4; the clock from /proc/cpuinfo unless --ghz). Writes a Markdown
table (stdout, and --out).
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
from jaxmedusa.solver.simulate import _end_condition, _step_batch, batch_map, init_metrics  # noqa: E402
from jaxmedusa.solver.step import corrector, predict, rates_of_vehicles, scenario_step, step_status  # noqa: E402
from jaxmedusa.solver.step_control import STEP_CONTROLS, StepProposal  # noqa: E402
from offset_layers import build_chunk  # noqa: E402

PHASES = ("rates", "tires", "broad", "narrow", "law", "control", "trackers", "masking", "step", "step-bare")
OVERLAP = 0.05  # [m] overlap of the contact shapes in the "touching" state


def touching_state(batch, state):
    """Vehicle 2 moved along x until the contact shapes overlap by OVERLAP (module docstring)."""
    r = np.array(state.vehicles.r)
    ax = np.asarray(batch.vehicle.contact_axes)
    r[:, 1, 0] = r[:, 0, 0] + ax[:, 0, 0] + ax[:, 1, 0] - OVERLAP
    return replace(state, vehicles=replace(state.vehicles, r=jnp.asarray(r)))


def phases(batch, state, settings, tracker):
    """{phase: (function of one pytree `dyn`, dyn)}; dyn["state"].vehicles.r is what the loop perturbs."""
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
        "broad": (geometry, dict(batch=batch, state=state)),
        "narrow": (geometry, dict(batch=batch, state=near)),
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
    """One float64 scalar that depends on every output leaf."""
    leaves = [jnp.sum(x.astype(jnp.float64)) for x in jax.tree.leaves(out)]
    return sum(leaves[1:], leaves[0]) if leaves else jnp.float64(0.0)


def _perturbed(d, x):
    s = d["state"]
    return {**d, "state": replace(s, vehicles=replace(s.vehicles, r=s.vehicles.r + x))}


def looped(f, n: int):
    """jit of (dyn, eps) -> dyn after n evaluations of f, each adding eps x fold(f(dyn)) to r."""
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
        empty = best_time(looped(lambda d: d["state"].vehicles.r, args.iterations),
                          (table["rates"][1], jnp.float64(0.0)), args.reps)
        for name in args.phases:
            f, d = table[name]
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
    lines += ["", "XLA cost analysis of one evaluation: GFLOP per step / MB accessed per step; "
              "fraction of the float64 peak reached at the measured time:", "",
              "| phase | " + " | ".join(f"B = {b}" for b in args.batch) + " |",
              "|---|" + "---|" * len(args.batch)]
    for name in args.phases:
        cells = []
        for b in args.batch:
            fl, by = costs[name, b]
            t = times[name, b]
            frac = fl / t / peak if t > 0 else float("nan")
            cells.append(f"{fl / 1e9:.3g} / {by / 1e6:.3g} / {100 * frac:.2f} %")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
