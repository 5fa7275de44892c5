"""Scenario inputs: a folder of MEDUSA files, or a TOML scenario file.

`load_scenario(path)` accepts
- a folder holding model.dat, platoon.dat and road.dat (if it also holds
  `scenario.toml`, that file is loaded instead);
- a `.toml` scenario file;
- a platoon file (`*.dat`) inside a MEDUSA folder (model.dat and road.dat beside it).

TOML scenario schema (all lengths in m, speeds in m/s, angles in degrees, times in s)::

    name = "offset-steered"           # optional; default: the file's stem, or for a
                                      # file named scenario.toml its folder's name
    intended_overlap = true           # optional, default false: vehicles (or a vehicle and a
                                      # barrier) overlapping at t = 0 are meant; without it
                                      # they are an input error (io/overlap_check.py)

    # Source A: MEDUSA files (paths relative to this TOML file).
    [medusa]
    folder = "../offset"              # default "." (the TOML file's folder)
    platoon = "platoon.dat"           # default "platoon.dat"

    # Source B: inline models and vehicles (instead of [medusa]).
    [[models]]                        # MODEL 1; fields named as in scenario.ModelSpec:
    mass = 1573.0                     # MASS [kg]
    ix = 479.6                        # IX, IY, IZ [kg m^2]
    iy = 2594.6
    iz = 2782.0
    young = 600.0e6                   # E [N/m^2]
    nu = 0.30                         # NU
    volume = 0.42                     # VOLUME [m^3]
    l1 = 1.034                        # L1, L2, B (track), H1, H2 [m]
    l2 = 1.491
    track = 1.2
    h1 = 0.0
    h2 = 0.0
    spring_ref = 0.15                 # SPRING_REF [m]
    c1 = 40000.0                      # C1, C2 [N/m]
    c2 = 40000.0
    d1 = 1500.0                       # D1, D2 [N s/m]
    d2 = 1200.0
    tire_lag = 0.0016                 # TIRE [s]
    contact_dims = [4.0, 1.6, 1.3]    # CONTACT A1 A2 A3 [m]
    eq_r3 = 5.039617e-2               # EQUILIBRIUM R3 [m]
    eq_F = [[0.9972, 0.0, 0.0749],    # 3x3, eq_F[j][i] = D(i+1)(j+1): the COLUMNS are
            [0.0, 1.0, 0.0],          # the directors (F = d_i (x) E_i)
            [-0.0748, 0.0, 0.9972]]
    tire_model = "calspan"            # optional: a tire model of physics.tire.TIRES
    rolling_resistance = 0.0          # optional: coefficient f_r [-] (0: MEDUSA's free rolling)
    chassis_damping = 0.0             # optional: structural damping beta [s] of the chassis's
                                      # elastic modes (0: MEDUSA's undamped chassis)
    extra_axles = [{ l = 2.3, track = 1.8, h = 0.9, c = 6e5, d = 2e4, equalised = true }]  # optional
                                      # axles behind L2 (a truck's tandem; docs/vehicles-and-scenes.md)
    tires_by_axle = [{}, { mu_p = 0.8 }, { mu_p = 0.8 }]   # optional tire overrides per axle
    crush_b_front = 550.0e3           # optional: the crush law's Campbell A [N/m], B [N/m^2]
                                      # per face (crush_a|crush_b _front|_rear|_side;
                                      # defaults and sources: docs/crash-law.md)
    crush_class = "crash3_category_4" # optional: a published class's A, B for the faces it
                                      # gives (contact/laws/stiffness_classes.py); the
                                      # table's own crush_* keys win

    [[vehicles]]                      # vehicle 1
    model = 1                         # 1-based, as VEHICLE_HAS_MODEL (required)
    x = 0.0                           # required
    y = 0.0                           # required
    speed = 22.0                      # required
    orientation_deg = 0.0             # default 0
    tire_speed = 0.0                  # default 0 (|v| <= 0.1: free rolling)
    steering_deg = { times = [0.0, 0.3], values = [0.0, 3.0], kind = "constant" }  # default 0
    # Optional per-wheel tables (docs/vehicles-and-scenes.md): a number per time is every
    # wheel, a list one value per wheel (FL, FR, RL, RR, then further axles left, right).
    brake = { times = [0.0, 0.5], values = [0.0, 0.8] }   # fraction of mu_peak Fz (1.0: lock threshold)
    lock = { times = [0.0, 1.0], values = [[0, 0, 0, 0], [1, 1, 0, 0]] }   # 1: locked, slides at mu_slide
    throttle = { times = [0.0], values = [[500.0, 500.0, 0.0, 0.0]] }      # drive force per wheel [N]

    # Optional, with either source: the road (default for inline scenarios: MEDUSA's
    # ideal flat plane z = 0; with [medusa] it replaces road.dat).
    [road]
    points = [[0, 0, 0, 0], [30, 0, 0, 5], [60, 0, 0, 0], [90, 0, 0, 0]]  # x, y, z, bank_deg; >= 4
    # or: flat = true                 # the ideal flat plane (RoadSpec(points=None))
    [[road.zones]]                    # optional friction zones (also with road.dat, or alone)
    polygon = [[10, -5], [40, -5], [40, 5], [10, 5]]  # >= 3 corners [x, y] [m]
    mu_peak = 0.5                     # peak and sliding friction inside it [-]
    mu_slide = 0.4
    width = 0.0                       # optional smoothing width of the boundary [m] (0: sharp)

    # Optional, with either source: per-vehicle / per-model replacements, keyed by the
    # 1-based number; the keys are those of [[vehicles]] / [[models]].
    [overrides.vehicles.1]
    steering_deg = { times = [0.0, 0.3, 0.5], values = [0.0, 3.0, 0.0], kind = "constant" }
    [overrides.models.2]
    mass = 1600.0

    # Optional, with either source: rigid barriers (docs/crash-law.md), any number.
    [[barriers]]
    type = "plane"
    position = [2.3, 0.0, 0.0]        # a point of the wall face [m]
    normal = [-1.0, 0.0, 0.0]         # outward: from the wall towards free space
    [[barriers]]
    type = "box"
    position = [10.0, 3.0, 0.5]       # centre [m]
    size = [20.0, 0.5, 1.0]           # length, width, height along its own axes [m]
    yaw_deg = 0.0                     # turn about E3 [deg], default 0

    # Optional simulation settings, returned to the caller (not part of the Scenario).
    [simulation]
    end_time = 3.0                    # [s], MEDUSA -t
    dt = 5e-5                         # [s], MEDUSA -d
    save_every = 0.01                 # [s], MEDUSA -s
    contact_law = "medusa"            # "medusa" | "physical" | "crush" (docs/crash-law.md)
    contact_geometry = "superellipsoid"  # "superellipsoid" | "ellipsoid" | "box" | "medusa_search";
                                      # absent: the law's default ("medusa_search" for "medusa")
    tires = true
    end_condition = "rest"            # "time" (default: run to end_time) | "rest": end once every
    rest_speed = 0.05                 #   vehicle's speed [m/s] (and yaw rate, solver/end_condition.py)
    rest_hold = 0.2                   #   has stayed below rest_speed for rest_hold [s]; end_time the limit
    # (every other field of core.params.Settings is accepted too, e.g. dt_min, contact, step_control)

A driver input (tire_speed, steering_deg) is a number (a constant) or a table
`{ times = [...], values = [...], kind = "constant" | "linear" }`: times non-decreasing,
as many values as times, kind default "constant" (see scenario.DriverTable).
Unknown keys are errors that name the key and the file.
"""
from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from jaxmedusa.contact.laws.stiffness_classes import crush_class_fields
from jaxmedusa.core.registry import UnknownNameError
from jaxmedusa.core.scenario import (CRUSH_FIELDS, WHEEL_TABLES, AxleSpec, BarrierSpec, DriverTable, ModelSpec, RoadSpec,
                                     Scenario, VehicleSpec, crush_problems)
