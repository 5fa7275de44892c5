"""The caravan's critical speed for sway: the study studies/caravan_sway.toml (a sweep over
speed and the caravan's load position, with the study metric v2_sway_decay, the decay rate of
the articulation after a steering pulse) and the linear model's critical speed beside it
(docs/trailers.md, "Sway"; figure docs/figures/caravan_critical_speed.png).

The car and caravan are those of studies/caravan.toml; the load position moves the caravan's
centre of mass along its length (its axle and ball stay where they are: models.2.l2 and
vehicles.2.kingpin.x together), which changes the nose load (the classical lever of caravan
stability). For each load position: the decay rate [1/s] of the articulation after the 1 deg,
0.2 s steering pulse at each speed (27 scenarios in one chunk, contact off, dt 4e-4 s), the
speed where it crosses 0, and the linear yaw-plane model's critical speed (analysis/sway.py).

    python examples/caravan_critical_speed.py            # writes the figure and prints the table
    jaxmedusa sweep studies/caravan_sway.toml            # the same study from the command line
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from jaxmedusa.analysis.sway import CarTrailer, critical_speed  # noqa: E402
from jaxmedusa.core.params import GRAVITY  # noqa: E402
from jaxmedusa.physics.tire import tire_forces  # noqa: E402
from jaxmedusa.physics.vehicle import vehicle_params  # noqa: E402
from jaxmedusa.study import load_study, run_study, scenario_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "studies" / "caravan_sway.toml"


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
    study = load_study(STUDY)
    with tempfile.TemporaryDirectory() as out:
        run_study(study, out=out, progress=False)
        rows = pq.read_table(Path(out) / "scenarios.parquet").to_pandas()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    print("load back [m]  nose load [N]  simulated crossing [m/s]  linear critical speed [m/s]")
    for shift, group in rows.groupby("load_back"):
        group = group.sort_values("speed")
        speeds, decay = group["speed"].to_numpy(), group["v2_sway_decay"].to_numpy(float)
        sc, _, _ = scenario_for(study, {"speed": float(speeds[0]), "load_back": float(shift)}, check=False)
        lin = linear(sc)
        v_lin = critical_speed(lin)
        down = np.flatnonzero((decay[:-1] > 0) & (decay[1:] <= 0))  # decaying -> growing
        v_sim = float(np.interp(0.0, decay[down[0]:down[0] + 2][::-1], speeds[down[0]:down[0] + 2][::-1])) \
            if len(down) else float("nan")
        nose = sc.models[1].mass * GRAVITY * lin.b2 / (lin.b2 + lin.k)
        print(f"{shift:13.2f}  {nose:13.0f}  {v_sim:24.2f}  {v_lin:27.2f}")
        ax.plot(speeds, decay, "o-", label=f"nose load {nose:.0f} N (simulated)")
        ax.axvline(v_lin, color=ax.lines[-1].get_color(), ls=":", lw=1.0)
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_xlabel("speed [m/s]")
    ax.set_ylabel("sway decay rate v2_sway_decay [1/s]")
    ax.set_title("Caravan sway after a 1 deg steering pulse (dotted: linear critical speed)")
    ax.legend(fontsize="small")
    out = ROOT / "docs" / "figures" / "caravan_critical_speed.png"
    out.parent.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"written {out}")


if __name__ == "__main__":
    main()
