"""Scenarios -> batched arrays: the one place that builds a Batch and its initial state.

`build_batch` stacks scenarios along a leading batch axis: vehicle parameters, driver
tables (padded to the longest table by repeating the last knot), validity masks (scenarios
with fewer vehicles are padded by repeating their last vehicle, marked valid=False),
contact parameters, roads, and the initial SimState at t = 0 (init.c `read_vehicles()`).
It is fast for thousands of scenarios: vehicle parameters and roads are computed once per
distinct model/tire and road, the rest is numpy, and the initial road tracking is one
vmapped call.
"""
from __future__ import annotations

import dataclasses
import json
import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.params import (CONTACT_DEFAULTS, BarrierParams, Batch, ContactParams, DriverParams, WheelTables,
                                   SHAPE_EXPONENTS, ZoneParams, contact_params)
from jaxmedusa.contact.joints import joint_gains, joint_params
from jaxmedusa.contact.joint_limits import stop_row
from jaxmedusa.core.hitches import hitch_problems, placed_poses, towed_pairs
from jaxmedusa.core.scenario import BARRIER_KINDS, WHEEL_TABLES, BarrierSpec, DriverTable, Scenario, ZoneSpec
from jaxmedusa.core.state import (CONTACT_WARM_SIZE, CRUSH_MEMORY, BarrierState, PairState, ScenarioClock, SimState, VehicleState,
                                  pair_indices)
from jaxmedusa.core.status import Status
from jaxmedusa.physics import road as road_mod
from jaxmedusa.physics.tire import TIRES
from jaxmedusa.physics.vehicle import chassis_damping_limit, model_wheels, vehicle_params

__all__ = ["build_batch", "initial_state", "driver_params", "table_arrays", "table_length", "initial_directors",
           "barrier_params", "batch_barriers", "batch_wheel_tables", "batch_zones", "model_wheels"]


def table_arrays(table: DriverTable, k: int, scale: float):
    """(times (k,), values (k,) * scale, 1.0 if linear else 0.0) of a driver table padded
    to k knots by repeating its last knot."""
    times = np.asarray(table.times, dtype=float)
    values = np.asarray(table.values, dtype=float) * scale
    pad = k - len(times)
    times = np.concatenate([times, np.full(pad, times[-1])])
    values = np.concatenate([values, np.full(pad, values[-1])])
    return times, values, float(table.kind == "linear")


def driver_params(vehicle, k: int) -> DriverParams:
    """Driver tables of one VehicleSpec padded to k knots (STEERING converted to radians)."""
    st, sv, sl = table_arrays(vehicle.steering, k, math.pi / 180.0)  # STEERING in degrees
    vt, vv, vl = table_arrays(vehicle.tire_speed, k, 1.0)
    f = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731
    return DriverParams(f(st), f(sv), f(sl), f(vt), f(vv), f(vl))


def table_length(scenarios) -> int:
    """Knots of the longest driver table of any vehicle of any scenario."""
    return max(max(len(v.steering.times), len(v.tire_speed.times)) for s in scenarios for v in s.vehicles)


def initial_directors(orientation_deg: float, eq_F) -> np.ndarray:
    """F0 = Q(theta) F_eq of init.c `read_vehicles()`: the equilibrium directors turned by
    the ORIENTATION angle [deg] about E3."""
    th = orientation_deg * math.pi / 180.0
    c, s = math.cos(th), math.sin(th)
    Q = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return Q @ np.asarray(eq_F, dtype=float)


def _key(obj) -> str:
    return json.dumps(dataclasses.asdict(obj) if dataclasses.is_dataclass(obj) else obj, sort_keys=True)


def _np_tree(tree):
    return jax.tree.map(np.asarray, tree)