from jaxmedusa.io.medusa_files import (KEYWORD_FIELDS, MedusaInputError, model_problems, read_medusa_folder, read_models,
                                       read_platoon, read_road)
from jaxmedusa.io.scene_toml import (TRAILER_KEYS, check_combination, check_scene_model, extra_axles, tires_by_axle,
                                    trailer_keys, wheel_table, zone)
from jaxmedusa.io.validation import InputErrors, is_number, simulation_settings
from jaxmedusa.physics.tire import TIRES

__all__ = ["load_scenario", "scenario_from_dict", "driver_table", "wheel_table"]

_MODEL_FIELDS = [f.name for f in dataclasses.fields(ModelSpec)]
_VEHICLE_KEYS = ("model", "x", "y", "speed", "orientation_deg", "tire_speed", "steering_deg") + WHEEL_TABLES + \
    TRAILER_KEYS
_VEHICLE_REQUIRED = ("model", "x", "y", "speed")
_TOP_KEYS = ("name", "medusa", "models", "vehicles", "road", "overrides", "simulation", "barriers", "intended_overlap")
_OPTIONAL_MODEL_FIELDS = ("kind", "tire_model", "rolling_resistance", "chassis_damping", "extra_axles", "tires_by_axle") + CRUSH_FIELDS


def load_scenario(path: str | Path) -> tuple[Scenario, dict]:
    """Load a scenario from a MEDUSA folder, a platoon .dat file or a TOML file.

    Returns (scenario, settings): settings holds the [simulation] entries found in the
    TOML file (empty for MEDUSA files), for the caller to pass to `core.params.Settings`.
    """
    path = Path(path)
    if path.is_dir():
        if (path / "scenario.toml").is_file():
            return load_scenario(path / "scenario.toml")
        return read_medusa_folder(path), {}
    if path.suffix.lower() == ".toml":
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except OSError as e:
            raise MedusaInputError(f"{path}: cannot open file ({e.strerror})") from None
        except UnicodeDecodeError as e:
            raise MedusaInputError(f"{path}: not a text file (byte {e.start} is not UTF-8): a TOML file expected") from None
        except tomllib.TOMLDecodeError as e:
            raise MedusaInputError(f"{path}: not valid TOML: {e}") from None
        name = path.parent.resolve().name if path.name == "scenario.toml" else path.stem
        return scenario_from_dict(data, base_dir=path.parent, source=str(path), default_name=name)
    if path.suffix.lower() == ".dat" and path.is_file():
        return read_medusa_folder(path.parent, platoon=path.name), {}
    raise MedusaInputError(f"{path}: not a MEDUSA folder, a platoon .dat file or a .toml scenario file")


