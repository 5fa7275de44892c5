"""Samples on the exact save grid plus end_time (simulate.py), also after contact shrinks the step."""
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.params import Settings
from jaxmedusa.simulate import simulate

from conftest import single
from test_contact_dynamics import rear_end


def _run(scenario, **kw):
    settings = Settings(**kw)
    batch, state = build_batch([scenario], dt=settings.dt)
    res = simulate(batch, state, settings)
    ok = np.asarray(res.samples.saved[0])
    return res, settings, {f: np.asarray(getattr(res.samples, f)[0])[ok] for f in ("t", "r", "v")}


def test_off_grid_end_time_is_the_last_sample(models):
    # Free rolling on the flat plane has no longitudinal force (test_simulate), so x = 22 t
    # exactly at every sample time, interpolated or not; 1e-9 m is round-off over 2500 steps.
    res, settings, s = _run(single(models[0], speed=22.0), end_time=0.1234, save_every=0.01)
    assert settings.n_samples == 14  # 0, 0.01, ..., 0.12 and 0.1234
    np.testing.assert_array_equal(s["t"], np.r_[np.arange(13) * 0.01, 0.1234])
    np.testing.assert_allclose(s["r"][:, 0, 0], 22.0 * s["t"], atol=1e-9)


def test_grid_holds_after_contact_shrinks_the_step(models):
    # The rear-end collision shrinks dt to 5e-5/1.4641^k (off any 0.01 s grid): main.c's rule
    # would save at drifting times; here every time is k * 0.01 up to end_time.
    res, settings, s = _run(rear_end(models[0]), end_time=0.3, save_every=0.01, tires=False)
    assert int(res.final.clock.steps[0]) > 6000  # contact did shrink the step (6000 at 5e-5)
    np.testing.assert_allclose(s["t"], np.arange(31) * 0.01, rtol=0, atol=1e-15)
    # The last sample is the state at end_time, between the last two steps: it differs from
    # the final state (t slightly past end_time) by at most one step of motion.
    t_final = float(res.final.clock.t[0])
    assert 0.3 < t_final <= 0.3 + settings.dt
    # Without contact in the last step, r moves by dt * v over the step (eq. 1.52_4); the
    # speeds change by < 1% within one step, hence the factor 1.01.
    gap = np.linalg.norm(s["r"][-1] - np.asarray(res.final.vehicles.r[0]), axis=-1)
    speed = np.linalg.norm(s["v"][-1], axis=-1)
    assert np.all(gap <= 1.01 * speed * (t_final - 0.3))
    assert np.all(gap >= 0.99 * speed * (t_final - 0.3))  # and it is not the final state itself
    # no tires: momentum per unit mass (equal masses) is conserved, in interpolated samples too
    # (interpolation is linear, momentum is linear in v); 1e-9 as in test_contact_dynamics.
    p = s["v"][:, 0, :2] + s["v"][:, 1, :2]
    assert np.max(np.abs(p - p[0])) < 1e-9


@pytest.mark.parametrize("end,save,n", [(3.0, 0.01, 301), (0.1, 0.01, 11), (2.995, 0.01, 301), (1.0, 0.3, 5)])
def test_sample_count(end, save, n):
    # grid points k*save <= end, plus end itself when off the grid: counted by hand
    assert Settings(end_time=end, save_every=save).n_samples == n
