"""What a study parameter's path names: `vehicles.N.speed`, `models.M.l1`, `tire.a0`,
`vehicles.N.brake.values.K.W`, `road.zones.K.mu_peak`, ... (the path grammar is in
study/parse.py's module docstring). `parse_target` turns a path into a study.spec.Target
that study/perturb.py applies to a scenario; errors name the parameter's key."""
from __future__ import annotations

import dataclasses

from jaxmedusa.core.params import CONTACT_DEFAULTS
from jaxmedusa.core.scenario import AxleSpec, ModelSpec, Scenario
from jaxmedusa.io.validation import InputErrors
from jaxmedusa.physics.tire.calspan import GOODYEAR_185SR14
from jaxmedusa.study.spec import Target

__all__ = ["parse_target"]

_VEHICLE_FIELDS = {"x": "x", "y": "y", "speed": "speed", "heading": "orientation",
                   "orientation_deg": "orientation", "orientation": "orientation"}
_DRIVER_FIELDS = ("tire_speed", "steering_deg")
_WHEEL_FIELDS = ("brake", "lock", "throttle")  # core.scenario.WHEEL_TABLES
_ROAD_COORDS = {"x": 0, "y": 1, "z": 2, "bank": 3, "bank_deg": 3}
_MODEL_SCALARS = [f.name for f in dataclasses.fields(ModelSpec)
                  if f.name not in ("contact_dims", "eq_F", "tire_model", "extra_axles", "tires_by_axle", "kind")]
_AXLE_FIELDS = [f.name for f in dataclasses.fields(AxleSpec) if f.name != "equalised"]  # models.M.extra_axles.K.<f>
# A towed vehicle's coupling points (docs/trailers.md): vehicles.N.{hitch, kingpin}.{x, y, z | 1, 2, 3} [m]
_HITCH_POINTS = ("hitch", "kingpin")
_XYZ = {"x": 0, "y": 1, "z": 2}
_HITCH_LIMITS = ("pitch_limit_deg", "roll_limit_deg")  # vehicles.N.<limit> [deg] of a towed vehicle


def _one_based(text: str, n: int, where: str, what: str, err: InputErrors) -> list[int]:
    if text == "*":
        return list(range(n))
    if not text.isdigit() or not 1 <= int(text) <= n:
        err.fail(where, f"{what} number 1..{n} (or *) expected, got '{text}'")
    return [int(text) - 1]


