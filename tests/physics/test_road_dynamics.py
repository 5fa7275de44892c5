"""The road in the running vehicle model: grade, the section 3.6 banked road, end of the road.

Expected values from outside the code: g sin(theta) on a grade, the direction of drift the
report describes (section 3.6), and a scenario run alone.
"""
import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.build import build_batch
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.core.params import GRAVITY, Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.physics.road import initial_tracking
from jaxmedusa.core.scenario import DriverTable, RoadSpec
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.core.status import Status

BANKED_DIR = Path(__file__).resolve().parents[2] / "studies" / "medusa" / "banked"
DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def banked_scenario():
    sc, _ = load_scenario(BANKED_DIR)
    return sc


def _single(sc, x, speed, tire_speed, road_points):
    veh = dataclasses.replace(sc.vehicles[0], x=x, y=0.0, orientation=0.0, speed=speed,
                              tire_speed=DriverTable(values=(tire_speed,)), steering=DriverTable(values=(0.0,)))
    return dataclasses.replace(sc, vehicles=[veh], road=RoadSpec(points=road_points))


def _on_grade(batch, state, thetas):
    """Put each scenario's vehicle on its grade: pitch F, v and r by theta about E2, so
    that it starts parallel to the road; then re-track."""
    vs = state.vehicles
    rs, Fs, vv, seg, ss = [], [], [], [], []
    for b, th in enumerate(thetas):
        c, s = np.cos(th), np.sin(th)
        R = jnp.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])  # E1 -> (cos, 0, sin)
        x0 = vs.r[b, 0, 0]
        r = jnp.array([x0, 0.0, x0 * np.tan(th)]) + R @ jnp.array([0.0, 0.0, vs.r[b, 0, 2]])
        road_b = jax.tree.map(lambda a: a[b], batch.road)
        k, sp = initial_tracking(road_b, r)
        rs.append(r[None])
        Fs.append((R @ vs.F[b, 0])[None])
        vv.append((R @ vs.v[b, 0])[None])
        seg.append(k[None])
        ss.append(sp[None])
    vehicles = replace(vs, r=jnp.stack(rs), F=jnp.stack(Fs), v=jnp.stack(vv),
                       road_seg=jnp.stack(seg), road_s=jnp.stack(ss))
    return replace(state, vehicles=vehicles)


def test_free_rolling_on_a_grade_decelerates_at_g_sin_theta(banked_scenario):
    """Straight roads with a constant grade (+3 deg, -2 deg), free-rolling tires (no
    longitudinal force): the speed along the road changes at -g sin(theta)."""
    thetas = np.radians([3.0, -2.0])
    stations = (0.0, 30.0, 60.0, 90.0, 180.0, 270.0)  # straight cubics (see docs, Road)
    scenarios = [_single(banked_scenario, 5.0, 20.0, 0.0,
                         tuple((x, 0.0, x * np.tan(th), 0.0) for x in stations)) for th in thetas]
    settings = Settings(end_time=2.0, save_every=0.05, contact=False)
    batch, state = build_batch(scenarios, dt=settings.dt)
    state = _on_grade(batch, state, thetas)
    res = simulate(batch, state, settings)
    assert np.all(np.asarray(res.final.clock.status) == Status.OK)
    for b, th in enumerate(thetas):
        ok = np.asarray(res.samples.saved[b])
        t = np.asarray(res.samples.t[b])[ok]
        v = np.asarray(res.samples.v[b, :, 0])[ok]
        along = v @ np.array([np.cos(th), 0.0, np.sin(th)])
        fit = t >= 0.5  # after the suspension transient of the start
        slope = np.polyfit(t[fit], along[fit], 1)[0]
        assert slope == pytest.approx(-GRAVITY * np.sin(th), rel=0.03), (np.degrees(th), slope)


