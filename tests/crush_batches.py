"""Crush-law impacts shared by several test files, each batch run once per test process.

tests/analysis/test_crash3_consistency.py, tests/analysis/test_stiffness_classes.py and
tests/solver/test_tracker_layers.py run short crush-law impacts with the same settings (0.25 s
at a constant 2e-4 s: within 0.1 % of dt = 5e-5 s for these outcomes, docs/numerics.md). A
compiled loop depends on the batch's shapes, the settings and the tracker, so each file's own
batch cost a compilation (10-40 s on a 2-core machine) for a few milliseconds of simulated
impact. Here the cases of all three files run as one batch per setup: the two-car impacts
(with the tracker of tests/solver/test_tracker_layers.py around the study outcomes) and the
one-car barrier impacts. The files share the xdist group CRUSH_GROUP, so that under
`pytest -n` they run on one worker and the batches compile once.
"""
from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.analysis.damage import DamageTracker
from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays
from jaxmedusa.build import build_batch
from jaxmedusa.contact.laws.stiffness_classes import CRUSH_CLASSES, crush_class_fields
from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import BarrierSpec, RoadSpec, VehicleSpec
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.solver.trackers import CombinedTracker

ROOT = Path(__file__).resolve().parents[1]
CRUSH_GROUP = "crush_batches"  # the xdist group of the files that use this module
DT = 2e-4  # [s]
SETTINGS = Settings(contact_law="crush", end_time=0.25, dt=DT, save_every=0.25, step_control="constant")

# ------------------------------------------------------------------------------------------- two cars
CLOSING_KMH = (5.0, 10.0, 20.0, 40.0)  # test_crash3_consistency: central, collinear rear-end impacts
LAYER_KMH = (10.0, 40.0)  # test_tracker_layers: rear-end impacts with vehicle 2 0.3 m to the side
N_REAR, N_SIDE = len(CLOSING_KMH), 1
LAYER_ROWS = slice(N_REAR + N_SIDE, N_REAR + N_SIDE + len(LAYER_KMH))  # the tracker-layer cases' rows
FULL = Outcomes()  # the study outcomes, every group on
BARE = Outcomes(damage=False, rest=False)  # the groups a study without damage or rest metrics turns off
# every step in contact a collision of its own: the three slots hold the first step, the second, the rest
PER_STEP = (DamageTracker(episode_gap=0.0), DamageTracker(episode_gap=0.0, first_only=True))


def _two_cars(v1_speed: float, x2: float, y2: float, heading2: float, v2_speed: float):
    sc, _ = load_scenario(ROOT / "studies" / "medusa" / "offset")
    sc.road = RoadSpec(points=None)
    sc.vehicles[0] = VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=v1_speed)
    sc.vehicles[1] = VehicleSpec(model=0, x=x2, y=y2, orientation=heading2, speed=v2_speed)
    return sc


@functools.lru_cache(maxsize=None)
def two_car_batch():
    """(batch, initial state) of the two-car impacts, rows in this order:
    - CLOSING_KMH: two default cars (the offset example's model), central and collinear, the
      struck one at 10 m/s, started 1 cm apart, free rolling;
    - a 90-degree side impact at 40 km/h, car 1's front into car 2's right side (car 2 at
      rest, heading +E2, its side 1 cm ahead of car 1's front);
    - LAYER_KMH: as the first rows, vehicle 2 0.3 m to the side (LAYER_ROWS)."""
    cases = [_two_cars(10.0 + kmh / 3.6, 4.01, 0.0, 0.0, 10.0) for kmh in CLOSING_KMH]
    cases.append(_two_cars(40.0 / 3.6, 2.81, 0.0, 90.0, 0.0))
    cases += [_two_cars(10.0 + kmh / 3.6, 4.01, 0.3, 0.0, 10.0) for kmh in LAYER_KMH]
    return build_batch(cases, dt=DT)


@functools.lru_cache(maxsize=None)
def two_car_runs():
    """The two-car batch with every layer on: (SimResult with the metrics (FULL, *PER_STEP), the
    FULL outcome arrays), on the host."""
    batch, s0 = two_car_batch()
    res = jax.device_get(simulate(batch, s0, SETTINGS, tracker=CombinedTracker((FULL, *PER_STEP)), record=False))
    return res, jax.device_get(outcome_arrays(batch, res.final, res.metrics[0], FULL))


