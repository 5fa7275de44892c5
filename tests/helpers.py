"""Plain helpers the tests share (scenario builders, paths, the compiled rates' HLO); fixtures are in conftest.py.

Importable from every test folder because pytest puts tests/ on sys.path for conftest.py.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import jax
import jax.numpy as jnp

from jaxmedusa.core.scenario import DriverTable, Scenario, VehicleSpec
from jaxmedusa.physics.vehicle import vehicle_params, vehicle_rates

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "studies" / "medusa"


def single(model, name="single", speed=0.0, steering_deg=0.0, tire_speed=0.0, x=0.0, y=0.0, orientation=0.0):
    """A one-vehicle scenario on the flat plane with constant driver inputs."""
    veh = VehicleSpec(model=0, x=x, y=y, orientation=orientation, speed=speed,
                      tire_speed=DriverTable(values=(tire_speed,)), steering=DriverTable(values=(steering_deg,)))
    return Scenario(name=name, models=[model], vehicles=[veh])


def without_damping(model):
    return replace(model, d1=0.0, d2=0.0)


def compiled_rates_hlo(model, b=8, steer=0.0):
    """XLA's optimised HLO text of `vehicle_rates` vmapped over b vehicles of `model` (at its
    equilibrium) at 20 m/s with slip angles spread over [-0.1, 0.1] rad; `steer` [rad], a float
    (folded into the program) or an array (b,) (its sine and cosine compiled)."""
    p = vehicle_params(model)
    r = jnp.tile(jnp.array([0.0, 0.0, float(p.eq_r3)]), (b, 1))
    F = jnp.tile(jnp.asarray(p.eq_F), (b, 1, 1))
    v = jnp.tile(jnp.array([20.0, 0.4, 0.0]), (b, 1))
    W = jnp.zeros((b, 3, 3))
    alpha = jnp.linspace(-0.1, 0.1, 4 * b).reshape(b, 4)
    args = (r, F, v, W, alpha) if isinstance(steer, float) else (r, F, v, W, alpha, steer)

    def rates(r, F, v, W, alpha, steer=steer):
        out, wheels, _ = vehicle_rates(p, None, r, F, v, W, alpha, jnp.zeros(4), 0, 0.0, steer, 0.0)
        return out, wheels.fx, wheels.fy, wheels.sliding, wheels.power

    return jax.jit(jax.vmap(rates)).lower(*args).compile().as_text()
