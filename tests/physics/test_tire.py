"""CALSPAN/STI tire, eqs (1.20)-(1.26), against hand calculations and the report's Remarks."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.physics.tire.calspan import GOODYEAR_185SR14, tire_params
from jaxmedusa.physics.tire.calspan import cornering_stiffness, peak_friction, tire_forces

TP = tire_params()
P = GOODYEAR_185SR14


def hand_forces(fz, alpha, s):
    """Eqs (1.20)-(1.23) written out with the math module, line by line from the report."""
    ap0 = 0.0768 * math.sqrt(fz * P["fz_t"]) / (P["t_w"] * (P["t_p"] + 5))
    ks = 2 / ap0**2 * (P["a0"] + P["a1"] * fz - P["a1"] / P["a2"] * fz**2)
    kc = 2 / ap0**2 * fz * P["cs_fz"]
    mu0 = (P["b1"] * fz + P["b3"] + P["b4"] * fz**2) * P["sn_p"] / P["sn_t"]
    root = math.sqrt(math.sin(alpha) ** 2 + s**2 * math.cos(alpha) ** 2)
    kcp = kc + (ks - kc) * root
    mu = mu0 * (1 - P["k_mu"] * root)
    sigma = math.pi * ap0**2 / (8 * mu0 * fz) * math.sqrt(ks**2 * math.tan(alpha) ** 2 + kc**2 * s**2 / (1 - s) ** 2)
    f = (P["c1"] * sigma**3 + P["c2"] * sigma**2 + 4 / math.pi * sigma) / (
        P["c1"] * sigma**3 + P["c3"] * sigma**2 + P["c4"] * sigma + 1)
    den = math.sqrt(ks**2 * math.tan(alpha) ** 2 + kcp**2 * s**2)
    return mu * fz * (-f * kcp * s) / den, mu * fz * f * ks * math.tan(alpha) / den


def test_peak_friction_matches_report():
    # Section 1.2.2 / Figure 1.3: mu0 at Fz = 2500 N is about 0.943.
    assert float(peak_friction(2500.0, TP)) == pytest.approx(0.943, abs=5e-4)


@pytest.mark.parametrize("fz,alpha,s", [(2500.0, 0.05, 0.0), (4000.0, 0.1, 0.05), (3000.0, -0.2, -0.3),
                                        (5000.0, 0.6, 0.5), (1500.0, 0.01, -0.02)])
def test_forces_match_hand_computation(fz, alpha, s):
    fx, fy = tire_forces(fz, alpha, s, TP)
    hx, hy = hand_forces(fz, alpha, s)
    assert float(fx) == pytest.approx(hx, rel=1e-12, abs=1e-9)
    assert float(fy) == pytest.approx(hy, rel=1e-12, abs=1e-9)


def test_lateral_force_is_odd_in_slip_angle():
    for a in [0.01, 0.1, 0.7, 1.2, 2.0, 3.0]:
        for s in [0.0, 0.1, -0.4]:
            assert float(tire_forces(3500.0, -a, s, TP)[1]) == pytest.approx(-float(tire_forces(3500.0, a, s, TP)[1]), rel=1e-12)
            assert float(tire_forces(3500.0, -a, s, TP)[0]) == pytest.approx(float(tire_forces(3500.0, a, s, TP)[0]), rel=1e-12)


def test_remark_2_symmetry_about_ninety_degrees():
    for a in [0.05, 0.3, 1.0]:
        lo = tire_forces(3500.0, 0.5 * math.pi - a, 0.0, TP)[1]
        hi = tire_forces(3500.0, 0.5 * math.pi + a, 0.0, TP)[1]
        assert float(lo) == pytest.approx(float(hi), rel=1e-12)


def test_remark_3_large_slip_is_treated_as_minus_one():
    for s in [1.5, -3.0, 40.0]:
        np.testing.assert_allclose(tire_forces(3500.0, 0.1, s, TP), tire_forces(3500.0, 0.1, -1.0, TP), rtol=1e-14)


def test_no_nan_at_zero_slip_and_zero_angle():
    f = lambda x: jnp.stack(tire_forces(3500.0, x[0], x[1], TP))  # noqa: E731
    x0 = jnp.zeros(2)
    assert np.all(np.asarray(f(x0)) == 0.0)
    jac = np.asarray(jax.jacfwd(f)(x0))
    grad = np.asarray(jax.grad(lambda x: jnp.sum(f(x)))(x0))
    assert np.all(np.isfinite(jac)) and np.all(np.isfinite(grad))
    # The derivative at the origin is the cornering stiffness (and -Kc for slip).
    assert jac[1, 0] == pytest.approx(float(cornering_stiffness(3500.0, TP)), rel=1e-12)


def test_cornering_stiffness_is_slope_near_zero():
    a = 1e-6
    assert float(tire_forces(4000.0, a, 0.0, TP)[1]) / math.tan(a) == pytest.approx(
        float(cornering_stiffness(4000.0, TP)), rel=1e-5)


def test_tire_parameters_are_data():
    other = tire_params({"sn_p": 42.5})  # a wet pavement: half the skid number
    assert float(peak_friction(2500.0, other)) == pytest.approx(0.5 * float(peak_friction(2500.0, TP)), rel=1e-12)
    with pytest.raises(ValueError, match="unknown tire parameter"):
        tire_params({"grip": 1.0})
