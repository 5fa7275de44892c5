"""Articulated vehicles in plain Python: vehicle kinds, the checks of a combination (who tows
whom) and the placement of trailers at their hitch (docs/trailers.md).

A trailer is a vehicle of its own (a Cosserat point with suspension and tires, as any
other) whose VehicleSpec names its tow vehicle (`towed_by`, 0-based here, from 1 in files)
and the coupling point in both bodies (`hitch` in the tow vehicle's frame, `kingpin` in the
trailer's, [m] from each centre of mass). build.py turns the couplings into the joint list
of contact/joints.py; nothing here is traced.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from jaxmedusa.core.registry import Registry

__all__ = ["VehicleKind", "VEHICLE_KINDS", "HitchType", "HITCH_TYPES", "hitch_limits", "hitch_problems",
           "placed_poses", "towed_pairs"]


@dataclass(frozen=True)
class VehicleKind:
    """What a vehicle kind allows: towed (it needs a tow vehicle and a hitch), driven (a driver
    table: steering and tire speed)."""

    towed: bool
    driven: bool


VEHICLE_KINDS: Registry[VehicleKind] = Registry("vehicle kind")
VEHICLE_KINDS.register("car", VehicleKind(towed=False, driven=True))
VEHICLE_KINDS.register("truck", VehicleKind(towed=False, driven=True))
VEHICLE_KINDS.register("trailer", VehicleKind(towed=True, driven=False))


@dataclass(frozen=True)
class HitchType:
    """A coupling: which decomposition of the relative rotation its stops see
    (contact/joint_limits.py) and its default pitch and roll limits [deg]."""

    fifth_wheel: bool
    pitch_limit_deg: float
    roll_limit_deg: float


HITCH_TYPES: Registry[HitchType] = Registry("hitch type")
# A ball: UN ECE Regulation No. 55 asks a coupling head on its ball for free rotation of at
# least +-20 deg vertical and +-25 deg about the drawbar's axis; taken as the stops
# (representative: a real head's stop lies at or somewhat beyond the regulation's minimum).
HITCH_TYPES.register("ball", HitchType(fifth_wheel=False, pitch_limit_deg=20.0, roll_limit_deg=25.0))
# A fifth wheel: the plate pitches on its trunnions (+-15 deg, a typical range; R55's proposed
# minimum is +-7 deg) and is locked in roll (roll limit 0: the stop carries the trailer's roll
# moment into the tractor, as a semi-oscillating fifth wheel does; docs/trailers.md).
HITCH_TYPES.register("fifth_wheel", HitchType(fifth_wheel=True, pitch_limit_deg=15.0, roll_limit_deg=0.0))

# The validated ranges [deg]: pitch stays clear of the decomposition's +-90 deg singularity.
PITCH_LIMIT_RANGE = (0.0, 80.0)  # open below (a pitch-locked hitch would fight the suspension's pitch)
ROLL_LIMIT_RANGE = (0.0, 90.0)  # closed below: 0 locks roll


def hitch_limits(v) -> tuple[bool, float, float]:
    """(fifth_wheel, pitch limit [rad], roll limit [rad]) of a towed VehicleSpec: its own limits
    or its hitch type's defaults."""
    ht = HITCH_TYPES.resolve(v.hitch_type, where="hitch_type")
    pitch = ht.pitch_limit_deg if v.pitch_limit_deg is None else v.pitch_limit_deg
    roll = ht.roll_limit_deg if v.roll_limit_deg is None else v.roll_limit_deg
    return ht.fifth_wheel, math.radians(pitch), math.radians(roll)


def _limit_problems(v, where: str) -> list[tuple[str, str]]:
    if v.hitch_type not in HITCH_TYPES:
        return [(f"{where}.hitch_type", f"unknown hitch type {v.hitch_type!r}; valid: "
                 f"{', '.join(HITCH_TYPES.names())}")]
    out = []
    for key, (lo, hi), open_lo in (("pitch_limit_deg", PITCH_LIMIT_RANGE, True),
                                   ("roll_limit_deg", ROLL_LIMIT_RANGE, False)):
        x = getattr(v, key)
        if x is None:
            continue
        ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and \
            (lo < x if open_lo else lo <= x) and x <= hi
        if not ok:
            out.append((f"{where}.{key}", f"an angle {'>' if open_lo else '>='} {lo:g} and <= {hi:g} deg expected, "
                        f"got {x!r}"))
    return out


