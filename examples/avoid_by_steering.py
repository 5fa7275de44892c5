"""Design by gradients: the smallest steering input that lets the striking vehicle of the
offset collision (studies/medusa/offset) avoid the struck one.

Vehicle 1 (22 m/s) closes a 2 m gap on vehicle 2 (20 m/s, 0.4 m to its left) and hits it
after about 1 s. Here vehicle 1 steers a pulse of amplitude A [deg]: a piecewise linear
driver table 0 -> A (0.2 s) -> A (0.6 s) -> 0 (0.8 s). We look for the smallest |A| whose
run keeps the vehicles apart, by gradient descent (optax.adam) on

    L(A) = (A / 1 deg)^2 + w softplus((margin - g(A)) / s),

with g(A) the least plan-view gap of the two vehicles over the run (jaxmedusa.fit.clearance:
separating-axis gap of the CONTACT A1 x A2 rectangles, soft-minimised over the samples).
g is computed on the contact-free trajectories (Settings.contact = False): the question is
whether they would touch at all, and without contact forces g is smooth in A. The
derivative dL/dA is forward mode (jax.jvp through MEDUSA's adaptive while loop). The answer
is then checked with contact on: a run at A makes no contact, one at 0.8 A does.

    python examples/avoid_by_steering.py              # design, then check()
    python examples/avoid_by_steering.py --check -2.99  # only the check of an amplitude [deg]
    python examples/avoid_by_steering.py --steps 3 --end-time 1.2  # a short design (the tests' size)
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.core.scenario import DriverTable
from jaxmedusa.fit.clearance import plan_gap, smooth_min
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.solver.simulate import simulate

OFFSET = Path(__file__).resolve().parent.parent / "studies" / "medusa" / "offset"
PULSE = DriverTable(times=(0.0, 0.2, 0.6, 0.8), values=(0.0, 1.0, 1.0, 0.0), kind="linear")  # A = 1 deg
END_TIME = 2.0  # [s]: past the first touch of the unsteered run (~1 s); afterwards a steered
#                 vehicle 1 heads away from vehicle 2, so the gap only grows
MARGIN = 0.2  # [m] wanted clearance
SOFT = 0.05  # [m] softplus width: the penalty switches on over a few centimetres
WEIGHT = 100.0  # penalty weight against (A / 1 deg)^2
UNUSED_GAP = 1e3  # [m] gap given to unused sample rows: far above any real one
TAU = 0.01  # [m] soft-minimum temperature over the samples (error <= TAU log(samples) = 0.05 m)


def setup(end_time: float = END_TIME, contact: bool = False, law: str = "physical"):
    """(batch, state0, settings, pulse [1, V, K] rad per deg of A, dims (V, 3))."""
    scenario, _ = load_scenario(OFFSET)
    scenario = dataclasses.replace(scenario, vehicles=[dataclasses.replace(scenario.vehicles[0], steering=PULSE),
                                                       *scenario.vehicles[1:]])
    settings = Settings(end_time=end_time, save_every=0.01, contact=contact, contact_law=law)
    batch, state = build_batch([scenario], dt=settings.dt)
    dims = np.array([scenario.models[v.model].contact_dims for v in scenario.vehicles])
    return batch, state, settings, batch.driver.steer_values, dims


def with_amplitude(batch, pulse, amplitude):
    """The batch with vehicle 1's pulse scaled to `amplitude` [deg] (the pulse holds 1 deg)."""
    return replace(batch, driver=replace(batch.driver, steer_values=amplitude * pulse))


def least_gap(batch, state, settings, pulse, dims, amplitude):
    """Soft-minimum plan-view gap [m] of vehicles 1 and 2 over the saved samples."""
    s = simulate(with_amplitude(batch, pulse, amplitude), state, settings).samples
    gaps = jax.vmap(lambda r, F: plan_gap(r[0], F[0], dims[0], r[1], F[1], dims[1]))(s.r[0], s.F[0])
    gaps = jnp.where(s.saved[0], gaps, UNUSED_GAP)  # unused sample rows do not count
    return smooth_min(gaps, TAU)


def loss(gap, amplitude):
    return amplitude**2 + WEIGHT * jax.nn.softplus((MARGIN - gap) / SOFT)


def design(a0: float = -0.5, steps: int = 20, learning_rate: float = 0.15, end_time: float = END_TIME):
    """Gradient descent on L(A) from A = a0 [deg], `steps` steps, runs of end_time [s];
    returns (A, history of (A, gap, L, dL/dA))."""
    batch, state, settings, pulse, dims = setup(end_time)

    @jax.jit
    def value_and_slope(a):  # forward mode: one tangent through the adaptive while loop
        f = lambda x: (lambda g: (loss(g, x), g))(least_gap(batch, state, settings, pulse, dims, x))  # noqa: E731
        (val, gap), (dval, _) = jax.jvp(f, (a,), (jnp.ones_like(a),))
        return val, dval, gap

    opt = optax.adam(learning_rate)
    a = jnp.asarray(a0)
    opt_state = opt.init(a)
    history = []
    for i in range(steps):
        val, slope, gap = value_and_slope(a)
        history.append((float(a), float(gap), float(val), float(slope)))
        print(f"step {i:2d}: A = {float(a):+.4f} deg, least gap {float(gap):+.4f} m, L = {float(val):.4f}, "
              f"dL/dA = {float(slope):+.4g}", flush=True)
        updates, opt_state = opt.update(slope, opt_state)
        a = optax.apply_updates(a, updates)
    return float(a), history


def touches(amplitude: float, law: str = "physical") -> bool:
    """True when the run at `amplitude` with contact on has any pair in contact at the end of
    any save interval or at the final state (the pair state's in_contact flag)."""
    batch, state, settings, pulse, _ = setup(contact=True, law=law)
    b = with_amplitude(batch, pulse, amplitude)
    res = simulate(b, state, settings)
    # contact changes the vehicles' velocities: compare with the contact-free run
    free = simulate(b, state, dataclasses.replace(settings, contact=False))
    return bool(np.max(np.abs(np.asarray(res.final.vehicles.v) - np.asarray(free.final.vehicles.v))) > 1e-9)


def check(a: float):
    """Least gap of the contact-free run and whether the run with contact on touches, at
    0, 0.6 a, 0.8 a and a."""
    batch, state, settings, pulse, dims = setup()
    for amp in (0.0, 0.6 * a, 0.8 * a, a):
        gap = float(least_gap(batch, state, settings, pulse, dims, jnp.asarray(amp)))
        print(f"A = {amp:+.4f} deg: least gap without contact {gap:+.4f} m; with contact on, contact: {touches(amp)}",
              flush=True)


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 2 and sys.argv[1] == "--check":  # python examples/avoid_by_steering.py --check -2.99
        check(float(sys.argv[2]))
        sys.exit(0)
    start = time.perf_counter()
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))  # --steps N, --end-time T [s]
    a, hist = design(steps=int(args.get("--steps", 20)), end_time=float(args.get("--end-time", END_TIME)))
    print(f"designed amplitude A = {a:+.4f} deg (least gap {hist[-1][1]:+.4f} m) "
          f"in {time.perf_counter() - start:.0f} s")
    check(a)
