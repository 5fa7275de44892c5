"""Contact episodes per vehicle pair, recorded inside the jitted run (a simulate() tracker).

An episode starts on the first accepted step whose predicted state is in contact and ends
on the first accepted step without contact; times are those at the end of the step [s].
MEDUSA's law makes contact flicker from one step to the next within one impact (the
position-level kick separates the bodies, which then touch again), so a contact that
resumes within `episode_gap` [s] of the end continues the same episode. At most
`max_episodes` per pair are kept (later ones are counted but not stored). Each episode
keeps the contact point and normal of its first step (for pictures), so no geometry is
solved again after the run.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

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
    point: jnp.ndarray  # (P, E, 3) [m] contact point (midpoint of T1, T2) on the episode's first step
    normal: jnp.ndarray  # (P, E, 3) n1, outward unit normal of vehicle_a there


@dataclass(frozen=True)
class ContactEventTracker:
    max_episodes: int = 16
    episode_gap: float = 0.01  # [s]

    def init(self, batch_item, state_item) -> Episodes:
        p, e = state_item.pairs.gamma.shape[0], self.max_episodes
        nan, nan3 = jnp.full((p, e), jnp.nan), jnp.full((p, e, 3), jnp.nan)
        return Episodes(count=jnp.zeros((p,), jnp.int32), active=jnp.zeros((p,), bool), start=nan, end=nan,
                        peak_gamma=nan, peak_force=nan, min_phi1=nan, point=nan3, normal=nan3)

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
            point=jnp.where(fresh[..., None], info.pairs.point[:, None, :], m.point),
            normal=jnp.where(fresh[..., None], info.pairs.normal[:, None, :], m.normal),
        )


EPISODE_COLUMNS = ("vehicle_a", "vehicle_b", "episode", "start", "end", "peak_gamma1", "peak_force", "min_phi1",
                   "geometry_time", "point_x", "point_y", "point_z", "normal_x", "normal_y", "normal_z")


def episode_columns(ep: Episodes, n_vehicles: int, batch_index: int = 0) -> dict[str, np.ndarray]:
    """The columns of `episodes_table` as numpy arrays (no pandas: `jaxmedusa run` writes
    them with pyarrow), rows sorted by start, vehicle_a, vehicle_b."""
    a, b = pair_indices(n_vehicles)
    ep = jax.tree.map(lambda x: np.asarray(x)[batch_index], ep)  # one transfer, then numpy
    count = np.minimum(ep.count, ep.start.shape[-1])
    pair = np.repeat(np.arange(len(a)), count)  # [rows] the pair of each row
    k = np.concatenate([np.arange(c) for c in count]) if len(count) else np.zeros(0, int)
    cols = dict(vehicle_a=a[pair].astype(np.int64) + 1, vehicle_b=b[pair].astype(np.int64) + 1,
                episode=k.astype(np.int64) + 1, start=ep.start[pair, k], end=ep.end[pair, k],
                peak_gamma1=ep.peak_gamma[pair, k], peak_force=ep.peak_force[pair, k],
                min_phi1=ep.min_phi1[pair, k], geometry_time=ep.start[pair, k],
                **{f"point_{c}": ep.point[pair, k, j] for j, c in enumerate("xyz")},
                **{f"normal_{c}": ep.normal[pair, k, j] for j, c in enumerate("xyz")})
    order = np.lexsort((cols["vehicle_b"], cols["vehicle_a"], cols["start"]))
    return {c: np.asarray(cols[c])[order] for c in EPISODE_COLUMNS}


def episodes_table(ep: Episodes, n_vehicles: int, batch_index: int = 0):
    """Contact-events table of one scenario (a pandas DataFrame): pair (1-based vehicle
    numbers), start, end, peak |gamma1|, peak force, minimum phi1 (eq. 1.39 sign: negative =
    penetration), and the geometry of the episode's first step: geometry_time (= start) [s],
    point_x/y/z [m] (the midpoint of T1, T2, the points of deepest mutual penetration of the
    step's predicted state), normal_x/y/z (n1, outward unit normal of vehicle_a there).
    `end` is NaN when contact lasts to the end."""
    import pandas as pd  # here: `jaxmedusa run` writes episode_columns without pandas (0.6 s to import)

    return pd.DataFrame(episode_columns(ep, n_vehicles, batch_index))