def scenario_from_dict(
    data: dict, base_dir: str | Path = ".", source: str = "<scenario>", default_name: str = "scenario"
) -> tuple[Scenario, dict]:
    """A Scenario and its simulation settings from a parsed TOML table (schema: module docstring).

    `base_dir` resolves relative paths; `source` names the file in error messages. A study
    file may call this on its own scenario sub-table.
    """
    err = InputErrors(source)
    err.keys(data, _TOP_KEYS, "top level")
    name = data.get("name", default_name)
    if not isinstance(name, str):
        err.fail("name", f"a string expected, got {name!r}")

    if "medusa" in data:
        if "models" in data or "vehicles" in data:
            err.fail("medusa", "give either [medusa] or inline [[models]]/[[vehicles]], not both")
        m = err.table(data["medusa"], "medusa")
        err.keys(m, ("folder", "platoon"), "medusa")
        folder = Path(base_dir) / err.string(m.get("folder", "."), "medusa.folder")
        platoon = err.string(m.get("platoon", "platoon.dat"), "medusa.platoon")
        if not folder.is_dir():
            err.fail("medusa.folder", f"folder {folder} does not exist")
        for file, key in (("model.dat", "medusa.folder"), (platoon, "medusa.platoon"), ("road.dat", "medusa.folder")):
            if not (folder / file).is_file() and not (file == "road.dat" and _replaces_road(data)):
                err.fail(key, f"{folder / file} does not exist (a MEDUSA folder holds model.dat, the platoon "
                         "file and road.dat)")
        models = read_models(folder / "model.dat")
        vehicles = read_platoon(folder / platoon, len(models))
        road = None if _replaces_road(data) else read_road(folder / "road.dat")
    else:
        if "models" not in data or "vehicles" not in data:
            err.fail("models", "give [medusa] or both [[models]] and [[vehicles]]")
        models = [_model(t, f"models[{k}]", err) for k, t in enumerate(err.array(data["models"], "models"), 1)]
        vehicles = [
            _vehicle(t, f"vehicles[{k}]", len(models), err) for k, t in enumerate(err.array(data["vehicles"], "vehicles"), 1)
        ]
        road = None if "road" in data else RoadSpec()
    if "road" in data:
        road = _road(data["road"], err, road)

    if "overrides" in data:
        o = err.table(data["overrides"], "overrides")
        err.keys(o, ("models", "vehicles"), "overrides")
        for key, table in err.table(o.get("models", {}), "overrides.models").items():
            k = _index(key, len(models), f"overrides.models.{key}", err)
            models[k] = _model(table, f"overrides.models.{key}", err, base=models[k])
        for key, table in err.table(o.get("vehicles", {}), "overrides.vehicles").items():
            k = _index(key, len(vehicles), f"overrides.vehicles.{key}", err)
            vehicles[k] = _vehicle(table, f"overrides.vehicles.{key}", len(models), err, base=vehicles[k])

    settings = simulation_settings(data.get("simulation", {}), err)
    barriers = [_barrier(t, f"barriers[{k}]", err) for k, t in enumerate(err.array(data.get("barriers", []), "barriers"), 1)]
    overlap = data.get("intended_overlap", False)
    if not isinstance(overlap, bool):
        err.fail("intended_overlap", f"true or false expected, got {overlap!r}")
    scenario = Scenario(name=name, models=models, vehicles=vehicles, road=road, barriers=barriers,
                        intended_overlap=overlap)
    check_combination(scenario, err)
    return scenario, settings


