"""Samples on the exact save grid k * save_every plus end_time (solver/save_grid.py), with
the state interpolated between the accepted steps around each save time."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.solver.save_grid import prev_of
from jaxmedusa.solver.simulate import advance, finish, init_metrics, simulate
from jaxmedusa.solver.step import scenario_step

from helpers import single
from step_trace import rear_end

FIELDS = ("t", "r", "F", "v", "W", "energy")


def _saved(res, b=0):
    ok = np.asarray(res.samples.saved[b])
    return {f: np.asarray(getattr(res.samples, f)[b])[ok] for f in FIELDS}


def _run(scenario, **kw):
    # the analytic superellipsoid shape: compiles in seconds (medusa_search, the MEDUSA law's default, ~40 s)
    settings = Settings(**{"contact_geometry": "superellipsoid", **kw})
    batch, state = build_batch([scenario], dt=settings.dt)
    return simulate(batch, state, settings), settings


@pytest.mark.parametrize("end,save,n", [(3.0, 0.01, 301), (0.1, 0.01, 11), (2.995, 0.01, 301), (1.0, 0.3, 5),
                                        (0.0, 0.01, 1), (0.005, 0.01, 2)])
def test_sample_count(end, save, n):
    # grid times k * save < end, plus end itself: counted by hand (2.995: 0 .. 2.99 and 2.995)
    assert Settings(end_time=end, save_every=save).n_samples == n


def test_off_grid_end_time_is_the_last_sample(models):
    # Free rolling on the flat plane has no longitudinal force (test_simulate), so x = 22 t
    # at any time, and both interpolants (Hermite with v = 22, linear v) are exact for it:
    # 1e-9 m is round-off over 2500 steps of ~22 m.
    res, settings = _run(single(models[0], speed=22.0), end_time=0.1234, save_every=0.01)
    s = _saved(res)
    assert settings.n_samples == 14
    # exactly the products k * 0.01 (the grid is computed, not accumulated), then end_time
    np.testing.assert_array_equal(s["t"], np.r_[np.arange(13) * 0.01, 0.1234])
    np.testing.assert_allclose(s["r"][:, 0, 0], 22.0 * s["t"], rtol=0, atol=1e-9)
    assert float(res.final.clock.t[0]) > 0.1234  # MEDUSA's loop ran past it: the last row is interpolated


def test_saving_never_changes_a_step(models):
    # The save grid only reads the steps: a run with samples and one without take the same
    # steps to the same final state, bit for bit (the same step function on the same states).
    settings = Settings(end_time=0.06, save_every=0.0037, contact_geometry="superellipsoid")
    batch, state = build_batch([rear_end(models[0])], dt=settings.dt)
    a = simulate(batch, state, settings)
    b = simulate(batch, state, settings, record=False)
    assert int(a.final.clock.steps[0]) == int(b.final.clock.steps[0]) > 1200  # 1200 at 5e-5: contact shrank it
    ca, cb = a.final.clock, b.final.clock  # (t_saved, the last save time, is the one difference)
    for x, y in zip(jax.tree.leaves((a.final.vehicles, a.final.pairs, ca.t, ca.dt, ca.hold, ca.status)),
                    jax.tree.leaves((b.final.vehicles, b.final.pairs, cb.t, cb.dt, cb.hold, cb.status))):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_grid_holds_after_contact_shrinks_the_step(models):
    # The rear-end collision shrinks dt to 5e-5/1.4641^k (off any 0.01 s grid): main.c's rule
    # would save at drifting times; here every time is k * 0.01 exactly, up to end_time.
    res, settings = _run(rear_end(models[0]), end_time=0.3, save_every=0.01, tires=False)
    s = _saved(res)
    assert int(res.final.clock.steps[0]) > 6000  # contact did shrink the step (6000 at 5e-5)
    np.testing.assert_array_equal(s["t"], np.arange(31) * 0.01)
    # The last sample is the state at end_time, between the last two steps: it differs from
    # the final state (t past end_time) by the motion over t_final - 0.3. Without contact in
    # the last step r moves by dt v (eq. 1.52_4), and v changes by < 1% in one step.
    t_final = float(res.final.clock.t[0])
    assert 0.3 < t_final <= 0.3 + settings.dt
    gap = np.linalg.norm(s["r"][-1] - np.asarray(res.final.vehicles.r[0]), axis=-1)
    speed = np.linalg.norm(s["v"][-1], axis=-1)
    assert np.all(gap <= 1.01 * speed * (t_final - 0.3))
    assert np.all(gap >= 0.99 * speed * (t_final - 0.3))  # and it is not the final state itself
    # No tires: the momentum of the equal masses changes only by contact, which exchanges
    # it (test_contact_dynamics). v is interpolated linearly, which keeps a linear invariant:
    # 1e-9 m/s as in test_contact_dynamics (round-off over the run).
    p = s["v"][:, 0, :2] + s["v"][:, 1, :2]
    assert np.max(np.abs(p - p[0])) < 1e-9


def _against_stepped(model, h, n_first, sigma):
    """Interpolated samples of a constant-dt run (dt = h) at T_k = k * save_every, against
    the states a plain loop of steps reaches at exactly T_k: the steps of h up to
    t_n <= T_k, then one step of T_k - t_n. save_every = (n_first + sigma) h puts T_1 at
    fraction sigma of a step. Returns [(sigma_k, {field: (interpolated, stepped, rate change
    over the bracketing step)})] for k = 1, 2."""
    save = (n_first + sigma) * h
    settings = Settings(end_time=2.5 * save, dt=h, save_every=save, step_control="constant")
    batch, state = build_batch([single(model, speed=20.0, steering_deg=4.0)], dt=h)
    res = simulate(batch, state, settings)
    s = _saved(res)
    step = jax.jit(jax.vmap(scenario_step, in_axes=(0, 0, None)), static_argnums=2)
    out, n = [], 0
    for k in (1, 2):
        T = s["t"][k]
        n_k = int(np.floor(T / h + 1e-6))
        while n < n_k:
            state, _ = step(batch, state, settings)
            n += 1
        t_n = float(state.clock.t[0])
        after, _ = step(batch, state, settings)  # the full step that brackets T
        short = replace(state, clock=replace(state.clock, dt=jnp.full_like(state.clock.dt, T - t_n)))
        ref, _ = step(batch, short, settings)
        vs0, vs1, vr = state.vehicles, after.vehicles, ref.vehicles
        rows = {f: (s[f][k], np.asarray(getattr(vr, f)[0])) for f in ("r", "F", "v", "W")}
        rows["dv"] = np.asarray(vs1.v[0] - vs0.v[0])
        rows["dW"] = np.asarray(vs1.W[0] - vs0.W[0])
        out.append(((T - t_n) / h, rows))
    return out


@pytest.fixture(scope="module")
def stepped(models):
    # two step sizes with the save times at the same fractions of a step: T_1 = (n + 1/3) h
    # and T_2 = (2n + 2/3) h at both (save times near 0.03 s and 0.06 s)
    return {h: _against_stepped(models[0], h, n, 1.0 / 3.0) for h, n in ((1e-4, 300), (5e-5, 600))}


def test_interpolated_positions_equal_the_step_to_the_save_time(stepped):
    # Without contact a step moves r by h v_n (eq. 1.52_4) and F by h W_n, so a step of
    # s = sigma h ends at r_n + s v_n, while the Hermite cubic through (r_n, v_n), (r_n+1,
    # v_n+1) gives r_n + s v_n + h sigma^2 (sigma - 1) (v_n+1 - v_n) (algebra of the basis):
    # the difference is that O(h^2) term exactly, the same for F with W. Tolerance: round-off
    # of ~20 m positions (1e-12 m) and of ~1 directors (1e-13).
    for h, rows in stepped.items():
        for sigma, f in rows:
            assert 0.2 < sigma < 0.8  # the save time is inside a step: interpolation, not a copy
            c = h * sigma**2 * (sigma - 1.0)
            np.testing.assert_allclose(f["r"][0] - f["r"][1], c * f["dv"], rtol=0, atol=1e-12)
            np.testing.assert_allclose(f["F"][0] - f["F"][1], c * f["dW"], rtol=0, atol=1e-13)


def test_interpolated_velocities_are_second_order(stepped):
    # v and W are linear between the steps: v_n + sigma (v_n+1 - v_n) against the short
    # step's v_n + s a(z1_n + s z2_n): both use the rates of the same state, at predicted
    # positions h and s along z2_n, so they differ by s (h - s) |da/dz1 . z2| = O(h^2).
    # At the same fraction of a step (sigma = 1/3, 2/3 at both h) halving h
    # must quarter the difference; a wrong bracket or weight would leave an O(h) error
    # (the rate change over a step, |v_n+1 - v_n|), which the second check excludes.
    errs = {}
    for h, rows in stepped.items():
        e = np.array([[np.max(np.abs(f[q][0] - f[q][1])) for q in ("v", "W")] for _, f in rows])
        step_change = np.array([[np.max(np.abs(f[d])) for d in ("dv", "dW")] for _, f in rows])
        assert np.all(e < 0.1 * step_change)  # far inside one step's change (measured <= 1.2e-2 of it)
        errs[h] = e
    ratio = errs[5e-5] / errs[1e-4]
    # second order: 0.25; the states at the two h differ by the scheme's O(h) error, which
    # moves da/dz1 . z2 by a few per cent: 0.18..0.32 (measured 0.230..0.250)
    assert np.all((ratio > 0.18) & (ratio < 0.32)), ratio


def test_chunked_advance_equals_one_call(models):
    # run.py and the study runner call `advance` a few slots at a time, carrying the state
    # before the last step (save_grid.Prev) between calls. With save_every < dt (several
    # save times inside one step) a call can end with the next save time already passed;
    # the carried Prev must bracket it as in one call: same numbers, one slot per call.
    settings = Settings(end_time=0.01, dt=1e-3, save_every=4e-4, step_control="constant")
    batch, state0 = build_batch([single(models[0], speed=20.0, steering_deg=4.0)], dt=settings.dt)
    whole = simulate(batch, state0, settings)
    state, metrics, prev = state0, init_metrics(batch, state0, None), prev_of(state0)
    parts = []
    for _ in range(settings.n_samples):
        (state, metrics, prev), samples = advance(batch, state, metrics, settings, 1, prev=prev)
        parts.append(samples)
    state, _ = finish(batch, state, metrics, settings)
    for f in FIELDS + ("saved",):
        got = np.concatenate([np.asarray(getattr(p, f)) for p in parts], axis=1)
        # the same arithmetic in a different jit: round-off only, a few ulps of each value
        # (1e-12 m of ~20 m; 1e-15 relative of an energy of ~3e5 J, whose ulp is 5.8e-11 J)
        np.testing.assert_allclose(got, np.asarray(getattr(whole.samples, f)), rtol=1e-15, atol=1e-12)
    assert np.asarray(whole.samples.saved).all() and settings.n_samples == 26
    np.testing.assert_allclose(np.asarray(state.vehicles.r), np.asarray(whole.final.vehicles.r), rtol=0, atol=1e-12)


class _WeakTracker:
    """A tracker whose initial metric is weakly typed (jnp.asarray(0.0)), as
    jnp.full(shape, 0.0) and Python-float arithmetic make them; its update returns strong
    float64, so the metrics' types change after the first `advance` call."""

    def init(self, batch_item, state):
        return {"max_speed": jnp.asarray(0.0)}

    def update(self, metrics, batch_item, state, info):
        speed = jnp.linalg.norm(state.vehicles.v[0])
        return {"max_speed": jnp.maximum(metrics["max_speed"], speed.astype(jnp.float64))}

    def __hash__(self):
        return 1

    def __eq__(self, other):
        return isinstance(other, _WeakTracker)


def test_chunked_advance_compiles_once(models):
    # run.py and the study runner call `advance` again on its own output. A weakly typed
    # initial metric would differ in type from the returned one, and the second call would
    # trace and compile the whole step body a second time (it did: 2 compilations per run).
    settings = Settings(end_time=0.004, dt=1e-3, save_every=1e-3, step_control="constant")
    batch, state = build_batch([single(models[0], speed=20.0)], dt=settings.dt)
    tracker = _WeakTracker()
    metrics, prev = init_metrics(batch, state, tracker), prev_of(state)
    assert not any(x.aval.weak_type for x in jax.tree.leaves(metrics))
    before = advance._cache_size()
    for _ in range(3):
        (state, metrics, prev), _ = advance(batch, state, metrics, settings, 2, tracker, prev=prev)
    assert advance._cache_size() == before + 1
    # the tracker did its work: the largest speed seen is the initial 20 m/s or more
    assert float(metrics["max_speed"][0]) >= 20.0 - 1e-9
