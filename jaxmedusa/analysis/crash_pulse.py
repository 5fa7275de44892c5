"""Crash pulse: each vehicle's centre-of-mass acceleration during contact, at 10 kHz, raw and
filtered with the SAE J211 CFC 60 filter (docs/crash-law.md).

    from jaxmedusa.analysis.crash_pulse import PulseTracker, pulse_table
    tracker = PulseTracker()
    result = simulate(batch, state0, settings, tracker=tracker, record=False)
    table = pulse_table(jax.tree.map(lambda x: x[0], result.metrics))   # pandas, one scenario

`PulseTracker` (a solver tracker) records every vehicle's CM velocity on a fixed grid of
`sample_rate` ticks that starts at the beginning of the first step with force-carrying
contact (pairs or barriers, StepInfo.crash) and lasts `window` seconds: the velocity at each
tick is interpolated linearly between the ends of the accepted step that contains it, so
the grid does not depend on the step size. A step fills at most `ticks_per_step` ticks
(`ticks_for(dt)` = ceil(dt * sample_rate): 1 at MEDUSA's 5e-5 s, 4 at 4e-4 s); with dt above
one tick the raw 10 kHz acceleration is constant over each step (the step's own mean) and
the CFC 60 filter (-3 dB at 100 Hz, far below 1 / dt) smooths the staircase.
`pulse_table` differentiates the velocities (central differences, numpy.gradient) into the
raw 10 kHz acceleration and filters it.

SAE J211-1 (2014) Appendix C, CFC filter: a 2-pole Butterworth low-pass in bilinear form,
  wd = 2 pi CFC 2.0775,  wa = tan(wd T / 2),  T = 1 / sample rate,
  a0 = wa^2 / (1 + sqrt2 wa + wa^2),  a1 = 2 a0,  a2 = a0,
  b1 = -2 (wa^2 - 1) / (1 + sqrt2 wa + wa^2),  b2 = (-1 + sqrt2 wa - wa^2) / (1 + sqrt2 wa + wa^2),
  Y[t] = a0 X[t] + a1 X[t-1] + a2 X[t-2] + b1 Y[t-1] + b2 Y[t-2],
run forward and then backward over the data (phaseless, 4 poles in all; -3 dB at
1.667 CFC = 100 Hz for CFC 60). This is scipy.signal.butter(2, 2.0775 CFC, fs=rate) (the
bilinear transform with that prewarped cutoff) applied by scipy.signal.filtfilt;
tests/analysis/test_crash_pulse.py checks coefficients and filter against both.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.pytree import pytree_dataclass

__all__ = ["PulseTracker", "PulseState", "pulse_table", "pulse_columns", "cfc_coefficients", "cfc_filter",
           "SAMPLE_RATE", "CFC_PREWARP", "TICKS_PER_STEP", "ticks_for"]

SAMPLE_RATE = 10_000.0  # [Hz]
CFC_PREWARP = 2.0775  # SAE J211: the 2-pole design frequency is 2.0775 CFC
TICKS_PER_STEP = 3  # PulseTracker's default: most ticks one step may contain (dt <= 3 / sample_rate)


def ticks_for(dt: float, sample_rate: float = SAMPLE_RATE) -> int:
    """Most ticks of the pulse grid one step of dt [s] can contain (a step is the half-open
    interval (t, t + dt]): ceil(dt * sample_rate), at least 1."""
    return max(1, math.ceil(dt * sample_rate - 1e-9))


def cfc_coefficients(cfc: float = 60.0, sample_rate: float = SAMPLE_RATE):
    """(b, a) of the J211 CFC 2-pole section in scipy's convention (a[0] = 1): the formulas
    of the module docstring, i.e. scipy.signal.butter(2, 2.0775 CFC, fs=sample_rate)."""
    wa = math.tan(math.pi * CFC_PREWARP * cfc / sample_rate)  # tan(wd T / 2)
    den = 1.0 + math.sqrt(2.0) * wa + wa * wa
    a0 = wa * wa / den
    b1 = -2.0 * (wa * wa - 1.0) / den
    b2 = (-1.0 + math.sqrt(2.0) * wa - wa * wa) / den
    return np.array([a0, 2.0 * a0, a0]), np.array([1.0, -b1, -b2])


def _section(b, a, x, z):
    """One pass of the 2-pole section over axis 0 of x (direct form II transposed, as
    scipy.signal.lfilter), from the state z (2, ...)."""
    y = np.empty_like(x)
    z0, z1 = z
    for k in range(x.shape[0]):
        xk = x[k]
        yk = b[0] * xk + z0
        z0 = b[1] * xk - a[1] * yk + z1
        z1 = b[2] * xk - a[2] * yk
        y[k] = yk
    return y


def cfc_filter(x, cfc: float = 60.0, sample_rate: float = SAMPLE_RATE, axis: int = 0):
    """SAE J211 CFC filter of x along `axis`: the section forward, then backward (phaseless),
    exactly as scipy.signal.filtfilt(b, a, x, axis) does it (odd extension by 9 samples at
    each end, each pass started in the steady state of its first sample); data too short for
    that padding is returned unfiltered. Written out (tests/analysis/test_crash_pulse.py
    compares it with scipy's filtfilt) because importing scipy.signal took 1.3 s of every
    `jaxmedusa run` whose simulation takes 0.3 s."""
    x = np.moveaxis(np.asarray(x, float), axis, 0)
    b, a = cfc_coefficients(cfc, sample_rate)
    pad = 3 * max(len(a), len(b))
    if x.shape[0] <= pad:
        return np.moveaxis(x.copy(), 0, axis)
    ext = np.concatenate([2.0 * x[0] - x[pad:0:-1], x, 2.0 * x[-1] - x[-2:-pad - 2:-1]])
    # steady state of the section for a unit input (scipy.signal.lfilter_zi), solved by hand
    z0 = (b[1] - a[1] * b[0] + b[2] - a[2] * b[0]) / (1.0 + a[1] + a[2])
    zi = np.array([z0, b[2] - a[2] * b[0] - a[2] * z0])
    zi = zi.reshape((2,) + (1,) * (x.ndim - 1))
    y = _section(b, a, ext, zi * ext[0])
    y = _section(b, a, y[::-1], zi * y[-1])[::-1]
    return np.moveaxis(y[pad:-pad], 0, axis)


@pytree_dataclass
class PulseState:
    """t0 () [s] start of the grid (-1 before any contact); v_prev (V, 3) [m/s] the velocity
    after the last accepted step; v (N, V, 3) [m/s] the velocities at the ticks; filled (N,)
    bool; fwd, left (V, 3) unit d1, d2 at the first contact; contact (N,) bool: some
    contact during the tick's step."""

    t0: jnp.ndarray
    v_prev: jnp.ndarray
    v: jnp.ndarray
    filled: jnp.ndarray
    fwd: jnp.ndarray
    left: jnp.ndarray
    contact: jnp.ndarray


def _unit(x):
    n = jnp.linalg.norm(x, axis=-1, keepdims=True)
    return x / jnp.where(n > 0.0, n, 1.0)


@dataclass(frozen=True)
class PulseTracker:
    """Solver tracker recording the crash pulse (module docstring). Hashable.
    sample_rate [Hz]; window [s] recorded from the first contact; ticks_per_step: the most
    ticks one step fills (static; give `ticks_for(dt)` for steps longer than 3 ticks)."""

    sample_rate: float = SAMPLE_RATE
    window: float = 0.25
    ticks_per_step: int = TICKS_PER_STEP

    @property
    def n_ticks(self) -> int:
        return int(round(self.window * self.sample_rate)) + 1

    def init(self, batch_item, state) -> PulseState:
        vs = state.vehicles
        n = vs.r.shape[0]
        return PulseState(t0=jnp.asarray(-1.0), v_prev=vs.v, v=jnp.zeros((self.n_ticks, n, 3)),
                          filled=jnp.zeros((self.n_ticks,), bool), fwd=_unit(vs.F[:, :, 0]),
                          left=_unit(vs.F[:, :, 1]), contact=jnp.zeros((self.n_ticks,), bool))

    def update(self, m: PulseState, batch_item, state, info) -> PulseState:
        acc = info.accepted
        vs = state.vehicles
        t1 = state.clock.t
        t_begin = t1 - info.dt
        crash = info.crash.touching if info.crash is not None else jnp.zeros_like(batch_item.valid)
        touching = jnp.any(crash & batch_item.valid) & acc
        start = (m.t0 < 0.0) & touching
        t0 = jnp.where(start, t_begin, m.t0)
        h = 1.0 / self.sample_rate
        running = acc & (t0 >= 0.0)
        k0 = jnp.floor((t_begin - t0) / h + 1e-9).astype(jnp.int32) + 1  # first tick after the step's start
        # One block of rows read and written back per step: the tick before the step (row 0 on
        # the first contact step, whose velocity is v_prev) and the ticks the step may contain.
        # A single dynamic slice in and out lets XLA update the record in place; successive
        # row writes made it copy the whole record on every step (~2 s of a 3 s run on CPU).
        n_rows = self.ticks_per_step + 1
        first = jnp.clip(k0 - 1, 0, self.n_ticks - n_rows)
        k = first + jnp.arange(n_rows)  # (L,) tick numbers of the block
        tk = t0 + k * h
        inside = running & (k >= k0) & (tk <= t1 + 1e-12) & (tk > t_begin - 1e-12)
        w = jnp.clip((tk - t_begin) / jnp.where(info.dt > 0.0, info.dt, 1.0), 0.0, 1.0)[:, None, None]
        opening = start & (k == 0)  # the first contact step's start: tick 0 = v_prev
        rows = jax.lax.dynamic_slice_in_dim(m.v, first, n_rows)
        rows = jnp.where(inside[:, None, None], (1.0 - w) * m.v_prev + w * vs.v, rows)
        rows = jnp.where(opening[:, None, None], m.v_prev, rows)
        marked = inside | opening
        v = jax.lax.dynamic_update_slice_in_dim(m.v, rows, first, 0)
        filled = jax.lax.dynamic_update_slice_in_dim(
            m.filled, jax.lax.dynamic_slice_in_dim(m.filled, first, n_rows) | marked, first, 0)
        contact = jax.lax.dynamic_update_slice_in_dim(
            m.contact, jax.lax.dynamic_slice_in_dim(m.contact, first, n_rows) | (inside & touching) | opening,
            first, 0)
        return PulseState(t0=t0, v_prev=jnp.where(acc, vs.v, m.v_prev), v=v, filled=filled,
                          fwd=jnp.where(start, _unit(vs.F[:, :, 0]), m.fwd),
                          left=jnp.where(start, _unit(vs.F[:, :, 1]), m.left), contact=contact)


def pulse_columns(m: PulseState, n_vehicles: int | None = None, cfc: float = 60.0,
                  sample_rate: float = SAMPLE_RATE) -> dict[str, np.ndarray]:
    """The columns of `pulse_table` as numpy arrays (no pandas: `jaxmedusa run` writes them
    with pyarrow), rows by vehicle, then tick; empty columns when there was no contact."""
    m = jax.tree.map(np.asarray, m)
    n = int(np.max(np.nonzero(m.filled)[0]) + 1) if m.filled.any() and m.t0 >= 0 else 0
    tag = f"_cfc{int(cfc)}"
    names = ("ax", "ay", "az", "a_long", "a_lat")
    if n < 3:
        empty = dict(vehicle=np.zeros(0, np.int64), time=np.zeros(0), t_rel=np.zeros(0), in_contact=np.zeros(0, bool))
        return {**empty, **{f"{c}{suffix}": np.zeros(0) for suffix in ("", tag) for c in names}}
    nv = n_vehicles or m.v.shape[1]
    h = 1.0 / sample_rate
    a = np.gradient(m.v[:n, :nv], h, axis=0)  # [n, V, 3] raw 10 kHz acceleration, central differences
    af = cfc_filter(a, cfc, sample_rate, axis=0)
    t_rel = np.arange(n) * h
    cols = dict(vehicle=np.repeat(np.arange(1, nv + 1, dtype=np.int64), n), time=np.tile(float(m.t0) + t_rel, nv),
                t_rel=np.tile(t_rel, nv), in_contact=np.tile(m.contact[:n].astype(bool), nv))
    for suffix, x in (("", a), (tag, af)):
        x = np.swapaxes(x, 0, 1)  # [V, n, 3]
        for j, c in enumerate(("ax", "ay", "az")):
            cols[f"{c}{suffix}"] = x[:, :, j].reshape(-1)
        cols[f"a_long{suffix}"] = np.einsum("vnk,vk->vn", x, m.fwd[:nv]).reshape(-1)
        cols[f"a_lat{suffix}"] = np.einsum("vnk,vk->vn", x, m.left[:nv]).reshape(-1)
    return cols


def pulse_table(m: PulseState, n_vehicles: int | None = None, cfc: float = 60.0,
                sample_rate: float = SAMPLE_RATE):
    """One scenario's pulse (PulseState without a batch axis) as a pandas DataFrame: one row
    per vehicle (1-based) and tick: time [s], t_rel [s] since the first contact, in_contact,
    ax, ay, az (world) and a_long, a_lat (along d1, d2 at the first contact) [m/s^2], raw and
    with the suffix _cfc60 (J211 CFC filtered). Empty when there was no contact."""
    import pandas as pd  # here: `jaxmedusa run` writes pulse_columns without pandas (0.6 s to import)

    return pd.DataFrame(pulse_columns(m, n_vehicles, cfc, sample_rate))