def driver_table(value, where: str = "driver table", source: str = "<scenario>") -> DriverTable:
    """A DriverTable from a number (constant) or a {times, values, kind} table."""
    err = InputErrors(source)
    if is_number(value):
        return DriverTable(times=(0.0,), values=(err.number(value, where),), kind="constant")
    t = err.table(value, where)
    err.keys(t, ("times", "values", "kind"), where)
    if "times" not in t or "values" not in t:
        err.fail(where, "a number or a table with 'times' and 'values' expected")
    times = [err.number(x, f"{where}.times") for x in err.array(t["times"], f"{where}.times")]
    values = [err.number(x, f"{where}.values") for x in err.array(t["values"], f"{where}.values")]
    if not times or len(times) != len(values):
        err.fail(where, f"as many values as times (at least one) expected, got {len(times)} times, {len(values)} values")
    for i in range(1, len(times)):
        if times[i] < times[i - 1]:
            err.fail(f"{where}.times", f"times must be non-decreasing, but {times[i]:g} follows {times[i - 1]:g}")
    kind = t.get("kind", "constant")
    if kind not in ("constant", "linear"):
        err.fail(f"{where}.kind", f"'constant' or 'linear' expected, got {kind!r}")
    return DriverTable(times=tuple(times), values=tuple(values), kind=kind)


# ---------------------------------------------------------------------------- helpers


def _replaces_road(data: dict) -> bool:
    """True when [road] gives the road itself (points or flat), not only friction zones."""
    road = data.get("road")
    return isinstance(road, dict) and ("points" in road or "flat" in road)


def _index(key: str, n: int, where: str, err: InputErrors) -> int:
    """0-based index of a 1-based override key '1'..'n'."""
    if not key.isdigit() or not 1 <= int(key) <= n:
        err.fail(where, f"a number 1..{n} expected as key, got '{key}'")
    return int(key) - 1


