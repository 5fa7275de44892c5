"""Car-trailer sway: the linear single-track model's critical speed and the decay rate of a
simulated articulation oscillation (docs/trailers.md, "Sway").

The reference model is the classical yaw-plane car-trailer model: two rigid bodies (car:
mass m1, yaw inertia I1; trailer: m2, I2) joined by a pin e behind the car's centre of mass
and k ahead of the trailer's, linear tires (cornering stiffness per axle C, force -C alpha
with alpha = lateral / forward velocity at the axle), constant forward speed. Its equations
of motion come from the Lagrangian T(q, q') with q = (x, y, psi1, psi2) (Lagrange's
equations M(q) q'' = Q + dT/dq - (d^2 T/dq' dq) q', M = d^2 T/dq'^2, all by autodiff);
linearised about straight running at speed U its least-damped oscillatory eigenvalue
crosses the imaginary axis at the critical speed.

The decay rate of a simulated sway has two estimators, the same fit: `decay_rate` on a
saved signal (numpy), and `SwayPeaks` / `peaks_init` / `peaks_update` / `peaks_rate`, the
in-run version that analysis/outcomes.py folds step by step into the study metric
`v{n}_sway_decay` (no trajectories needed): |articulation| sampled every SWAY_SAMPLE seconds,
a peak wherever a sample exceeds the one before and is not exceeded by the one after, and
the least-squares slope of log |peak| over the peaks after `start`, kept as running sums.
Both measure an oscillation about zero articulation (straight running after a steering
pulse); the in-run one does not subtract a mean.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["CarTrailer", "sway_eigenvalue", "critical_speed", "decay_rate", "SwayPeaks", "peaks_init", "peaks_update",
           "peaks_rate", "SWAY_START", "SWAY_SAMPLE"]

# Peaks before this time [s] are left out of the decay rate: the steering pulse of the sway
# study ends at 0.7 s, and the first swing after it is still shaped by the pulse (the
# examples and tests take the peaks after 2.5 s, about two sway periods later).
SWAY_START = 2.5
# Sample interval of the in-run peak search [s]: the saved-sample interval of the sway
# examples (0.02 s, 50-100 samples per sway period of 1-2 s), so both estimators see the same
# peaks; a finer one would also find the ripples of the suspension and the hitch.
SWAY_SAMPLE = 0.02
# |articulation| [rad] below which a sample is not a peak (log of 0): 1e-9 rad is far below
# any sway a study reads and far above the step's round-off in the angle.
_PEAK_FLOOR = 1e-9


@dataclass(frozen=True)
class CarTrailer:
    """Yaw-plane car-trailer parameters (SI). a1, b1: car CM to front / rear axle [m];
    e: car CM to hitch (behind) [m]; k: hitch to trailer CM [m]; b2: trailer CM to its axle
    (behind) [m]; c1, c2, c3: cornering stiffness of the car's front, rear and the trailer's
    axle [N/rad] (both wheels)."""

    m1: float
    I1: float
    a1: float
    b1: float
    e: float
    m2: float
    I2: float
    k: float
    b2: float
    c1: float
    c2: float
    c3: float


def _rot(psi):
    c, s = jnp.cos(psi), jnp.sin(psi)
    return jnp.array([[c, -s], [s, c]])


def _points(p: CarTrailer, q):
    """World positions (2,) of car CM, trailer CM, and the three axles, and each body's yaw."""
    r1 = q[:2]
    r2 = r1 + _rot(q[2]) @ jnp.array([-p.e, 0.0]) - _rot(q[3]) @ jnp.array([p.k, 0.0])
    front = r1 + _rot(q[2]) @ jnp.array([p.a1, 0.0])
    rear = r1 + _rot(q[2]) @ jnp.array([-p.b1, 0.0])
    axle = r2 + _rot(q[3]) @ jnp.array([-p.b2, 0.0])
    return r1, r2, ((front, q[2], p.c1), (rear, q[2], p.c2), (axle, q[3], p.c3))


def _rates(p: CarTrailer, z):
    """d/dt (q, q') of the nonlinear model (linear tires), z = (q (4,), q' (4,))."""
    q, qd = z[:4], z[4:]

    def kinetic(q, qd):
        v1 = jax.jvp(lambda q: _points(p, q)[0], (q,), (qd,))[1]
        v2 = jax.jvp(lambda q: _points(p, q)[1], (q,), (qd,))[1]
        return 0.5 * (p.m1 * v1 @ v1 + p.I1 * qd[2] ** 2 + p.m2 * v2 @ v2 + p.I2 * qd[3] ** 2)

    M = jax.hessian(kinetic, argnums=1)(q, qd)
    dT_dq = jax.grad(kinetic, argnums=0)(q, qd)
    mixed = jax.jacfwd(jax.grad(kinetic, argnums=1), argnums=0)(q, qd)  # d^2 T / dq' dq
    Q = jnp.zeros(4)
    for i in range(3):
        def point(q, i=i):
            return _points(p, q)[2][i][0]
        J = jax.jacfwd(point)(q)  # (2, 4)
        _, yaw, c = _points(p, q)[2][i]
        t = jnp.array([jnp.cos(yaw), jnp.sin(yaw)])
        n = jnp.array([-jnp.sin(yaw), jnp.cos(yaw)])
        v = J @ qd
        Q = Q + J.T @ (-c * (v @ n) / (v @ t) * n)  # F = -C alpha n, alpha = v_lat / v_long
    qdd = jnp.linalg.solve(M, Q + dT_dq - mixed @ qd)
    return jnp.concatenate([qd, qdd])


