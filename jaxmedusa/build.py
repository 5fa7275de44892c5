"""Scenarios -> batched arrays: parameters, driver tables, validity masks and initial states.

`build_batch` stacks a list of `Scenario`s along a leading batch axis, padding scenarios
with fewer vehicles (their `valid` entries are False) and driver tables with fewer knots.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from . import road as road_mod
from .params import ContactParams, DriverParams, VehicleParams, contact_params, vehicle_params
from .pytree import pytree_dataclass, replace
from .scenario import DriverTable, Scenario
from .state import CONTACT_WARM_SIZE, PairState, ScenarioClock, SimState, VehicleState, pair_indices, STATUS_OK


@pytree_dataclass
class Batch:
    """Everything constant during a run, with leading axes [batch, vehicle] or [batch]."""

    vehicle: VehicleParams  # [B, V]
    driver: DriverParams  # [B, V, K]
    valid: jnp.ndarray  # [B, V] bool: False for padding vehicles
    contact: ContactParams  # [B]
    road: object  # road.RoadParams with leaves [B, ...], or None for the flat plane z = 0
    barriers: object = None  # barrier.BarrierParams with leaves [B, NB, ...], or None (no barriers)


def batch_barriers(scenarios, n_vehicles: int):
    """(BarrierParams [B, NB, ...], BarrierState [B, V, NB, ...]) of a list of scenarios, or
    (None, None) when none has a barrier. All scenarios of a batch must list the same number."""
    from .barrier import barrier_params, initial_barrier_state  # noqa: PLC0415

    counts = {len(s.barriers) for s in scenarios}
    if counts == {0}:
        return None, None
    if len(counts) > 1:
        raise ValueError("all scenarios of a batch must have the same number of barriers")
    nb = counts.pop()
    params = _stack([barrier_params(s.barriers) for s in scenarios])
    states = _stack([initial_barrier_state(n_vehicles, nb) for _ in scenarios])
    return jax.tree.map(jnp.asarray, params), jax.tree.map(jnp.asarray, states)


def _stack(trees):
    """Stack pytrees of host arrays (numpy: a jnp.stack of thousands of leaves compiles slowly)."""
    return jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *trees)


def _table_arrays(table: DriverTable, k: int, scale: float):
    times = np.asarray(table.times, dtype=float)
    values = np.asarray(table.values, dtype=float) * scale
    pad = k - len(times)
    times = np.concatenate([times, np.full(pad, times[-1])])
    values = np.concatenate([values, np.full(pad, values[-1])])
    return times, values, float(table.kind == "linear")


def driver_params(vehicle, k: int) -> DriverParams:
    st, sv, sl = _table_arrays(vehicle.steering, k, math.pi / 180.0)  # STEERING in degrees
    vt, vv, vl = _table_arrays(vehicle.tire_speed, k, 1.0)
    f = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731
    return DriverParams(f(st), f(sv), f(sl), f(vt), f(vv), f(vl))


def initial_vehicle_state(model, vehicle) -> VehicleState:
    """Initial state of init.c `read_vehicles()`: r = (X, Y, R3), F0 = Q(theta) F_eq,
    v = SPEED (cos theta, sin theta, 0), W = 0, slip angles 0."""
    theta = vehicle.orientation * math.pi / 180.0
    c, s = math.cos(theta), math.sin(theta)
    Q = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    F0 = Q @ np.asarray(model.eq_F, dtype=float)
    f = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731
    return VehicleState(
        r=f([vehicle.x, vehicle.y, model.eq_r3]),
        F=f(F0),
        v=f([vehicle.speed * c, vehicle.speed * s, 0.0]),
        W=f(np.zeros((3, 3))),
        alpha_lag=f(np.zeros(4)),
        alpha_rate=f(np.zeros(4)),
        road_seg=np.asarray(0, dtype=np.int32),
        road_s=f(0.0),
    )


def _table_length(scenarios) -> int:
    return max(max(len(v.steering.times), len(v.tire_speed.times)) for s in scenarios for v in s.vehicles)


def build_batch(scenarios: list[Scenario], dt: float = 5e-5, contact: ContactParams | None = None,
                n_vehicles: int | None = None, tire: dict | None = None) -> tuple[Batch, SimState]:
    """Stack scenarios into (Batch, initial SimState at t = 0 with step dt [s]). All must share
    the road kind (flat, or spline with the same number of points). `n_vehicles` pads to a
    fixed vehicle count; `tire` overrides tire parameters (default Goodyear 185SR14)."""
    n_v = n_vehicles or max(len(s.vehicles) for s in scenarios)
    if any(len(s.vehicles) > n_v for s in scenarios):
        raise ValueError(f"a scenario has more than n_vehicles={n_v} vehicles")
    if any(len(s.vehicles) == 0 for s in scenarios):
        raise ValueError("a scenario has no vehicles")
    k = _table_length(scenarios)
    kinds = {s.road.points is None for s in scenarios}
    if len(kinds) > 1:
        raise ValueError("a batch cannot mix the flat plane and spline roads")
    flat = kinds.pop()

    params, drivers, valid, states, roads, pairs = [], [], [], [], [], []
    n_pairs = len(pair_indices(n_v)[0])
    for sc in scenarios:
        vp, dp, st = [], [], []
        road = None if flat else road_mod.build_road(sc.road)
        for i in range(n_v):
            veh = sc.vehicles[min(i, len(sc.vehicles) - 1)]  # padding repeats the last vehicle
            model = sc.models[veh.model]
            vp.append(vehicle_params(model, tire))
            dp.append(driver_params(veh, k))
            s0 = initial_vehicle_state(model, veh)
            if road is not None:
                seg, s = road_mod.initial_tracking(road, s0.r)
                s0 = replace(s0, road_seg=np.asarray(seg, np.int32), road_s=np.asarray(s, np.float64))
            st.append(s0)
        params.append(_stack(vp))
        drivers.append(_stack(dp))
        valid.append(np.arange(n_v) < len(sc.vehicles))
        states.append(_stack(st))
        roads.append(road)
        pairs.append(PairState(gamma=np.zeros((n_pairs, 2)), warm=np.zeros((n_pairs, CONTACT_WARM_SIZE)),
                               in_contact=np.zeros((n_pairs,), bool), crush=np.zeros((n_pairs,))))
    cp = contact or contact_params()
    barriers, bstate = batch_barriers(scenarios, n_v)
    batch = Batch(vehicle=_stack(params), driver=_stack(drivers), valid=np.stack(valid),
                  contact=_stack([cp] * len(scenarios)), road=None if flat else _stack(roads), barriers=barriers)
    to_device = lambda tree: jax.tree.map(jnp.asarray, tree)  # noqa: E731
    return to_device(batch), initial_state(to_device(_stack(states)), to_device(_stack(pairs)), dt, bstate)


def initial_state(vehicles: VehicleState, pairs: PairState, dt: float, barriers=None) -> SimState:
    """SimState at t = 0 for batched vehicle and pair states (leading axis [B])."""
    b = vehicles.r.shape[0]
    f = lambda x: jnp.full((b,), x, dtype=jnp.float64)  # noqa: E731
    clock = ScenarioClock(t=f(0.0), dt=f(dt), hold=jnp.full((b,), -1, jnp.int32), t_saved=f(-100.0),
                          status=jnp.full((b,), STATUS_OK, jnp.int32), steps=jnp.zeros((b,), jnp.int32))
    return SimState(vehicles=vehicles, pairs=pairs, clock=clock, barriers=barriers)