def _model(t, where: str, err: InputErrors, base: ModelSpec | None = None) -> ModelSpec:
    """A ModelSpec from a table of ModelSpec fields (all required unless `base` is given)."""
    t = err.table(t, where)
    err.keys(t, _MODEL_FIELDS + ["crush_class"], where)
    values = dataclasses.asdict(base) if base is not None else {}
    if "crush_class" in t:  # a published class's crush coefficients; the table's own crush_* win
        try:
            values.update(crush_class_fields(err.string(t["crush_class"], f"{where}.crush_class")))
        except UnknownNameError as e:  # lists the valid names (core/registry.py)
            err.fail(f"{where}.crush_class", f"{e} (or give crush_a_*, crush_b_*; docs/crash-law.md)")
    for f in _MODEL_FIELDS:
        if f not in t:
            if base is None and f not in _OPTIONAL_MODEL_FIELDS:  # tire model, crush coefficients: defaults
                err.fail(f"{where}.{f}", "missing")
            continue
        if f == "kind":
            values[f] = err.string(t[f], f"{where}.{f}")
        elif f == "tire_model":
            values[f] = err.string(t[f], f"{where}.{f}")
            if values[f] not in TIRES:
                err.fail(f"{where}.{f}", f"unknown tire model {values[f]!r}; valid: {', '.join(TIRES.names())}")
        elif f in ("extra_axles", "tires_by_axle"):
            values[f] = (extra_axles if f == "extra_axles" else tires_by_axle)(t[f], f"{where}.{f}", err)
        elif f == "contact_dims":
            dims = err.array(t[f], f"{where}.{f}")
            if len(dims) != 3:
                err.fail(f"{where}.{f}", f"3 numbers [A1, A2, A3] expected, got {dims!r}")
            values[f] = tuple(err.number(x, f"{where}.{f}") for x in dims)
        elif f == "eq_F":
            rows = err.array(t[f], f"{where}.{f}")
            if len(rows) != 3 or any(not isinstance(r, list) or len(r) != 3 for r in rows):
                err.fail(f"{where}.{f}", f"a 3x3 array expected, got {rows!r}")
            values[f] = tuple(tuple(err.number(x, f"{where}.{f}") for x in r) for r in rows)
        else:
            values[f] = err.number(t[f], f"{where}.{f}")
    values["extra_axles"] = tuple(a if isinstance(a, AxleSpec) else AxleSpec(**a) for a in values.get("extra_axles", ()))
    values["tires_by_axle"] = tuple(values.get("tires_by_axle", ()))
    values["contact_dims"] = tuple(values["contact_dims"])
    values["eq_F"] = tuple(tuple(r) for r in values["eq_F"])
    model = ModelSpec(**values)
    problems = model_problems(model)
    if problems:
        kw, reason = problems[0]
        err.fail(f"{where}.{KEYWORD_FIELDS[kw]}", reason)
    for fld, reason in crush_problems(model)[:1]:
        err.fail(f"{where}.{fld}", reason)
    check_scene_model(model, where, err)
    return model


def _barrier(t, where: str, err: InputErrors) -> BarrierSpec:
    """A BarrierSpec from a [[barriers]] table: type = "plane" (position, normal) or "box"
    (position = centre, size = [length, width, height] > 0, yaw_deg)."""
    t = err.table(t, where)
    kind = t.get("type")
    if kind not in ("plane", "box"):
        err.fail(f"{where}.type", f"'plane' or 'box' expected, got {kind!r}")
    err.keys(t, {"plane": ("type", "position", "normal"), "box": ("type", "position", "size", "yaw_deg")}[kind], where)

    def vec(key, positive=False):
        if key not in t:
            err.fail(f"{where}.{key}", "missing")
        v = err.array(t[key], f"{where}.{key}")
        if len(v) != 3:
            err.fail(f"{where}.{key}", f"3 numbers expected, got {v!r}")
        v = tuple(err.number(x, f"{where}.{key}") for x in v)
        if positive and min(v) <= 0.0:
            err.fail(f"{where}.{key}", f"3 numbers > 0 [m] expected, got {list(v)}")
        return v

    if kind == "plane":
        n = vec("normal")
        if not any(n):
            err.fail(f"{where}.normal", f"a nonzero vector expected, got {list(n)}")
        return BarrierSpec(kind="plane", position=vec("position"), normal=n)
    return BarrierSpec(kind="box", position=vec("position"), size=vec("size", positive=True),
                       yaw_deg=err.number(t.get("yaw_deg", 0.0), f"{where}.yaw_deg"))