def parse_target(path: str, base: Scenario, where: str, err: InputErrors) -> Target:
    """A Target from a path (module docstring); errors name `where`."""
    if not isinstance(path, str) or not path:
        err.fail(where, f"a path string expected, got {path!r}")
    parts = path.split(".")
    head = parts[0]
    nv, nm = len(base.vehicles), len(base.models)
    bad = f"unknown path '{path}'"
    if head == "vehicles":
        if len(parts) < 3:
            err.fail(where, f"{bad}: vehicles.N.<field> expected")
        ks = tuple(_one_based(parts[1], nv, where, "a vehicle", err))
        fld = parts[2]
        if fld in _VEHICLE_FIELDS and len(parts) == 3:
            return Target(path, "vehicle", ks, _VEHICLE_FIELDS[fld])
        if fld == "model" and len(parts) == 3:
            return Target(path, "vehicle_model", ks, "model")
        if fld in (*_HITCH_LIMITS, *_HITCH_POINTS):  # a towed vehicle's hitch and stops (contact/joint_limits.py)
            untowed = [k + 1 for k in ks if base.vehicles[k].towed_by is None]
            if untowed:
                err.fail(where, f"{bad}: vehicle {untowed[0]} is not towed (no towed_by), so it has no {fld}")
        if fld in _HITCH_LIMITS and len(parts) == 3:  # stop angle [deg]
            if any(getattr(base.vehicles[k], fld) is None for k in ks):
                err.fail(where, f"{bad}: give {fld} in the scenario's [[vehicles]] entry to perturb it")
            return Target(path, "vehicle", ks, fld)
        if fld in _HITCH_POINTS and len(parts) == 4:
            axis = _XYZ.get(parts[3])
            axis = axis if axis is not None else _one_based(parts[3], 3, where, f"a coordinate of {fld} (x, y, z)",
                                                            err)[0]
            return Target(path, "hitch", ks, fld, index=(axis,))
        if fld in _DRIVER_FIELDS:
            attr = "steering" if fld == "steering_deg" else "tire_speed"
            if len(parts) == 3:
                return Target(path, "driver", ks, attr, "all")
            if len(parts) == 5 and parts[3] in ("values", "times"):
                n_knots = min(len(getattr(base.vehicles[k], attr).times) for k in ks)
                knot = _one_based(parts[4], n_knots, where, f"a knot of {fld}", err)
                return Target(path, "driver", ks, attr, parts[3], tuple(knot))
        if fld in _WHEEL_FIELDS:
            if len(parts) == 3:
                return Target(path, "wheel", ks, fld, "all")
            if len(parts) in (5, 6) and parts[3] in ("values", "times") and not (len(parts) == 6 and parts[3] == "times"):
                tables = [getattr(base.vehicles[k], fld) for k in ks]
                n_knots = min(len(t.times) if t is not None else 1 for t in tables)
                knot = _one_based(parts[4], n_knots, where, f"a knot of {fld}", err)
                if len(parts) == 5:
                    return Target(path, "wheel", ks, fld, parts[3], tuple(knot))
                n_wheels = min(2 * base.models[base.vehicles[k].model].n_axles for k in ks)  # FL, FR, RL, RR, ...
                wheel = _one_based(parts[5], n_wheels, where, "a wheel", err)
                index = (knot[0],) if len(wheel) > 1 else (knot[0], wheel[0])  # "*": every wheel
                return Target(path, "wheel", ks, fld, "values", index)
        err.fail(where, f"{bad}; vehicle fields: {', '.join(_VEHICLE_FIELDS)}, model, tire_speed, steering_deg "
                 "(whole table, or .values.K / .times.K), brake, lock, throttle (whole table, .values.K[.W] / "
                 ".times.K), hitch.{x, y, z}, kingpin.{x, y, z}, pitch_limit_deg, roll_limit_deg (a towed "
                 "vehicle)")
    if head == "models":
        if len(parts) < 3:
            err.fail(where, f"{bad}: models.M.<field> expected")
        ms = tuple(_one_based(parts[1], nm, where, "a model", err))
        fld = parts[2]
        if fld in _MODEL_SCALARS and len(parts) == 3:
            return Target(path, "model", ms, fld)
        if fld == "contact_dims" and len(parts) == 4:
            return Target(path, "model", ms, fld, index=tuple(_one_based(parts[3], 3, where, "a dimension", err)))
        if fld == "eq_F" and len(parts) == 5:
            j = _one_based(parts[3], 3, where, "a row", err)[0]
            i = _one_based(parts[4], 3, where, "a column", err)[0]
            return Target(path, "model", ms, fld, index=(j, i))
        if fld == "extra_axles" and len(parts) == 5 and parts[4] in _AXLE_FIELDS:
            n_extra = min(len(base.models[m].extra_axles) for m in ms)
            if n_extra == 0:
                err.fail(where, f"{bad}: model {ms[0] + 1} has no extra_axles")
            k = _one_based(parts[3], n_extra, where, "an extra axle", err)[0]
            return Target(path, "model", ms, fld, part=parts[4], index=(k,))
        err.fail(where, f"{bad}; model fields: {', '.join(_MODEL_SCALARS)}, contact_dims.K, eq_F.J.I, "
                 f"extra_axles.K.{{{', '.join(_AXLE_FIELDS)}}}")
    if head == "tire":
        if len(parts) != 2 or parts[1] not in GOODYEAR_185SR14:
            err.fail(where, f"{bad}; tire fields: {', '.join(GOODYEAR_185SR14)}")
        return Target(path, "tire", name=parts[1])
    if head == "contact":
        if len(parts) != 2 or parts[1] not in CONTACT_DEFAULTS:
            err.fail(where, f"{bad}; contact fields: {', '.join(CONTACT_DEFAULTS)}")
        return Target(path, "contact", name=parts[1])
    if head == "road" and len(parts) == 4 and parts[1] == "zones":
        zones = getattr(base.road, "zones", ())
        if not zones:
            err.fail(where, f"{bad}: the base scenario's road has no [[road.zones]]")
        if parts[3] not in ("mu_peak", "mu_slide", "width"):
            err.fail(where, f"{bad}; road.zones.K.{{mu_peak, mu_slide, width}} expected")
        k = _one_based(parts[2], len(zones), where, "a friction zone", err)[0]
        return Target(path, "zone", name=parts[3], index=(k,))
    if head == "road":
        if base.road.points is None:
            err.fail(where, f"{bad}: the base scenario's road is the flat plane (no points)")
        if len(parts) != 4 or parts[1] != "points" or parts[3] not in _ROAD_COORDS:
            err.fail(where, f"{bad}; road.points.K.{{x, y, z, bank}} expected")
        k = _one_based(parts[2], len(base.road.points), where, "a road point", err)[0]
        return Target(path, "road", index=(k, _ROAD_COORDS[parts[3]]))
    if head in ("simulation", "settings"):
        err.fail(where, f"{bad}: simulation settings are static (one compilation per study); "
                 "make one study per setting")
    err.fail(where, f"{bad}; paths start with vehicles, models, tire, contact or road")
