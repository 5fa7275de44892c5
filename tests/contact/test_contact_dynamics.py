"""Vehicles in contact: conservation laws, MEDUSA's step control, and the report's scenarios.

The short two-car collisions and the report's offset collision (10 s) run on CI; the wave
and merge scenarios and the gradient check are marked slow (`python -m pytest -m slow`).
"""
import functools
from dataclasses import replace

import jax
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.analysis.events import ContactEventTracker, episodes_table
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace as tree_replace
from jaxmedusa.core.scenario import Scenario
from jaxmedusa.io.medusa_files import read_models
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.solver.trackers import CombinedTracker
from jaxmedusa.core.status import Status

from helpers import EXAMPLES, single


def rear_end(model, other=None, gap=0.05, offset=0.4):
    """Vehicle 1 (22 m/s) closes on vehicle 2 (20 m/s), `gap` m between the bumpers."""
    other = other or model
    a = single(model, speed=22.0).vehicles[0]
    b = replace(a, model=1, x=0.5 * (model.contact_dims[0] + other.contact_dims[0]) + gap, y=offset, speed=20.0)
    return Scenario("rear-end", [model, other], [a, b])


def run(scenario, **kw):
    # the analytic superellipsoid shape: compiles in seconds (medusa_search, the MEDUSA law's default, ~40 s)
    settings = Settings(**{"contact_geometry": "superellipsoid", **kw})
    batch, state = build_batch([scenario], dt=settings.dt)
    return simulate(batch, state, settings, tracker=ContactEventTracker()), settings


@functools.lru_cache(maxsize=None)
def rear_end_run():
    """The MEDUSA-law rear-end of the report's model 1 (0.3 s, no tires), run once for two
    tests with both their trackers: (SimResult whose metrics are (ContactEventTracker's,
    DtHistory's), settings). Trackers only read the state, so each test sees the run it
    would get alone, and one loop compiles instead of two (~10 s each on a 2-core CPU)."""
    from step_trace import DtHistory

    model = read_models(EXAMPLES / "offset" / "model.dat")[0]
    settings = Settings(end_time=0.3, save_every=0.01, tires=False, contact_geometry="superellipsoid")
    batch, state = build_batch([rear_end(model)], dt=settings.dt)
    tracker = CombinedTracker((ContactEventTracker(), DtHistory(size=8192)))
    return simulate(batch, state, settings, tracker=tracker), settings


def saved(res, field):
    return np.asarray(getattr(res.samples, field)[0])[np.asarray(res.samples.saved[0])]


def test_medusa_law_exchanges_momentum_between_equal_masses():
    # No tire forces: the horizontal momentum can change only through contact. MEDUSA's
    # velocity term is an acceleration (not divided by m), so it conserves momentum for
    # equal masses only.
    res, _ = rear_end_run()
    assert int(res.final.clock.status[0]) == Status.OK
    v = saved(res, "v")
    momentum = v[:, 0, :2] + v[:, 1, :2]  # per unit mass
    assert np.max(np.abs(momentum - momentum[0])) < 1e-9
    assert v[-1, 0, 0] < 21.0 and v[-1, 1, 0] > 21.0  # the striking car slows, the struck one speeds up
    events = episodes_table(res.metrics[0], 2)
    # MEDUSA's bounding spheres (radius = largest semi-axis, 2 m) pass only when the centres
    # are 4 m apart: sqrt(dx^2 + 0.4^2) < 4, i.e. after (4.05 - sqrt(16 - 0.16)) / 2 m/s.
    assert events["start"].iloc[0] == pytest.approx((4.05 - np.sqrt(16 - 0.16)) / 2.0, abs=2e-3)
    assert events["min_phi1"].min() < 0


def test_step_size_shrinks_in_contact_and_recovers():
    """main.c's step control over a whole MEDUSA-law rear-end (0.3 s, every attempted step
    recorded): a predicted contact with dt >= DT_MIN rejects the step and divides dt by
    1.4641; the smallest dt is 5e-5 / 1.4641^7 = 3.467e-6 s, the first value below DT_MIN =
    5e-6 s (the original program's value, tests/test_step_control.py); it is held for 100
    steps after the last rejection, then grows by 1.1 per step without contact back to 5e-5."""
    from step_trace import SMALLEST, check_main_c_rules, history

    both, settings = rear_end_run()
    res = both._replace(metrics=both.metrics[1])  # DtHistory's metrics
    assert int(res.final.clock.status[0]) == Status.OK
    assert int(res.metrics.n[0]) <= 8192  # the whole run was recorded
    dt, acc, touch = history(res, 0)
    rejected = check_main_c_rules(dt, acc, touch, settings)  # every transition, to rounding
    assert rejected >= 7
    assert dt.min() == pytest.approx(SMALLEST, rel=1e-9)  # never below 5e-5 / 1.4641^7
    assert settings.dt_min / settings.shrink <= dt.min() < settings.dt_min
    # after each rejection at least 101 accepted steps pass before dt grows (hold = 100)
    last_reject, grown = -1, []
    for k in range(len(dt) - 1):
        if not acc[k]:
            last_reject = k
        elif dt[k + 1] > dt[k]:
            grown.append(int(np.sum(acc[last_reject + 1:k + 1])))
    assert grown and min(grown) >= 101
    # time is the sum of the accepted steps (to the rounding of ~6000 additions, 1e-12 rel)
    assert float(res.final.clock.t[0]) == pytest.approx(float(np.sum(dt[acc])), rel=1e-12)
    assert int(res.final.clock.steps[0]) == int(np.sum(acc))
    # grown back by 1.1s (1.4641 = 1.1^4: exactly the nominal dt again, to rounding)
    assert float(res.final.clock.dt[0]) == pytest.approx(settings.dt, rel=1e-9)


