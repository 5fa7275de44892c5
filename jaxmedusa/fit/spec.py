"""The fit file: parse and validate FIT.toml into a FitSpec (nothing is simulated here).

    from jaxmedusa.fit import load_fit
    spec = load_fit("studies/fit_offset.toml")

Fit file (TOML; every key is checked, errors name the file and the key):

    name = "fit_offset"                   # default: the file's stem (the output folder)
    description = "..."                   # optional

    [scenario]                            # the base scenario, exactly as in a study file
    path = "medusa/offset"                #   (study/parse.py): a path, or inline tables
    [simulation]                          # core.params.Settings fields (static)
    end_time = 2.5                        # [s]; every observation lies in [0, end_time]
    contact_law = "physical"              # a setting of the fit, like any other
    [contact]                             # base contact parameters, as in a study
    [tire]                                # base tire parameters, as in a study

    [unknowns.v2_speed]                   # one table per unknown, keyed by its name
    path = "vehicles.2.speed"             # a study parameter path (see below)
    initial = 17.0                        # the first start [path units]
    bounds = [12.0, 26.0]                 # optional; strictly around `initial`
    spread = 2.0                          # optional, unbounded unknowns: starts are drawn
                                          #   in initial +- spread (default max(0.1 |initial|, 1))

    [[observations]]                      # one table per observed vehicle and time
    vehicle = 2                           # 1-based
    time = 2.5                            # [s], "end" (the end of the run: end_time, or the
                                          #   rest with end_condition = "rest"), or "rest"
    x = 52.1                              # any of x, y [m], heading_deg [deg], speed [m/s],
    y = 1.3                               #   skid_length [m] (the vehicle's longest wheel mark
    heading_deg = 4.2                     #   over the run, analysis/skids.py: time "end"/"rest");
                                          #   at time = "end" also c1..c6 [m], the crush
                                          #   profile of the vehicle's first collision
    sigma = { x = 0.1, y = 0.1, heading_deg = 0.5 }   # standard deviation of each given quantity

    time = "rest": the vehicle at rest, where the run ends (needs [simulation] end_condition =
    "rest"; a trial run that meets end_time first, status not_at_rest, counts as failed).

    [fit]
    starts = 16                           # starting points, solved in one vmapped batch
    max_iterations = 30                   # Levenberg-Marquardt steps per start
    seed = 0                              # the starts' Latin hypercube
    rtol = 1e-6                           # optimistix step-size tolerances (in the
    atol = 1e-6                           #   reparameterised unknowns, see problem.py)

Fittable paths (the subset of the study's paths the simulation sees as arrays, so that the
residuals are differentiable in them; numbering 1-based, `*` = all):
    vehicles.N.{x, y, speed, heading}                 initial conditions [m, m/s, deg]
    vehicles.N.{steering_deg, tire_speed}             a whole driver table (every value)
    vehicles.N.{steering_deg, tire_speed}.{values, times}.K   one knot
    vehicles.N.{brake, throttle}[.values.K[.W] | .times.K]   per-wheel tables (brake: bounds
                                                      within [0, 1]; lock is not fittable)
    contact.{p1, p2, stiffness, damping, eps1, eps2}
Model, tire and road paths are built outside JAX (core.params.vehicle_params); they are
rejected with exit code 2. Validation reuses the study's: the base scenario, settings and
paths are checked by study.parse.study_from_dict, and the scenario at the initial values
and at both bounds is checked as a study checks each sample.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import Scenario
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.io.validation import InputErrors, read_toml
from jaxmedusa.study.gradients import check_differentiable
from jaxmedusa.study.parse import study_from_dict
from jaxmedusa.study.spec import Target

__all__ = ["FitSpec", "Unknown", "Observation", "FitOptions", "load_fit", "fit_from_dict", "QUANTITIES",
           "WHOLE_RUN", "FitError"]

FitError = MedusaInputError  # the CLI's exit-code-2 error, as for scenario and study files

QUANTITIES = ("x", "y", "heading_deg", "speed", "skid_length")  # observable quantities, in this order
WHOLE_RUN = ("skid_length",)  # quantities of the whole run: only with time "end" or "rest"
# The crush profile of the vehicle's first collision (analysis/damage.py), observable at "end"
# only: C1..C6 [m] as an investigator measures them (NASS), each with its sigma.
CRUSH_QUANTITIES = tuple(f"c{i}" for i in range(1, 7))
_TOP_KEYS = ("name", "description", "scenario", "simulation", "contact", "tire", "unknowns", "observations", "fit")
_UNKNOWN_KEYS = ("path", "initial", "bounds", "spread")
_OBS_KEYS = ("vehicle", "time", "sigma") + QUANTITIES + CRUSH_QUANTITIES
_FIT_KEYS = ("starts", "max_iterations", "seed", "rtol", "atol")
_FITTABLE = ("vehicle", "driver", "wheel", "contact")  # Target kinds the simulation holds as arrays


@dataclass(frozen=True)
class Unknown:
    """One fitted value: `target` (study path) set to the value; bounds None or (lo, hi)."""

    name: str
    path: str
    target: Target
    initial: float
    bounds: tuple[float, float] | None
    spread: float  # half-width of the starts of an unbounded unknown, and its scale

    @property
    def lower(self) -> float:
        return self.bounds[0] if self.bounds else -math.inf

    @property
    def upper(self) -> float:
        return self.bounds[1] if self.bounds else math.inf


@dataclass(frozen=True)
class Observation:
    """Measured quantities of one vehicle (0-based here) at time `time` [s], or at its rest
    (at_rest: time "rest", or "end" of a run that ends at rest; `time` is then NaN)."""

    index: int  # position in the file's [[observations]] (0-based)
    vehicle: int
    time: float
    values: tuple[tuple[str, float, float], ...]  # (quantity, value, sigma), QUANTITIES order
    at_rest: bool = False


@dataclass(frozen=True)
class FitOptions:
    starts: int = 16
    max_iterations: int = 30
    seed: int = 0
    rtol: float = 1e-6
    atol: float = 1e-6


@dataclass
class FitSpec:
    """A validated fit (module docstring)."""

    name: str
    base: Scenario
    settings: Settings
    unknowns: list[Unknown]
    observations: list[Observation]
    options: FitOptions = field(default_factory=FitOptions)
    tire: dict = field(default_factory=dict)
    contact: dict = field(default_factory=dict)
    description: str = ""
    source: str = "<fit>"

    @property
    def n_residuals(self) -> int:
        return sum(len(o.values) for o in self.observations)


def load_fit(path: str | Path) -> FitSpec:
    """Read and validate a fit file. Raises FitError naming the file and the key."""
    path = Path(path)
    data, _ = read_toml(path, FitError)
    return fit_from_dict(data, base_dir=path.parent, source=str(path), default_name=path.stem)


def fit_from_dict(data: dict, base_dir: str | Path = ".", source: str = "<fit>", default_name: str = "fit") -> FitSpec:
    """A validated FitSpec from a parsed fit table (module docstring)."""
    err = InputErrors(source)
    err.keys(data, _TOP_KEYS, "top level")
    raw_unknowns = _unknown_tables(data.get("unknowns"), err)
    options = _options(data.get("fit", {}), err)

    # The study's validation does the base scenario, the settings, the paths and the checks
    # of the scenario at the initial values and at each bound (a grid over the listed values).
    params = {}
    for name, t in raw_unknowns.items():
        values = [t["initial"]] + (list(t["bounds"]) if "bounds" in t else [])
        params[name] = {"path": t["path"], "values": values}
    study_table = {k: data[k] for k in ("name", "description", "scenario", "simulation", "contact", "tire")
                   if k in data}
    study_table.update(sampler={"kind": "grid"}, parameters=params)
    study_table.setdefault("name", default_name)
    try:
        study = study_from_dict(study_table, base_dir=base_dir, source=source, default_name=default_name)
    except MedusaInputError as e:  # the study calls them parameters; the fit file, unknowns
        raise FitError(str(e).replace(f"{source}: parameters.", f"{source}: unknowns.", 1)) from None

    unknowns = []
    for p in study.parameters:
        t = raw_unknowns[p.name]
        (target, _), = p.targets
        if target.kind not in _FITTABLE:
            err.fail(f"unknowns.{p.name}.path", f"'{target.path}' cannot be fitted: model, tire and road "
                     "parameters are built outside JAX; fittable: vehicles.N.{x, y, speed, heading}, "
                     "vehicles.N.{steering_deg, tire_speed}[.values.K | .times.K], "
                     "vehicles.N.{brake, throttle}[.values.K[.W] | .times.K], contact.<field>")
        _check_wheel_unknown(p.name, target, t, err)
        init = t["initial"]
        spread = t.get("spread", max(0.1 * abs(init), 1.0))
        unknowns.append(Unknown(name=p.name, path=target.path, target=target, initial=init,
                                bounds=tuple(t["bounds"]) if "bounds" in t else None, spread=spread))
    check_differentiable(study.settings, len(study.base.vehicles), "fits", err.fail)  # Levenberg-Marquardt's Jacobian
    observations = _observations(data.get("observations"), study.base, study.settings, err)
    return FitSpec(name=study.name, base=study.base, settings=study.settings, unknowns=unknowns,
                   observations=observations, options=options, tire=study.tire, contact=study.contact,
                   description=study.description, source=source)


def _check_wheel_unknown(name: str, target: Target, t: dict, err: InputErrors) -> None:
    """A per-wheel table as an unknown: throttle [N] and brake values and knot times are
    continuous (a knot time only in a linear table: a step table switches at a whole step);
    lock is 0 or 1 (not continuous), and a brake fraction above 1 locks the wheel
    (the force drops from mu_peak Fz to mu_slide Fz: a jump, docs/vehicles-and-scenes.md), so
    a brake value's bounds must lie within [0, 1]."""
    where = f"unknowns.{name}.path"
    if target.kind != "wheel":
        return
    if target.name == "lock":
        err.fail(where, f"'{target.path}': lock is 0 or 1, not a continuous unknown (and its time, in a "
                 "table of steps, switches at a whole step: no derivative); fit a brake fraction (vehicles.N.brake...)")
    if target.name == "brake" and target.part != "times":
        b = t.get("bounds")
        if b is None or not (0.0 <= b[0] and b[1] <= 1.0):
            err.fail(f"unknowns.{name}.bounds", f"a brake fraction needs bounds within [0, 1], got {b!r}: above 1 "
                     "the wheel locks and the force jumps from mu_peak Fz to mu_slide Fz (no derivative)")


