"""Static equilibrium (R3 and F) of a vehicle model at rest on the flat road z = 0.

The EQUILIBRIUM blocks of the report's model files are not equilibria of their own
parameters (Appendix C model 1 says pitch -4.3 deg; the true one is nearer -0.8 deg).
`solve_equilibrium` finds the state where the rates of eq (1.30) vanish at rest.
"""
from __future__ import annotations

from dataclasses import replace as dc_replace
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.params import GRAVITY, VehicleParams
from jaxmedusa.core.scenario import ModelSpec
from jaxmedusa.physics.vehicle import vehicle_params, vehicle_rates


class Equilibrium(NamedTuple):
    r3: float  # height of the centre of mass [m]
    F: np.ndarray  # (3, 3) directors as columns
    residual: float  # max |M z2'| at the solution [N]
    iterations: int
    wheel_loads: np.ndarray  # (W,) suspension forces Fz [N], W = 4 for a two-axle car


def _directors(y):
    """F = R_y(pitch) (I + S) for y = (pitch, S11, S22, S33, S13): an exact rotation times a
    small symmetric stretch, so Newton steps stay well scaled. The model is symmetric left to
    right (assembly points at +-B/2), so roll and the shears S12, S23 vanish at equilibrium;
    they are held at exactly 0, since round-off asymmetry would let the tires (whose slip
    angle atan2(vy, vx) is undefined at rest) push a resting car sideways."""
    cp, sp = jnp.cos(y[0]), jnp.sin(y[0])
    Ry = jnp.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    S = jnp.array([[y[1], 0.0, y[4]], [0.0, y[2], 0.0], [y[4], 0.0, y[3]]])
    return Ry @ (jnp.eye(3) + S)


def _static_residual(p: VehicleParams, x):
    """Generalized force M z2' (12,) at rest for unknowns x = (r3, pitch, S11, S22, S33, S13)."""
    r = jnp.array([0.0, 0.0, x[0]])
    F = _directors(x[1:])
    zero3, zero33, zero_w = jnp.zeros(3), jnp.zeros((3, 3)), jnp.zeros(p.C.shape)  # one per wheel
    rates, wheels, _ = vehicle_rates(p, None, r, F, zero3, zero33, zero_w, zero_w, jnp.asarray(0), jnp.asarray(0.0),
                                     0.0, 0.0, True)
    return jnp.concatenate([rates.dv * p.mass, (rates.dW * p.my).T.ravel()]), wheels.fz


def solve_equilibrium(model: ModelSpec | VehicleParams, tol: float = 1e-9, max_iter: int = 100) -> Equilibrium:
    """Newton with the autodiff Jacobian and a backtracking line search, in least squares
    (the lateral and antisymmetric equations vanish identically at rest). Unknowns: R3,
    pitch and a symmetric stretch (yaw and roll are 0). Starts from the model's EQUILIBRIUM
    pitch and R3. Converged when the largest generalized force is below tol * m g."""
    p = model if isinstance(model, VehicleParams) else vehicle_params(model)
    F0 = np.asarray(p.eq_F)
    x = jnp.zeros(6).at[0].set(float(p.eq_r3)).at[1].set(np.arctan2(-F0[2, 0], F0[0, 0]))
    res_fn = jax.jit(lambda x: _static_residual(p, x)[0])
    jac_fn = jax.jit(jax.jacfwd(lambda x: _static_residual(p, x)[0]))
    scale = float(p.mass) * GRAVITY
    it = 0
    for it in range(1, max_iter + 1):
        res = res_fn(x)
        norm = float(jnp.linalg.norm(res))
        if float(jnp.max(jnp.abs(res))) < tol * scale:
            break
        step = jnp.linalg.lstsq(jac_fn(x), -res, rcond=1e-12)[0]
        lam = 1.0
        while lam > 1e-6 and float(jnp.linalg.norm(res_fn(x + lam * step))) >= norm:
            lam *= 0.5  # wheel lift-off makes the residual non-smooth far from equilibrium
        x = x + lam * step
    res, fz = _static_residual(p, x)
    worst = float(jnp.max(jnp.abs(res)))
    if worst >= tol * scale:
        raise RuntimeError(f"static equilibrium did not converge in {max_iter} iterations (residual {worst:.3g} N)")
    return Equilibrium(r3=float(x[0]), F=np.asarray(_directors(x[1:])), residual=worst, iterations=it,
                       wheel_loads=np.asarray(fz))


def with_equilibrium(model: ModelSpec, eq: Equilibrium) -> ModelSpec:
    """A copy of `model` whose EQUILIBRIUM block is `eq`."""
    return dc_replace(model, eq_r3=eq.r3, eq_F=tuple(tuple(float(v) for v in row) for row in eq.F))


def pitch_deg(F) -> float:
    """Pitch of director 1 [deg] (positive nose up): atan2(d13, d11)."""
    F = np.asarray(F)
    return float(np.degrees(np.arctan2(F[2, 0], F[0, 0])))
