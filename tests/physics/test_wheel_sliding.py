"""EDC's skid flag (WheelInfo.sliding): where each tire model says its contact patch slides."""
import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import brentq

from helpers import ROOT
from jaxmedusa import study as S
from jaxmedusa.build import build_batch
from jaxmedusa.physics.tire import _forces_and_sliding, calspan, tire_set, tire_sliding
from jaxmedusa.physics.tire.calspan import GOODYEAR_185SR14 as G
from jaxmedusa.physics.tire.fiala import FIALA_185SR14 as FI
from jaxmedusa.physics.tire.model import TireModel
from jaxmedusa.physics.vehicle import vehicle_params, vehicle_rates
from jaxmedusa.solver.simulate import simulate

FZ = 4000.0  # [N]


def _flags(model, alphas, s=0.0):
    a = jnp.asarray(alphas)
    return np.asarray(tire_sliding(tire_set(model), jnp.full(a.shape, FZ), a, jnp.full(a.shape, s)))


def test_calspan_slides_from_three_times_mu0_fz_over_cornering_stiffness():
    # Pure side slip: sigma of eq (1.22) = pi C_a tan(alpha) / (4 mu0 Fz) with C_a = a0 + a1 Fz - a1/a2 Fz^2
    # (Ks a_p0^2 / 2) and mu0 of eq (1.20), so sigma = 3 pi / 4 at tan(alpha) = 3 mu0 Fz / C_a, by hand:
    c_a = G["a0"] + G["a1"] * FZ - G["a1"] / G["a2"] * FZ**2
    mu0 = (G["b1"] * FZ + G["b3"] + G["b4"] * FZ**2) * G["sn_p"] / G["sn_t"]
    a_star = math.atan(3.0 * mu0 * FZ / c_a)
    # 0.1 % either side: far wider than round-off, far narrower than any other threshold
    np.testing.assert_array_equal(_flags("calspan", [0.999 * a_star, 1.001 * a_star, -1.001 * a_star]),
                                  [False, True, True])
    assert _flags("calspan", [0.0], s=1.0).all()  # the locked wheel slides
    assert not _flags("calspan", [0.0], s=0.05).any()  # 5 % driven slip rolls


def test_fiala_slides_where_abar_reaches_three():
    # EDC's Fiala formula: abar = C_a tan(alpha) / (mu Fz) >= 3 is the saturated branch; the
    # friction mu(alpha) = mu_p + (mu_s - mu_p) sin(alpha) at s = 0 (fiala.fiala_friction).
    mu = lambda a: FI["mu_p"] + (FI["mu_s"] - FI["mu_p"]) * math.sin(a)  # noqa: E731
    a_star = brentq(lambda a: FI["c_alpha"] * math.tan(a) - 3.0 * mu(a) * FZ, 1e-6, 1.0, xtol=1e-14)
    np.testing.assert_array_equal(_flags("fiala", [0.999 * a_star, 1.001 * a_star]), [False, True])
    assert _flags("fiala", [0.01], s=1.0).all()


def test_vehicle_flags_lifted_and_rolling_wheels(model1_at_equilibrium):
    # At equilibrium on z = 0, rolling at 20 m/s with 1 deg lagged slip: no tire slides; with
    # 30 deg every loaded tire slides (tan 30 deg = 0.58 > 3 mu0 Fz / C_a ~ 0.27 at Fz ~ 3.9 kN);
    # lifted 1 m above the road no tire is loaded, so none slides.
    p = vehicle_params(model1_at_equilibrium)
    r = jnp.array([0.0, 0.0, float(p.eq_r3)])
    F, v, W = jnp.asarray(p.eq_F), jnp.array([20.0, 0.0, 0.0]), jnp.zeros((3, 3))
    flags = lambda r, a: np.asarray(vehicle_rates(p, None, r, F, v, W, jnp.full(4, a), jnp.zeros(4), 0, 0.0, 0.0,  # noqa: E731
                                                  0.0)[1].sliding)
    assert not flags(r, math.radians(1.0)).any()
    assert flags(r, math.radians(30.0)).all()
    assert not flags(r + jnp.array([0.0, 0.0, 1.0]), math.radians(30.0)).any()


def test_a_model_without_a_combined_call_gets_its_forces_then_its_flag():
    # physics.tire._forces_and_sliding's fallback for a model that defines forces and sliding only:
    # the same bits as calspan's combined call
    apart = TireModel(name="apart", forces=calspan.tire_forces, params=calspan.tire_params,
                      defaults=G, sliding=calspan.tire_sliding)
    a = jnp.linspace(-0.6, 0.6, 13)
    args = (jnp.full(a.shape, FZ), a, jnp.linspace(-0.2, 1.0, 13), calspan.tire_params())
    for x, y in zip(_forces_and_sliding(apart)(*args), calspan.forces_and_sliding(*args)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert np.asarray(calspan.forces_and_sliding(*args)[2]).any()  # some of these slide


def test_the_loop_evaluates_the_tires_slip_terms_once_for_forces_and_flag():
    # The skid tracker (the rest group) reads WheelInfo.sliding. Called apart from the forces, the
    # flag's kernel in XLA's compiled time loop evaluated the CALSPAN slip terms (divisions included)
    # once more: 13 divisions of the tires' scope against 10 without the rest group in the offset
    # study's loop. From the forces' own stored sigma it adds none (exact counts of a compiled program).
    study = S.load_study(ROOT / "studies" / "offset.toml")
    settings = dataclasses.replace(study.settings, end_time=0.01, contact=False)
    ids, cols = S.design(study)
    items = S.scenarios_for(study, {c: v[:2] for c, v in cols.items()}, ids[:2])
    batch, state = build_batch([it[0] for it in items], settings.dt, n_vehicles=study.n_vehicles,
                               tire=[it[1] for it in items], contact=[it[2] for it in items])

    def tire_divisions(rest):
        tracker = dataclasses.replace(study.tracker, rest=rest, damage=False)
        txt = jax.jit(lambda b, s: simulate(b, s, settings, tracker=tracker, record=False)).lower(
            batch, state).compile().as_text()
        return sum(1 for line in txt.splitlines() if " divide(" in line and "tires" in line)

    without = tire_divisions(False)
    assert without > 0  # the count sees the tires' divisions at all
    assert tire_divisions(True) == without
