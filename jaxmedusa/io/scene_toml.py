"""TOML inputs of vehicles and scenes beyond MEDUSA (docs/vehicles-and-scenes.md): per-wheel
driver tables (brake, lock, throttle), friction zones ([[road.zones]]), further axles and
per-axle tires of a model. `io/scenario_toml.py` reads the rest of a scenario and calls these;
errors name the key and the file (exit code 2 through MedusaInputError)."""
from __future__ import annotations

from jaxmedusa.core.scenario import AxleSpec, DriverTable, ModelSpec, ZoneSpec, axle_problems
from jaxmedusa.io.validation import InputErrors, is_number
from jaxmedusa.physics.tire import TIRES

__all__ = ["wheel_table", "zone", "extra_axles", "tires_by_axle", "check_scene_model"]

_AXLE_KEYS = ("l", "track", "h", "c", "d", "equalised")


def wheel_table(value, where: str = "wheel table", source: str = "<scenario>", lock: bool = False) -> DriverTable:
    """A per-wheel DriverTable (brake, lock, throttle) from a number (every wheel, constant)
    or a {times, values, kind} table whose values are numbers (every wheel) or lists with one
    number per wheel (FL, FR, RL, RR, then further axles). lock: values must be 0 or 1."""
    err = InputErrors(source)

    def entry(x, key):
        if isinstance(x, list):
            if not x:
                err.fail(key, "a number or a non-empty list of numbers (one per wheel) expected")
            return tuple(entry(y, key) for y in x)
        v = err.number(x, key)
        if lock and v not in (0.0, 1.0):
            err.fail(key, f"0 or 1 expected (1: the wheel is locked), got {v:g}")
        if not lock and where.endswith("brake") and v < 0.0:
            err.fail(key, f"a brake fraction >= 0 expected, got {v:g}")
        return v

    if is_number(value):
        return DriverTable(times=(0.0,), values=(entry(value, where),), kind="constant")
    t = err.table(value, where)
    err.keys(t, ("times", "values", "kind"), where)
    if "times" not in t or "values" not in t:
        err.fail(where, "a number or a table with 'times' and 'values' expected")
    times = [err.number(x, f"{where}.times") for x in err.array(t["times"], f"{where}.times")]
    values = [entry(x, f"{where}.values[{i}]") for i, x in enumerate(err.array(t["values"], f"{where}.values"), 1)]
    if not times or len(times) != len(values):
        err.fail(where, f"as many values as times (at least one) expected, got {len(times)} times, {len(values)} values")
    for i in range(1, len(times)):
        if times[i] < times[i - 1]:
            err.fail(f"{where}.times", f"times must be non-decreasing, but {times[i]:g} follows {times[i - 1]:g}")
    widths = {len(v) for v in values if isinstance(v, tuple)}
    if len(widths) > 1:
        err.fail(f"{where}.values", f"every per-wheel list must have the same length, got {sorted(widths)}")
    kind = t.get("kind", "constant")
    if kind not in ("constant", "linear"):
        err.fail(f"{where}.kind", f"'constant' or 'linear' expected, got {kind!r}")
    return DriverTable(times=tuple(times), values=tuple(values), kind=kind)


def zone(t, where: str, err: InputErrors) -> ZoneSpec:
    """A ZoneSpec from a [[road.zones]] table: polygon = [[x, y], ...] (>= 3 corners), mu_peak,
    mu_slide (> 0), width (optional smoothing width >= 0 [m], default 0: a sharp boundary)."""
    t = err.table(t, where)
    err.keys(t, ("polygon", "mu_peak", "mu_slide", "width"), where)
    for key in ("polygon", "mu_peak", "mu_slide"):
        if key not in t:
            err.fail(f"{where}.{key}", "missing")
    rows = err.array(t["polygon"], f"{where}.polygon")
    if len(rows) < 3 or any(not isinstance(r, list) or len(r) != 2 for r in rows):
        err.fail(f"{where}.polygon", f"at least 3 corners [x, y] expected, got {rows!r}")
    polygon = tuple(tuple(err.number(x, f"{where}.polygon") for x in r) for r in rows)
    mu = {k: err.number(t[k], f"{where}.{k}") for k in ("mu_peak", "mu_slide")}
    for k, x in mu.items():
        if not x > 0.0:
            err.fail(f"{where}.{k}", f"a friction coefficient > 0 expected, got {x:g}")
    width = err.number(t.get("width", 0.0), f"{where}.width")
    if width < 0.0:
        err.fail(f"{where}.width", f"a smoothing width >= 0 [m] expected, got {width:g}")
    return ZoneSpec(polygon=polygon, mu_peak=mu["mu_peak"], mu_slide=mu["mu_slide"], width=width)


def extra_axles(value, where: str, err: InputErrors) -> tuple[AxleSpec, ...]:
    """AxleSpecs from `extra_axles = [{ l, track, h, c, d, equalised }, ...]`."""
    axles = []
    for k, a in enumerate(err.array(value, where), 1):
        a = err.table(a, f"{where}[{k}]")
        err.keys(a, _AXLE_KEYS, f"{where}[{k}]")
        for key in _AXLE_KEYS[:5]:
            if key not in a:
                err.fail(f"{where}[{k}].{key}", "missing")
        eq = a.get("equalised", True)
        if not isinstance(eq, bool):
            err.fail(f"{where}[{k}].equalised", f"true or false expected, got {eq!r}")
        axles.append(AxleSpec(**{key: err.number(a[key], f"{where}[{k}].{key}") for key in _AXLE_KEYS[:5]}, equalised=eq))
    return tuple(axles)


def tires_by_axle(value, where: str, err: InputErrors) -> tuple[dict, ...]:
    """Per-axle tire parameter tables from `tires_by_axle = [{...}, ...]` (names checked by
    `check_scene_model`, which knows the tire model)."""
    tables = []
    for k, a in enumerate(err.array(value, where), 1):
        a = err.table(a, f"{where}[{k}]")
        tables.append({key: err.number(x, f"{where}[{k}].{key}") for key, x in a.items()})
    return tuple(tables)


def check_scene_model(model: ModelSpec, where: str, err: InputErrors):
    """Further axles, per-axle tire names and the rolling resistance of a model; fails naming the key."""
    for fld, reason in axle_problems(model)[:1]:
        err.fail(f"{where}.{fld}", reason)
    tire_names = set(TIRES.resolve(model.tire_model, where=f"{where}.tire_model").defaults)
    for k, tab in enumerate(model.tires_by_axle, 1):
        for key in set(tab) - tire_names:
            err.fail(f"{where}.tires_by_axle[{k}].{key}", f"unknown parameter of tire model {model.tire_model!r}; "
                     f"valid: {', '.join(sorted(tire_names))}")
    if not model.rolling_resistance >= 0.0:
        err.fail(f"{where}.rolling_resistance", f"a coefficient >= 0 expected, got {model.rolling_resistance!r}")
