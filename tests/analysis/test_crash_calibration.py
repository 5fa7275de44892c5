"""Calibration of the crush law's defaults (docs/crash-law.md) against the crash-test figures
of issue 12, and the crash outputs of analysis/outcomes.py and analysis/crash_pulse.py: the
NCAP 56 km/h full-width rigid-barrier test, the 8 km/h low-speed test, the MEDUSA report's
offset rear-end (2 m/s closing), step-size independence, energy, and the 10 kHz pulse.

To keep CI cheap the barrier cases run as ONE batch (one compilation): 56 km/h at dt = 5e-5
and 2.5e-5 s (per-scenario dt under the "constant" step control) and 8 km/h, and both speeds
at the crush law's study default dt (solver.step_control.SMOOTH_LAW_STEP), each car
starting 1 cm from the wall so that the 0.21 s simulated hold the whole pulse.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.analysis.crash_pulse import PulseTracker, pulse_table, ticks_for
from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays
from jaxmedusa.build import build_batch
from jaxmedusa.contact.laws.crush import unloading_exponent
from jaxmedusa.core.params import GRAVITY, Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.core.scenario import RoadSpec, VehicleSpec
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.physics.vehicle import energy_total
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.solver.step import scenario_step
from jaxmedusa.solver.step_control import SMOOTH_LAW_STEP
from jaxmedusa.solver.trackers import CombinedTracker

ROOT = Path(__file__).resolve().parents[2]
BARRIER = ROOT / "studies" / "medusa" / "barrier"
OFFSET = ROOT / "studies" / "medusa" / "offset"
DT_STUDY = SMOOTH_LAW_STEP["crush"]["dt"]  # [s], the crush law's study default (4e-4 s)
TRACKER = CombinedTracker((Outcomes(), PulseTracker(window=0.21, ticks_per_step=ticks_for(DT_STUDY))))
MASS = 1573.0  # [kg], Appendix C model 1
A_FRONT, B_FRONT, WIDTH = 44e3, 550e3, 1.6  # the defaults, and the car's contact width [m]
N_LOW, E_HIGH = 24.5, 0.10  # the default unloading exponent below the threshold, restitution of a severe crush
X_START = 0.29  # [m]: the contact shape's front (2.0 m ahead of the centre) 1 cm from the wall at x = 2.3 m


def _barrier_case(kmh: float):
    sc, cfg = load_scenario(BARRIER)
    sc.vehicles[0] = VehicleSpec(model=0, x=X_START, y=0.0, orientation=0.0, speed=kmh / 3.6)
    return sc, cfg


def _metrics(batch, res, k: int) -> dict:
    out = outcome_arrays(batch, res.final, res.metrics[0], TRACKER.trackers[0])
    return {name: np.asarray(v)[k] for name, v in out.items()}


@functools.lru_cache(maxsize=None)
def barrier_runs():
    """[(metrics, pulse state)] of 56 km/h (dt 5e-5), 56 km/h (dt 2.5e-5), 8 km/h (dt 5e-5),
    56 km/h (DT_STUDY), 8 km/h (DT_STUDY)."""
    cases = [_barrier_case(kmh)[0] for kmh in (56.0, 56.0, 8.0, 56.0, 8.0)]
    cfg = _barrier_case(56.0)[1]
    st = Settings(**{**cfg, "end_time": 0.21, "dt": 5e-5, "save_every": 0.21, "step_control": "constant"})
    batch, s0 = build_batch(cases, dt=st.dt)
    s0 = replace(s0, clock=replace(s0.clock, dt=jnp.array([5e-5, 2.5e-5, 5e-5, DT_STUDY, DT_STUDY])))
    res = simulate(batch, s0, st, tracker=TRACKER, record=False)
    return [(_metrics(batch, res, k), jax.tree.map(lambda x: x[k], res.metrics[1])) for k in range(len(cases))]


def test_ncap_56kmh_full_width_rigid_barrier():
    """Issue 12 targets for a mid-size car (here 1573 kg) with the default parameters:
    maximum dynamic crush 0.5-0.75 m, pulse 0.07-0.13 s, mean deceleration 15-30 g,
    restitution 0.05-0.15 (NCAP full-width tests of mid-size cars fall in these bands; staged
    tests give about 0.1 at high speed, SAE 931842)."""
    m, _ = barrier_runs()[0]
    assert 0.5 <= m["max_crush"][0] <= 0.75
    assert 0.07 <= m["pulse_duration"][0] <= 0.13
    # inside the 15-30 g band with a margin of 3 % of its edge (15.45 g; measured 15.87 g here,
    # 15.92 g at the study step 4e-4 s): the pulse duration counts whole steps, so the value
    # moves with dt (0.3 % from 5e-5 to 4e-4 s, up to 0.6 % at 8e-4 s, docs/numerics.md) and
    # with the force threshold that ends the pulse; a value within a few % of the edge would
    # be in the band by chance
    assert 15.0 * 1.03 <= m["mean_decel_g"][0] <= 30.0 / 1.03
    assert 0.05 <= m["restitution"][0] < 0.15
    # the permanent crush is Campbell's C = x_max - A/B (A/B = 0.08 m for the front face), x_max
    # the peak between the steps (contact/laws/crush.py), above the largest sample (max_crush)
    # by at most 0.5 a (dt/2)^2, a the overlap's deceleration: the car's against a rigid wall,
    # whose peak sample (peak_decel_g) is taken 10 % up for the peak between samples; dt = 5e-5 s
    excess = m["residual_crush"][0] - (m["max_crush"][0] - A_FRONT / B_FRONT)
    assert -1e-12 <= excess <= 0.5 * 1.1 * m["peak_decel_g"][0] * 9.80665 * (5e-5 / 2) ** 2
    # energy bookkeeping: the structure absorbs the kinetic energy less the rebound's
    v0 = 56.0 / 3.6
    ke0, ke1 = 0.5 * MASS * v0**2, 0.5 * MASS * (m["restitution"][0] * v0) ** 2
    # 2%: wall friction as the nose dives (1 m/s vertical delta-V) and the suspension's share
    assert m["absorbed_energy"][0] == pytest.approx(ke0 - ke1, rel=0.02)
    assert m["ees"][0] == pytest.approx(math.sqrt(2 * m["absorbed_energy"][0] / MASS), rel=1e-12)
    # the mean deceleration is delta-V over the pulse (definition; round-off only)
    assert m["mean_decel_g"][0] == pytest.approx(m["delta_v"][0] / m["pulse_duration"][0] / GRAVITY, rel=1e-12)


def test_8kmh_barrier_is_nearly_elastic():
    """8 km/h (just above the default car's 6.8 km/h damage threshold): residual crush < 2 cm;
    restitution 0.1-0.25, between the staged tests' low-speed 0.2-0.4 and high-speed 0.1 (SAE
    931842), and at most sqrt(5 %) = 0.22 for the crush-phase energy to be CRASH3's within 5 %
    (tests/analysis/test_crash3_consistency.py). The slow rebound (0.4 m/s over the 8 cm
    elastic spring-back) outlasts the 0.21 s window: the force left is below 1e-3 of the peak."""
    m, _ = barrier_runs()[2]
    assert m["residual_crush"][0] < 0.02
    assert 0.1 <= m["restitution"][0] <= 0.25


def test_halving_dt_converges_at_first_order_in_delta_v():
    """The crush law takes a constant step and its force is a function of the state (no
    per-step multiplier), so the step size only adds the O(dt) error of eq. (1.52): delta-V
    at dt = 16 h, 2 h, h (4e-4, 5e-5, 2.5e-5 s; the same 56 km/h case) converges at order 1
    or faster. With f(dt) = f* + C dt^p, (f(16h) - f(2h)) / (f(2h) - f(h)) = (16^p - 2^p) /
    (2^p - 1): 14 for p = 1, 84 for p = 2, 3 as p -> 0. Measured p = 0.89 (2026-11-26 morning)
    and 1.65 (after the crush law's recalibration the same day): 4e-4 s is not yet fully
    asymptotic, and a law whose first-order term is small converges faster. The bound
    p > 0.7 fails a step-size error that shrinks slower than the scheme's order (or not at
    all: p -> 0)."""
    from scipy.optimize import brentq

    f16, f2, f1 = (barrier_runs()[k][0]["delta_v"][0] for k in (3, 0, 1))
    ratio = (f16 - f2) / (f2 - f1)
    assert ratio > 3.5, ratio  # same sign of both differences (monotone convergence), and p > ~0.3
    p = brentq(lambda q: (16**q - 2**q) / (2**q - 1) - ratio, 0.2, 6.0)
    assert p > 0.7, p
    # Richardson: the dt = 5e-5 s run's own error is |f(2h) - f(h)| 2^p / (2^p - 1) (measured
    # 2.5e-4 m/s, 1.4e-5 of delta-V, at p = 0.89); below 1e-4 of it, 1/50 of the 0.5 % the
    # docs allow the study default (docs/numerics.md)
    assert abs(f2 - f1) * 2**p / (2**p - 1) < 1e-4 * abs(f1)

def test_study_default_dt_keeps_the_crash_outcomes_within_half_a_percent():
    """The crush law's study default, a constant DT_STUDY = 4e-4 s, against dt = 5e-5 s at 56
    and 8 km/h: the documented accuracy of the default is 0.5 % of every outcome
    (docs/numerics.md; measured in the study setup: 0.19 % at most, the pulse duration). The
    pulse duration and the mean deceleration (delta-V over it) count whole steps, so they may
    move by one step of 4e-4 s: 0.38 % of the 0.105 s pulse, still inside 0.5 %. The
    calibration bands hold at the default too."""
    for ref_k, new_k in ((0, 3), (2, 4)):
        ref, new = barrier_runs()[ref_k][0], barrier_runs()[new_k][0]
        assert new["delta_v"][0] > 2.0  # a real crash
        for key in ("delta_v", "max_crush", "residual_crush", "pulse_duration", "mean_decel_g", "peak_decel_g",
                    "restitution", "absorbed_energy", "ees"):
            assert new[key][0] == pytest.approx(ref[key][0], rel=5e-3), key
    m56, m8 = barrier_runs()[3][0], barrier_runs()[4][0]
    assert 0.5 <= m56["max_crush"][0] <= 0.75 and 0.07 <= m56["pulse_duration"][0] <= 0.13
    assert 15.0 <= m56["mean_decel_g"][0] <= 30.0 and 0.05 <= m56["restitution"][0] < 0.15
    assert m8["residual_crush"][0] < 0.02 and 0.1 <= m8["restitution"][0] <= 0.25


def test_crash_pulse_at_the_study_default_dt():
    """At DT_STUDY a step spans 4 ticks of the 10 kHz grid (ticks_for): every tick of the pulse
    is filled (the grid is 1e-4 s apart with no gap), its integral is delta-V as at 5e-5 s (1 %,
    as below), and its CFC 60 peak, which sees only content below ~100 Hz, is within 0.5 % of
    the peak at 5e-5 s (measured 0.05 %; the raw 10 kHz values are constant over each step, so
    the raw peak is not compared)."""
    m, pulse = barrier_runs()[3]
    _, pulse_ref = barrier_runs()[0]
    tab, ref = pulse_table(pulse), pulse_table(pulse_ref)
    assert len(tab) > 1000 and np.allclose(np.diff(tab["t_rel"]), 1e-4)
    assert np.asarray(pulse.filled)[: len(tab)].all()  # one vehicle: one row per tick, none skipped
    assert np.trapezoid(tab["a_long"], tab["t_rel"]) == pytest.approx(m["delta_v_body"][0][0], rel=0.01)
    peak, peak_ref = np.max(np.abs(tab["a_long_cfc60"])), np.max(np.abs(ref["a_long_cfc60"]))
    assert peak == pytest.approx(peak_ref, rel=5e-3)


def test_crash_pulse_integrates_to_delta_v():
    """The 10 kHz pulse: samples 1e-4 s apart; its longitudinal integral is the change in
    forward velocity over the window (raw: the central differences telescope; CFC 60: a
    zero-phase filter with unit DC gain), which is delta-V (the rolling tires' ~1e-3 g aside:
    1%); the crush law's ~100 ms pulse has little content above CFC 60's 100 Hz, so filtering
    moves it by less than 5% of its peak, and the filtered peak is that of a mid-size car's
    NCAP pulse (30-50 g)."""
    m, pulse = barrier_runs()[0]
    tab = pulse_table(pulse)
    assert np.allclose(np.diff(tab["t_rel"]), 1e-4)
    integral = np.trapezoid(tab["a_long"], tab["t_rel"])
    assert integral == pytest.approx(m["delta_v_body"][0][0], rel=0.01)
    assert np.trapezoid(tab["a_long_cfc60"], tab["t_rel"]) == pytest.approx(integral, rel=0.01)
    peak = np.max(np.abs(tab["a_long"]))
    # 6 %: the force's slope jumps at first contact and at the turn to unloading (measured 5.1 %)
    assert np.max(np.abs(tab["a_long_cfc60"] - tab["a_long"])) < 0.06 * peak
    assert 30.0 < np.max(np.abs(tab["a_long_cfc60"])) / GRAVITY < 50.0


def test_offset_rear_end_restitution_and_momentum():
    """The report's offset rear-end (section 3.2: 22 and 20 m/s, 0.4 m offset, equal masses),
    started 1 cm apart to save the 1 s of closing: restitution 0.2-0.6; one episode; the
    contact impulses are equal and opposite (delta-V of equal masses sums to zero, to
    round-off: 1e-9 m/s)."""
    sc, _ = load_scenario(OFFSET)
    v2 = sc.vehicles[1]
    sc.vehicles[1] = dataclasses.replace(v2, x=4.01)
    sc.road = RoadSpec(points=None)
    # 0.4 s: below the damage threshold the cars part at ~0.5 m/s over the pair's ~6 cm spring-back
    st = Settings(end_time=0.4, dt=5e-5, contact_law="crush", save_every=0.4)
    batch, s0 = build_batch([sc], dt=st.dt)
    res = simulate(batch, s0, st, tracker=TRACKER, record=False)
    m = _metrics(batch, res, 0)
    assert m["contact_episodes"][0] == 1 and m["last_contact_time"][0] < 0.39  # over before the end
    assert 0.2 <= m["restitution"][0] <= 0.45
    assert m["restitution"][0] == pytest.approx(m["restitution"][1], rel=1e-9)
    np.testing.assert_allclose(m["delta_v_vec"][0] + m["delta_v_vec"][1], 0.0, atol=1e-9)


def test_total_energy_never_rises_during_the_collision():
    """Step by step through the 56 km/h crash: the car's energy (1.33) plus the elastic energy
    stored in its crushed front never rises. The stored energy is the integral of the
    unloading path from the permanent crush x_p to the crush x (hand formula from the law's
    definition): w B x_max d ((x - x_p)/d)^(n+1) / (n + 1), d = min(x_max, A/B), w = 1.6 m.
    Allowed rise per step: 0.5 J, the explicit step's energy error dt^2 F^2 / 2m ~
    (5e-5 * 5.5e5)^2 / 3146 = 0.24 J at the peak force (the discrete scheme is not exactly
    dissipative; 0.5 J is 3e-6 of the 190 kJ)."""
    sc, cfg = _barrier_case(56.0)
    st = Settings(**{**cfg, "end_time": 0.13, "dt": 5e-5})
    batch, s0 = build_batch([sc], dt=st.dt)
    b, s = jax.tree.map(lambda x: x[0], (batch, s0))
    vp = jax.tree.map(lambda x: x[0], b.vehicle)

    def step(s, _):
        s2, info = scenario_step(b, s, st)
        v = s2.vehicles
        return s2, (energy_total(vp, v.r[0], v.F[0], v.v[0], v.W[0]), info.crash.crush[0], info.crash.residual[0])

    _, (e, x, xp) = jax.jit(lambda s: jax.lax.scan(step, s, None, length=2600))(s)
    e, x, xp = np.asarray(e), np.asarray(x), np.asarray(xp)
    xmax = np.maximum.accumulate(x)
    d = np.minimum(xmax, A_FRONT / B_FRONT)
    ratio = np.clip((x - xp) / np.where(d > 0, d, 1.0), 0.0, 1.0)
    n = np.asarray(unloading_exponent(jnp.asarray(d / xmax), N_LOW, E_HIGH))  # the law's exponent at this x_max
    stored = WIDTH * B_FRONT * xmax * d * ratio ** (n + 1) / (n + 1)
    total = e + stored
    assert x.max() > 0.5 and x[-1] < x.max() - 0.07  # the crash and its rebound happened in the window
    assert np.max(np.diff(total)) < 0.5
    assert total[0] - total[-1] > 0.9 * (0.5 * MASS * (56 / 3.6) ** 2)  # most of it is absorbed
