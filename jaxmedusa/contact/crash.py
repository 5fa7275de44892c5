"""One step's contacts per vehicle, pairs and barriers together: what crash outputs need.

`with_barriers` runs the barrier stage (contact/barrier.py) after the pair stage and adds
its terms; `crash_info` folds the per-pair Crush records (contact.types.Crush, PairInfo.crush)
and the per vehicle-barrier ones into one CrashInfo per vehicle, which the solver hands to
trackers (solver.step.StepInfo.crash; analysis/outcomes.py, analysis/crash_pulse.py).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxmedusa.contact.barrier import WallInfo, barrier_stage
from jaxmedusa.contact.types import Crush, PairInfo, add_terms
from jaxmedusa.core.params import Settings
from jaxmedusa.core.state import pair_indices

__all__ = ["CrashInfo", "crash_info", "with_barriers", "NO_PARTNER", "BARRIER"]

NO_PARTNER, BARRIER = -2, -1  # CrashInfo.partner codes besides vehicle indices


class CrashInfo(NamedTuple):
    """One step's contacts per vehicle (V,), pairs and barriers together.

    touching: bool, some contact of the vehicle carries force; crush [m]: the largest dynamic
    crush over its contacts; residual [m]: the largest permanent crush; power [W]: power into
    its structure (summed); partner int32: the other body of its strongest contact (vehicle
    index, BARRIER, or NO_PARTNER); load [N]: the normal forces of its force-carrying
    contacts, summed (the absorbed-energy quadrature of analysis/outcomes.py). Where its
    strongest contact is (laws with structures; zeros otherwise; analysis/damage.py): width
    [m] the engaged width, X (V, 3) [m] the force point's material label, normal (V, 3) the
    vehicle's outward normal there in its own frame."""

    touching: jnp.ndarray
    crush: jnp.ndarray
    residual: jnp.ndarray
    power: jnp.ndarray
    partner: jnp.ndarray
    load: jnp.ndarray
    width: jnp.ndarray | None = None
    X: jnp.ndarray | None = None
    normal: jnp.ndarray | None = None


def _where(c: Crush, name, shape):
    """A Crush field, or zeros of `shape` for laws that do not report it."""
    x = getattr(c, name)
    return jnp.zeros(shape) if x is None else x


def crash_info(pairs: PairInfo, walls: WallInfo | None, n_vehicles: int) -> CrashInfo:
    """CrashInfo (V,) from the pair stage's PairInfo (leaves [P, ...], pairs in
    core.state.pair_indices order, `crush` filled) and the barrier stage's WallInfo
    ([V, NB, ...]) or None."""
    n = n_vehicles
    a, b = pair_indices(n)
    z = jnp.zeros((n,), pairs.force.dtype)
    touching, crush, residual, power = jnp.zeros((n,), bool), z, z, z
    partner, best, load = jnp.full((n,), NO_PARTNER, jnp.int32), z, z
    width, X, normal = z, jnp.zeros((n, 3)), jnp.zeros((n, 3))
    if len(a):
        inc = np.zeros((len(a), n), bool)
        inc[np.arange(len(a)), a] = inc[np.arange(len(a)), b] = True
        other = jnp.asarray(np.where(inc, (a + b)[:, None] - np.arange(n)[None, :], NO_PARTNER).astype(np.int32))
        body = jnp.asarray((np.arange(n)[None, :] == b[:, None]).astype(np.int32))  # (P, V): which body of the pair
        inc = jnp.asarray(inc)
        c = pairs.crush

        def pick(x):  # (P, 2) -> (P, V): the vehicle's own column, 0 where it is not in the pair
            return jnp.where(inc, jnp.take_along_axis(x, body, axis=1), 0.0)

        t = c.touching[:, None] & inc
        force = jnp.where(t, pairs.force[:, None], 0.0)
        crush, residual = jnp.max(pick(c.crush), axis=0), jnp.max(pick(c.residual), axis=0)
        power = jnp.sum(pick(c.power), axis=0)
        touching, best, load = jnp.any(t, axis=0), jnp.max(force, axis=0), jnp.sum(force, axis=0)
        strongest = jnp.argmax(force, axis=0)  # (V,) the pair of each vehicle's strongest contact
        partner = jnp.where(touching, other[strongest, jnp.arange(n)], NO_PARTNER)
        side = body[strongest, jnp.arange(n)]  # (V,) which body of that pair the vehicle is
        npair = len(a)
        width = jnp.where(touching, _where(c, "width", (npair,))[strongest], 0.0)
        X = jnp.where(touching[:, None], _where(c, "X", (npair, 2, 3))[strongest, side], 0.0)
        normal = jnp.where(touching[:, None], _where(c, "normal", (npair, 2, 3))[strongest, side], 0.0)
    if walls is not None:
        w = walls.crush
        wall_forces = jnp.where(w.touching, walls.force, 0.0)
        wall_force = jnp.max(wall_forces, axis=1)
        load = load + jnp.sum(wall_forces, axis=1)
        hit = jnp.any(w.touching, axis=1)
        crush = jnp.maximum(crush, jnp.max(w.crush[..., 0], axis=1))
        residual = jnp.maximum(residual, jnp.max(w.residual[..., 0], axis=1))
        power = power + jnp.sum(w.power[..., 0], axis=1)
        wall_wins = hit & (wall_force >= best)
        partner = jnp.where(wall_wins, BARRIER, partner)
        k = jnp.argmax(wall_forces, axis=1)  # (V,) each vehicle's strongest barrier
        rows = jnp.arange(n)
        nb = wall_forces.shape[1]
        width = jnp.where(wall_wins, _where(w, "width", (n, nb))[rows, k], width)
        X = jnp.where(wall_wins[:, None], _where(w, "X", (n, nb, 2, 3))[rows, k, 0], X)
        normal = jnp.where(wall_wins[:, None], _where(w, "normal", (n, nb, 2, 3))[rows, k, 0], normal)
        touching = touching | hit
    return CrashInfo(touching=touching, crush=crush, residual=residual, power=power, partner=partner.astype(jnp.int32),
                     load=load, width=width, X=X, normal=normal)


def with_barriers(batch_item, state, r_pred, F_pred, terms, pair_info: PairInfo, settings: Settings):
    """The barrier stage of one scenario's step, when it has barriers and contact is on:
    (terms + the barriers' terms, new BarrierState (or state.barriers), any barrier contact
    (), CrashInfo (V,))."""
    vs = state.vehicles
    n = vs.r.shape[0]
    if batch_item.barriers is None or not settings.contact:
        return terms, state.barriers, jnp.asarray(False), crash_info(pair_info, None, n)
    wall_terms, barriers, walls = barrier_stage(batch_item, state.barriers, r_pred, F_pred, vs.v, vs.W, settings)
    return (add_terms(terms, wall_terms), barriers, jnp.any(walls.crush.touching),
            crash_info(pair_info, walls, n))