@partial(jax.jit, static_argnums=0)
def _linearised(p: CarTrailer, speed):
    """The Jacobian (8, 8) of `_rates` at straight running at `speed` [m/s]. Compiled once per
    model (p is hashable; the speed is traced): run op by op, its nested autodiff made one
    `critical_speed` take 25 s instead of 3 (2-core CPU, 2026-11-27)."""
    z0 = jnp.zeros(8, jnp.result_type(float)).at[4].set(speed)
    return jax.jacfwd(lambda z: _rates(p, z))(z0)


def sway_eigenvalue(p: CarTrailer, speed: float) -> complex:
    """The oscillatory eigenvalue with the largest real part [1/s] of the model linearised
    about straight running at `speed` [m/s] (its real part: the sway's growth rate)."""
    ev = np.linalg.eigvals(np.asarray(_linearised(p, speed)))
    osc = ev[np.abs(ev.imag) > 1e-6]
    if len(osc) == 0:  # overdamped at low speed: the least stable of the non-neutral modes
        osc = ev[np.abs(ev) > 1e-9]
    return complex(osc[np.argmax(osc.real)])


def critical_speed(p: CarTrailer, lo: float = 5.0, hi: float = 80.0) -> float:
    """The speed [m/s] where the sway eigenvalue's real part crosses 0 (scipy's brentq)."""
    from scipy.optimize import brentq  # here: scipy costs every `jaxmedusa run` ~1 s to import

    return brentq(lambda u: sway_eigenvalue(p, u).real, lo, hi, xtol=1e-6)


def decay_rate(t, signal, t_start: float = 0.0) -> float:
    """Growth rate sigma [1/s] of an oscillation (signal ~ exp(sigma t) cos(w t)) after
    t_start: the slope of log |peak| over the peaks of |signal| (negative: decaying). NaN
    with fewer than three peaks."""
    from scipy.signal import find_peaks  # here: scipy costs every `jaxmedusa run` ~1 s to import

    t, x = np.asarray(t), np.asarray(signal)
    keep = t >= t_start
    t, x = t[keep], np.abs(x[keep] - np.mean(x[keep]))
    peaks, _ = find_peaks(x)
    if len(peaks) < 3:
        return float("nan")
    return float(np.polyfit(t[peaks], np.log(x[peaks]), 1)[0])


class SwayPeaks(NamedTuple):
    """Running state of the in-run decay-rate estimate of one scenario (module docstring).

    t_next, t1: scalars [s], the next sample time and the last sample's; a1, a2 (V,): the
    |articulation| [rad] at the last sample and the one before; n, st, sy, stt, sty (V,): over
    the peaks so far, their count and the sums of t, y = log |peak|, t^2 and t y."""

    t_next: jnp.ndarray
    t1: jnp.ndarray
    a1: jnp.ndarray
    a2: jnp.ndarray
    n: jnp.ndarray
    st: jnp.ndarray
    sy: jnp.ndarray
    stt: jnp.ndarray
    sty: jnp.ndarray


def peaks_init(t, a) -> SwayPeaks:
    """The state at time t [s] with |articulation| a (V,) [rad]: the first sample."""
    a = jnp.abs(a)
    z = jnp.zeros_like(a)
    return SwayPeaks(t_next=t + SWAY_SAMPLE, t1=t, a1=a, a2=a, n=z, st=z, sy=z, stt=z, sty=z)


def peaks_update(s: SwayPeaks, t, a, start: float = SWAY_START, accepted=True) -> SwayPeaks:
    """Fold time t [s] and the articulation a (V,) [rad] into the state: on the first accepted
    step at or after t_next, a new sample; the last sample is a peak if it rose from the one
    before, does not rise to this one, lies at or after `start` [s] and above _PEAK_FLOOR.
    Branch-free (jnp.where)."""
    a = jnp.abs(a)
    take = accepted & (t >= s.t_next)
    peak = take & (s.a1 > s.a2) & (s.a1 >= a) & (s.t1 >= start) & (s.a1 > _PEAK_FLOOR)
    w = peak.astype(a.dtype)
    y = jnp.log(jnp.where(peak, s.a1, 1.0))
    tp = s.t1
    return SwayPeaks(t_next=jnp.where(take, s.t_next + SWAY_SAMPLE, s.t_next), t1=jnp.where(take, t, s.t1),
                     a1=jnp.where(take, a, s.a1), a2=jnp.where(take, s.a1, s.a2), n=s.n + w, st=s.st + w * tp,
                     sy=s.sy + w * y, stt=s.stt + w * tp * tp, sty=s.sty + w * tp * y)


def peaks_rate(s: SwayPeaks):
    """(decay rate [1/s], peaks [-]) (V,) of the state: minus the least-squares slope of
    log |peak| over time (positive: the sway dies out), 0 with fewer than three peaks (the
    study table writes null there: io/tables.py)."""
    den = s.n * s.stt - s.st * s.st
    ok = (s.n >= 3.0) & (den > 0.0)
    slope = (s.n * s.sty - s.st * s.sy) / jnp.where(ok, den, 1.0)
    return jnp.where(ok, -slope, 0.0), s.n
