"""TOML inputs of vehicles and scenes beyond MEDUSA (docs/vehicles-and-scenes.md): per-wheel
driver tables (brake, lock, throttle), friction zones ([[road.zones]]), further axles and
per-axle tires of a model. `io/scenario_toml.py` reads the rest of a scenario and calls these;
errors name the key and the file (exit code 2 through MedusaInputError)."""
from __future__ import annotations

from jaxmedusa.core.hitches import HITCH_TYPES, VEHICLE_KINDS, hitch_problems
from jaxmedusa.core.scenario import AxleSpec, DriverTable, ModelSpec, ZoneSpec, axle_problems
from jaxmedusa.io.validation import InputErrors, is_number
from jaxmedusa.physics.tire import TIRES

__all__ = ["wheel_table", "zone", "extra_axles", "tires_by_axle", "check_scene_model", "trailer_keys",
           "check_combination", "TRAILER_KEYS"]

# keys of a towed [[vehicles]] entry (docs/trailers.md)
TRAILER_KEYS = ("towed_by", "hitch", "kingpin", "hitch_type", "pitch_limit_deg", "roll_limit_deg")

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
    """Further axles, per-axle tire names, the rolling resistance and the chassis damping of a model;
    fails naming the key."""
    for fld, reason in axle_problems(model)[:1]:
        err.fail(f"{where}.{fld}", reason)
    tire_names = set(TIRES.resolve(model.tire_model, where=f"{where}.tire_model").defaults)
    for k, tab in enumerate(model.tires_by_axle, 1):
        for key in set(tab) - tire_names:
            err.fail(f"{where}.tires_by_axle[{k}].{key}", f"unknown parameter of tire model {model.tire_model!r}; "
                     f"valid: {', '.join(sorted(tire_names))}")
    if not model.rolling_resistance >= 0.0:
        err.fail(f"{where}.rolling_resistance", f"a coefficient >= 0 expected, got {model.rolling_resistance!r}")
    if not model.chassis_damping >= 0.0:
        err.fail(f"{where}.chassis_damping", f"a damping coefficient >= 0 [s] expected, got {model.chassis_damping!r}")


def trailer_keys(t: dict, v, where: str, err: InputErrors):
    """Read towed_by (the tow vehicle's number, from 1), hitch and kingpin ([x, y, z] in m)
    of a [[vehicles]] table into VehicleSpec v (in place). A towed vehicle without x, y and
    orientation_deg is placed at its hitch; without speed it takes its tow vehicle's."""
    if "towed_by" not in t:
        for key in TRAILER_KEYS[1:]:
            if key in t:
                err.fail(f"{where}.{key}", "only a towed vehicle (towed_by = N) has a hitch and a kingpin")
        return
    n = t["towed_by"]
    if not isinstance(n, int) or isinstance(n, bool):
        err.fail(f"{where}.towed_by", f"the tow vehicle's number (from 1) expected, got {n!r}")
    v.towed_by = n - 1
    for key in ("steering_deg", "tire_speed"):
        if key in t:
            err.fail(f"{where}.{key}", "a towed vehicle has no driver table (a trailer neither steers nor drives; "
                     "brake, lock are its controls)")
    for key in ("hitch", "kingpin"):
        if key not in t:
            err.fail(f"{where}.{key}", "missing ([x, y, z] in m from the centre of mass, body frame)")
        xs = err.array(t[key], f"{where}.{key}")
        if len(xs) != 3:
            err.fail(f"{where}.{key}", f"[x, y, z] (3 numbers, m) expected, got {xs!r}")
        setattr(v, key, tuple(err.number(x, f"{where}.{key}") for x in xs))
    v.hitch_type = t.get("hitch_type", "ball")  # its limits default to the type's (core.hitches.HITCH_TYPES)
    if v.hitch_type not in HITCH_TYPES:
        err.fail(f"{where}.hitch_type", f"unknown hitch type {v.hitch_type!r}; valid: {', '.join(HITCH_TYPES.names())}")
    ht = HITCH_TYPES.resolve(v.hitch_type)
    for key in ("pitch_limit_deg", "roll_limit_deg"):  # numbers, so that study paths can add to them
        setattr(v, key, err.number(t[key], f"{where}.{key}") if key in t else getattr(ht, key))
    placed = [k for k in ("x", "y", "orientation_deg") if k in t]
    if placed and len(placed) < 3:
        err.fail(f"{where}.{placed[0]}", "give all of x, y, orientation_deg for a towed vehicle, or none "
                 "(then it is placed at its hitch)")
    v.place_at_hitch = not placed
    v.speed_from_tow = "speed" not in t


def check_combination(scenario, err: InputErrors):
    """Model kinds and couplings of a whole scenario (core.hitches.hitch_problems); fails naming
    the key: a towed_by that is the vehicle itself, no vehicle, or a cycle; a trailer with a
    steering table; a towed vehicle whose model is not a trailer."""
    for k, m in enumerate(scenario.models, 1):
        if m.kind not in VEHICLE_KINDS:
            err.fail(f"models[{k}].kind", f"unknown vehicle kind {m.kind!r}; valid: {', '.join(VEHICLE_KINDS.names())}")
    for key, reason in hitch_problems(scenario)[:1]:
        err.fail(key, reason)