@functools.lru_cache(maxsize=None)
def two_car_bare_run():
    """The two-car batch with the damage and rest groups off: (SimResult, BARE outcome arrays)."""
    batch, s0 = two_car_batch()
    res = jax.device_get(simulate(batch, s0, SETTINGS, tracker=BARE, record=False))
    return res, jax.device_get(outcome_arrays(batch, res.final, res.metrics, BARE))


def two_car_outcomes() -> dict:
    """The study outcomes of the two-car impacts (numpy arrays [case, vehicle, ...])."""
    return {k: np.asarray(v) for k, v in two_car_runs()[1].items()}


# ------------------------------------------------------------------------------------------ barriers
BARRIER_KMH = (8.0, 32.0, 56.0, 64.0)  # test_crash3_consistency: full-width rigid wall
BARRIER_TOML = ROOT / "studies" / "medusa" / "barrier" / "scenario.toml"
# test_stiffness_classes: (class, face, impact speed [km/h], engaged width [m]): the front into
# the barrier study's wall at 56 km/h (NCAP), the left side sideways into a wall at 32 km/h (the
# FMVSS 214 pole test's speed); the engaged width is the contact shape's width or length (4.0 x 1.6 m)
CLASS_RUNS = [(name, face, kmh, width) for name in CRUSH_CLASSES.names()
              for face, kmh, width in (("front", 56.0, 1.6), ("side", 32.0, 4.0))
              if f"crush_a_{face}" in crush_class_fields(name)]
OFFSET_BLOCK_ROW = len(BARRIER_KMH)  # the offset block's row
CLASS_ROW0 = len(BARRIER_KMH) + 1  # the first class run's row


@functools.lru_cache(maxsize=None)
def barrier_outcomes() -> dict:
    """Study outcomes (numpy [case, vehicle, ...]) of one barrier batch, rows in this order:
    - BARRIER_KMH: the barrier study's car 1 cm from its full-width rigid wall;
    - 56 km/h into a rigid block covering the car's left 40 % (0.64 m of its 1.6 m);
    - CLASS_RUNS: the barrier study's car with each class's coefficients, 1 cm from a rigid
      wall, front first or (side runs) moving sideways to its left, the wall parallel to its side."""
    cases, sideways = [], []
    for kmh in BARRIER_KMH:
        sc, cfg = load_scenario(BARRIER_TOML)
        sc.vehicles[0] = VehicleSpec(model=0, x=0.29, y=0.0, orientation=0.0, speed=kmh / 3.6)
        cases.append(sc)
    sc, cfg = load_scenario(BARRIER_TOML)
    sc.vehicles[0] = VehicleSpec(model=0, x=0.29, y=0.0, orientation=0.0, speed=56.0 / 3.6)
    sc.barriers = [BarrierSpec(kind="box", position=(3.3, 0.8 - 0.64 + 1.0, 0.5), size=(2.0, 2.0, 1.0))]
    cases.append(sc)
    sideways += [0.0] * len(cases)
    for name, face, kmh, _ in CLASS_RUNS:
        sc, cfg = load_scenario(BARRIER_TOML)
        for k, v in crush_class_fields(name).items():
            setattr(sc.models[0], k, v)
        if face == "front":
            sc.vehicles[0] = VehicleSpec(model=0, x=0.29, y=0.0, orientation=0.0, speed=kmh / 3.6)
        else:
            sc.vehicles[0] = VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=0.0)
            sc.barriers = [BarrierSpec(kind="plane", position=(0.0, 0.81, 0.0), normal=(0.0, -1.0, 0.0))]
        cases.append(sc)
        sideways.append(kmh / 3.6 if face == "side" else 0.0)
    st = Settings(**{**cfg, "end_time": SETTINGS.end_time, "dt": DT, "save_every": SETTINGS.save_every,
                     "step_control": "constant"})
    batch, s0 = build_batch(cases, dt=DT)
    vy = jnp.asarray(sideways)[:, None]  # (B, 1): the side runs start moving along +E2
    s0 = replace(s0, vehicles=replace(s0.vehicles, v=s0.vehicles.v.at[..., 1].add(vy)))
    res = simulate(batch, s0, st, tracker=FULL, record=False)
    return {k: np.asarray(v) for k, v in outcome_arrays(batch, res.final, res.metrics, FULL).items()}
