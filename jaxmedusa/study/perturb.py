"""Perturbation: the scenario of one sample (the base with every parameter applied), checked.

Copy-on-write: the base scenario's objects are never mutated. Impossible values of a sample
raise StudyError naming the parameter(s) responsible.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from jaxmedusa.build import zone_problems
from jaxmedusa.core.hitches import hitch_problems
from jaxmedusa.core.scenario import DriverTable, Scenario, axle_problems, crush_problems
from jaxmedusa.io.medusa_files import KEYWORD_FIELDS, model_problems
from jaxmedusa.physics.road import validate_points
from jaxmedusa.physics.tire.calspan import GOODYEAR_185SR14
from jaxmedusa.study.spec import Study, StudyError, Target, check_contact

__all__ = ["scenario_for", "scenarios_for"]


def _combine(base: float, a: float, mode: str) -> float:
    return a if mode == "set" else base + a if mode == "offset" else base * a


def _combine_wheels(x, a: float, mode: str, wheel: int | None, n_wheels: int):
    """A per-wheel table value (a number: every wheel, or a tuple per wheel) with a applied to
    every wheel, or only to `wheel` (0-based; a number becomes a tuple of n_wheels first)."""
    if wheel is None:
        return tuple(_combine(y, a, mode) for y in x) if isinstance(x, tuple) else _combine(x, a, mode)
    row = list(x) if isinstance(x, tuple) else [x] * n_wheels
    row[wheel] = _combine(row[wheel], a, mode)
    return tuple(row)


def _apply(sc: Scenario, tire: dict, contact: dict, t: Target, a: float, mode: str):
    """Apply value a to target t (copy-on-write: the base objects are never mutated)."""
    if t.kind == "vehicle":
        for k in t.items:
            v = sc.vehicles[k]
            sc.vehicles[k] = dataclasses.replace(v, **{t.name: _combine(getattr(v, t.name), a, mode)})
    elif t.kind == "hitch":  # a towed vehicle's hitch or kingpin coordinate (docs/trailers.md)
        for k in t.items:
            v = sc.vehicles[k]
            point = list(getattr(v, t.name))
            point[t.index[0]] = _combine(point[t.index[0]], a, mode)
            sc.vehicles[k] = dataclasses.replace(v, **{t.name: tuple(point)})
    elif t.kind == "vehicle_model":
        for k in t.items:
            sc.vehicles[k] = dataclasses.replace(sc.vehicles[k], model=int(a) - 1)
    elif t.kind == "driver":
        for k in t.items:
            v = sc.vehicles[k]
            tab: DriverTable = getattr(v, t.name)
            times, values = list(tab.times), list(tab.values)
            if t.part == "all":
                values = [_combine(x, a, mode) for x in values]
            elif t.part == "values":
                values[t.index[0]] = _combine(values[t.index[0]], a, mode)
            else:
                times[t.index[0]] = _combine(times[t.index[0]], a, mode)
            new = DriverTable(times=tuple(times), values=tuple(values), kind=tab.kind)
            sc.vehicles[k] = dataclasses.replace(v, **{t.name: new})
    elif t.kind == "wheel":  # brake, lock, throttle: absent tables start as 0 for every wheel
        for k in t.items:
            v = sc.vehicles[k]
            tab: DriverTable = getattr(v, t.name) or DriverTable()
            times, values = list(tab.times), list(tab.values)
            n_wheels = 4 + 2 * len(getattr(sc.models[v.model], "extra_axles", ()))
            if t.part == "all":
                values = [_combine_wheels(x, a, mode, None, n_wheels) for x in values]
            elif t.part == "values":
                wheel = t.index[1] if len(t.index) > 1 else None
                values[t.index[0]] = _combine_wheels(values[t.index[0]], a, mode, wheel, n_wheels)
            else:
                times[t.index[0]] = _combine(times[t.index[0]], a, mode)
            new = DriverTable(times=tuple(times), values=tuple(values), kind=tab.kind)
            sc.vehicles[k] = dataclasses.replace(v, **{t.name: new})
    elif t.kind == "model":
        for m in t.items:
            model = sc.models[m]
            if t.name == "contact_dims":
                dims = list(model.contact_dims)
                dims[t.index[0]] = _combine(dims[t.index[0]], a, mode)
                new = tuple(dims)
            elif t.name == "eq_F":
                rows = [list(r) for r in model.eq_F]
                j, i = t.index
                rows[j][i] = _combine(rows[j][i], a, mode)
                new = tuple(tuple(r) for r in rows)
            elif t.name == "extra_axles":  # extra_axles.K.<field>: t.index (K,), t.part the field
                axles = list(model.extra_axles)
                ax = axles[t.index[0]]
                axles[t.index[0]] = dataclasses.replace(ax, **{t.part: _combine(getattr(ax, t.part), a, mode)})
                new = tuple(axles)
            else:
                new = _combine(getattr(model, t.name), a, mode)
            sc.models[m] = dataclasses.replace(model, **{t.name: new})
    elif t.kind == "tire":
        tire[t.name] = _combine(tire.get(t.name, GOODYEAR_185SR14[t.name]), a, mode)
    elif t.kind == "contact":
        contact[t.name] = _combine(contact[t.name], a, mode)
    elif t.kind == "road":
        pts = [list(p) for p in sc.road.points]
        k, c = t.index
        pts[k][c] = _combine(pts[k][c], a, mode)
        sc.road = dataclasses.replace(sc.road, points=tuple(tuple(p) for p in pts))
    elif t.kind == "zone":
        zones = list(sc.road.zones)
        z = zones[t.index[0]]
        zones[t.index[0]] = dataclasses.replace(z, **{t.name: _combine(getattr(z, t.name), a, mode)})
        sc.road = dataclasses.replace(sc.road, zones=tuple(zones))


def scenario_for(study: Study, values: dict[str, float], sample_id: int = 0, check: bool = True):
    """(Scenario, tire dict, contact dict) of one sample: the base with every parameter
    applied (value per parameter name). `check` raises StudyError naming the parameter."""
    b = study.base
    sc = Scenario(name=f"{study.name}-{sample_id}", models=list(b.models), vehicles=list(b.vehicles), road=b.road,
                  barriers=list(b.barriers))
    tire, contact = dict(study.tire), dict(study.contact)
    for p in study.parameters:
        x = float(values[p.name])
        for t, c in p.targets:
            _apply(sc, tire, contact, t, c * x, p.mode)
    if check:
        _check_sample(study, sc, tire, contact, sample_id, values)
    return sc, tire, contact


def scenarios_for(study: Study, columns: dict[str, np.ndarray], ids=None) -> list[tuple]:
    """scenario_for for every row of a design (columns as `design` returns them)."""
    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    ids = np.arange(n) if ids is None else ids
    return [scenario_for(study, {k: columns[k][i] for k in names}, int(ids[i])) for i in range(n)]


def _check_sample(study: Study, sc: Scenario, tire: dict, contact: dict, sample_id: int, values: dict):
    """Impossible values of one sample -> StudyError naming the parameter(s) responsible."""
    src = study.source

    def fail(kinds, match, message):
        names = [p.name for p in study.parameters if any(t.kind in kinds and match(t) for t, _ in p.targets)]
        names = names or [p.name for p in study.parameters if any(t.kind in kinds for t, _ in p.targets)]
        at = ", ".join(f"{n} = {values[n]:g}" for n in names)
        keys = ", ".join(f"parameters.{n}" for n in names) or "parameters"
        which = f"sample {sample_id}" if sample_id >= 0 else "the end of a range"
        raise StudyError(f"{src}: {keys}: {which} ({at}): {message}")

    touched = {t.kind for p in study.parameters for t, _ in p.targets}
    if "model" in touched:
        for m, model in enumerate(sc.models):
            if model is study.base.models[m]:
                continue
            for kw, reason in model_problems(model)[:1]:
                fld = KEYWORD_FIELDS[kw].split("[")[0]
                fail(("model",), lambda t, m=m, fld=fld: m in t.items and t.name == fld, f"model {m + 1}: {reason}")
            for fld, reason in crush_problems(model)[:1]:  # the crush law's coefficients stay > 0
                fail(("model",), lambda t, m=m, fld=fld: m in t.items and t.name == fld, f"model {m + 1}: {reason}")
            for fld, reason in axle_problems(model)[:1]:  # extra axles: finite, behind each other
                fail(("model",), lambda t, m=m: m in t.items and t.name == "extra_axles",
                     f"model {m + 1}: {fld}: {reason}")
    if touched & {"hitch", "vehicle"}:  # coupling points, and the stops' vehicles.N.{pitch,roll}_limit_deg
        for key, reason in hitch_problems(sc)[:1]:
            fail(("hitch", "vehicle"), lambda t, key=key: key.endswith(f".{t.name}"), f"{key}: {reason}")
    if "wheel" in touched:
        for k, v in enumerate(sc.vehicles):
            for nm in ("brake", "lock", "throttle"):
                tab = getattr(v, nm)
                if tab is None:
                    continue
                match = lambda t, k=k, nm=nm: k in t.items and t.name == nm  # noqa: E731
                if any(b < a for a, b in zip(tab.times, tab.times[1:])):
                    fail(("wheel",), match, f"vehicle {k + 1}: {nm} times must be non-decreasing, got {tab.times}")
                flat = [x for y in tab.values for x in (y if isinstance(y, tuple) else (y,))]
                if not all(math.isfinite(x) for x in flat):
                    fail(("wheel",), match, f"vehicle {k + 1}: {nm} values must be finite")
                if nm == "brake" and min(flat) < 0.0:
                    fail(("wheel",), match, f"vehicle {k + 1}: brake fractions must be >= 0, got {tab.values}")
                if nm == "lock" and not all(0.0 <= x <= 1.0 for x in flat):
                    fail(("wheel",), match, f"vehicle {k + 1}: lock values must lie in [0, 1], got {tab.values}")
    if touched & {"vehicle", "driver"}:
        for k, v in enumerate(sc.vehicles):
            for nm in ("x", "y", "speed", "orientation"):
                if not math.isfinite(getattr(v, nm)):
                    fail(("vehicle",), lambda t, k=k: k in t.items, f"vehicle {k + 1}: {nm} is not finite")
            for nm in ("steering", "tire_speed"):
                times = getattr(v, nm).times
                if any(b < a for a, b in zip(times, times[1:])):
                    fail(("driver",), lambda t, k=k, nm=nm: k in t.items and t.name == nm,
                         f"vehicle {k + 1}: {nm} times must be non-decreasing, got {times}")
    if "contact" in touched:
        check_contact(contact, lambda key, msg: fail(("contact",), lambda t: t.name == key, f"contact.{key}: {msg}"))
    if "tire" in touched:
        for key, x in tire.items():
            if not math.isfinite(x):
                fail(("tire",), lambda t: t.name == key, f"tire.{key} is not finite")
    if "zone" in touched:
        for k, z in enumerate(sc.road.zones):
            for reason in zone_problems(z)[:1]:
                fail(("zone",), lambda t, k=k: t.index[0] == k, f"road.zones.{k + 1}.{reason}")
    if "road" in touched:
        try:
            validate_points(sc.road.points)
        except ValueError as e:
            fail(("road",), lambda t: True, str(e))
