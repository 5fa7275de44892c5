"""A failing scenario beside healthy ones, with contact on: the failure is flagged in its
status, and the healthy scenarios of the batch run bit for bit as they do without it.

Two failures: a NaN that enters mid-run (a driver table turns NaN at 0.02 s), and a pair
whose contact search is declared not converged (the residual tolerance patched to -1, so
every pair in contact fails: a genuinely non-converging search is hard to provoke, since
the rejected attempts warm-start it 7 times before a step in contact is accepted); beside
them healthy pairs: a rear-end collision (in contact), pairs side by side and far apart.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace as pytree_replace
from jaxmedusa.core.scenario import DriverTable
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.core.status import Status

from step_trace import far_apart, rear_end

SETTINGS = Settings(end_time=0.06, save_every=0.01, tires=False, contact_geometry="superellipsoid")
NAN_AT = 0.02  # [s]


def side_by_side(model, steer_after=0.0):
    """Two cars side by side 0.3 m apart at the same speed (never touching); vehicle 1's
    steering becomes `steer_after` [deg] at NAN_AT (the fixture puts a NaN there)."""
    sc = rear_end(model)
    a = replace(sc.vehicles[0], steering=DriverTable(times=(0.0, NAN_AT), values=(0.0, steer_after)))
    b = replace(sc.vehicles[1], x=0.0, y=model.contact_dims[1] + 0.3, speed=22.0,
                steering=DriverTable(times=(0.0, NAN_AT), values=(0.0, 0.0)))
    return replace(sc, name="side", vehicles=[a, b])


@pytest.fixture(scope="module")
def runs(models):
    m = models[0]
    healthy = [rear_end(m), side_by_side(m), far_apart(m), side_by_side(m)]
    # same shapes (2 vehicles, driver tables of 2 knots): one compiled program for both
    batch, state = build_batch(healthy, dt=SETTINGS.dt)
    ref = simulate(batch, state, SETTINGS)
    # the builder rejects a NaN driver table (bad input, issue 17), so the NaN is put into
    # the built arrays: scenario 1, vehicle 1's steering from knot 2 (t = NAN_AT) on
    steer = batch.driver.steer_values.at[1, 0, 1].set(math.nan)
    failing = pytree_replace(batch, driver=pytree_replace(batch.driver, steer_values=steer))
    out = simulate(failing, state, SETTINGS)
    return ref, out


def test_failures_are_flagged(runs):
    ref, out = runs
    assert list(np.asarray(ref.final.clock.status)) == [Status.OK] * 4
    status = np.asarray(out.final.clock.status)
    assert status[1] == Status.NAN
    assert list(status[[0, 2, 3]]) == [Status.OK] * 3
    # the NaN scenario stopped at the step that reached NAN_AT, with its last good state
    t1 = float(out.final.clock.t[1])
    assert NAN_AT <= t1 < NAN_AT + 2 * SETTINGS.dt
    assert np.all(np.isfinite(np.asarray(out.final.vehicles.r[1])))


def test_healthy_scenarios_are_untouched(runs):
    ref, out = runs
    for b in (0, 2):  # the rear-end collision (in contact) and the far pair
        for name in ("r", "v", "F", "W"):
            np.testing.assert_array_equal(np.asarray(getattr(out.final.vehicles, name)[b]),
                                          np.asarray(getattr(ref.final.vehicles, name)[b]))
        np.testing.assert_array_equal(np.asarray(out.samples.r[b]), np.asarray(ref.samples.r[b]))
        np.testing.assert_array_equal(np.asarray(out.final.pairs.gamma[b]), np.asarray(ref.final.pairs.gamma[b]))
    # the NaN scenario ran exactly as its healthy twin until the NaN came
    ok = np.asarray(out.samples.saved[1]) & (np.asarray(out.samples.t[1]) < NAN_AT)
    np.testing.assert_array_equal(np.asarray(out.samples.r[1])[ok], np.asarray(ref.samples.r[1])[ok])


def test_non_converged_contact_is_isolated(runs, models, monkeypatch):
    import jaxmedusa.contact.stage as contact_step

    ref, _ = runs
    m = models[0]
    monkeypatch.setattr(contact_step, "CONTACT_RESIDUAL_TOL", -1.0)
    # hold_steps=101 only makes this a new compiled program (the patched tolerance is baked
    # in at trace time); it cannot matter to pairs that never touch, which are compared
    settings = replace(SETTINGS, hold_steps=101)
    out = simulate(*build_batch([rear_end(m), side_by_side(m), far_apart(m), side_by_side(m)], dt=SETTINGS.dt),
                   settings)
    status = np.asarray(out.final.clock.status)
    assert list(status) == [Status.CONTACT_NOT_CONVERGED, Status.OK, Status.OK, Status.OK]
    # it failed on its first accepted step in contact: after the broad phase passes (the
    # spheres of radius 2 m meet when the centres are 4 m apart, at (4.05 - sqrt(16 - 0.16))
    # / 2 m/s = 0.035 s), within the 7 shrinks of that first contact
    assert 0.03 < float(out.final.clock.t[0]) < (4.05 - math.sqrt(16 - 0.16)) / 2 + 1e-3
    for b in (1, 2, 3):
        for name in ("r", "v", "F", "W"):
            np.testing.assert_array_equal(np.asarray(getattr(out.final.vehicles, name)[b]),
                                          np.asarray(getattr(ref.final.vehicles, name)[b]))