def _unknown_tables(t, err: InputErrors) -> dict[str, dict]:
    if t is None:
        err.fail("unknowns", "missing: give at least one [unknowns.NAME] with path and initial")
    t = err.table(t, "unknowns")
    if not t:
        err.fail("unknowns", "no unknowns to fit")
    out = {}
    for name, u in t.items():
        where = f"unknowns.{name}"
        u = err.table(u, where)
        err.keys(u, _UNKNOWN_KEYS, where)
        if "path" not in u:
            err.fail(f"{where}.path", "missing: the study path the unknown sets, e.g. \"vehicles.2.speed\"")
        err.string(u["path"], f"{where}.path")
        if "initial" not in u:
            err.fail(f"{where}.initial", "missing: the starting value")
        init = err.number(u["initial"], f"{where}.initial")
        clean = {"path": u["path"], "initial": init}
        if "bounds" in u:
            b = err.array(u["bounds"], f"{where}.bounds")
            if len(b) != 2:
                err.fail(f"{where}.bounds", f"[lower, upper] expected, got {b!r}")
            lo, hi = (err.number(x, f"{where}.bounds") for x in b)
            if not lo < hi:
                err.fail(f"{where}.bounds", f"lower {lo:g} must be below upper {hi:g}")
            if not lo < init < hi:
                err.fail(f"{where}.bounds", f"[{lo:g}, {hi:g}] must contain the initial value {init:g} strictly "
                         "inside (the bounds are a smooth map onto the open interval)")
            clean["bounds"] = (lo, hi)
        if "spread" in u:
            if "bounds" in u:
                err.fail(f"{where}.spread", "a bounded unknown's starts are drawn within its bounds; give "
                         "spread only without bounds")
            s = err.number(u["spread"], f"{where}.spread")
            if s <= 0:
                err.fail(f"{where}.spread", f"{s:g} must be > 0")
            clean["spread"] = s
        out[name] = clean
    return out


