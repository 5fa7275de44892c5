"""Rigid barriers: fixed walls (a plane or a box) that vehicles can hit, with every contact law.

A scenario lists its barriers (TOML `[[barriers]]`, see inputs.py):
  plane: `position` (3,) a point of the wall surface [m], `normal` (3,) the wall's outward
         normal, pointing into free space (normalised when built);
  box:   `position` (3,) its centre [m], `size` (3,) full length, width, height [m] along
         its own axes, `yaw_deg` [deg] its rotation about E3 (0: length along E1).
The box is checked along its two horizontal face normals (separating axes of a wall that is
taller than the car): the contact face is the one the vehicle has penetrated least.

Vehicle-wall geometry is closed-form: the point of the vehicle's contact shape deepest
beyond a face with outward normal n is its support point in the direction -n (crush_law.support,
the gradient of the dual gauge), and the depth is delta = n.(face point) - n.T. The engaged
width is the overlap of the vehicle's and the face's extents along the horizontal tangent
t = E3 x n (a plane is unbounded), and the force point is moved along t to its middle.

Per law (the force on the vehicle acts at that point, along n, plus friction for "crush"):
  crush:    crush_law.crush_force with a rigid second body (B = infinity), friction mu_barrier;
  physical: stiffness * delta + damping * closing speed (>= 0), as for vehicle pairs;
  medusa:   vehicle.c's multiplier law with the wall as a body at rest (multipliers per
            vehicle and barrier in BarrierState.gamma).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .contact_law import ContactTerms, material_point_velocity, medusa_law
from .crush_law import (_material, applied_terms, crush_force, extent, face_coefficients, friction_force,
                        horizontal_tangent, shape_exponents, support)
from .pytree import pytree_dataclass

KINDS = ("plane", "box")
PLANE, BOX = 0, 1


@dataclass(frozen=True)
class BarrierSpec:
    """One rigid barrier as a scenario file gives it (module docstring). Lengths in m."""

    kind: str  # "plane" | "box"
    position: tuple[float, float, float]
    normal: tuple[float, float, float] = (-1.0, 0.0, 0.0)  # plane only
    size: tuple[float, float, float] = (1.0, 1.0, 1.0)  # box only
    yaw_deg: float = 0.0  # box only


@pytree_dataclass
class BarrierParams:
    """Barriers of one scenario, leaves [NB, ...] ([B, NB, ...] once batched).

    kind (NB,) PLANE or BOX (float, 0 or 1); point (NB, 3): plane point or box centre [m];
    normal (NB, 3): plane outward unit normal; axes (NB, 3, 3): box axes as columns;
    half (NB, 3): box half-sizes [m]."""

    kind: jnp.ndarray
    point: jnp.ndarray
    normal: jnp.ndarray
    axes: jnp.ndarray
    half: jnp.ndarray


@pytree_dataclass
class BarrierState:
    """Per vehicle and barrier, leaves [V, NB, ...]: dmax (largest overlap [m], the crush
    law's permanent state) and gamma (2,) (MEDUSA law multipliers)."""

    dmax: jnp.ndarray
    gamma: jnp.ndarray


class BarrierInfo(NamedTuple):
    """What the barrier stage saw, per vehicle and barrier [V, NB] (crush, residual, power
    of the vehicle's structure; zeros but crush = depth for the other laws)."""

    touching: jnp.ndarray
    force: jnp.ndarray
    crush: jnp.ndarray
    residual: jnp.ndarray
    power: jnp.ndarray


def barrier_params(specs: list[BarrierSpec]) -> BarrierParams:
    """BarrierParams (numpy leaves [NB, ...]) of a list of specs."""
    kind, point, normal, axes, half = [], [], [], [], []
    for b in specs:
        if b.kind not in KINDS:
            raise ValueError(f"barrier kind must be one of {KINDS}, got {b.kind!r}")
        n = np.asarray(b.normal, float)
        if b.kind == "plane" and not np.linalg.norm(n) > 0:
            raise ValueError("a plane barrier needs a nonzero normal")
        psi = math.radians(b.yaw_deg)
        c, s = math.cos(psi), math.sin(psi)
        kind.append(float(PLANE if b.kind == "plane" else BOX))
        point.append(np.asarray(b.position, float))
        normal.append(n / max(np.linalg.norm(n), 1e-300))
        axes.append(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]))
        half.append(0.5 * np.asarray(b.size, float))
    return BarrierParams(kind=np.asarray(kind), point=np.stack(point), normal=np.stack(normal), axes=np.stack(axes),
                         half=np.stack(half))