def test_physical_law_conserves_momentum_for_unequal_masses_and_dissipates(models):
    heavy = replace(models[0], mass=2200.0)
    res, _ = run(rear_end(models[0], heavy), end_time=0.3, save_every=0.01, tires=False, contact_law="physical")
    v = saved(res, "v")
    momentum = models[0].mass * v[:, 0, :2] + heavy.mass * v[:, 1, :2]
    assert np.max(np.abs(momentum - momentum[0])) < 1e-6
    assert v[-1, 1, 0] - v[-1, 0, 0] > 0  # they separate
    e = saved(res, "energy").sum(axis=1)
    assert e[-1] <= e[0] and np.max(e) <= e[0] * (1 + 1e-9)


@pytest.mark.slow
def test_gradient_of_final_lateral_position_matches_finite_differences(models):
    # Physical law: the outcome is smooth in the offset. (With MEDUSA's law the accumulated
    # multipliers depend on the discrete number of steps in contact, so final y jumps with
    # the offset and finite differences do not converge; docs/medusa-notes.md, Contact.)
    settings = Settings(end_time=0.2, save_every=0.1, contact_law="physical")
    batch, state = build_batch([rear_end(models[0])], dt=settings.dt)

    def final_y(dy):
        r = state.vehicles.r.at[0, 1, 1].add(dy)
        s = tree_replace(state, vehicles=tree_replace(state.vehicles, r=r))
        return simulate(batch, s, settings, record=False).final.vehicles.r[0, 1, 1]

    grad = float(jax.jacfwd(final_y)(0.0))
    h = 1e-4
    fd = (float(final_y(h)) - float(final_y(-h))) / (2 * h)
    assert np.isfinite(grad) and grad == pytest.approx(fd, rel=1e-5)


def _flat(name):
    scenario, config = load_scenario(EXAMPLES / name)
    return scenario, config


def test_offset_collision_of_section_3_2():
    scenario, _ = _flat("offset")
    res, _ = run(scenario, end_time=10.0, save_every=0.05)
    events = episodes_table(res.metrics, 2)
    # gap 2 m (6 m between centres minus 4 m length), closing speed 2 m/s: 1.0 s by hand; the
    # pitched bodies' superellipsoids (the shape the original program searches too) touch
    # 10 ms later. The original program's first accepted step in contact ends at 1.010027 s
    # (tests/data/offset_contact_trace.txt); both take the same 5e-5 s steps before contact,
    # so within one step.
    assert events["start"].iloc[0] == pytest.approx(1.010027, abs=5e-5)
    v, F, r = saved(res, "v"), saved(res, "F"), saved(res, "r")
    t = saved(res, "t")
    # momentum along E1 through the collision: equal masses and internal contact forces keep
    # v1x + v2x at 42 m/s (the original program's runs at 1.1 s: 42.00001 +- 0.00002 m/s, the
    # tires' share, tests/data/offset_c_ensemble_1p1s.csv); 0.01 m/s leaves the stiffer
    # shape 500x the program's tire effect, while a contact force that is not equal and
    # opposite (a wrong sign or lever) moves the sum by the ~3 m/s exchanged.
    k = int(np.argmin(np.abs(t - 1.1)))
    assert v[k, 0, 0] + v[k, 1, 0] == pytest.approx(42.0, abs=0.01)
    assert v[-1, 0, 0] < 22.0 and v[-1, 1, 0] > 20.0
    heading = np.degrees(np.arctan2(F[:, :, 1, 0], F[:, :, 0, 0]))
    assert np.max(np.abs(heading)) < 5.0
    assert r[-1, 0, 1] > r[0, 0, 1] and r[-1, 1, 1] > r[0, 1, 1]  # both drift to +y (left)


@pytest.mark.slow
def test_wave_collisions_ripple_backwards():
    scenario, _ = _flat("wave")
    res, _ = run(scenario, end_time=8.0, save_every=0.05)
    events = episodes_table(res.metrics, 4)
    first = events.groupby(["vehicle_a", "vehicle_b"])["start"].min()
    assert first[(3, 4)] < first[(2, 3)] < first[(1, 2)]


@pytest.mark.slow
def test_merge_rogue_touches_vehicle_2_then_3():
    scenario, _ = _flat("merge")
    res, _ = run(scenario, end_time=3.0, save_every=0.05)
    events = episodes_table(res.metrics, 5)
    rogue = events[events["vehicle_b"] == 5]
    first = rogue.groupby("vehicle_a")["start"].min()
    assert first.idxmin() == 2 and first[2] < first[3]
