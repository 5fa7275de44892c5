"""Perturbation: the scenario of one sample (the base with every parameter applied), checked.

Copy-on-write: the base scenario's objects are never mutated. Impossible values of a sample
raise StudyError naming the parameter(s) responsible.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from jaxmedusa.core.scenario import DriverTable, RoadSpec, Scenario, crush_problems
from jaxmedusa.io.medusa_files import KEYWORD_FIELDS, model_problems
from jaxmedusa.physics.road import validate_points
from jaxmedusa.physics.tire.calspan import GOODYEAR_185SR14
from jaxmedusa.study.spec import Study, StudyError, Target, check_contact

__all__ = ["scenario_for", "scenarios_for"]


def _combine(base: float, a: float, mode: str) -> float:
    return a if mode == "set" else base + a if mode == "offset" else base * a


def _apply(sc: Scenario, tire: dict, contact: dict, t: Target, a: float, mode: str):
    """Apply value a to target t (copy-on-write: the base objects are never mutated)."""
    if t.kind == "vehicle":
        for k in t.items:
            v = sc.vehicles[k]
            sc.vehicles[k] = dataclasses.replace(v, **{t.name: _combine(getattr(v, t.name), a, mode)})
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
        sc.road = RoadSpec(points=tuple(tuple(p) for p in pts))


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
    if "road" in touched:
        try:
            validate_points(sc.road.points)
        except ValueError as e:
            fail(("road",), lambda t: True, str(e))
