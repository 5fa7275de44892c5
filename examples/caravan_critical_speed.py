"""The caravan's critical speed for sway: a sweep over speed and the caravan's load position,
with the decay rate of the articulation after a steering pulse as the metric
(docs/trailers.md, "Sway"; figure docs/figures/caravan_critical_speed.png).

The car and caravan are those of studies/caravan.toml; the load position moves the caravan's
centre of mass along its length (its axle stays where it is), which changes the nose load
(the classical lever of caravan stability). For each load position: the simulated decay rate
sigma [1/s] of the articulation after a 1 deg, 0.2 s steering pulse at each speed (a batch,
contact off, dt 4e-4 s), the speed where sigma crosses 0, and the linear yaw-plane model's
critical speed (analysis/sway.py) for comparison.

    python examples/caravan_critical_speed.py            # writes the figure and prints the table
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from jaxmedusa.analysis.sway import CarTrailer, critical_speed, decay_rate  # noqa: E402
from jaxmedusa.build import build_batch  # noqa: E402
from jaxmedusa.contact.articulation import articulation  # noqa: E402
from jaxmedusa.core.params import GRAVITY, Settings  # noqa: E402
from jaxmedusa.core.scenario import DriverTable  # noqa: E402
from jaxmedusa.io.scenario_toml import load_scenario  # noqa: E402
from jaxmedusa.physics.tire import tire_forces  # noqa: E402
from jaxmedusa.physics.vehicle import vehicle_params  # noqa: E402
from jaxmedusa.solver.simulate import simulate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPEEDS = np.arange(20.0, 46.0, 3.0)  # [m/s]
SHIFTS = (0.0, 0.08, 0.16)  # load moved back [m]: the caravan's CM nearer its axle (lighter nose)


def variant(shift):
    """The caravan scenario with the caravan's centre of mass `shift` m further back."""
    sc, sim = load_scenario(ROOT / "studies" / "caravan.toml")
    car, van = sc.models
    van = dataclasses.replace(van, l2=van.l2 - shift)
    trailer = dataclasses.replace(sc.vehicles[1], kingpin=(sc.vehicles[1].kingpin[0] + shift, 0.0, 0.0))
    return dataclasses.replace(sc, models=[car, van], vehicles=[sc.vehicles[0], trailer]), sim


def linear(sc) -> CarTrailer:
    car, van = sc.models
    e, k, b2 = -sc.vehicles[1].hitch[0], sc.vehicles[1].kingpin[0], van.l2
    P = van.mass * GRAVITY * b2 / (b2 + k)
    front = (car.mass * GRAVITY * car.l2 - P * (e - car.l2)) / (car.l1 + car.l2)
    loads = (front, car.mass * GRAVITY + P - front, van.mass * GRAVITY - P)
    tires = vehicle_params(car).tire

    def stiffness(load):
        return 2.0 * float(jax.grad(lambda a: tire_forces(tires, jnp.full(4, 0.5 * load), jnp.full(4, a),
                                                        jnp.zeros(4))[1][0])(0.0))

    c1, c2, c3 = (stiffness(x) for x in loads)
    return CarTrailer(m1=car.mass, I1=car.iz, a1=car.l1, b1=car.l2, e=e, m2=van.mass, I2=van.iz, k=k, b2=b2,
                      c1=c1, c2=c2, c3=c3)


def main():
    rows, scenarios = [], []
    for shift in SHIFTS:
        sc, sim = variant(shift)
        for u in SPEEDS:
            s = dataclasses.replace(sc, vehicles=[dataclasses.replace(
                sc.vehicles[0], speed=float(u), tire_speed=DriverTable((0.0,), (float(u),)),
                steering=DriverTable((0.0, 0.5, 0.7), (0.0, 1.0, 0.0))), sc.vehicles[1]])
            scenarios.append(s)
            rows.append((shift, u))
    settings = Settings(end_time=12.0, dt=4e-4, save_every=0.02, step_control="constant", contact=False)
    batch, state = build_batch(scenarios, dt=settings.dt)
    res = simulate(batch, state, settings)
    art = np.asarray(jax.vmap(jax.vmap(articulation, in_axes=(None, 0)))(batch.joints, res.samples.F))[:, :, 1]
    t = np.asarray(res.samples.t)[0]
    sigma = np.array([decay_rate(t, a, 2.5) for a in art]).reshape(len(SHIFTS), len(SPEEDS))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    print("shift [m]  nose load [N]  simulated crossing [m/s]  linear critical speed [m/s]")
    for i, shift in enumerate(SHIFTS):
        sc, _ = variant(shift)
        lin = linear(sc)
        v_lin = critical_speed(lin)
        s = sigma[i]
        up = np.flatnonzero((s[:-1] < 0) & (s[1:] >= 0))
        v_sim = float(np.interp(0.0, s[up[0]:up[0] + 2], SPEEDS[up[0]:up[0] + 2])) if len(up) else float("nan")
        nose = sc.models[1].mass * GRAVITY * lin.b2 / (lin.b2 + lin.k)
        print(f"{shift:8.2f}  {nose:13.0f}  {v_sim:24.2f}  {v_lin:27.2f}")
        ax.plot(SPEEDS, s, "o-", label=f"nose load {nose:.0f} N (simulated)")
        ax.axvline(v_lin, color=ax.lines[-1].get_color(), ls=":", lw=1.0)
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_xlabel("speed [m/s]")
    ax.set_ylabel("sway growth rate sigma [1/s]")
    ax.set_title("Caravan sway after a 1 deg steering pulse (dotted: linear critical speed)")
    ax.legend(fontsize="small")
    out = ROOT / "docs" / "figures" / "caravan_critical_speed.png"
    out.parent.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"written {out}")


if __name__ == "__main__":
    main()
