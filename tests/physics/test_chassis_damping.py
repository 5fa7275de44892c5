"""Structural damping of the chassis (ModelSpec.chassis_damping, physics/vehicle.py
`viscous_director_forces`): stiffness-proportional (Rayleigh) damping of the Cosserat point's
elastic modes. Checked against Rayleigh damping's closed form (damping ratio beta omega / 2 per
mode), the dissipated power's closed form, frame indifference, the step's stability bound
(Jury's conditions, `chassis_damping_limit`) and a run whose ringing it removes."""
from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.io.scenario_toml import scenario_from_dict
from jaxmedusa.physics.vehicle import (chassis_damping_limit, chassis_frequencies, intrinsic_director_forces,
                                       vehicle_params, viscous_director_forces)
from jaxmedusa.solver.simulate import simulate

BETA = 2e-4  # [s]: the worked example's (damping ratio 3.2 % at 50.6 Hz)
STUDIES = Path(__file__).resolve().parents[2] / "studies"


def _rotation(a, b, c):
    def rot(axis, t):
        k = np.zeros((3, 3))
        i, j = [(1, 2), (2, 0), (0, 1)][axis]
        k[i, j], k[j, i] = -1.0, 1.0
        return np.eye(3) + np.sin(t) * k + (1 - np.cos(t)) * k @ k

    return rot(2, a) @ rot(1, b) @ rot(0, c)


@pytest.fixture(scope="module")
def params(models):
    return vehicle_params(models[0])


def test_viscous_forces_are_the_stiffness_times_beta(params):
    """Linearised at a rotated undeformed chassis (F = R, W = 0), d k_v / dW equals beta d k / dF:
    stiffness-proportional damping (round-off: 1e-9 of the largest entry)."""
    R = jnp.asarray(_rotation(0.3, -0.2, 0.1))
    K = jax.jacfwd(lambda F: intrinsic_director_forces(F, params.lam, params.tm))(R).reshape(9, 9)
    Cv = jax.jacfwd(lambda W: viscous_director_forces(R, W, params.lam, params.tm, BETA))(jnp.zeros((3, 3))).reshape(9, 9)
    np.testing.assert_allclose(Cv, BETA * K, rtol=0, atol=1e-9 * float(jnp.max(jnp.abs(BETA * K))))


def test_rigid_rotation_is_not_damped_and_deformation_dissipates(params):
    """k_v = 0 for W = Omega F (a superposed rigid spin) of a deformed chassis; otherwise its power
    sum_i k_v^i . w_i equals beta (lam tr(C')^2 + tm C':C') / 2 >= 0, C' = F^T W + W^T F (1e-12)."""
    rng = np.random.default_rng(0)
    lam, tm = float(params.lam), float(params.tm)
    for _ in range(5):
        F = _rotation(*rng.uniform(-1, 1, 3)) @ (np.eye(3) + 1e-3 * rng.standard_normal((3, 3)))
        omega = rng.standard_normal(3)
        spin = np.array([[0, -omega[2], omega[1]], [omega[2], 0, -omega[0]], [-omega[1], omega[0], 0]])
        scale = BETA * tm * np.linalg.norm(omega)  # [N] of a rate 1/s of strain
        assert np.max(np.abs(viscous_director_forces(F, spin @ F, lam, tm, BETA))) < 1e-12 * scale
        W = rng.standard_normal((3, 3))
        rate = F.T @ W + W.T @ F
        power = float(jnp.sum(viscous_director_forces(F, W, lam, tm, BETA) * W))
        expected = 0.5 * BETA * (lam * np.trace(rate) ** 2 + tm * np.sum(rate * rate))
        assert expected > 0.0 and power == pytest.approx(expected, rel=1e-12)


