"""Studies: perturbed copies of a base scenario, sampled, run in chunks, written as Parquet.

    from jaxmedusa.study import load_study, run_study
    study = load_study("studies/offset.toml")
    summary = run_study(study, out="results/offset", batch=256)   # -> results/offset/scenarios.parquet

Study file (TOML; every key is checked, errors name the key):

    name = "offset"                       # default: the file's stem
    description = "..."                   # optional

    [scenario]                            # the base scenario, either
    path = "medusa/offset"                # a MEDUSA folder, a platoon .dat or a scenario .toml
                                          # (relative to this file), or inline: the schema of a
                                          # scenario TOML (io/scenario_toml.py), e.g. [scenario.medusa],
                                          # [[scenario.vehicles]], [scenario.overrides.vehicles.2]

    [simulation]                          # core.params.Settings fields; override the scenario's own
    end_time = 3.0                        # [s]
    dt = 5e-5                             # [s], initial/maximal step
    save_every = 0.01                     # [s], trajectory sample interval
    contact_law = "crush"                 # "medusa" | "physical" | "crush" (docs/crash-law.md); no dt and
                                          # no step_control: solver.step_control.SMOOTH_LAW_STEP's
    contact_geometry = "superellipsoid"   # "superellipsoid" | "ellipsoid" | "box" | "medusa_search";
                                          # absent: the law's default ("medusa_search" for "medusa")
    end_condition = "rest"                # "time" | "rest" (rest_speed, rest_hold): solver/end_condition.py
    precision = "float32"                 # default "float64"; float32 only where the base scenario agrees
                                          # with float64 within tolerance (study/precision.py)
    time_loop = "auto"                    # "auto" | "whole" | "dispatched": how the CPU compiles the time
                                          # loop (study/loop_choice.py)

    [contact]                             # base contact parameters (core.params.CONTACT_DEFAULTS)
    p1 = 2e4                              # p1, p2, stiffness, damping, eps1, eps2; the crush law's
                                          # mu, mu_barrier, v_slip, crush_rate, unload_exp, width_min
    [tire]                                # base CALSPAN tire parameters (physics.tire.calspan.GOODYEAR_185SR14 keys)

    [sampler]
    kind = "sobol"                        # "grid" | "random" | "lhs" | "sobol"
    n = 4096                              # samples (not for grid); sobol: a power of 2 is best
    seed = 0                              # every sampler is reproducible from its seed
    scramble = true                       # lhs and sobol (default true)

    [parameters]                          # key = path, or a name with `paths`
    "vehicles.2.y" = { uniform = [-1.6, 1.6] }
    vehicles.2.speed = { uniform = [14.0, 21.5] }       # dotted keys work too
    "vehicles.1.steering_deg" = { normal = [0.0, 1.0], mode = "offset" }
    "models.1.mass" = { truncnormal = { mean = 1573, std = 100, low = 1300, high = 1900 } }
    "contact.stiffness" = { choice = [5e5, 1e6, 2e6] }
    "vehicles.1.speed" = { values = [20.0, 22.0] }      # fixed list: crossed with the design
    [parameters.gap]                      # one sample applied to several paths:
    uniform = [5.0, 8.0]                  #   path value = coefficient * sample (mode "set"),
    paths = { "vehicles.2.x" = 1.0, "vehicles.3.x" = 2.0 }   # base + coef * sample ("offset"),
                                          #   base * coef * sample ("scale")
    Parameters apply in the order written, so an offset or scale may follow a set on the
    same path; a second "set" of a path is an error.

    [run]
    batch = 256                           # chunk size; default automatic ("auto")

    [outputs]
    metrics = ["contact", "delta_v", "pdof", "final", "handling", "energy", "crash", "rest"]  # groups or names
    trajectories = false                  # also write the partitioned trajectories/ dataset
    lane_width = 3.0                      # [m], lane departure above lane_width / 2
    spin_threshold_deg = 90.0             # [deg], spin-out above it
    episode_gap = 0.01                    # [s], contact resuming sooner is the same episode
    sway_start = 2.5                      # [s], the sway decay rate fits the articulation peaks after it
    gradients = { of = ["v2_delta_v"], wrt = ["lateral_offset"] }  # columns d_<of>_d_<wrt> by forward
                                          # mode (study/gradients.py, docs/sensitivity.md)
    sensitivity = ["v2_delta_v"]          # columns `jaxmedusa sensitivity` analyses (default: all that vary)

Paths (vehicle and model numbers 1-based as in MEDUSA's tables, `*` = all):
  vehicles.N.{x, y, speed, heading | orientation_deg, model}
  vehicles.N.{tire_speed, steering_deg}          whole driver table (set: every value; offset/scale)
  vehicles.N.{tire_speed, steering_deg}.{values, times}.K   one knot (K 1-based)
  vehicles.N.{brake, lock, throttle}             whole per-wheel table, every wheel (a vehicle
                                                 without the table starts from 0 at t = 0)
  vehicles.N.{brake, lock, throttle}.{values, times}.K     one knot, every wheel
  vehicles.N.{brake, lock, throttle}.values.K.W  one knot of wheel W (1 FL, 2 FR, 3 RL, 4 RR, 5.. further axles)
  vehicles.N.{hitch, kingpin}.{x, y, z | 1, 2, 3}  a towed vehicle's coupling point (docs/trailers.md)
  models.M.extra_axles.K.{l, track, h, c, d}     a further axle of a model (K 1-based)
  models.M.<ModelSpec field>, models.M.contact_dims.K, models.M.eq_F.J.I (eq_F[J-1][I-1]);
    the crush coefficients models.M.crush_{a,b}_{front,rear,side} (docs/crash-law.md)
  tire.<field>, contact.<field>, road.points.K.{x, y, z, bank}
  road.zones.K.{mu_peak, mu_slide, width}        a friction zone of the base scenario's road
Distributions: uniform = [lo, hi]; normal = [mean, std]; truncnormal = [mean, std, low, high]
(tables with those names work too); choice = [a, b, ...] (equally likely); values = [...]
(a fixed list: crossed, full-factorially, with the design of the other parameters; for the
grid sampler simply its levels). The grid sampler needs `levels = k` for uniform (k evenly
spaced points, ends included), normal and truncnormal (quantiles at (i + 1/2)/k).

Execution: the samples are split into chunks of `batch` scenarios (the last one padded by
repeating its last scenario, padding rows dropped), so the run compiles once. Each chunk
is one jitted call over all local devices (the batch axis sharded over a 1-D mesh) and is
written atomically to <out>/chunks/chunk-NNNNN.parquet; `resume` skips chunks already
written by the same study and chunk size; `shard=(i, n)` runs chunks k with k % n == i.
When every chunk is there, <out>/scenarios.parquet is written (io.tables.scenarios_table).
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

from jaxmedusa.analysis.outcomes import VEHICLE_METRICS
from jaxmedusa.contact.stage import shape_name
from jaxmedusa.core.params import CONTACT_DEFAULTS, Settings
from jaxmedusa.core.scenario import Scenario
from jaxmedusa.io.scenario_toml import load_scenario, scenario_from_dict
from jaxmedusa.io.validation import InputErrors, read_toml, simulation_settings
from jaxmedusa.physics.tire.calspan import GOODYEAR_185SR14
from jaxmedusa.solver.step_control import SMOOTH_LAW_STEP
from jaxmedusa.study.design import SAMPLERS, design
from jaxmedusa.study.gradients import check_differentiable, check_gradients
from jaxmedusa.study.loop_choice import CHOICES
from jaxmedusa.study.perturb import scenario_for, scenarios_for
from jaxmedusa.study.precision import PRECISIONS
from jaxmedusa.study.spec import (METRIC_GROUPS, Distribution, Outputs, Parameter, Sampler, Study, StudyError, Target,
                                  check_contact)
from jaxmedusa.study.targets import parse_target

__all__ = ["load_study", "study_from_dict", "parse_target"]

_TOP_KEYS = ("name", "description", "scenario", "simulation", "contact", "tire", "sampler", "parameters",
             "run", "outputs")
_DIST_KEYS = ("uniform", "normal", "truncnormal", "truncated_normal", "choice", "values")
_PARAM_KEYS = _DIST_KEYS + ("mode", "levels", "paths", "path")
_MODES = ("set", "offset", "scale")


def load_study(path: str | Path, sampler_replaced: bool = False) -> Study:
    """Read and validate a study file (module docstring). Raises StudyError naming the key.
    sampler_replaced: another design replaces `[sampler]` (`jaxmedusa sensitivity`): none needed."""
    data, text = read_toml(Path(path), StudyError)
    return study_from_dict(data, Path(path).parent, str(path), Path(path).stem, text, sampler_replaced)


def study_from_dict(data: dict, base_dir: str | Path = ".", source: str = "<study>", default_name: str = "study",
                    text: str = "", sampler_replaced: bool = False) -> Study:
    """A validated Study from a parsed study table. Every sample is generated and checked
    here too (impossible models, bad road points, ...), so a Study that loads will run."""
    err = InputErrors(source)
    base_dir = Path(base_dir)
    err.keys(data, _TOP_KEYS, "top level")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        err.fail("name", f"a name of letters, digits, '_', '-', '.', '+' expected, got {name!r}")
    description = data.get("description", "")
    if not isinstance(description, str):
        err.fail("description", f"a string expected, got {description!r}")

    # base scenario
    if "scenario" not in data:
        err.fail("scenario", "missing: give [scenario] path = \"...\" or an inline scenario")
    sc = err.table(data["scenario"], "scenario")
    if "path" in sc:
        extra = set(sc) - {"path"}
        if extra:
            err.fail(f"scenario.{sorted(extra)[0]}", "give either `path` or an inline scenario, not both "
                     "(use [scenario.medusa] folder = ... with [scenario.overrides] to modify MEDUSA files)")
        p = base_dir / err.string(sc["path"], "scenario.path")
        if not p.exists():
            err.fail("scenario.path", f"{p} does not exist")
        base, sim = load_scenario(p)
    else:
        base, sim = scenario_from_dict(sc, base_dir=base_dir, source=f"{source} [scenario]", default_name=name)

    # settings: the scenario's, overridden by the study's
    sim_table = dict(err.table(data.get("simulation", {}), "simulation"))
    precision, margin = _precision(sim_table, err)  # (not Settings fields: removed from sim_table)
    loop = sim_table.pop("time_loop", sim.get("time_loop", "auto"))  # (a scenario file's own choice too)
    if loop not in CHOICES:
        err.fail("simulation.time_loop", f"one of {', '.join(repr(c) for c in CHOICES)} expected, got {loop!r}")
    study_sim = simulation_settings(sim_table, err)
    sim = {**sim, **study_sim}
    # a smooth law steps with a constant dt unless the study says otherwise (SMOOTH_LAW_STEP)
    smooth = SMOOTH_LAW_STEP.get(sim.get("contact_law", "medusa"), {})
    sim.update({k: v for k, v in smooth.items() if k not in study_sim})
    settings = Settings(**sim)
    # the shape by name, the law's default if none is given: what the spec, its fingerprint
    # and the tables' provenance record
    settings = dataclasses.replace(settings, contact_geometry=shape_name(settings))

    contact = dict(CONTACT_DEFAULTS)
    for k, v in err.table(data.get("contact", {}), "contact").items():
        if k not in CONTACT_DEFAULTS:
            err.fail(f"contact.{k}", f"unknown contact parameter; expected one of {', '.join(CONTACT_DEFAULTS)}")
        contact[k] = err.number(v, f"contact.{k}")
    check_contact(contact, lambda k, msg: err.fail(f"contact.{k}", msg))
    tire = {}
    for k, v in err.table(data.get("tire", {}), "tire").items():
        if k not in GOODYEAR_185SR14:
            err.fail(f"tire.{k}", f"unknown tire parameter; expected one of {', '.join(GOODYEAR_185SR14)}")
        tire[k] = err.number(v, f"tire.{k}")

    sampler = _sampler(data.get("sampler", {"kind": "sobol", "n": 1} if sampler_replaced else {}), err)  # never run
    params = _parameters(data.get("parameters", {}), base, sampler, err)
    if sampler.kind != "grid" and not any(not p.dist.fixed for p in params):
        err.fail("sampler.kind", f"'{sampler.kind}' needs at least one parameter with a distribution; "
                 "with fixed lists only, use kind = \"grid\"")
    run = err.table(data.get("run", {}), "run")
    err.keys(run, ("batch",), "run")
    batch = run.get("batch", "auto")
    if batch == "auto":
        batch = None
    elif not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        err.fail("run.batch", f"a whole number >= 1 or \"auto\" expected, got {batch!r}")
    outputs = _outputs(data.get("outputs", {}), err, params, len(base.vehicles))
    if outputs.gradients_of:
        check_differentiable(settings, len(base.vehicles), "gradient columns", err.fail)

    if precision != "float64" and outputs.gradients_of:
        err.fail("simulation.precision", f"{precision} does not run gradient columns (outputs.gradients): "
                 "use precision = \"float64\"")
    study = Study(name=name, base=base, settings=settings, parameters=params, sampler=sampler, outputs=outputs,
                  tire=tire, contact=contact, batch=batch, description=description, source=source, text=text,
                  precision=precision, precision_margin=margin, time_loop=loop)
    ids, cols = design(study)
    scenarios_for(study, cols, ids)  # every sample is checked before anything runs,
    row = {k: v[0] for k, v in cols.items()}
    for p in params:  # and so is each end of every bounded range (with the other values of sample 0)
        for x in p.dist.support():
            if math.isfinite(x):
                scenario_for(study, {**row, p.name: x}, sample_id=-1)
    return study


def _precision(sim: dict, err: InputErrors) -> tuple[str, float]:
    """[simulation] precision and precision_margin (study/precision.py), taken out of `sim`."""
    precision = sim.pop("precision", "float64")
    if precision not in PRECISIONS:
        err.fail("simulation.precision", f"one of {', '.join(repr(p) for p in PRECISIONS)} expected, got {precision!r}")
    margin = err.number(sim.pop("precision_margin", 1.0), "simulation.precision_margin")
    if not margin > 0.0:
        err.fail("simulation.precision_margin", f"a factor > 0 expected, got {margin:g}")
    return precision, margin


def _sampler(t, err: InputErrors) -> Sampler:
    t = err.table(t, "sampler")
    err.keys(t, ("kind", "n", "seed", "scramble"), "sampler")
    kind = t.get("kind", "sobol")
    if kind not in SAMPLERS:
        err.fail("sampler.kind", f"unknown sampler {kind!r}; valid: {', '.join(SAMPLERS.names())}")
    n = t.get("n")
    if kind == "grid":
        if n is not None:
            err.fail("sampler.n", "the grid sampler takes no n (its size is the product of the levels)")
    elif not isinstance(n, int) or isinstance(n, bool) or n < 1:
        err.fail("sampler.n", f"a whole number of samples >= 1 expected, got {n!r}")
    seed = t.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        err.fail("sampler.seed", f"a whole number >= 0 expected, got {seed!r}")
    scramble = t.get("scramble", True)
    if not isinstance(scramble, bool):
        err.fail("sampler.scramble", f"true or false expected, got {scramble!r}")
    return Sampler(kind=kind, n=n, seed=seed, scramble=scramble)


def _outputs(t, err: InputErrors, params=(), n_vehicles: int = 1) -> Outputs:
    t = err.table(t, "outputs")
    err.keys(t, ("metrics", "trajectories", "lane_width", "spin_threshold_deg", "episode_gap", "sway_start",
                 "gradients", "sensitivity"), "outputs")
    names = t.get("metrics", ["all"])
    names = [names] if isinstance(names, str) else err.array(names, "outputs.metrics")
    chosen = []
    for n in names:
        if n == "all":
            chosen += list(VEHICLE_METRICS)
        elif n in METRIC_GROUPS:
            chosen += list(METRIC_GROUPS[n])
        elif n in VEHICLE_METRICS:
            chosen.append(n)
        else:
            err.fail("outputs.metrics", f"unknown metric or group {n!r}; groups: {', '.join(METRIC_GROUPS)}, "
                     f"metrics: {', '.join(VEHICLE_METRICS)}")
    chosen = tuple(m for m in VEHICLE_METRICS if m in set(chosen))  # canonical order, no repeats
    traj = t.get("trajectories", False)
    if not isinstance(traj, bool):
        err.fail("outputs.trajectories", f"true or false expected, got {traj!r}")
    lane = err.number(t.get("lane_width", 3.0), "outputs.lane_width")
    spin = err.number(t.get("spin_threshold_deg", 90.0), "outputs.spin_threshold_deg")
    if lane <= 0:
        err.fail("outputs.lane_width", f"{lane:g} must be > 0")
    if not 0 < spin < 360:
        err.fail("outputs.spin_threshold_deg", f"{spin:g} must lie in (0, 360)")
    gap = err.number(t.get("episode_gap", 0.01), "outputs.episode_gap")
    if gap < 0:
        err.fail("outputs.episode_gap", f"{gap:g} must be >= 0")
    sway = err.number(t.get("sway_start", 2.5), "outputs.sway_start")
    if sway < 0:
        err.fail("outputs.sway_start", f"{sway:g} must be >= 0 [s]")
    of, wrt = (), ()
    if "gradients" in t:  # forward-mode gradient columns (study/gradients.py)
        g = err.table(t["gradients"], "outputs.gradients")
        err.keys(g, ("of", "wrt"), "outputs.gradients")
        for k in ("of", "wrt"):
            if k not in g:
                err.fail(f"outputs.gradients.{k}", "missing: a list of names expected")
        of = tuple(err.string(x, "outputs.gradients.of") for x in err.array(g["of"], "outputs.gradients.of"))
        wrt = tuple(err.string(x, "outputs.gradients.wrt") for x in err.array(g["wrt"], "outputs.gradients.wrt"))
        check_gradients(of, wrt, params, n_vehicles, err.fail)
        if traj:
            err.fail("outputs.gradients", "gradient columns and trajectories = true in one study are not supported; "
                     "make two studies")
    sens = t.get("sensitivity", [])
    sens = tuple(err.string(x, "outputs.sensitivity") for x in err.array(sens, "outputs.sensitivity"))
    return Outputs(metrics=chosen, trajectories=traj, lane_width=lane, spin_threshold_deg=spin, episode_gap=gap,
                   sway_start=sway, gradients_of=of, gradients_wrt=wrt, sensitivity=sens)


# ---------------------------------------------------------------------------- parameters


def _flatten_parameters(t, err: InputErrors, prefix: str = "") -> list[tuple[str, dict]]:
    """[(name, leaf table)] from [parameters], following TOML dotted keys down to the tables
    that hold a distribution."""
    out = []
    for key, value in t.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        where = f"parameters.{name}"
        if not isinstance(value, dict):
            err.fail(where, f"a table with a distribution ({', '.join(_DIST_KEYS)}) expected, got {value!r}")
        if any(k in value for k in _PARAM_KEYS):
            out.append((name, value))
        elif not value:
            err.fail(where, "empty table: a distribution expected")
        else:
            out += _flatten_parameters(value, err, name)
    return out


def _distribution(t: dict, where: str, err: InputErrors) -> Distribution:
    kinds = [k for k in _DIST_KEYS if k in t]
    if len(kinds) != 1:
        err.fail(where, f"exactly one of {', '.join(_DIST_KEYS)} expected, got {kinds or 'none'}")
    kind = kinds[0]
    raw = t[kind]
    key = f"{where}.{kind}"
    kind = "truncnormal" if kind == "truncated_normal" else kind
    named = {"uniform": ("low", "high"), "normal": ("mean", "std"), "truncnormal": ("mean", "std", "low", "high")}
    if kind in named:
        fields = named[kind]
        if isinstance(raw, dict):
            err.keys(raw, fields, key)
            missing = [f for f in fields if f not in raw]
            if missing:
                err.fail(key, f"missing {', '.join(missing)}")
            raw = [raw[f] for f in fields]
        raw = err.array(raw, key)
        if len(raw) != len(fields):
            err.fail(key, f"[{', '.join(fields)}] expected, got {raw!r}")
        a = tuple(err.number(x, key) for x in raw)
        if kind == "uniform" and not a[0] < a[1]:
            err.fail(key, f"bad range: low {a[0]:g} must be < high {a[1]:g}")
        if kind in ("normal", "truncnormal") and not a[1] > 0:
            err.fail(key, f"std {a[1]:g} must be > 0")
        if kind == "truncnormal" and not a[2] < a[3]:
            err.fail(key, f"bad range: low {a[2]:g} must be < high {a[3]:g}")
        return Distribution(kind, a)
    vals = err.array(raw, key)
    if not vals:
        err.fail(key, "an empty list")
    return Distribution(kind, tuple(err.number(x, key) for x in vals))


def _parameters(t, base: Scenario, sampler: Sampler, err: InputErrors) -> list[Parameter]:
    t = err.table(t, "parameters")
    if not t:
        err.fail("parameters", "no parameters to perturb")
    params, seen = [], {}
    for name, leaf in _flatten_parameters(t, err):
        where = f"parameters.{name}"
        err.keys(leaf, _PARAM_KEYS, where)
        dist = _distribution(leaf, where, err)
        mode = leaf.get("mode", "set")
        if mode not in _MODES:
            err.fail(f"{where}.mode", f"one of {', '.join(_MODES)} expected, got {mode!r}")
        if "paths" in leaf and "path" in leaf:
            err.fail(where, "give `path` or `paths`, not both")
        if "paths" in leaf:
            raw = leaf["paths"]
            if isinstance(raw, list):
                raw = {p: 1.0 for p in raw}
            raw = err.table(raw, f"{where}.paths")
            if not raw:
                err.fail(f"{where}.paths", "no paths")
            pairs = [(p, err.number(c, f"{where}.paths.{p}")) for p, c in raw.items()]
        else:
            pairs = [(err.string(leaf.get("path", name), f"{where}.path"), 1.0)]
        targets = []
        for p, c in pairs:
            tg = parse_target(p, base, where, err)
            if tg.kind == "vehicle_model":
                if mode != "set" or dist.kind not in ("choice", "values") or c != 1.0:
                    err.fail(where, "a vehicle's model takes mode \"set\" with choice or values of model numbers")
                for m in dist.args:
                    if m != int(m) or not 1 <= m <= len(base.models):
                        err.fail(where, f"model number 1..{len(base.models)} expected, got {m:g}")
            for leafkey in _expand(tg):
                if leafkey in seen and mode == "set":
                    err.fail(where, f"mode \"set\" would overwrite what parameters.{seen[leafkey]} gives "
                             f"'{p}' (parameters apply in the order written; use mode offset or scale)")
                seen.setdefault(leafkey, name)
            targets.append((tg, c))
        levels = leaf.get("levels")
        if levels is not None:
            if sampler.kind != "grid":
                err.fail(f"{where}.levels", "levels apply to the grid sampler only")
            if not isinstance(levels, int) or isinstance(levels, bool) or levels < 1:
                err.fail(f"{where}.levels", f"a whole number >= 1 expected, got {levels!r}")
        elif sampler.kind == "grid" and dist.kind in ("uniform", "normal", "truncnormal"):
            err.fail(f"{where}.levels", f"the grid sampler needs `levels = k` for a {dist.kind} distribution")
        params.append(Parameter(name=name, dist=dist, mode=mode, targets=tuple(targets), levels=levels))
    return params


def _expand(t: Target) -> list[tuple]:
    """Elementary values a target touches (for the duplicate check)."""
    if t.kind in ("vehicle", "vehicle_model", "model", "driver"):
        return [(t.kind, k, t.name, t.part, t.index) for k in t.items]
    return [(t.kind, t.name, t.index)]
