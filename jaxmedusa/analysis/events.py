"""Contact episodes per vehicle pair, recorded inside the jitted run (a simulate() tracker).

An episode starts on the first accepted step whose predicted state is in contact and ends
on the first accepted step without contact; times are those at the end of the step [s].
MEDUSA's law makes contact flicker from one step to the next within one impact (the
position-level kick separates the bodies, which then touch again), so a contact that
resumes within `episode_gap` [s] of the end continues the same episode. At most
`max_episodes` per pair are kept (later ones are counted but not stored).
"""
from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jaxmedusa.contact.shapes import SHAPES, cold_warm, pair_geometry
from jaxmedusa.core.pytree import pytree_dataclass
from jaxmedusa.core.state import pair_indices


@pytree_dataclass
class Episodes:
    count: jnp.ndarray  # (P,) int32 episodes seen
    active: jnp.ndarray  # (P,) bool, in contact after the last accepted step
    start: jnp.ndarray  # (P, E) [s]
    end: jnp.ndarray  # (P, E) [s], NaN while open
    peak_gamma: jnp.ndarray  # (P, E) largest |gamma1| [m/s] (MEDUSA law: a position-rate multiplier)
    peak_force: jnp.ndarray  # (P, E) largest normal force [N]
    min_phi1: jnp.ndarray  # (P, E) deepest penetration (most negative gap) [m]


@dataclass(frozen=True)
class ContactEventTracker:
    max_episodes: int = 16
    episode_gap: float = 0.01  # [s]

    def init(self, batch_item, state_item) -> Episodes:
        p, e = state_item.pairs.gamma.shape[0], self.max_episodes
        nan = jnp.full((p, e), jnp.nan)
        return Episodes(count=jnp.zeros((p,), jnp.int32), active=jnp.zeros((p,), bool), start=nan, end=nan,
                        peak_gamma=nan, peak_force=nan, min_phi1=nan)

    def update(self, m: Episodes, batch_item, state_item, info) -> Episodes:
        touch = info.pairs.touching & info.accepted
        t = state_item.clock.t
        last = jnp.arange(self.max_episodes)[None, :] == (m.count - 1)[:, None]  # (P, E)
        last_end = jnp.sum(jnp.where(last, jnp.nan_to_num(m.end, nan=-jnp.inf), 0.0), axis=1)
        resumes = touch & ~m.active & (m.count > 0) & (t - last_end <= self.episode_gap)
        begins = touch & ~m.active & ~resumes
        ends = info.accepted & ~info.pairs.touching & m.active
        idx = jnp.where(begins, m.count, m.count - 1)  # episode slot being written
        slot = jnp.arange(self.max_episodes)[None, :] == idx[:, None]  # (P, E)
        writing = slot & touch[:, None]
        fresh = slot & begins[:, None]
        g1, force, phi = jnp.abs(info.pairs.gamma[:, 0])[:, None], info.pairs.force[:, None], info.pairs.phi1[:, None]
        return Episodes(
            count=m.count + begins.astype(jnp.int32),
            active=jnp.where(info.accepted, info.pairs.touching, m.active),
            start=jnp.where(fresh, t, m.start),
            end=jnp.where(slot & ends[:, None], t, jnp.where(slot & resumes[:, None], jnp.nan, m.end)),
            peak_gamma=jnp.where(writing, jnp.where(fresh, g1, jnp.fmax(m.peak_gamma, g1)), m.peak_gamma),
            peak_force=jnp.where(writing, jnp.where(fresh, force, jnp.fmax(m.peak_force, force)), m.peak_force),
            min_phi1=jnp.where(writing, jnp.where(fresh, phi, jnp.fmin(m.min_phi1, phi)), m.min_phi1),
        )


def episodes_table(ep: Episodes, n_vehicles: int, batch_index: int = 0) -> pd.DataFrame:
    """Contact-events table of one scenario: pair (1-based vehicle numbers), start, end,
    peak |gamma1|, peak force, minimum phi1 (eq. 1.39 sign: negative = penetration).
    `end` is NaN when contact lasts to the end."""
    a, b = pair_indices(n_vehicles)
    rows = []
    count = np.asarray(ep.count[batch_index])
    for p in range(len(a)):
        for k in range(min(int(count[p]), ep.start.shape[-1])):
            rows.append(dict(vehicle_a=int(a[p]) + 1, vehicle_b=int(b[p]) + 1, episode=k + 1,
                             start=float(ep.start[batch_index, p, k]), end=float(ep.end[batch_index, p, k]),
                             peak_gamma1=float(ep.peak_gamma[batch_index, p, k]),
                             peak_force=float(ep.peak_force[batch_index, p, k]),
                             min_phi1=float(ep.min_phi1[batch_index, p, k])))
    columns = ["vehicle_a", "vehicle_b", "episode", "start", "end", "peak_gamma1", "peak_force", "min_phi1"]
    return pd.DataFrame(rows, columns=columns).sort_values(["start", "vehicle_a", "vehicle_b"], ignore_index=True)


EPISODE_GEOMETRY_ITERS = 32  # cold-started solver iterations (the in-run solver is warm-started with 8)


def add_episode_geometry(table: pd.DataFrame, samples, batch, settings, batch_index: int = 0) -> pd.DataFrame:
    """Contact point and normal of each episode, for pictures: the pair geometry (contact.py)
    at the saved sample nearest the episode start (within save_every/2 of it), cold-started.

    Adds columns geometry_time [s] (that sample's time), point_x/y/z [m] (midpoint of T1, T2,
    the points of deepest mutual penetration) and normal_x/y/z (n1, the outward unit normal
    of vehicle_a there). `samples`: simulate.Samples with leaves [B, S, ...]."""
    table = table.copy()
    cols = ["geometry_time", "point_x", "point_y", "point_z", "normal_x", "normal_y", "normal_z"]
    if table.empty:
        for c in cols:
            table[c] = pd.Series(dtype=float)
        return table
    ok = np.asarray(samples.saved[batch_index], bool)
    t = np.asarray(samples.t[batch_index])[ok]
    r, F = np.asarray(samples.r[batch_index])[ok], np.asarray(samples.F[batch_index])[ok]
    k = np.abs(t[None, :] - table["start"].to_numpy()[:, None]).argmin(axis=1)
    a, b = table["vehicle_a"].to_numpy() - 1, table["vehicle_b"].to_numpy() - 1
    axes = np.asarray(batch.vehicle.contact_axes[batch_index])
    cp = batch.contact
    eps1, eps2 = float(np.asarray(cp.eps1)[batch_index]), float(np.asarray(cp.eps2)[batch_index])

    shape = SHAPES.resolve(settings.contact_geometry, where="Settings.contact_geometry")

    def one(r1, F1, a1, r2, F2, a2):
        return pair_geometry(shape, r1, F1, a1, r2, F2, a2, cold_warm(), eps1, eps2,
                             iters=EPISODE_GEOMETRY_ITERS)

    g = jax.jit(jax.vmap(one))(r[k, a], F[k, a], axes[a], r[k, b], F[k, b], axes[b])
    point = 0.5 * (np.asarray(g.T1) + np.asarray(g.T2))
    n1 = np.asarray(g.n1)
    table["geometry_time"] = t[k]
    for j, c in enumerate("xyz"):
        table[f"point_{c}"] = point[:, j]
    for j, c in enumerate("xyz"):
        table[f"normal_{c}"] = n1[:, j]
    return table
