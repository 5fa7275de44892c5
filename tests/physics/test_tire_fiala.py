"""Fiala tire (EDC's EDSVS/EDVTS/EDSMAC tire) against its closed-form curves, EDC's locked-wheel
formula, symmetry, saturation, CALSPAN's small-slip stiffness, and finite gradients."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.physics.tire.calspan import GOODYEAR_185SR14, cornering_stiffness, peak_friction, tire_forces, tire_params
from jaxmedusa.physics.tire.fiala import FIALA_185SR14, FialaParams, fiala_params, fiala_tire_forces

FP = fiala_params()
FZ = FIALA_185SR14["fz_ref"]
CA = FIALA_185SR14["c_alpha"]
CS = FIALA_185SR14["c_s"]
MU_P = FIALA_185SR14["mu_p"]
MU_S = FIALA_185SR14["mu_s"]
FP_CONST_MU = fiala_params(dict(mu_s=MU_P))  # friction independent of sliding speed: EDC's pure curve


def forces(fz, alpha, s, fp=FP):
    fx, fy = fiala_tire_forces(fz, alpha, s, fp)
    return float(fx), float(fy)


def edc_lateral(fz, alpha, mu, ca=CA):
    """EDC's Fiala formula, written out with the math module:
    abar = C_a tan(alpha)/(mu Fz); Fy = mu Fz (abar - abar^2/3 + abar^3/27) for 0 <= abar < 3."""
    abar = ca * math.tan(abs(alpha)) / (mu * fz)
    f = mu * fz * (abar - abar**2 / 3 + abar**3 / 27) if abar < 3 else mu * fz
    return math.copysign(f, alpha)


def brush_lateral(fz, alpha, mu, ca=CA):
    """The same curve in the form of the brief: C t - C^2 t|t|/(3 mu Fz) + C^3 t^3/(27 mu^2 Fz^2)
    below alpha_sl = atan(3 mu Fz / C), mu Fz sign(alpha) above."""
    t = math.tan(alpha)
    if abs(alpha) < math.atan(3 * mu * fz / ca):
        return ca * t - ca**2 * t * abs(t) / (3 * mu * fz) + ca**3 * t**3 / (27 * mu**2 * fz**2)
    return math.copysign(mu * fz, alpha)


def test_defaults_are_calspan_185SR14_at_static_load():
    # Appendix C car: 1573 kg on four wheels; the constants are CALSPAN's own small-slip values there.
    assert FZ == pytest.approx(1573.0 * 9.81 / 4, rel=1e-15)  # the literal is this product: round-off
    tp = tire_params()
    assert CA == pytest.approx(float(cornering_stiffness(FZ, tp)), rel=1e-12)  # float round-off only
    assert MU_P == pytest.approx(float(peak_friction(FZ, tp)), rel=1e-12)  # round-off, as the others
    assert CS == pytest.approx(GOODYEAR_185SR14["cs_fz"] * FZ, rel=1e-12)
    assert MU_S == pytest.approx((1 - GOODYEAR_185SR14["k_mu"]) * MU_P, rel=1e-12)
    with pytest.raises(ValueError, match="c_alpha"):
        fiala_params(dict(c_alfa=1.0))
    assert len(jax.tree_util.tree_leaves(FP)) == 7 and isinstance(FP, FialaParams)


def test_hand_evaluated_point():
    # alpha = 2 deg, constant mu = mu_p, by hand: tan = 0.0349208, mu Fz = 0.9080457*3857.7825 = 3503.043 N,
    # abar = 40060.918*0.0349208/3503.043 = 0.399355; Fy = 3503.043*(0.399355 - 0.053162 + 0.002359) = 1220.99 N.
    # tolerance: the 6-digit hand arithmetic
    assert forces(FZ, math.radians(2.0), 0.0, FP_CONST_MU)[1] == pytest.approx(1220.99, abs=0.02)


@pytest.mark.parametrize("deg", [0.3, 1.0, 3.0, 6.0, 9.0, 12.0, 14.6, 14.8, 20.0, 75.0])
def test_pure_lateral_matches_closed_form(deg):
    # alpha_sl = atan(3 mu_p Fz / C_a) = atan(3*3503.04/40060.9) = 14.70 deg: angles on both sides.
    for a in (math.radians(deg), -math.radians(deg)):
        fx, fy = forces(FZ, a, 0.0, FP_CONST_MU)
        assert fx == 0.0
        assert fy == pytest.approx(edc_lateral(FZ, a, MU_P), rel=1e-12, abs=1e-9)  # same algebra, round-off
        assert fy == pytest.approx(brush_lateral(FZ, a, MU_P), rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("deg", [1.0, 10.0, 14.0, 16.0, 40.0])
def test_pure_lateral_with_sliding_speed_friction(deg):
    # mu falls linearly in the sliding-speed fraction |sin alpha| (s = 0) from mu_p to mu_s.
    a = math.radians(deg)
    mu = MU_P - (MU_P - MU_S) * abs(math.sin(a))
    assert forces(FZ, a, 0.0)[1] == pytest.approx(brush_lateral(FZ, a, mu), rel=1e-12)  # round-off


@pytest.mark.parametrize("s", [0.002, 0.01, 0.03, 0.05, 0.07, 0.2, 0.6, -0.01, -0.04, -0.3, -0.9])
def test_pure_longitudinal_matches_closed_form(s):
    # Brush model in theoretical slip sigma = s/(1 - s); mu from the sliding fraction |s|.
    mu = MU_P - (MU_P - MU_S) * abs(s)
    sig = s / (1 - s)
    if abs(sig) < 3 * mu * FZ / CS:
        f = CS * sig - CS**2 * sig * abs(sig) / (3 * mu * FZ) + CS**3 * sig**3 / (27 * mu**2 * FZ**2)
    else:
        f = math.copysign(mu * FZ, sig)
    fx, fy = forces(FZ, 0.0, s)
    assert fy == 0.0
    assert fx == pytest.approx(-f, rel=1e-12, abs=1e-9)  # braking (s > 0) pulls backward, Fx < 0


@pytest.mark.parametrize("deg", [0.0, 2.0, 10.0, 30.0, -45.0, 80.0])
def test_locked_wheel_is_edc_full_slide(deg):
    # EDC (EDSVS/EDVTS): Fx = mu_s Fz cos(alpha), Fy = mu_s Fz sin(alpha) when the wheel locks.
    a = math.radians(deg)
    fx, fy = forces(FZ, a, 1.0)
    assert fx == pytest.approx(-MU_S * FZ * math.cos(a), rel=1e-12, abs=1e-9)  # round-off
    assert fy == pytest.approx(MU_S * FZ * math.sin(a), rel=1e-12, abs=1e-9)


def test_force_never_exceeds_friction_and_equals_it_when_sliding():
    a = jnp.radians(jnp.linspace(-89.0, 89.0, 91))[:, None]
    s = jnp.linspace(-1.0, 1.0, 81)[None, :]
    for fz in (300.0, FZ, 9000.0):
        fx, fy = fiala_tire_forces(fz, a, s, FP)
        f = np.hypot(np.asarray(fx), np.asarray(fy))
        tana, cos2 = np.tan(np.asarray(a)), np.cos(np.asarray(a)) ** 2
        frac = np.sqrt(np.sin(np.asarray(a)) ** 2 + np.asarray(s) ** 2 * cos2)
        mu = MU_P - (MU_P - MU_S) * frac
        assert np.all(f <= mu * fz * (1 + 1e-12))  # round-off
        psi = np.hypot(CS * np.asarray(s), CA * tana) / (1 - np.asarray(s) + 1e-300)
        sliding = psi >= 3 * mu * fz
        assert sliding.any() and (~sliding).any()
        np.testing.assert_allclose(f[sliding], (mu * fz * np.ones_like(f))[sliding], rtol=1e-12)  # round-off


def test_odd_in_slip_angle():
    for a in [0.01, 0.1, 0.3, 1.2, 2.0, 3.0]:
        for s in [0.0, 0.05, -0.2, 0.7, 1.0]:
            fxp, fyp = forces(FZ, a, s)
            fxm, fym = forces(FZ, -a, s)
            # exact by construction up to tan(-a) = -tan(a) round-off
            assert fym == pytest.approx(-fyp, rel=1e-12, abs=1e-12) and fxm == pytest.approx(fxp, rel=1e-12)


@pytest.mark.parametrize("s,deg", [(0.01, 0.0), (0.05, 2.0), (0.1, 5.0), (0.3, 12.0), (-0.2, 7.0), (0.32, 1.0)])
def test_odd_in_theoretical_slip(s, deg):
    # Fx is odd in sigma_x = s/(1 - s), not in s (driving and braking differ in s, as in the brush
    # model): (s, tan a) -> (s', tan a') with s' = -s/(1 - 2s), tan a' = tan a/(1 - 2s) flips sigma_x and
    # keeps sigma_y, so Fx' = -Fx, Fy' = Fy (constant mu: the friction law depends on s, not sigma).
    # (s <= 1/3 keeps s' >= -1, inside Remark 3.)
    a = math.radians(deg)
    s2 = -s / (1 - 2 * s)
    a2 = math.atan(math.tan(a) / (1 - 2 * s))
    fx, fy = forces(FZ, a, s, FP_CONST_MU)
    fx2, fy2 = forces(FZ, a2, s2, FP_CONST_MU)
    assert fx2 == pytest.approx(-fx, rel=1e-11) and fy2 == pytest.approx(fy, rel=1e-11, abs=1e-9)  # round-off
    # ... and to first order odd in s itself: |Fx(s) + Fx(-s)| / |Fx(s)| ~ 2|s| + 2 lam_x, here < 1e-3.
    e = 1e-5
    assert abs(forces(FZ, 0.0, e)[0] + forces(FZ, 0.0, -e)[0]) < 1e-3 * abs(forces(FZ, 0.0, e)[0])


def test_remarks_2_and_3_as_calspan():
    for a in [0.05, 0.3, 1.0]:
        lo = forces(FZ, 0.5 * math.pi - a, 0.0)[1]
        hi = forces(FZ, 0.5 * math.pi + a, 0.0)[1]
        assert lo == pytest.approx(hi, rel=1e-12)  # pi - (pi/2 + a) = pi/2 - a up to round-off
    for s in [1.5, -3.0, 40.0]:
        np.testing.assert_allclose(forces(FZ, 0.1, s), forces(FZ, 0.1, -1.0), rtol=1e-14)  # same inputs


def test_stiffness_at_origin_equals_calspan():
    tp = tire_params()
    jf = np.asarray(jax.jacfwd(lambda x: jnp.stack(fiala_tire_forces(FZ, x[0], x[1], FP)))(jnp.zeros(2)))
    jc = np.asarray(jax.jacfwd(lambda x: jnp.stack(tire_forces(FZ, x[0], x[1], tp)))(jnp.zeros(2)))
    # Same slopes at the origin (both analytic, so round-off): dFy/dalpha = C_a and dFx/ds = -C_s.
    np.testing.assert_allclose(jf, jc, rtol=1e-9, atol=1e-9)
    assert jf[1, 0] == pytest.approx(CA, rel=1e-12) and jf[0, 1] == pytest.approx(-CS, rel=1e-12)


@pytest.mark.parametrize("deg", [0.05, 0.1, 0.25])
def test_linear_range_agrees_with_calspan(deg):
    # Both start with slope C_a; Fiala then softens by the relative amount lam = C_a tan(a)/(3 mu Fz)
    # (first nonlinear term of the cubic), while CALSPAN stays linear to within ~0.1 lam here (its
    # k_mu sin(a) drop and the sigma^2 term of f nearly cancel). So |Fy_F/Fy_C - 1| <= 1.2 lam, which
    # is 0.4 % at 0.05 deg: a cornering-stiffness mismatch of more than ~0.5 % would fail it.
    a = math.radians(deg)
    lam = CA * math.tan(a) / (3 * MU_P * FZ)
    ratio = forces(FZ, a, 0.0)[1] / float(tire_forces(FZ, a, 0.0, tire_params())[1])
    assert abs(ratio - 1) <= 1.2 * lam


@pytest.mark.parametrize("r", [0.8, 0.9, 1.1, 1.2])
def test_load_exponents_follow_calspan_near_static_load(r):
    # C_a (Fz/Fz0)^0.5 vs CALSPAN's a0 + a1 Fz - a1/a2 Fz^2: same value and nearly the same log-slope
    # (0.496) at Fz0, so within +-20 % of load only the second-order curvature differs: < 1.5 %.
    # CALSPAN's longitudinal stiffness cs_fz * Fz is exactly linear: exponent 1, round-off.
    fp = fiala_params(dict(c_alpha_exp=0.5, c_s_exp=1.0))
    fz = r * FZ
    j = np.asarray(jax.jacfwd(lambda x: jnp.stack(fiala_tire_forces(fz, x[0], x[1], fp)))(jnp.zeros(2)))
    assert j[1, 0] == pytest.approx(float(cornering_stiffness(fz, tire_params())), rel=1.5e-2)
    assert -j[0, 1] == pytest.approx(GOODYEAR_185SR14["cs_fz"] * fz, rel=1e-12)


POINTS = [
    (FZ, 0.0, 0.0),  # origin: 0/0 of the direction
    (FZ, math.atan(3 * MU_P * FZ / CA), 0.0),  # sliding boundary at mu_p (friction lower here: sliding)
    (FZ, 0.0, 1.0),  # locked wheel, 1 - s = 0
    (FZ, 0.3, 1.0),
    (FZ, 0.5 * math.pi, 0.0),
    (FZ, 0.1, -1.0),
    (0.0, 0.1, 0.1),  # lifted wheel
    (1e-9, 0.0, 0.0),
    (1e-9, 0.2, 0.05),
]


@pytest.mark.parametrize("fz,a,s", POINTS)
def test_gradients_finite_everywhere(fz, a, s):
    def f(x, fp):
        fx, fy = fiala_tire_forces(x[0], x[1], x[2], fp)
        return fx + 2.0 * fy

    x = jnp.array([fz, a, s])
    gx, gp = jax.grad(f, argnums=(0, 1))(x, FP)
    assert np.all(np.isfinite(np.asarray(gx)))
    assert all(np.isfinite(np.asarray(v)) for v in jax.tree_util.tree_leaves(gp))
    jac = np.asarray(jax.jacfwd(lambda y: jnp.stack(fiala_tire_forces(y[0], y[1], y[2], FP)))(x))
    assert np.all(np.isfinite(jac))


def test_gradient_at_sliding_boundary_matches_finite_differences():
    # The cubic meets mu Fz with zero slope (dF/dlam = 3 mu Fz (1 - lam)^2), so Fy is C^1 across the
    # boundary: the AD slope there equals the central difference of the two branches. With constant mu
    # it is 0; with the sliding-speed friction it is d(mu)/dalpha Fz = -(mu_p - mu_s) cos(a) Fz. In
    # combined slip (s = 0.05) the force direction also stays C^1 (its blend weight starts flat).
    # central difference: truncation ~ h^2 F'''/6 ~ 1e-12 * 1e5 N, round-off ~ 1e-16 * 3e3 N / h;
    # both far below rel 1e-4, while a kink would leave the AD slope off by O(1) of it.
    h = 1e-6
    for fp in (FP_CONST_MU, FP):
        for s in (0.0, 0.05):
            # boundary of psi = 3 mu Fz in alpha at this s, found by bisection on the code's own law
            lo, hi = 0.01, 1.0
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                fr = float(fp.mu_p) + (float(fp.mu_s) - float(fp.mu_p)) * math.sqrt(
                    math.sin(mid) ** 2 + s**2 * math.cos(mid) ** 2)
                psi = math.hypot(CS * s, CA * math.tan(mid)) / (1 - s)
                lo, hi = (mid, hi) if psi < 3 * fr * FZ else (lo, mid)
            a = hi
            g = float(jax.grad(lambda x: fiala_tire_forces(FZ, x, s, fp)[1])(a))
            fd = (forces(FZ, a + h, s, fp)[1] - forces(FZ, a - h, s, fp)[1]) / (2 * h)
            assert g == pytest.approx(fd, rel=1e-4, abs=1e-3)
    # pure lateral, constant mu: zero slope at the boundary
    a_sl = math.atan(3 * MU_P * FZ / CA)
    slope = float(jax.grad(lambda x: fiala_tire_forces(FZ, x, 0.0, FP_CONST_MU)[1])(a_sl))
    assert slope == pytest.approx(0.0, abs=1e-6)  # vs C_a = 4e4 N/rad away from it: round-off of a_sl


def test_jit_and_vector_inputs():
    fz = jnp.array([3000.0, 4000.0, 0.0, 5000.0])
    a = jnp.array([0.05, -0.2, 0.1, 1.0])
    s = jnp.array([0.0, 0.1, 0.2, -0.5])
    fx, fy = jax.jit(fiala_tire_forces)(fz, a, s, FP)
    assert fx.shape == fy.shape == (4,)
    for i in range(4):
        ex, ey = forces(float(fz[i]), float(a[i]), float(s[i]))
        # jit and batching change only the evaluation order: round-off
        assert float(fx[i]) == pytest.approx(ex, rel=1e-12, abs=1e-12)
        assert float(fy[i]) == pytest.approx(ey, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("deg", [0.0, 4.0, 30.0, -60.0])
def test_locked_wheel_equals_calspan(deg):
    # At s = 1 both models slide at full speed: CALSPAN's Kc' = Ks and f -> 1 (eqs 1.21-1.23) give
    # mu0 (1 - k_mu) Fz along (1, tan a), which is Fiala's mu_s Fz along the sliding velocity at Fz0.
    # Tolerance: CALSPAN evaluates 1 - s as 1e-12, so its f is 1 - O(1e-12).
    a = math.radians(deg)
    np.testing.assert_allclose(forces(FZ, a, 1.0), tire_forces(FZ, a, 1.0, tire_params()), rtol=1e-9, atol=1e-9)