def test_banked_road_section_3_6(banked_scenario):
    """Section 3.6: 12 m/s, driven front wheels, straight. The vehicle drifts right while
    the road tilts right (bank > 0 up to x = 41.5 m), its sideways motion slows while the
    road tilts left, and it ends 0.2-2 m right of the centre line at x = 90 m (measured:
    1.13 m; the report says about 0.5 m), as the original program does on the same files."""
    settings = Settings(end_time=7.6, save_every=0.05, contact=False)
    batch, state = build_batch([banked_scenario], dt=settings.dt)
    res = simulate(batch, state, settings)
    assert int(res.final.clock.status[0]) == Status.OK
    ok = np.asarray(res.samples.saved[0])
    r = np.asarray(res.samples.r[0, :, 0])[ok]
    v = np.asarray(res.samples.v[0, :, 0])[ok]
    x, y, vy = r[:, 0], r[:, 1], v[:, 1]
    right_tilt = (x > 3.0) & (x < 41.5)
    assert np.all(vy[right_tilt] < 0.0)  # moving right (-E2)
    vy_switch = np.interp(41.5, x, vy)
    left_tilt = (x > 41.5) & (x < 90.0)
    assert np.min(np.abs(vy[left_tilt])) < 0.5 * abs(vy_switch)  # sideways motion slowed
    y90 = np.interp(90.0, x, y)
    print(f"section 3.6 banked road: y at x = 90 m: {y90:.6f} m")
    # The original program on the same files (tests/data/banked_c_states.csv: its own SAVE
    # states every 0.05 s, full precision) ends 1.1253 m right at x = 90 m; the report's
    # "about 0.5 m" is not what its program gives. Two codes of the same equations on the
    # same fixed steps agree to rounding (1e-12 m before contact in the offset example);
    # 1e-6 m is the project's documented agreement, and ~1e-7 of the 1.1 m drift.
    c = pd.read_csv(DATA / "banked_c_states.csv", comment="#")
    t = np.asarray(res.samples.t[0])[ok]
    assert len(c) == len(t) and np.allclose(c["t"], t, rtol=0, atol=1e-10)  # the same 0.05 s grid
    np.testing.assert_allclose(x, c["x"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(y, c["y"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(vy, c["vy"], rtol=0, atol=1e-6)
    assert np.interp(90.0, c["x"], c["y"]) == pytest.approx(-1.12531, abs=1e-5)  # the file is that run
    assert y90 == pytest.approx(np.interp(90.0, c["x"], c["y"]), abs=1e-6)


def test_off_the_end_of_the_road_is_flagged_and_others_finish_alone(banked_scenario):
    """Scenario A drives off its road (last user point x = 30 m) at 20 m/s; B stays on a
    longer road. A gets Status.OFF_ROAD and stops just past x = 30 m; B's run is the same
    as running it alone."""
    a = _single(banked_scenario, 5.0, 20.0, 20.0, ((0, 0, 0, 0), (10, 0, 0, 0), (20, 0, 0, 0), (30, 0, 0, 0)))
    b = _single(banked_scenario, 5.0, 15.0, 15.0, ((0, 0, 0, 0), (100, 0, 0, 2), (200, 0, 0, 0), (300, 0, 0, 0)))
    settings = Settings(end_time=1.6, save_every=0.2, contact=False)
    both = simulate(*build_batch([a, b], dt=settings.dt), settings)
    alone = simulate(*build_batch([b], dt=settings.dt), settings)
    status = np.asarray(both.final.clock.status)
    assert status[0] == Status.OFF_ROAD and status[1] == Status.OK
    xa = float(both.final.vehicles.r[0, 0, 0])
    assert 29.9 < xa < 30.1, xa
    assert float(both.final.clock.t[0]) < 1.5  # stopped there
    # Not bitwise: XLA may vectorise a batch of 2 and a batch of 1 differently (other
    # operation order, test_simulate.py), so B's run alone and in the batch may differ by
    # rounding: ~1e-16 relative per operation on values <= 30 (m, m/s), accumulated over
    # 32,000 steps of a straight, non-chaotic drive: <= 32,000 * 30 * 2.2e-16 = 2e-10. 1e-9.
    # A's stop must not reach B at all: that would move B by metres, not by 1e-9.
    for name in ("r", "F", "v", "W", "road_s"):
        np.testing.assert_allclose(getattr(both.final.vehicles, name)[1], getattr(alone.final.vehicles, name)[0],
                                   rtol=0, atol=1e-9, err_msg=name)
    np.testing.assert_allclose(both.samples.r[1], alone.samples.r[0], rtol=0, atol=1e-9)