def _kind(scenario, j: int) -> VehicleKind:
    model = scenario.models[scenario.vehicles[j].model]
    return VEHICLE_KINDS.resolve(getattr(model, "kind", "car"), where=f"model {scenario.vehicles[j].model + 1}.kind")


def hitch_problems(scenario) -> list[tuple[str, str]]:
    """[(key, reason)] of an impossible combination, keys as a file names them
    (vehicles[N].towed_by ...): towed_by not another vehicle of the scenario, a cycle of
    couplings, a trailer model without a tow vehicle or a towed vehicle that is not a trailer,
    a trailer with a steering or tire-speed table, hitch or kingpin not 3 finite numbers, an
    unknown hitch_type, a pitch or roll limit outside its range."""
    out = []
    vs = scenario.vehicles
    n = len(vs)
    for j, v in enumerate(vs):
        where = f"vehicles[{j + 1}]"
        try:
            kind = _kind(scenario, j)
        except ValueError as e:
            out.append((f"models[{v.model + 1}].kind", str(e)))
            continue
        t = v.towed_by
        if t is None:
            if kind.towed:
                out.append((f"{where}.towed_by", "a trailer model needs towed_by = the number of its tow vehicle"))
            continue
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < n:
            got = t + 1 if isinstance(t, int) else t
            out.append((f"{where}.towed_by", f"a vehicle number 1..{n} expected, got {got!r}"))
            continue
        if t == j:
            out.append((f"{where}.towed_by", "a vehicle cannot tow itself"))
            continue
        if not kind.towed:
            out.append((f"{where}.towed_by", f"only a model of kind 'trailer' is towed (model {v.model + 1} is "
                        f"{scenario.models[v.model].kind!r})"))
        for key in ("hitch", "kingpin"):
            x = getattr(v, key)
            if len(x) != 3 or not all(isinstance(c, (int, float)) and math.isfinite(c) for c in x):
                out.append((f"{where}.{key}", f"[x, y, z] (3 finite numbers, m) expected, got {x!r}"))
        out += _limit_problems(v, where)
    if out:
        return out
    for j, v in enumerate(vs):
        kind = _kind(scenario, j)
        if not kind.driven:
            if len(set(v.steering.values)) > 1 or any(x != 0.0 for x in v.steering.values):
                out.append((f"vehicles[{j + 1}].steering_deg", "a trailer does not steer"))
            if any(abs(x) > 0.0 for x in v.tire_speed.values):
                out.append((f"vehicles[{j + 1}].tire_speed", "a trailer is not driven (free-rolling wheels)"))
        seen, k = {j}, v.towed_by
        while k is not None:
            if k in seen:
                out.append((f"vehicles[{j + 1}].towed_by", "the couplings form a cycle"))
                break
            seen.add(k)
            k = vs[k].towed_by
    return out


def towed_pairs(scenario) -> list[tuple[int, int]]:
    """[(tow vehicle, trailer)] of a scenario, 0-based, in vehicle order."""
    return [(v.towed_by, j) for j, v in enumerate(scenario.vehicles) if v.towed_by is not None]


def placed_poses(scenario) -> list[tuple[float, float, float, float]]:
    """(x [m], y [m], orientation [deg], speed [m/s]) of every vehicle at t = 0. A trailer with
    place_at_hitch takes its tow vehicle's heading and sits so that its kingpin is on the
    hitch in plan view: r_t = r_tow + R(psi) hitch_xy - R(psi) kingpin_xy (heights come from
    each model's own equilibrium R3); with speed_from_tow it takes the tow vehicle's speed.
    Chains (a dolly behind a trailer) resolve in any order; call hitch_problems first."""
    vs = scenario.vehicles
    poses: dict[int, tuple] = {}

    def pose(j):
        if j in poses:
            return poses[j]
        v = vs[j]
        p = (v.x, v.y, v.orientation, v.speed)
        if v.towed_by is not None and (v.place_at_hitch or v.speed_from_tow):
            x0, y0, th_deg, speed = pose(v.towed_by)
            if v.place_at_hitch:
                th = math.radians(th_deg)
                c, s = math.cos(th), math.sin(th)
                dx = v.hitch[0] - v.kingpin[0]
                dy = v.hitch[1] - v.kingpin[1]
                p = (x0 + c * dx - s * dy, y0 + s * dx + c * dy, th_deg, p[3])
            if v.speed_from_tow:
                p = (p[0], p[1], p[2], speed)
        poses[j] = p
        return p

    return [pose(j) for j in range(len(vs))]
