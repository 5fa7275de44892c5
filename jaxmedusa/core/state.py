"""State pytrees. Shapes are for one scenario; batched arrays add a leading [batch] axis.

Per vehicle (V): r (3), F (3, 3) with the directors d_i as columns (F = d_i (x) E_i),
v (3), W (3, 3) with the director velocities w_i as columns, lagged slip angles (4),
the last slip-angle rate (4), and the road-tracking segment and parameter.
Per pair (P = V(V-1)/2, pairs (a, b) with a < b in row-major order): the contact
multipliers gamma1, gamma2, a warm start for the contact search and the crush law's memory
(the pair's largest overlap, its permanent crush, and the overlaps of the last two steps).
Per vehicle and rigid barrier (V, NB): the same memory and multipliers (contact/barrier.py).
Per scenario: time, step size, step-size hold counter, last save time, status, and per
vehicle the time since which it has been still (the end condition "rest").
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.pytree import pytree_dataclass

CONTACT_WARM_SIZE = 39  # contact-search warm start per pair (contact/shapes/narrow_phase.py, WARM_SIZE)
# the crush law's state per contact: the largest overlap so far, then the overlaps of the last
# two steps, from which it estimates the peak between samples (contact/laws/crush.py)
CRUSH_MEMORY = 3


@pytree_dataclass
class VehicleState:
    r: jnp.ndarray  # (3,) position of the centre of mass [m]
    F: jnp.ndarray  # (3, 3) deformation gradient, columns d1, d2, d3 [-]
    v: jnp.ndarray  # (3,) velocity [m/s]
    W: jnp.ndarray  # (3, 3) director velocities as columns w1, w2, w3 [1/s]
    alpha_lag: jnp.ndarray  # (4,) lagged slip angles, eq (1.27) [rad]
    alpha_rate: jnp.ndarray  # (4,) last computed d(alpha_lag)/dt [rad/s] (kept on wheel lift-off, as vehicle.c does)
    road_seg: jnp.ndarray  # () int32 road segment (MEDUSA numbering, 1 = virtual first segment)
    road_s: jnp.ndarray  # () segment parameter s in [0, 1]


@pytree_dataclass
class PairState:
    gamma: jnp.ndarray  # (2,) accumulated multipliers gamma1, gamma2 (MEDUSA law)
    warm: jnp.ndarray  # (CONTACT_WARM_SIZE,) warm start of the contact search
    in_contact: jnp.ndarray  # () bool, contact on the last accepted step
    crush: jnp.ndarray  # (CRUSH_MEMORY,) [m] largest overlap so far (never reset), overlaps one and two steps ago


@pytree_dataclass
class BarrierState:
    """Per vehicle and barrier, leaves [V, NB, ...]: crush (CRUSH_MEMORY,) [m], the crush law's
    memory as in PairState, and gamma (2,), the MEDUSA law's multipliers."""

    crush: jnp.ndarray
    gamma: jnp.ndarray


@pytree_dataclass
class ScenarioClock:
    t: jnp.ndarray  # () time [s]
    dt: jnp.ndarray  # () current step [s]
    hold: jnp.ndarray  # () int32, main.c `just_reduced`
    t_saved: jnp.ndarray  # () time of the last saved sample [s]
    status: jnp.ndarray  # () int32, a core.status.Status value
    steps: jnp.ndarray  # () int32 accepted steps
    # (V,) [s] per vehicle: the end time of the accepted step from which the vehicle has been
    # still (speed and yaw rate below Settings.rest_speed's thresholds, solver/end_condition.py),
    # -1 while it moves. None only in hand-made clocks (build.py fills it).
    still_since: jnp.ndarray | None = None


@pytree_dataclass
class SimState:
    vehicles: VehicleState  # leaves [V, ...]
    pairs: PairState  # leaves [P, ...]
    clock: ScenarioClock
    barriers: BarrierState | None = None  # leaves [V, NB, ...]; None without barriers


def pair_indices(n_vehicles: int) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays (a, b), a < b, of every vehicle pair, in MEDUSA's loop order."""
    a, b = np.triu_indices(n_vehicles, k=1)
    return a.astype(np.int32), b.astype(np.int32)
