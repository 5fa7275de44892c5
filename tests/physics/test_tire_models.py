"""Tire-model selection (physics/tire): the TIRES registry and per-vehicle dispatch.

A second model is registered here (a linear tire with closed-form forces), so the dispatch
is proved without waiting for another real model: in one batch, each vehicle gets the
forces of its own model, and a one-model batch calls CALSPAN directly.
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.pytree import pytree_dataclass
from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import DriverTable, Scenario, VehicleSpec
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.physics.tire import TIRES, TireModel, tire_forces
from jaxmedusa.physics.tire.calspan import tire_forces as calspan_forces


@pytree_dataclass
class LinearParams:
    c_alpha: jnp.ndarray  # cornering stiffness per unit load [1/rad]
    c_s: jnp.ndarray  # longitudinal stiffness per unit load [-]


def linear_params(values=None):
    v = {"c_alpha": 5.0, "c_s": 8.0, **(values or {})}
    return LinearParams(**{k: np.asarray(float(x)) for k, x in v.items()})


def linear_forces(fz, alpha, s, p):
    return -p.c_s * s * fz, p.c_alpha * alpha * fz


if "test-linear" not in TIRES:
    TIRES.register("test-linear", TireModel("test-linear", linear_forces, linear_params, {"c_alpha": 5.0, "c_s": 8.0}))

FZ = jnp.array([3500.0, 3400.0, 4200.0, 4100.0])
ALPHA = jnp.array([0.02, 0.02, -0.01, -0.01])
SLIP = jnp.array([0.03, 0.03, 0.0, 0.0])


def test_each_vehicle_gets_its_own_models_forces(models):
    calspan_model = models[0]
    linear_model = dataclasses.replace(models[0], tire_model="test-linear")
    sc = Scenario("mixed", [calspan_model, linear_model],
                  [VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=20.0),
                   VehicleSpec(model=1, x=20.0, y=0.0, orientation=0.0, speed=20.0)])
    batch, _ = build_batch([sc])
    tires = jax.tree.map(lambda x: x[0], batch.vehicle.tire)  # [V, ...] leaves
    assert tires.models == ("calspan", "test-linear") and tires.index.tolist() == [0, 1]
    fx, fy = jax.jit(jax.vmap(tire_forces, in_axes=(0, None, None, None)))(tires, FZ, ALPHA, SLIP)
    cx, cy = calspan_forces(FZ, ALPHA, SLIP, jax.tree.map(lambda x: x[0], tires.params[0]))
    # vehicle 1: CALSPAN, the same arithmetic jitted (fused) vs eager: equal to a few ulps
    np.testing.assert_allclose(fx[0], cx, rtol=1e-14)
    np.testing.assert_allclose(fy[0], cy, rtol=1e-14)
    np.testing.assert_allclose(fx[1], -8.0 * SLIP * FZ, rtol=1e-15)  # vehicle 2: the closed form
    np.testing.assert_allclose(fy[1], 5.0 * ALPHA * FZ, rtol=1e-15)


def test_a_one_model_batch_has_no_dispatch(models):
    sc = Scenario("one", [models[0]], [VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=20.0)])
    batch, _ = build_batch([sc])
    assert batch.vehicle.tire.models == ("calspan",)
    text = str(jax.make_jaxpr(lambda t: tire_forces(t, FZ, ALPHA, SLIP))(
        jax.tree.map(lambda x: x[0, 0], batch.vehicle.tire)))
    assert "switch" not in text and "cond" not in text


def test_unknown_tire_model_is_named(models):
    sc = Scenario("bad", [dataclasses.replace(models[0], tire_model="michelin")],
                  [VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=20.0)])
    with pytest.raises(ValueError, match="unknown tire model 'michelin'; valid: calspan"):
        build_batch([sc])


def test_calspan_and_fiala_vehicles_in_one_run_equal_their_solo_runs(models):
    """Per-vehicle selection through the whole step: a CALSPAN car and a Fiala car side by
    side (50 m apart, contact off) in one scenario give the same motion as each alone (the
    switch computes both models and selects; the arithmetic of each is unchanged, up to XLA
    fusing the two programs differently: 1e-9 relative after 1000 steps is round-off), and
    the two tire models make the steered cars differ."""
    settings = Settings(end_time=0.05, save_every=0.05, contact=False)
    cal = models[0]
    fia = dataclasses.replace(models[0], tire_model="fiala")
    a = VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=20.0,
                    steering=DriverTable(values=(3.0,)))
    b = dataclasses.replace(a, model=1, y=50.0)
    both = Scenario("both", [cal, fia], [a, b])
    run = lambda sc: simulate(*build_batch([sc], dt=settings.dt), settings, record=False).final.vehicles  # noqa: E731
    together = run(both)
    alone_a = run(Scenario("a", [cal], [a]))
    alone_b = run(Scenario("b", [fia], [dataclasses.replace(b, model=0)]))
    np.testing.assert_allclose(together.r[0, 0], alone_a.r[0, 0], rtol=1e-9)
    np.testing.assert_allclose(together.r[0, 1], alone_b.r[0, 0], rtol=1e-9)
    lateral = float(together.r[0, 0, 1]), float(together.r[0, 1, 1]) - 50.0
    assert lateral[0] > 0.0 and lateral[1] > 0.0 and abs(lateral[0] - lateral[1]) > 1e-6