def initial_barrier_state(n_vehicles: int, n_barriers: int) -> BarrierState:
    return BarrierState(dmax=np.zeros((n_vehicles, n_barriers)), gamma=np.zeros((n_vehicles, n_barriers, 2)))


class WallGeometry(NamedTuple):
    """One vehicle against one barrier: touching () bool, depth () [m] (> 0 penetrating),
    n (3,) wall outward normal at the contact (the force direction on the vehicle),
    T (3,) force point [m] (world), X (3,) its material label, width () engaged width [m]."""

    touching: jnp.ndarray
    depth: jnp.ndarray
    n: jnp.ndarray
    T: jnp.ndarray
    X: jnp.ndarray
    width: jnp.ndarray


def _face(r, F, axes, n, face_point, eps1, eps2):
    """Depth of the vehicle beyond the face plane {x: n.x = n.face_point} and its deepest point."""
    h, T = support(r, F, axes, -n, eps1, eps2)  # h = -min n.x over the vehicle
    return jnp.dot(n, face_point) + h, T


def wall_geometry(bp: BarrierParams, r, F, axes, eps1, eps2, width_min) -> WallGeometry:
    """Geometry of one vehicle (r, F, contact semi-axes) against one barrier (leaves of one
    barrier, no NB axis). Both kinds are evaluated and the barrier's own is selected."""
    # plane
    n_p = bp.normal
    dp, Tp = _face(r, F, axes, n_p, bp.point, eps1, eps2)
    # box: four horizontal faces; the SAT depth is the smallest
    normals = jnp.stack([bp.axes[:, 0], -bp.axes[:, 0], bp.axes[:, 1], -bp.axes[:, 1]])
    halves = jnp.stack([bp.half[0], bp.half[0], bp.half[1], bp.half[1]])
    depths, Ts = jax.vmap(lambda n, h: _face(r, F, axes, n, bp.point + h * n, eps1, eps2))(normals, halves)
    k = jnp.argmin(depths)
    box = bp.kind > 0.5
    n = jnp.where(box, normals[k], n_p)
    depth = jnp.where(box, depths[k], dp)
    T = jnp.where(box, Ts[k], Tp)
    t = horizontal_tangent(n)
    lo_v, hi_v = extent(r, F, axes, t, eps1, eps2)
    e_box = jnp.sum(jnp.abs(bp.axes.T @ t) * bp.half)
    c_box = jnp.dot(t, bp.point)
    lo = jnp.where(box, jnp.maximum(lo_v, c_box - e_box), lo_v)
    hi = jnp.where(box, jnp.minimum(hi_v, c_box + e_box), hi_v)
    width = jnp.maximum(hi - lo, width_min)
    mid = jnp.where(hi > lo, 0.5 * (lo + hi), jnp.dot(t, T))
    T = T + (mid - jnp.dot(t, T)) * t
    return WallGeometry(touching=depth > 0.0, depth=depth, n=n, T=T, X=_material(F, T - r), width=width)


class _Rest(NamedTuple):  # the wall as a body at rest, for medusa_law
    v: jnp.ndarray
    W: jnp.ndarray