def _per_scenario(value, n: int, what: str) -> list:
    """One entry per scenario: a list is taken as is, anything else is repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{what}: {len(value)} entries for {n} scenarios")
        return list(value)
    return [value] * n


def _check_vehicle(veh, j: int, n_models: int, scenario: str):
    """ValueError naming the field of an impossible VehicleSpec (j 0-based; vehicle j+1 for people)."""
    where = f"scenario {scenario!r}: vehicle {j + 1}: VehicleSpec"
    if isinstance(veh.model, bool) or not isinstance(veh.model, (int, np.integer)) or not 0 <= veh.model < n_models:
        raise ValueError(f"{where}.model: a model index 0..{n_models - 1} expected, got {veh.model!r}")
    for name in ("x", "y", "orientation", "speed"):
        if not math.isfinite(getattr(veh, name)):
            raise ValueError(f"{where}.{name}: a finite number expected, got {getattr(veh, name)!r}")
    for name in ("steering", "tire_speed"):
        t = getattr(veh, name)
        if len(t.times) == 0 or len(t.times) != len(t.values):
            raise ValueError(f"{where}.{name}: equally many times and values (at least one) expected, "
                             f"got {len(t.times)} and {len(t.values)}")
        if not all(math.isfinite(x) for x in (*t.times, *t.values)):
            raise ValueError(f"{where}.{name}: finite times and values expected, got {t}")
        if any(b < a for a, b in zip(t.times, t.times[1:])):
            raise ValueError(f"{where}.{name}.times: non-decreasing times expected, got {t.times}")
        if t.kind not in ("constant", "linear"):
            raise ValueError(f"{where}.{name}.kind: 'constant' or 'linear' expected, got {t.kind!r}")
    for name in WHEEL_TABLES:
        t = getattr(veh, name, None)
        if t is None:
            continue
        flat = [x for v in t.values for x in (v if isinstance(v, (tuple, list)) else (v,))]
        if len(t.times) == 0 or len(t.times) != len(t.values):
            raise ValueError(f"{where}.{name}: equally many times and values (at least one) expected, "
                             f"got {len(t.times)} and {len(t.values)}")
        if not all(math.isfinite(x) for x in (*t.times, *flat)):
            raise ValueError(f"{where}.{name}: finite times and values expected, got {t}")
        if any(b < a for a, b in zip(t.times, t.times[1:])):
            raise ValueError(f"{where}.{name}.times: non-decreasing times expected, got {t.times}")
        if name in ("brake", "lock") and any(x < 0.0 for x in flat):
            raise ValueError(f"{where}.{name}.values: values >= 0 expected, got {t.values}")


def wheel_table_arrays(table: DriverTable | None, k: int, n_wheels: int, w: int, where: str):
    """(times (k,), values (k, w), linear) of a per-wheel table for a vehicle of n_wheels
    wheels in a batch of w wheels per vehicle (a number per time fills every wheel; a list
    gives one value per wheel; wheels beyond n_wheels hold 0). None gives zeros."""
    if table is None:
        return np.zeros(k), np.zeros((k, w)), 0.0
    rows = []
    for i, x in enumerate(table.values):
        if isinstance(x, (tuple, list)):
            if len(x) != n_wheels:
                raise ValueError(f"{where}.values[{i + 1}]: one value per wheel ({n_wheels}: FL, FR, RL, RR, "
                                 f"then further axles) expected, got {len(x)}")
            row = list(map(float, x))
        else:
            row = [float(x)] * n_wheels
        rows.append(row + [0.0] * (w - n_wheels))
    times = np.asarray(table.times, float)
    values = np.asarray(rows, float).reshape(len(times), w)
    pad = k - len(times)
    return (np.concatenate([times, np.full(pad, times[-1])]), np.concatenate([values, np.repeat(values[-1:], pad, 0)]),
            float(table.kind == "linear"))


def batch_wheel_tables(scenarios, n_v: int, w: int) -> WheelTables | None:
    """WheelTables [B, V, Kw, ...] of the vehicles' brake, lock and throttle tables, or None
    when no vehicle has one and no model has rolling resistance (the step then compiles them
    out: the two-axle cars of MEDUSA run exactly as before)."""
    vehicles = [sc.vehicles for sc in scenarios]
    any_table = any(getattr(v, n) is not None for vs in vehicles for v in vs for n in WHEEL_TABLES)
    any_rolling = any(getattr(m, "rolling_resistance", 0.0) != 0.0 for sc in scenarios for m in sc.models)
    if not (any_table or any_rolling):
        return None
    k = max([len(getattr(v, n).times) for vs in vehicles for v in vs for n in WHEEL_TABLES
             if getattr(v, n) is not None] or [1])
    out = {f"{n}_{p}": [] for n in WHEEL_TABLES for p in ("times", "values", "linear")}
    for sc in scenarios:
        rows = {key: [] for key in out}
        for j in range(n_v):
            veh = sc.vehicles[min(j, len(sc.vehicles) - 1)]
            nw = model_wheels(sc.models[veh.model])
            for n in WHEEL_TABLES:
                t, v, lin = wheel_table_arrays(getattr(veh, n), k, nw, w, f"scenario {sc.name!r}: vehicle {j + 1}: {n}")
                rows[f"{n}_times"].append(t)
                rows[f"{n}_values"].append(v)
                rows[f"{n}_linear"].append(lin)
        for key in out:
            out[key].append(np.stack(rows[key]))
    return WheelTables(**{key: jnp.asarray(np.stack(x), jnp.float64) for key, x in out.items()})


def zone_params(zones: list[ZoneSpec], nz: int, n_corners: int) -> ZoneParams:
    """ZoneParams (numpy leaves [nz, ...]) of a road's zones, padded to nz zones of
    n_corners corners (repeating the last corner; padding zones invalid)."""
    corners = np.zeros((nz, n_corners, 2))
    mu_p, mu_s, width, valid = np.ones(nz), np.ones(nz), np.zeros(nz), np.zeros(nz, bool)
    for i, z in enumerate(zones):
        poly = np.asarray(z.polygon, float).reshape(-1, 2)
        corners[i] = np.concatenate([poly, np.repeat(poly[-1:], n_corners - len(poly), 0)])
        mu_p[i], mu_s[i], width[i], valid[i] = z.mu_peak, z.mu_slide, z.width, True
    return ZoneParams(corners=corners, mu_peak=mu_p, mu_slide=mu_s, width=width, valid=valid)


def zone_problems(z: ZoneSpec) -> list[str]:
    """Reasons a friction zone is impossible (empty when it is fine)."""
    out = []
    if len(z.polygon) < 3 or any(len(c) != 2 for c in z.polygon):
        out.append(f"polygon: at least 3 corners [x, y] expected, got {z.polygon!r}")
    elif not np.all(np.isfinite(np.asarray(z.polygon, float))):
        out.append("polygon: finite corners expected")
    for name in ("mu_peak", "mu_slide"):
        x = getattr(z, name)
        if not (math.isfinite(x) and x > 0.0):
            out.append(f"{name}: a friction coefficient > 0 expected, got {x!r}")
    if not (math.isfinite(z.width) and z.width >= 0.0):
        out.append(f"width: a smoothing width >= 0 [m] expected, got {z.width!r}")
    return out


def batch_zones(scenarios) -> ZoneParams | None:
    """ZoneParams [B, NZ, ...] of the scenarios' roads, or None when no road has a zone
    (friction zones are then compiled out of the step)."""
    counts = [len(sc.road.zones) for sc in scenarios]
    if max(counts) == 0:
        return None
    for sc in scenarios:
        for i, z in enumerate(sc.road.zones, 1):
            for reason in zone_problems(z)[:1]:
                raise ValueError(f"scenario {sc.name!r}: road.zones[{i}].{reason}")
    nc = max(len(z.polygon) for sc in scenarios for z in sc.road.zones)
    trees = [zone_params(list(sc.road.zones), max(counts), nc) for sc in scenarios]
    return jax.tree.map(lambda *xs: jnp.asarray(np.stack(xs)), *trees)


def barrier_params(specs: list[BarrierSpec]) -> BarrierParams:
    """BarrierParams (numpy leaves [NB, ...]) of a scenario's barriers; ValueError naming the
    barrier (1-based) for an unknown kind, a zero plane normal or a box size <= 0."""
    kind, point, normal, axes, half = [], [], [], [], []
    for k, b in enumerate(specs, 1):
        if b.kind not in BARRIER_KINDS:
            raise ValueError(f"barrier {k}: kind must be one of {BARRIER_KINDS}, got {b.kind!r}")
        n = np.asarray(b.normal, float)
        size = np.asarray(b.size, float)
        if b.kind == "plane" and not np.linalg.norm(n) > 0.0:
            raise ValueError(f"barrier {k}: a plane needs a nonzero normal, got {b.normal}")
        if b.kind == "box" and not np.all(size > 0.0):
            raise ValueError(f"barrier {k}: box sizes must be > 0 [m], got {b.size}")
        psi = math.radians(b.yaw_deg)
        c, s = math.cos(psi), math.sin(psi)
        kind.append(0.0 if b.kind == "plane" else 1.0)
        point.append(np.asarray(b.position, float))
        normal.append(n / max(float(np.linalg.norm(n)), 1e-300))
        axes.append(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]))
        half.append(0.5 * size)
    return BarrierParams(kind=np.asarray(kind), point=np.stack(point), normal=np.stack(normal), axes=np.stack(axes),
                         half=np.stack(half))


def batch_barriers(scenarios, n_vehicles: int):
    """(BarrierParams [B, NB, ...], BarrierState [B, V, NB, ...]) of a list of scenarios, or
    (None, None) when none has a barrier. All scenarios of a batch list equally many."""
    counts = {len(s.barriers) for s in scenarios}
    if counts == {0}:
        return None, None
    if len(counts) > 1:
        raise ValueError(f"all scenarios of a batch must have the same number of barriers, got {sorted(counts)}")
    nb, b = counts.pop(), len(scenarios)
    params = jax.tree.map(lambda *xs: jnp.asarray(np.stack(xs), jnp.float64), *[barrier_params(s.barriers) for s in scenarios])
    state = BarrierState(crush=jnp.zeros((b, n_vehicles, nb, CRUSH_MEMORY)), gamma=jnp.zeros((b, n_vehicles, nb, 2)))
    return params, state


def _contact_dict(c) -> dict:
    if c is None:
        return dict(CONTACT_DEFAULTS)
    if isinstance(c, ContactParams):
        return {f.name: float(getattr(c, f.name)) for f in dataclasses.fields(ContactParams)}
    contact_params(**c)  # checks the names
    return {**CONTACT_DEFAULTS, **c}


def build_batch(scenarios: list[Scenario], dt: float = 5e-5, contact=None, n_vehicles: int | None = None,
                tire=None, static_exponents: bool = True) -> tuple[Batch, SimState]:
    """Stack scenarios into (Batch, initial SimState at t = 0 with step dt [s]).

    All scenarios must share the road kind (flat, or spline with the same number of
    points). `n_vehicles` pads to a fixed vehicle count. `contact`: ContactParams or a dict
    of contact parameters (default core.params.CONTACT_DEFAULTS), or a list with one per
    scenario. `tire`: a dict of parameters of the vehicles' tire model (default: the model's
    defaults, Goodyear 185SR14 for CALSPAN), or a list with one per scenario. The tire model of
    each vehicle is its ModelSpec.tire_model (physics.tire.TIRES). `static_exponents`: where
    every scenario has the same squareness exponents, store them as Python floats, compiled
    in (core.params.ContactParams); False keeps arrays [B], for callers that build batches
    whose exponents differ from one build to the next (a study that perturbs them: else
    each chunk whose exponents happen to agree would compile anew).
    """
    b = len(scenarios)
    if b == 0:
        raise ValueError("no scenarios to build")
    if any(len(s.vehicles) == 0 for s in scenarios):
        raise ValueError("a scenario has no vehicles")
    for sc in scenarios:  # before anything indexes models or tables
        for j, veh in enumerate(sc.vehicles):
            _check_vehicle(veh, j, len(sc.models), sc.name)
        for key, reason in hitch_problems(sc)[:1]:
            raise ValueError(f"scenario {sc.name!r}: {key}: {reason}")
    n_v = n_vehicles or max(len(s.vehicles) for s in scenarios)
    if any(len(s.vehicles) > n_v for s in scenarios):
        raise ValueError(f"a scenario has more than n_vehicles={n_v} vehicles")
    k = table_length(scenarios)
    kinds = {s.road.points is None for s in scenarios}
    if len(kinds) > 1:
        raise ValueError("a batch cannot mix the flat plane and spline roads")
    flat = kinds.pop()
    tires = [t or None for t in _per_scenario(tire, b, "tire")]
    contacts = [_contact_dict(c) for c in _per_scenario(contact, b, "contact")]
    used = {sc.models[v.model].tire_model for sc in scenarios for v in sc.vehicles}
    for name in used:
        TIRES.resolve(name, where="ModelSpec.tire_model")
    tire_models = tuple(n for n in TIRES if n in used)  # static: the tire models of this batch

    all_models = [sc.models[v.model] for sc in scenarios for v in sc.vehicles]
    n_wheels = max(model_wheels(m) for m in all_models)  # W: 2 x the most axles of any vehicle
    # the wheel layer (per-wheel tires, tandem equaliser) only where a vehicle needs it
    wheel_layer = n_wheels if any(m.extra_axles or m.tires_by_axle for m in all_models) else None
    damped = any(m.chassis_damping != 0.0 for m in all_models)  # structural damping, else compiled out
    vp_cache, vp_list, vp_idx = {}, [], np.zeros((b, n_v), np.int64)
    road_cache, road_list, road_idx = {}, [], np.zeros(b, np.int64)
    drv = {f: np.zeros((b, n_v, k)) for f in ("st", "sv", "vt", "vv")}
    drv_lin = {f: np.zeros((b, n_v)) for f in ("sl", "vl")}
    r0 = np.zeros((b, n_v, 3))
    F0 = np.zeros((b, n_v, 3, 3))
    v0 = np.zeros((b, n_v, 3))
    valid = np.zeros((b, n_v), bool)
    for i, sc in enumerate(scenarios):
        tkey = json.dumps(tires[i], sort_keys=True)
        if not flat:
            rk = _key(sc.road)
            if rk not in road_cache:
                road_cache[rk] = len(road_list)
                road_list.append(_np_tree(road_mod.build_road(sc.road)))
            road_idx[i] = road_cache[rk]
        valid[i, : len(sc.vehicles)] = True
        poses = placed_poses(sc)  # trailers placed at their hitch (core/hitches.py)
        for j in range(n_v):
            veh = sc.vehicles[min(j, len(sc.vehicles) - 1)]  # padding repeats the last vehicle
            model = sc.models[veh.model]
            mk = _key(model) + tkey
            if mk not in vp_cache:
                vp = vehicle_params(model, tires[i], tire_models, wheel_layer, damped)
                if model.chassis_damping > 0.0 and model.chassis_damping > (limit := chassis_damping_limit(vp, dt)):
                    raise ValueError(f"scenario {sc.name!r}: models.{veh.model + 1}.chassis_damping: "
                                     f"{model.chassis_damping:g} s is more than steps of {dt:g} s integrate stably "
                                     f"({limit:.3g} s at most; docs/vehicles-and-scenes.md): smaller steps or less "
                                     "damping")
                vp_cache[mk] = len(vp_list)
                vp_list.append(_np_tree(vp))
            vp_idx[i, j] = vp_cache[mk]
            dp = driver_params(veh, k)
            drv["st"][i, j], drv["sv"][i, j], drv_lin["sl"][i, j] = dp.steer_times, dp.steer_values, dp.steer_linear
            drv["vt"][i, j], drv["vv"][i, j], drv_lin["vl"][i, j] = dp.speed_times, dp.speed_values, dp.speed_linear
            x, y, orientation, speed = poses[min(j, len(sc.vehicles) - 1)]
            th = orientation * math.pi / 180.0
            F0[i, j] = initial_directors(orientation, model.eq_F)
            r0[i, j] = (x, y, model.eq_r3)  # r = (X, Y, R3)
            v0[i, j] = (speed * math.cos(th), speed * math.sin(th), 0.0)  # SPEED along the heading

    for i, sc in enumerate(scenarios):  # towed vehicles: kingpin on the hitch (docs/trailers.md, "Start")
        for tow, towed in _hitch_order(sc):
            Xa, Xb = np.asarray(sc.vehicles[towed].hitch, float), np.asarray(sc.vehicles[towed].kingpin, float)
            at_hitch = r0[i, tow] + F0[i, tow] @ Xa - F0[i, towed] @ Xb  # eq (1.2) at both anchors
            if sc.vehicles[towed].place_at_hitch:
                r0[i, towed] = at_hitch
            else:  # x, y as given; the height from the hitch
                r0[i, towed, 2] = at_hitch[2]

    def gather(trees, idx):
        stacked = jax.tree.map(lambda *xs: np.stack(xs), *trees)
        return jax.tree.map(lambda x: x[idx], stacked)

    f64 = partial(jnp.asarray, dtype=jnp.float64)
    keep_ints = lambda x: jnp.asarray(x) if np.issubdtype(x.dtype, np.integer) else f64(x)  # noqa: E731 (TireSet.index)
    vehicle = jax.tree.map(keep_ints, gather(vp_list, vp_idx))
    driver = DriverParams(f64(drv["st"]), f64(drv["sv"]), f64(drv_lin["sl"]),
                          f64(drv["vt"]), f64(drv["vv"]), f64(drv_lin["vl"]),
                          wheels=batch_wheel_tables(scenarios, n_v, n_wheels))
    cnames = [f.name for f in dataclasses.fields(ContactParams)]
    contact_arr = {n: f64(np.array([float(c[n]) for c in contacts])) for n in cnames}
    for n in SHAPE_EXPONENTS if static_exponents else ():
        if len({float(c[n]) for c in contacts}) == 1:
            contact_arr[n] = float(contacts[0][n])
    contact_arr = ContactParams(**contact_arr)
    road = None if flat else jax.tree.map(f64, gather(road_list, road_idx))
    seg = np.zeros((b, n_v), np.int32)
    s_par = np.zeros((b, n_v))
    if not flat:  # the initial tracking point of every vehicle: one vmapped call
        roads_v = jax.tree.map(lambda x: jnp.repeat(x, n_v, axis=0), road)
        sg, sp = jax.vmap(road_mod.initial_tracking)(roads_v, f64(r0.reshape(-1, 3)))
        seg, s_par = np.asarray(sg).reshape(b, n_v), np.asarray(sp).reshape(b, n_v)
    vs = VehicleState(r=f64(r0), F=f64(F0), v=f64(v0), W=f64(np.zeros((b, n_v, 3, 3))),
                      alpha_lag=f64(np.zeros((b, n_v, n_wheels))), alpha_rate=f64(np.zeros((b, n_v, n_wheels))),
                      road_seg=jnp.asarray(seg, jnp.int32), road_s=f64(s_par))
    n_pairs = len(pair_indices(n_v)[0])
    pairs = PairState(gamma=f64(np.zeros((b, n_pairs, 2))), warm=f64(np.zeros((b, n_pairs, CONTACT_WARM_SIZE))),
                      in_contact=jnp.zeros((b, n_pairs), bool), crush=f64(np.zeros((b, n_pairs, CRUSH_MEMORY))))
    barriers, barrier_state = batch_barriers(scenarios, n_v)
    batch = Batch(vehicle=vehicle, driver=driver, valid=jnp.asarray(valid), contact=contact_arr, road=road,
                  barriers=barriers, zones=batch_zones(scenarios),
                  joints=batch_joints(scenarios, vp_list, vp_idx, n_v, dt))
    return batch, initial_state(vs, pairs, dt, barrier_state)


def _hitch_order(sc) -> list[tuple[int, int]]:
    """(tow, trailer) pairs of a scenario, tow vehicles first (chains in order)."""
    todo = towed_pairs(sc)
    order, placed = [], {j for j, v in enumerate(sc.vehicles) if v.towed_by is None}
    while todo:
        ready = [(a, b) for a, b in todo if a in placed]
        order += ready
        placed |= {b for _, b in ready}
        todo = [p for p in todo if p not in ready]
    return order


def batch_joints(scenarios, vp_list, vp_idx, n_v: int, dt: float):
    """contact.joints.JointParams [B, J, ...] of the scenarios' hitches (J the most of any
    scenario), or None when no scenario has a trailer (joints are then compiled out). Each
    hitch's stiffness and damping follow from both bodies' masses and the step dt [s]
    (contact.joints.joint_gains, docs/trailers.md)."""
    per = [towed_pairs(sc) for sc in scenarios]
    n_j = max(len(p) for p in per)
    if n_j == 0:
        return None
    pairs = pair_indices(n_v)
    trees = []
    for i, (sc, couplings) in enumerate(zip(scenarios, per)):
        rows = []
        for a, b in couplings:
            pa, pb = vp_list[vp_idx[i, a]], vp_list[vp_idx[i, b]]
            Xa, Xb = sc.vehicles[b].hitch, sc.vehicles[b].kingpin
            k, c = joint_gains(pa.mass, pa.my, Xa, pb.mass, pb.my, Xb, dt)
            rows.append((a, b, Xa, Xb, k, c, stop_row(sc.vehicles[b], pa.my, pb.my, dt)))  # pitch, roll stops
        trees.append(joint_params(rows, n_j, pairs))
    stacked = jax.tree.map(lambda *xs: np.stack(xs), *trees)
    return jax.tree.map(lambda x: jnp.asarray(x) if x.dtype != np.float64 else jnp.asarray(x, jnp.float64), stacked)


def initial_state(vehicles: VehicleState, pairs: PairState, dt: float, barriers: BarrierState | None = None
                  ) -> SimState:
    """SimState at t = 0 for batched vehicle, pair and barrier states (leading axis [B])."""
    b = vehicles.r.shape[0]
    f = lambda x: jnp.full((b,), x, dtype=jnp.float64)  # noqa: E731
    clock = ScenarioClock(t=f(0.0), dt=f(dt), hold=jnp.full((b,), -1, jnp.int32), t_saved=f(-100.0),
                          status=jnp.full((b,), Status.OK, jnp.int32), steps=jnp.zeros((b,), jnp.int32),
                          still_since=jnp.full(vehicles.r.shape[:2], -1.0, jnp.float64))
    return SimState(vehicles=vehicles, pairs=pairs, clock=clock, barriers=barriers)
