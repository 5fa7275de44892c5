"""The crush law against staged tests and against CRASH3 (issue 29's checks):

- central rear-end impacts of two default cars: restitution 0.2-0.45 at 5-10 km/h closing
  speed and at most 0.15 at 40 km/h (staged tests: SAE 931842 gives 0.2-0.4 at struck-car
  delta-V of 2-5 mph, about 0.1 at medium and high speed; Monson & Germane, SAE 1999-01-0097:
  restitution falls with speed);
- a central collinear impact: vertical delta-V below 3 % of the longitudinal from 5 to 40 km/h;
- rigid barrier at 8, 32, 56 and 64 km/h: the CRASH3 energy of the residual crush (uniform
  over the contact width, the law's A and B; analysis/crash3.py) equals the energy the
  structure absorbed within 5 %, and the CRASH3 barrier speed sqrt(2 E / m) is within 3 % of
  the impact speed;
- analysis/crash3.py against hand calculations.

One compilation per setup: the rear-end speeds run as one batch, the barrier speeds as another
(0.25 s, constant dt = 2e-4 s: within 0.1 % of dt = 5e-5 s for these outcomes, docs/numerics.md),
each shared with other files' cases (tests/crush_batches.py).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.analysis.crash3 import (barrier_equivalent_speed, closing_speed, crash3_delta_v, crash3_energy,
                                       force_direction_factor, stiffness_from_speed_line)
from jaxmedusa.analysis.damage import cdc_string

from crush_batches import (BARRIER_KMH, CLOSING_KMH, CRUSH_GROUP, OFFSET_BLOCK_ROW, barrier_outcomes,
                           two_car_outcomes)

MASS, WIDTH, A_FRONT, B_FRONT = 1573.0, 1.6, 44e3, 550e3  # model 1, its contact width, the front defaults
# under `pytest -n`, on the worker of the other files that share these batches (tests/crush_batches.py)
pytestmark = pytest.mark.xdist_group(CRUSH_GROUP)


def rear_end():
    """Two default cars (the offset example's model), central and collinear, the struck one at
    10 m/s, started 1 cm apart, free rolling (rows of CLOSING_KMH); then a 90-degree side
    impact at 40 km/h, car 1's front into car 2's right side (tests/crush_batches.py)."""
    return two_car_outcomes()


def barrier():
    """The barrier study's car 1 cm from a full-width rigid wall at BARRIER_KMH; then 56 km/h
    into a rigid block covering the car's left 40 % (tests/crush_batches.py)."""
    return barrier_outcomes()


def test_restitution_falls_with_closing_speed_as_in_staged_tests():
    """0.2-0.45 at 5 and 10 km/h closing speed, at most 0.15 at 40 km/h (SAE 931842; module
    docstring), both cars alike (equal and opposite impulses), and lower at 40 than at 10."""
    m = rear_end()
    e = m["restitution"][: len(CLOSING_KMH), 0]
    np.testing.assert_allclose(m["restitution"][: len(CLOSING_KMH), 1], e, rtol=1e-9)
    assert np.all((e[:2] >= 0.2) & (e[:2] <= 0.45)), e
    assert e[3] <= 0.15 and e[3] < e[1], e


def test_collinear_impact_has_no_vertical_delta_v():
    """|dv_z| < 3 % of |dv_x| for both cars at every closing speed (the law is planar; the
    vertical delta-V left comes from no contact force at all)."""
    dv = rear_end()["delta_v_vec"][: len(CLOSING_KMH)]  # [case, vehicle, 3]
    assert np.all(np.abs(dv[..., 0]) > 0.5)  # a real impact at every speed
    assert np.all(np.abs(dv[..., 2]) < 0.03 * np.abs(dv[..., 0]))


@pytest.mark.parametrize("k", range(len(BARRIER_KMH)))
def test_crash3_energy_and_speed_from_the_residual_crush(k):
    """CRASH3 from the simulated residual crush C (uniform over the 1.6 m contact width) with
    the law's A and B: energy within 5 % of the structure's absorbed energy (work of the crush
    force less the elastic rebound), barrier speed within 3 % of the impact speed."""
    m = barrier()
    c = m["residual_crush"][k, 0]
    e3 = float(crash3_energy(np.full(6, c), WIDTH, A_FRONT, B_FRONT))
    assert e3 == pytest.approx(m["absorbed_energy"][k, 0], rel=0.05)
    assert float(barrier_equivalent_speed(e3, MASS)) == pytest.approx(BARRIER_KMH[k] / 3.6, rel=0.03)


def test_barrier_impact_has_no_vertical_delta_v():
    dv = barrier()["delta_v_vec"][: len(BARRIER_KMH), 0]
    assert np.all(np.abs(dv[:, 2]) < 0.03 * np.abs(dv[:, 0]))


# ----------------------------------------------------------------------------- damage (analysis/damage.py)


def _profile(m, k, v):
    return np.array([m[f"c{i}"][k, v] for i in range(1, 7)])


def test_full_width_barrier_profile_is_flat_and_its_cdc_is_12FDEW():
    """Full-width rigid barrier at 56 km/h: C1..C6 equal within 1 % and equal to the residual
    crush, the damage width the car's 1.6 m; CDC 12FDEW with the extent zone of the deepest
    crush, ceil(C / (0.1 x 4.0 m)) (analysis/damage.py); the CRASH3 energy of the profile is
    the metric's."""
    m = barrier()
    k = BARRIER_KMH.index(56.0)
    c = _profile(m, k, 0)
    assert c.min() > 0.5 and np.ptp(c) <= 0.01 * c.mean()
    assert c.mean() == pytest.approx(m["residual_crush"][k, 0], rel=1e-9)
    assert m["damage_width"][k, 0] == pytest.approx(WIDTH, rel=1e-9)
    zone = math.ceil(c.max() / 0.4)
    assert cdc_string(m["cdc"][k, 0]) == f"12FDEW{zone}"
    assert m["crash3_energy"][k, 0] == pytest.approx(float(crash3_energy(c, WIDTH, A_FRONT, B_FRONT)), rel=1e-9)


def test_offset_barrier_damage_is_where_the_block_was():
    """A rigid block over the car's left 40 % (0.64 m of 1.6 m): damage on the left of the
    front (CDC area F, location L or Y: the left third and part of the centre), a damage width
    of the 0.64 m overlap within 5 cm (one station), centred 0.48 m left of the centre line
    within 5 cm, wide (W)."""
    m = barrier()
    k = OFFSET_BLOCK_ROW
    cdc = cdc_string(m["cdc"][k, 0])
    assert cdc[2] == "F" and cdc[3] in "LY" and cdc[5] == "W", cdc
    assert m["damage_width"][k, 0] == pytest.approx(0.64, abs=0.05)
    assert m["damage_offset"][k, 0] == pytest.approx(0.48, abs=0.05)


@pytest.mark.xfail(strict=True, reason="measured C1..C6 = 0.5552 m flat: the law keeps one residual crush per "
                   "contact, uniform over the engaged width; rigid-body geometry tapers the other way (the car yaws "
                   "0.33 deg towards the block by maximum crush, so the inner edge goes deeper); a taper to the free "
                   "side needs the structure's coupling across the face, which no source here quantifies "
                   "(docs/crash-law.md, 'Damage')")
def test_offset_barrier_profile_tapers_to_the_free_side():
    c = _profile(barrier(), OFFSET_BLOCK_ROW, 0)
    assert c[0] > 0.1 and np.all(np.diff(c) <= 1e-9) and c[-1] < 0.9 * c[0]


def test_side_impact_gives_3_or_9_oclock_on_the_struck_side():
    """90 degrees, car 1's front into car 2's side: car 2's CDC is 09L... (its left side faces
    car 1) or 03R..., car 1's 12F..; per-collision delta-V of the two cars in the mass ratio
    (equal masses: equal, 1e-6 relative)."""
    m = rear_end()
    k = len(CLOSING_KMH)
    struck, striking = cdc_string(m["cdc"][k, 1]), cdc_string(m["cdc"][k, 0])
    assert struck[:3] in ("09L", "03R"), struck
    assert striking[:3] == "12F", striking
    assert m["collision_pdof_clock"][k, 1] in (3, 9)
    assert m["collision_delta_v"][k, 1] == pytest.approx(m["collision_delta_v"][k, 0], rel=1e-6)


def test_crash3_delta_v_from_both_profiles_matches_the_simulated_one():
    """An investigator's CRASH3 from the two cars' crush profiles (their crash3_energy metrics,
    front and rear A, B) and masses, with the simulated restitution: the delta-V within 3 % of
    the simulated collision_delta_v at 20 and 40 km/h (measured 0.2 %); CRASH3's own
    restitution-free answer is lower by about the factor (1 + e)/sqrt(1 - e^2) (here 14 %),
    as WinSmash's known underestimate of delta-V (Niehoff & Gabler, 2006)."""
    m = rear_end()
    for kmh in (20.0, 40.0):
        k = CLOSING_KMH.index(kmh)
        e1, e2 = m["crash3_energy"][k]
        dv1, dv2 = crash3_delta_v(e1, e2, MASS, MASS, restitution=m["restitution"][k, 0])
        assert float(dv1) == pytest.approx(m["collision_delta_v"][k, 0], rel=0.03)
        assert float(dv2) == pytest.approx(m["collision_delta_v"][k, 1], rel=0.03)
        plain, _ = crash3_delta_v(e1, e2, MASS, MASS)
        assert float(plain) < 0.95 * m["collision_delta_v"][k, 0]


def test_no_permanent_crush_gives_no_profile_and_no_cdc():
    """Below the damage threshold (5 km/h closing) nothing stays: C = 0, width 0, CDC ''."""
    m = rear_end()
    assert np.all(_profile(m, 0, 0) == 0.0) and m["damage_width"][0, 0] == 0.0
    assert cdc_string(m["cdc"][0, 0]) == ""
    assert m["collision_pdof_clock"][0, 0] == 12 and m["collision_pdof_clock"][0, 1] == 6  # front / rear


# ----------------------------------------------------------------------------- crash3.py by hand


def test_crash3_energy_is_the_trapezoidal_formula():
    """The NASS six-point formula written out by hand (CRASH3 manual) for a tapered profile,
    and a uniform profile's closed form w (A C + B C^2/2 + A^2/2B); round-off only."""
    c = np.array([0.40, 0.35, 0.28, 0.20, 0.11, 0.03])
    L, a, b = 1.2, 35e3, 600e3
    by_hand = L / 5 * (a / 2 * (c[0] + 2 * c[1:5].sum() + c[5])
                       + b / 6 * (c[0] ** 2 + 2 * (c[1:5] ** 2).sum() + c[5] ** 2 + np.sum(c[:-1] * c[1:]))
                       + 5 * a * a / (2 * b))
    assert float(crash3_energy(c, L, a, b)) == pytest.approx(by_hand, rel=1e-12)
    assert float(crash3_energy(np.full(6, 0.5), 1.6, 44e3, 550e3)) == pytest.approx(
        1.6 * (44e3 * 0.5 + 550e3 * 0.25 / 2 + 44e3**2 / (2 * 550e3)), rel=1e-12)


def test_campbell_speed_line_and_barrier_speed_agree():
    """A = m b0 b1 / w, B = m b1^2 / w: a barrier crush C = (V - b0)/b1 gives back V (exact)."""
    m, w, b0, b1 = 1500.0, 1.7, 2.2, 25.0
    a, b = stiffness_from_speed_line(m, w, b0, b1)
    v = 15.0
    e = crash3_energy(np.full(6, (v - b0) / b1), w, a, b)
    assert float(barrier_equivalent_speed(e, m)) == pytest.approx(v, rel=1e-12)


def test_crash3_delta_v_is_momentum_and_energy():
    """Two bodies meeting plastically: the closing energy m1 m2 vc^2 / 2(m1 + m2) gives back vc
    and delta-Vs m2/(m1+m2) vc and m1/(m1+m2) vc (momentum); with restitution e the crush
    energy is (1 - e^2) of it and the delta-Vs are (1 + e) times larger. Exact."""
    m1, m2, vc = 1200.0, 1800.0, 12.0
    e_tot = m1 * m2 * vc**2 / (2 * (m1 + m2))
    assert float(closing_speed(0.3 * e_tot, 0.7 * e_tot, m1, m2)) == pytest.approx(vc, rel=1e-12)
    dv1, dv2 = crash3_delta_v(0.3 * e_tot, 0.7 * e_tot, m1, m2)
    assert float(dv1) == pytest.approx(m2 / (m1 + m2) * vc, rel=1e-12)
    assert float(m1 * dv1) == pytest.approx(float(m2 * dv2), rel=1e-12)
    r = 0.2
    dv1, _ = crash3_delta_v((1 - r * r) * e_tot, 0.0, m1, m2, restitution=r)
    assert float(dv1) == pytest.approx((1 + r) * m2 / (m1 + m2) * vc, rel=1e-12)


def test_force_direction_factor():
    assert float(force_direction_factor(0.0)) == 1.0
    assert float(force_direction_factor(math.radians(30))) == pytest.approx(1 + math.tan(math.radians(30)) ** 2)
    assert float(force_direction_factor(math.radians(60))) == pytest.approx(2.0)  # capped at 45 degrees