def test_each_elastic_mode_gets_rayleigh_damping_ratio(params):
    """The linearised director dynamics W' = -(k + k_v) / my about the undeformed chassis: its six
    elastic eigenvalue pairs have |lambda| = omega_i (chassis_frequencies) and damping ratio
    -Re(lambda) / |lambda| = beta omega_i / 2, Rayleigh damping's closed form (1e-8); the
    report's model 1 rings at 50.6 Hz first (period 19.8 ms, as its runs show)."""
    my = jnp.asarray(params.my)

    def rates(z):
        F, W = jnp.eye(3) + z[:9].reshape(3, 3), z[9:].reshape(3, 3)
        k = intrinsic_director_forces(F, params.lam, params.tm) + viscous_director_forces(F, W, params.lam, params.tm, BETA)
        return jnp.concatenate([W.reshape(-1), (-k / my).reshape(-1)])

    lam = np.linalg.eigvals(np.asarray(jax.jacfwd(rates)(jnp.zeros(18))))
    # one of each oscillating pair; the rigid rotations (zero eigenvalues, in Jordan blocks whose
    # round-off scatters them by ~1e-6 rad/s) are not modes
    lam = lam[(lam.imag > 0.0) & (np.abs(lam) > 1.0)]
    lam = lam[np.argsort(np.abs(lam))]
    omega = chassis_frequencies(params)
    np.testing.assert_allclose(np.abs(lam), omega, rtol=1e-8)
    np.testing.assert_allclose(-lam.real / np.abs(lam), BETA * omega / 2, rtol=1e-8)
    assert omega[0] / (2 * np.pi) == pytest.approx(50.6, abs=0.05)


def test_stability_limit_of_the_step(params):
    """The bound of eq (1.52)'s step, omega_max^2 dt (dt + 2 beta) <= 4, by hand for the report's
    car (omega_max = 2 pi 258.1 rad/s): 2.61e-4 s at 1 ms steps, 0 at 2 ms (beyond the undamped
    limit omega dt <= 2, 1.23 ms). A batch asking for more is refused naming the key."""
    w = 2 * np.pi * 258.08
    assert chassis_damping_limit(params, 1e-3) == pytest.approx(0.5 * (4 / (w * w * 1e-3) - 1e-3), rel=1e-4)
    assert chassis_damping_limit(params, 1e-3) == pytest.approx(2.61e-4, rel=2e-3)
    assert chassis_damping_limit(params, 2e-3) == 0.0


def _scene(beta):
    text = f"""
[medusa]
folder = "medusa/offset"
[road]
flat = true
[overrides.models.1]
chassis_damping = {beta}
"""
    sc = scenario_from_dict(tomllib.loads(text), base_dir=STUDIES, source="<scene>")[0]
    return replace(sc, vehicles=sc.vehicles[:1])


def test_bad_damping_is_refused_naming_the_key():
    with pytest.raises(MedusaInputError, match=r"overrides\.models\.1\.chassis_damping"):
        _scene(-1e-4)
    with pytest.raises(ValueError, match=r"models\.1\.chassis_damping: 0\.0003 s is more than steps of 0\.001 s"):
        build_batch([_scene(3e-4)], dt=1e-3)


def test_damping_removes_the_ringing_of_a_run():
    """The report's car rolling freely at 20 m/s from its EQUILIBRIUM block (given to 4 digits,
    so the chassis starts ringing), 0.5 s at 1 ms. The d1 stretch, less its mean over one
    period of the 50.6 Hz mode (20 samples): undamped, its amplitude over 0.40-0.48 s stays
    within 30 % of that over 0.04-0.12 s (measured 0.99); with beta = 2e-4 s it decays as the
    lowest mode's free vibration, exp(-beta omega^2 / 2 x 0.36 s) = 0.026 (the windows' centres
    0.36 s apart), within a factor 1.5 either way (measured 0.025; the higher modes, damped
    faster, and the windows' peak-to-peak estimate make the spread). Without damping the batch
    has no damping term (compiled out), so MEDUSA's runs are unchanged."""
    amps = {}
    for beta in (0.0, BETA):
        batch, s0 = build_batch([_scene(beta)], dt=1e-3)
        assert (batch.vehicle.chassis_damping is None) == (beta == 0.0)
        res = jax.device_get(simulate(batch, s0, Settings(end_time=0.5, dt=1e-3, save_every=1e-3,
                                                          step_control="constant")))
        stretch = np.linalg.norm(np.asarray(res.samples.F)[0, :, 0, :, 0], axis=1) - 1.0
        ring = stretch - np.convolve(stretch, np.ones(20) / 20, mode="same")  # 20 samples: one period
        amps[beta] = [0.5 * np.ptp(ring[a:b]) for a, b in ((40, 120), (400, 480))]
    early, late = amps[0.0]
    assert 0.7 < late / early < 1.3, amps
    early, late = amps[BETA]
    free = np.exp(-BETA * (2 * np.pi * 50.58) ** 2 / 2 * 0.36)
    assert free / 1.5 < late / early < free * 1.5, (amps, free)