def vehicle_barrier(law: str, kind: str, bp: BarrierParams, dmax, gamma, state, params, cp, valid):
    """Contact of one vehicle with one barrier under `law` (static). state: VehicleState-like
    (r, F, v, W, predicted positions); params: VehicleParams; cp: ContactParams.
    Returns (dmax_new, gamma_new, ContactTerms on the vehicle, (touching, force, crush,
    residual, power))."""
    e1, e2 = shape_exponents(kind, cp.eps1, cp.eps2)
    g = wall_geometry(bp, state.r, state.F, params.contact_axes, e1, e2, cp.width_min)
    touching = g.touching & valid
    v_p = material_point_velocity(state, g.X)
    rate = -jnp.dot(v_p, g.n)  # closing speed [m/s]
    depth = jnp.where(touching, g.depth, 0.0)
    zero = jnp.zeros_like(depth)
    if law == "crush":
        a, b = face_coefficients(params.crush_a, params.crush_b, state.F, -g.n)
        out = crush_force(depth, rate, dmax, g.width, a, b, zero, jnp.inf, cp.unload_exp, cp.crush_rate)
        v_t = v_p - jnp.dot(v_p, g.n) * g.n
        f = out.force * g.n + friction_force(out.force, v_t, cp.mu_barrier, cp.v_slip)
        terms = applied_terms(f, g.X, params)
        stats = (touching & (out.force > 0.0), out.force, out.crush[0], out.residual[0], out.power[0])
        return out.dmax, gamma, terms, stats
    if law == "physical":
        fn = jnp.where(touching, jnp.maximum(cp.stiffness * depth + cp.damping * rate, 0.0), 0.0)
        terms = applied_terms(fn * g.n, g.X, params)
        return dmax, gamma, terms, (touching, fn, depth, zero, zero)
    if law == "medusa":
        from .contact import PairGeometry  # noqa: PLC0415

        z = jnp.zeros(3)
        geom = PairGeometry(candidate=touching, touching=touching, phi1=-depth, n1=-g.n, T1=g.T, T2=g.T + depth * g.n,
                            X1=g.X, X2=z, residual=zero, warm=jnp.zeros(8))
        gamma_new, terms, _ = medusa_law(geom, gamma, state, _Rest(z, jnp.zeros((3, 3))), cp)
        return dmax, gamma_new, terms, (touching, jnp.abs(gamma_new[1]) * params.mass, depth, zero, zero)
    raise ValueError(f"unknown contact law {law!r}")


def barrier_stage(barriers: BarrierParams, bstate: BarrierState, r, F, v, W, vehicle_params, cp, valid, law: str,
                  kind: str):
    """All vehicles of one scenario against all its barriers.

    barriers: leaves [NB, ...]; bstate: leaves [V, NB, ...]; r, F (predicted), v, W: [V, ...];
    vehicle_params: VehicleParams [V]; valid [V]. Returns (ContactTerms [V, ...] summed over
    barriers, new BarrierState, BarrierInfo [V, NB])."""

    class _S(NamedTuple):
        r: jnp.ndarray
        F: jnp.ndarray
        v: jnp.ndarray
        W: jnp.ndarray

    def one_vehicle(r1, F1, v1, W1, p, ok, dmax_row, gamma_row):
        s = _S(r1, F1, v1, W1)
        return jax.vmap(lambda bp, dm, gm: vehicle_barrier(law, kind, bp, dm, gm, s, p, cp, ok))(barriers, dmax_row,
                                                                                                 gamma_row)

    dmax, gamma, terms, stats = jax.vmap(one_vehicle)(r, F, v, W, vehicle_params, valid, bstate.dmax, bstate.gamma)
    terms = ContactTerms(*[jnp.sum(x, axis=1) for x in terms])
    return terms, BarrierState(dmax=dmax, gamma=gamma), BarrierInfo(*stats)


__all__ = ["BarrierSpec", "BarrierParams", "BarrierState", "BarrierInfo", "WallGeometry", "barrier_params",
           "initial_barrier_state", "wall_geometry", "vehicle_barrier", "barrier_stage"]