def _options(t, err: InputErrors) -> FitOptions:
    t = err.table(t, "fit")
    err.keys(t, _FIT_KEYS, "fit")
    vals = {}
    for key in ("starts", "max_iterations", "seed"):
        if key in t:
            v = t[key]
            low = 0 if key == "seed" else 1
            if not isinstance(v, int) or isinstance(v, bool) or v < low:
                err.fail(f"fit.{key}", f"a whole number >= {low} expected, got {v!r}")
            vals[key] = v
    for key in ("rtol", "atol"):
        if key in t:
            v = err.number(t[key], f"fit.{key}")
            if v <= 0:
                err.fail(f"fit.{key}", f"{v:g} must be > 0")
            vals[key] = v
    return FitOptions(**vals)


def _observations(t, base: Scenario, settings: Settings, err: InputErrors) -> list[Observation]:
    if t is None:
        err.fail("observations", "missing: give at least one [[observations]] table")
    t = err.array(t, "observations")
    if not t:
        err.fail("observations", "no observations")
    out = []
    for i, o in enumerate(t):
        where = f"observations[{i}]"  # 0-based, as TOML arrays of tables are usually counted
        o = err.table(o, where)
        err.keys(o, _OBS_KEYS, where)
        if "vehicle" not in o:
            err.fail(f"{where}.vehicle", "missing: the observed vehicle (1-based)")
        k = o["vehicle"]
        n = len(base.vehicles)
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= n:
            err.fail(f"{where}.vehicle", f"a vehicle number 1..{n} expected, got {k!r}")
        if "time" not in o:
            err.fail(f"{where}.time", "missing: the time of the observation [s] or \"end\"")
        time = o["time"]
        ends_at_rest = settings.end_condition == "rest"
        at_rest = time == "rest" or (time == "end" and ends_at_rest)
        if time == "rest" and not ends_at_rest:
            err.fail(f"{where}.time", "\"rest\" needs a run that ends at rest: [simulation] end_condition = \"rest\"")
        if at_rest:
            time = math.nan
        elif time == "end":
            time = settings.end_time
        else:
            time = err.number(time, f"{where}.time")
            if not 0.0 <= time <= settings.end_time:
                err.fail(f"{where}.time", f"{time:g} s lies outside the simulated [0, {settings.end_time:g}] s "
                         "(simulation.end_time)")
        given = [q for q in QUANTITIES + CRUSH_QUANTITIES if q in o]
        if not given:
            err.fail(where, f"no observed quantity: give any of {', '.join(QUANTITIES + CRUSH_QUANTITIES)}")
        for q in given:
            if q in WHOLE_RUN and o["time"] not in ("end", "rest"):
                err.fail(f"{where}.{q}", f"{q} is a quantity of the whole run: give time = \"end\" or \"rest\"")
        crush = [q for q in given if q in CRUSH_QUANTITIES]
        if crush and not at_rest and time != settings.end_time:
            err.fail(f"{where}.{crush[0]}", "a crush profile is observed at time = \"end\" (the permanent crush)")
        sigma = err.table(o.get("sigma", {}), f"{where}.sigma")
        for s in sigma:
            if s not in given:
                err.fail(f"{where}.sigma.{s}", f"a sigma for a quantity that is not observed; observed: {', '.join(given)}")
        values = []
        for q in given:
            v = err.number(o[q], f"{where}.{q}")
            if q not in sigma:
                err.fail(f"{where}.sigma.{q}", f"missing: the standard deviation of {q} (same units as {q})")
            s = err.number(sigma[q], f"{where}.sigma.{q}")
            if s <= 0:
                err.fail(f"{where}.sigma.{q}", f"{s:g} must be > 0")
            values.append((q, v, s))
        out.append(Observation(index=i, vehicle=k - 1, time=float(time), values=tuple(values), at_rest=at_rest))
    return out