def _vehicle(t, where: str, n_models: int, err: InputErrors, base: VehicleSpec | None = None) -> VehicleSpec:
    """A VehicleSpec from a [[vehicles]] table (model is 1-based)."""
    t = err.table(t, where)
    err.keys(t, _VEHICLE_KEYS, where)
    if "towed_by" not in t and ("hitch" in t or "kingpin" in t) and (base is None or base.towed_by is None):
        err.fail(f"{where}.towed_by", "missing: a vehicle with a hitch or kingpin is towed (towed_by = N)")
    if base is None:
        for key in _VEHICLE_REQUIRED if "towed_by" not in t else ("model",):  # a trailer may be placed at its hitch
            if key not in t:
                err.fail(f"{where}.{key}", "missing")
        base = VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=0.0)
    v = dataclasses.replace(base)
    if "model" in t:
        m = t["model"]
        if not isinstance(m, int) or isinstance(m, bool) or not 1 <= m <= n_models:
            err.fail(f"{where}.model", f"a model number 1..{n_models} expected, got {m!r}")
        v.model = m - 1
    for key, attr in (("x", "x"), ("y", "y"), ("speed", "speed"), ("orientation_deg", "orientation")):
        if key in t:
            setattr(v, attr, err.number(t[key], f"{where}.{key}"))
    trailer_keys(t, v, where, err)
    if "tire_speed" in t:
        v.tire_speed = driver_table(t["tire_speed"], f"{where}.tire_speed", err.source)
    if "steering_deg" in t:
        v.steering = driver_table(t["steering_deg"], f"{where}.steering_deg", err.source)
    for key in WHEEL_TABLES:
        if key in t:
            setattr(v, key, wheel_table(t[key], f"{where}.{key}", err.source, lock=key == "lock"))
    return v


def _road(t, err: InputErrors, base: RoadSpec | None = None) -> RoadSpec:
    """A RoadSpec from [road]: points = [[x, y, z, bank_deg], ...] (>= 4) or flat = true, and
    optional [[road.zones]]; with zones only, the road is `base` (road.dat, or the flat plane)."""
    t = err.table(t, "road")
    err.keys(t, ("points", "flat", "zones"), "road")
    zones = tuple(zone(z, f"road.zones[{k}]", err) for k, z in enumerate(err.array(t.get("zones", []), "road.zones"), 1))
    if "points" not in t and "flat" not in t:
        if "zones" not in t:
            err.fail("road", "give 'points', 'flat = true' or [[road.zones]]")
        return dataclasses.replace(base or RoadSpec(), zones=zones)
    if ("points" in t) == ("flat" in t):
        err.fail("road", "give either 'points' or 'flat = true'")
    if "flat" in t:
        if t["flat"] is not True:
            err.fail("road.flat", f"true expected, got {t['flat']!r}")
        return RoadSpec(points=None, zones=zones)
    rows = err.array(t["points"], "road.points")
    if len(rows) < 4:
        err.fail("road.points", f"at least 4 road points expected, got {len(rows)}")
    points = []
    for k, r in enumerate(rows, start=1):
        key = f"road.points[{k}]"
        if not isinstance(r, list) or len(r) != 4:
            err.fail(key, f"[x, y, z, bank_deg] expected, got {r!r}")
        p = tuple(err.number(x, key) for x in r)
        if abs(p[3]) >= 90.0:
            err.fail(key, f"banking angle {p[3]:g} deg must lie in (-90, 90)")
        if points and p[:3] == points[-1][:3]:
            err.fail(key, f"road point {k} repeats road point {k - 1}")
        points.append(p)
    return RoadSpec(points=tuple(points), zones=zones)
