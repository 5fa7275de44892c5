"""Crash damage as an investigator measures it: crush profiles C1..C6, the SAE J224 Collision
Deformation Classification, and per-collision delta-V and PDOF (EDSMAC's damage summary).

    tracker = DamageTracker()             # solver/trackers.py interface; analysis.outcomes embeds it
    rows = damage_rows(state, params)     # one dict per vehicle and collision (damage.parquet)

Profile (static shapes). The crush law keeps one permanent crush per contact (its Campbell
residual C, uniform across the engaged width: contact/laws/crush.py). Each vehicle carries,
per collision slot (SLOTS, the last one absorbing any later collisions) and per face (front,
rear, left, right), a row of N_BINS stations across that face in its own frame (front and
rear: the lateral coordinate over the contact shape's width; sides: the longitudinal one over
its length). On every step of a force-carrying contact the stations inside the engaged
interval (the force point's material label +- half the engaged width) take the larger of their
value and the contact's residual crush. The damage width L is the span of the stations with
crush; C1..C6 are the profile at six equally spaced points across it (linear between station
centres, the edge stations' value at the ends): C1 on the vehicle's left for front and rear
damage (the NASS convention: driver's side first), at the front for side damage.

CDC (SAE J224, "Collision Deformation Classification"), seven characters:
  1-2 clock direction of the principal force, 01-12, from this collision's delta-V
      (00: no delta-V);
  3   deformed area: F front, B back, L left, R right (from the force-weighted contact normal;
      T top and U undercarriage never arise: the contact shapes meet side by side);
  4   horizontal location: front/back D (the whole width) or L, C, R (thirds of the width),
      Y (L+C), Z (C+R); sides D, or F, P, B (thirds of the length: front, passenger
      compartment, back), Y (F+P), Z (P+B). The thirds stand in for the body sections J224
      names, which the model does not have;
  5   vertical location: always E (everything below the belt line). The contact shape has no
      vertical structure (bumper, frame, sill, belt line); the law's force is planar, so the
      model cannot tell a bumper-height hit from an override: documented, not computed;
  6   distribution: W (wide, damage width > 16 in = 0.41 m) or N (narrow); S (sideswipe),
      E (corner), A (overhang), K (conversion) and O (rollover) are not classified;
  7   extent zone 1-9 from the deepest residual crush: front and back 0.1 of the contact
      length per zone (J224's three front zones to the windshield base span about 0.3 of a
      car's length), sides: 1/9 of the contact width per zone; 0 when nothing stays.

Units: m, m/s, J. Vehicles 0-based here, 1-based in tables.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.analysis.crash3 import crash3_energy
from jaxmedusa.analysis.step_counts import EPISODE_GAP
from jaxmedusa.contact.broad_phase import packed_order
from jaxmedusa.core.control_flow import dense_pairs
from jaxmedusa.core.safe_math import TINY, safe_norm
from jaxmedusa.io.cdc import AREAS, BACK, FRONT, LEFT, RIGHT, cdc_string

__all__ = ["DamageTracker", "DamageState", "RowWrite", "dense_rows", "write_rows", "with_rows", "with_batch_rows",
           "damage_summary", "damage_rows", "cdc_string", "cdc_codes", "SLOTS", "N_BINS", "N_STATIONS", "AREAS", "FRONT", "BACK", "LEFT", "RIGHT", "WIDE_DAMAGE"]

SLOTS = 3  # collisions kept per vehicle (later ones fold into the last)
N_BINS = 32  # stations across a face
N_STATIONS = 6  # C1..C6 (NASS / CRASH3)
WIDE_DAMAGE = 16 * 0.0254  # [m] J224: wide impact area above 16 in
_FACE_COEFF = np.array([0, 1, 2, 2])  # face -> VehicleParams.crush_a/crush_b index (front, rear, side)
_NO_DAMAGE = 1e-6  # [m] residual crush below which a station counts as undamaged


class DamageState(NamedTuple):
    """Per vehicle (leaves [V, ...]; [B, V, ...] batched).

    bins (V, SLOTS, 4, N_BINS) [m] (1 slot with DamageTracker.first_only): residual crush at
    the stations of each face per collision;
    normal (V, SLOTS, 3): force-weighted sum of the vehicle's outward contact normal (own
    frame) [N]; dv_world, dv_body (V, SLOTS, 3) [m/s]: delta-V of each collision (world; own
    frame accumulated step by step as outcomes' delta_v_body); collisions int32: collisions so
    far; last_contact [s] (-1: none)."""

    bins: jnp.ndarray
    normal: jnp.ndarray
    dv_world: jnp.ndarray
    dv_body: jnp.ndarray
    collisions: jnp.ndarray
    last_contact: jnp.ndarray


def _unit_columns(F):
    n = safe_norm(F, axis=0)
    return F / jnp.where(n > 0.0, n, 1.0)


def face_of(normal):
    """Face index (FRONT, BACK, LEFT, RIGHT) of an outward normal (..., 3) in the vehicle frame."""
    u1, u2 = normal[..., 0], normal[..., 1]
    longitudinal = jnp.abs(u1) >= jnp.abs(u2)
    return jnp.where(longitudinal, jnp.where(u1 >= 0.0, FRONT, BACK), jnp.where(u2 >= 0.0, LEFT, RIGHT))


def station_centres(axes):
    """Station centres (2, N_BINS) [m] of a contact shape with semi-axes (3,): row 0 across
    the width (front/back faces, +y to -y), row 1 along the length (sides, +x to -x)."""
    u = (jnp.arange(N_BINS) + 0.5) / N_BINS  # 0..1 from the first station
    return jnp.stack([axes[1] * (1.0 - 2.0 * u), axes[0] * (1.0 - 2.0 * u)])


@dataclass(frozen=True)
class DamageTracker:
    """Per-collision damage of every vehicle (module docstring); a solver tracker.

    first_only: keep the first collision alone (one slot; later collisions are counted but
    leave no trace), for outputs that ask for nothing else (the study metrics,
    `first_collision_metrics`): its slot is bit for bit the first of the SLOTS-slot
    tracker, at a third of the in-run state, which every step updates."""

    episode_gap: float = EPISODE_GAP
    first_only: bool = False

    @property
    def slots(self) -> int:
        return 1 if self.first_only else SLOTS

    def init(self, batch_item, state) -> DamageState:
        n = state.vehicles.r.shape[0]
        z = jnp.zeros((n, self.slots, 3))
        return DamageState(bins=jnp.zeros((n, self.slots, 4, N_BINS)), normal=z, dv_world=z, dv_body=z,
                           collisions=jnp.zeros((n,), jnp.int32), last_contact=jnp.full((n,), -1.0))

    def update(self, m: DamageState, batch_item, state, info) -> DamageState:
        new, rows = self.update_deferred(m, batch_item, state, info)
        return new if rows is None else with_rows(new, rows, batch_item.vehicle)

    def update_deferred(self, m: DamageState, batch_item, state, info):
        """`update` without the stations' rows: (DamageState with m's bins, RowWrite (V,) of
        what the rows take this step), or (m, None) on a step without crash records. The rows
        are then written by `dense_rows` (one scenario) or `write_rows` (a batch, in place:
        analysis.outcomes.Outcomes.update_batch)."""
        cr = info.crash
        if cr is None or cr.X is None:
            return m, None
        vs = state.vehicles
        t = state.clock.t
        ok = info.accepted & batch_item.valid
        hit = cr.touching & ok
        dt = jnp.where(info.accepted, info.dt, 0.0)
        resumed = (m.last_contact >= 0.0) & (t - m.last_contact <= self.episode_gap)
        collisions = m.collisions + (hit & ~resumed).astype(jnp.int32)
        # the collision's slot; with first_only a later collision's index (1) matches no slot
        slot = collisions - 1 if self.first_only else jnp.clip(collisions - 1, 0, SLOTS - 1)
        in_slot = hit[:, None] & (jnp.arange(self.slots)[None, :] == slot[:, None])  # (V, slots)

        # the stations inside the engaged interval will take the contact's residual crush
        face = face_of(cr.normal)  # (V,)
        kind = (face >= LEFT).astype(jnp.int32)
        rows = RowWrite(write=jnp.any(in_slot, axis=1), slot=jnp.clip(slot, 0, self.slots - 1), face=face,
                        centre=jnp.where(kind == 0, cr.X[:, 1], cr.X[:, 0]), width=cr.width, residual=cr.residual)

        # force-weighted normal and this collision's delta-V
        w = jnp.where(hit, cr.load, 0.0)
        normal = m.normal + jnp.where(in_slot[..., None], (w[:, None] * cr.normal)[:, None, :], 0.0)
        dv = info.contact_dv * dt  # (V, 3)
        dirs = jax.vmap(_unit_columns)(vs.F)
        dv_b = jnp.einsum("vj,vji->vi", dv, dirs)
        started = m.collisions > 0
        into = jnp.where(hit | started, slot, -1)  # delta-V between contacts goes to the current collision
        sel = (jnp.arange(self.slots)[None, :] == into[:, None]) & ok[:, None]
        new = DamageState(bins=m.bins, normal=normal,
                          dv_world=m.dv_world + jnp.where(sel[..., None], dv[:, None, :], 0.0),
                          dv_body=m.dv_body + jnp.where(sel[..., None], dv_b[:, None, :], 0.0),
                          collisions=collisions, last_contact=jnp.where(hit, t, m.last_contact))
        return new, rows


class RowWrite(NamedTuple):
    """What one step's contact leaves in a vehicle's stations (leaves (V,); [B, V] batched):
    write: the vehicle touches and its collision has a slot; slot, face (int32): the row;
    centre [m]: the force point along the face (the stations' coordinate); width [m]: the
    engaged width; residual [m]: the contact's residual crush."""

    write: jnp.ndarray
    slot: jnp.ndarray
    face: jnp.ndarray
    centre: jnp.ndarray
    width: jnp.ndarray
    residual: jnp.ndarray


def _row_after(row, s, rows: RowWrite):
    """One row of stations at coordinates s after the contact (RowWrite leaves of one vehicle):
    the stations inside the engaged interval take the larger of their crush and the residual."""
    inside = jnp.abs(s - rows.centre) <= 0.5 * rows.width
    return jnp.where(inside, jnp.maximum(row, rows.residual), row)


def dense_rows(bins, rows: RowWrite, axes):
    """bins (V, slots, 4, N_BINS) [m] after one step of one scenario: every station of every
    row selected (rows (V,), axes (V, 3) the contact semi-axes)."""
    kind = (rows.face >= LEFT).astype(jnp.int32)
    stations = jax.vmap(station_centres)(axes)  # (V, 2, N_BINS)
    s = jnp.take_along_axis(stations, kind[:, None, None], axis=1)[:, 0]  # (V, N_BINS)
    inside = jnp.abs(s - rows.centre[:, None]) <= 0.5 * rows.width[:, None]
    in_slot = rows.write[:, None] & (jnp.arange(bins.shape[1])[None, :] == rows.slot[:, None])
    on_face = jnp.arange(4)[None, :] == rows.face[:, None]  # (V, 4)
    mask = in_slot[:, :, None, None] & on_face[:, None, :, None] & inside[:, None, None, :]
    return jnp.where(mask, jnp.maximum(bins, rows.residual[:, None, None, None]), bins)


# Rows written a round at a time (a condition per round skips the rounds not needed), as
# contact.broad_phase.compacted_map packs its pairs.
ROW_ROUND = 16


def write_rows(bins, rows: RowWrite, axes):
    """bins [B, V, slots, 4, N_BINS] [m] after one step of a batch, the same values as
    `dense_rows` on each scenario (rows leaves [B, V], axes [B, V, 3]), but in place: only the
    rows of vehicles that write (rows.write) are read and written, one row of N_BINS stations
    each (dynamic slices: no scatter, which would keep XLA from compiling the time loop whole,
    core/xla_flags.py). Why: the dense select over every station of the batch, every step,
    was about a tenth of a contact step of the crush-law offset study on a 2-core Intel Xeon
    (B = 256; benchmarks/RESULTS.md), while a few vehicles touch at a time."""
    nb, nv = rows.write.shape
    n = nb * nv
    flat = jax.tree.map(lambda x: x.reshape((n,) + x.shape[2:]), rows)
    axes = axes.reshape((n, 3))
    cap = min(n, ROW_ROUND)
    rounds = -(-n // cap)
    filled, idx = packed_order(flat.write, rounds * cap)  # idx[j]: the j-th writing vehicle
    count = filled[-1]

    # bins keeps its shape: reshaped to [B V, ...], the carry was copied twice a step to a
    # layout of XLA's choosing and back (the slot axis has size 1)
    def write_one(j, out):
        k = jnp.minimum(idx[j], n - 1)
        one = jax.tree.map(lambda x: x[k], flat)
        kind = (one.face >= LEFT).astype(jnp.int32)
        s = station_centres(axes[k])[kind]
        start = tuple(jnp.asarray(i, jnp.int32) for i in (k // nv, k % nv, one.slot, one.face, 0))
        row = jax.lax.dynamic_slice(out, start, (1, 1, 1, 1, N_BINS))[0, 0, 0, 0]
        new = jnp.where(j < count, _row_after(row, s, one), row)  # a round's padding writes its row back
        return jax.lax.dynamic_update_slice(out, new[None, None, None, None], start)

    def one_round(r, out):
        return jax.lax.cond(r * cap < count, lambda o: jax.lax.fori_loop(r * cap, (r + 1) * cap, write_one, o),
                            lambda o: o, out)

    return jax.lax.fori_loop(0, rounds, one_round, bins)


def with_rows(m: DamageState, rows: RowWrite, vehicle) -> DamageState:
    """m (one scenario) with this step's rows written (`dense_rows`)."""
    return m._replace(bins=dense_rows(m.bins, rows, vehicle.contact_axes))


def with_batch_rows(m: DamageState, rows: RowWrite, vehicle, active) -> DamageState:
    """m (leaves [B, ...]) with this step's rows written where active [B] (None: every
    scenario): in place (`write_rows`) on a CPU; on an accelerator, where each round's
    condition costs a device-to-host round trip (core/control_flow.py), the dense select."""
    if active is not None:
        rows = rows._replace(write=rows.write & active[:, None])
    if dense_pairs(rows.write.size):
        return m._replace(bins=jax.vmap(dense_rows)(m.bins, rows, vehicle.contact_axes))
    return m._replace(bins=write_rows(m.bins, rows, vehicle.contact_axes))


# ----------------------------------------------------------------------------- summaries (jnp)


def _pdof_clock(dv_body):
    """Clock hour 1..12 of the principal direction of force (the direction the force comes
    from, clockwise from the front: atan2(left, -forward)), 0 without delta-V; as
    analysis.outcomes' pdof_clock."""
    f, l = dv_body[..., 0], dv_body[..., 1]
    ok = f * f + l * l > TINY
    ang = jnp.mod(jnp.arctan2(jnp.where(ok, l, 0.0), jnp.where(ok, -f, 1.0)) * 180.0 / jnp.pi, 360.0)
    h = jnp.mod(jnp.round(ang / 30.0), 12.0)
    return jnp.where(ok, jnp.where(h == 0.0, 12.0, h), 0.0)


def _profile(bins, normal, axes, crush_a, crush_b):
    """One collision of one vehicle: (C (6,), width L, offset D, face, energy, deepest) from
    its stations (4, N_BINS), force-weighted normal (3,), contact semi-axes and A, B (3,)."""
    face = face_of(normal)
    row = bins[face]  # (N_BINS,)
    damaged = row > _NO_DAMAGE
    anyd = jnp.any(damaged)
    kind = (face >= LEFT).astype(jnp.int32)
    half = jnp.where(kind == 0, axes[1], axes[0])
    pitch = 2.0 * half / N_BINS
    first = jnp.argmax(damaged)
    last = N_BINS - 1 - jnp.argmax(damaged[::-1])
    span = jnp.where(anyd, (last - first + 1) * pitch, 0.0)
    u = jnp.linspace(0.0, 1.0, N_STATIONS)
    # station positions in bin units, the ends clipped to the edge stations' centres (their value)
    idx = jnp.clip(first - 0.5 + u * (last - first + 1), first, last)
    xp = jnp.arange(N_BINS, dtype=row.dtype)
    c = jnp.where(anyd, jnp.interp(idx, xp, jnp.where(damaged, row, 0.0)), 0.0)
    offset = jnp.where(anyd, half - (0.5 * (first + last + 1)) * pitch, 0.0)  # + left / + forward
    k = jnp.asarray(_FACE_COEFF)[face]
    energy = jnp.where(anyd, crash3_energy(c, span, crush_a[k], crush_b[k]), 0.0)
    return c, span, offset, face, energy, jnp.max(row)


def cdc_codes(face, c, span, offset, deepest, clock, axes):
    """(5,) int32 codes of a CDC (module docstring): clock, area (index into AREAS), horizontal
    location (index into the face kind's "LCRYZD" / "FPBYZD"), distribution (0 W, 1 N), extent
    zone (0 none)."""
    kind = (face >= LEFT).astype(jnp.int32)
    half = jnp.where(kind == 0, axes[1], axes[0])
    lo, hi = offset - 0.5 * span, offset + 0.5 * span  # [m] in the face coordinate (+ left/forward)
    third = 2.0 * half / 3.0
    first_third = hi > half - third + 1e-3  # the left (or front) third
    middle = (hi > -half + third + 1e-3) & (lo < half - third - 1e-3)
    last_third = lo < -half + third - 1e-3
    code = jnp.where(first_third & middle & last_third, 5,
                     jnp.where(first_third & middle, 3,
                               jnp.where(middle & last_third, 4,
                                         jnp.where(first_third, 0, jnp.where(last_third, 2, 1)))))
    zone_depth = jnp.where(kind == 0, 0.2 * axes[0], 2.0 * axes[1] / 9.0)
    extent = jnp.where(deepest > _NO_DAMAGE, jnp.clip(jnp.ceil(deepest / zone_depth), 1, 9), 0)
    wide = span > WIDE_DAMAGE
    return jnp.stack([clock, face, code, jnp.where(wide, 0, 1), extent]).astype(jnp.int32)


def damage_summary(m: DamageState, vehicle) -> dict:
    """Every collision slot of one scenario: {name: [V, SLOTS, ...]} (profile (6,), width,
    offset, face, crash3_energy, delta_v, pdof_clock, cdc (5,), collisions [V])."""
    def one(bins, normal, dvw, dvb, axes, a, b):
        c, span, offset, face, energy, deepest = _profile(bins, normal, axes, a, b)
        clock = _pdof_clock(dvb)
        return dict(profile=c, width=span, offset=offset, face=face, crash3_energy=energy,
                    delta_v=safe_norm(dvw), pdof_clock=clock, max_residual=deepest,
                    cdc=cdc_codes(face, c, span, offset, deepest, clock, axes))

    per_slot = jax.vmap(one, in_axes=(0, 0, 0, 0, None, None, None))
    out = jax.vmap(per_slot)(m.bins, m.normal, m.dv_world, m.dv_body, vehicle.contact_axes, vehicle.crush_a,
                             vehicle.crush_b)
    return {**out, "collisions": m.collisions}


def first_collision_metrics(m: DamageState, vehicle) -> dict:
    """Study metrics of each vehicle's first collision ([V] or [V, 5] for cdc)."""
    s = damage_summary(m, vehicle)
    out = {f"c{i + 1}": s["profile"][:, 0, i] for i in range(N_STATIONS)}
    out.update(damage_width=s["width"][:, 0], damage_offset=s["offset"][:, 0], crash3_energy=s["crash3_energy"][:, 0],
               collision_delta_v=s["delta_v"][:, 0], collision_pdof_clock=s["pdof_clock"][:, 0].astype(jnp.int32),
               cdc=s["cdc"][:, 0])
    return out


# ----------------------------------------------------------------------------- tables (numpy)

_summary = jax.jit(damage_summary)  # one small compilation per run (kept in the persistent cache)


def damage_rows(m: DamageState, vehicle, n_vehicles: int) -> list[dict]:
    """One row per vehicle (1-based) and collision of one scenario (numpy inputs: leaves
    without the batch axis), the columns of damage.parquet."""
    s = jax.device_get(_summary(m, vehicle))
    rows = []
    for v in range(n_vehicles):
        for k in range(min(int(s["collisions"][v]), SLOTS)):
            row = {"vehicle": v + 1, "collision": k + 1}
            row.update({f"c{i + 1}": float(s["profile"][v, k, i]) for i in range(N_STATIONS)})
            row.update(damage_width=float(s["width"][v, k]), damage_offset=float(s["offset"][v, k]),
                       area=AREAS[int(s["face"][v, k])], crash3_energy=float(s["crash3_energy"][v, k]),
                       max_residual_crush=float(s["max_residual"][v, k]), delta_v=float(s["delta_v"][v, k]),
                       pdof_clock=int(s["pdof_clock"][v, k]), cdc=cdc_string(s["cdc"][v, k]))
            rows.append(row)
    return rows

