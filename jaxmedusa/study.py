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
                                          # scenario TOML (inputs.py), e.g. [scenario.medusa],
                                          # [[scenario.vehicles]], [scenario.overrides.vehicles.2]

    [simulation]                          # params.Settings fields; override the scenario's own
    end_time = 3.0                        # [s]
    dt = 5e-5                             # [s], initial/maximal step
    save_every = 0.01                     # [s], trajectory sample interval
    contact_law = "crush"                 # "medusa" | "physical" | "crush" (docs/crash-law.md)
    contact_geometry = "superellipsoid"   # "superellipsoid" | "ellipsoid" | "box"

    [contact]                             # base contact parameters (params.contact_params)
    p1 = 2e4                              # p1, p2, stiffness, damping, eps1, eps2, mu, mu_barrier,
                                          # v_slip, crush_rate, unload_exp, width_min
    [tire]                                # base tire parameters (params.GOODYEAR_185SR14 keys)

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
    metrics = ["contact", "delta_v", "pdof", "final", "handling", "energy"]  # groups or names
    trajectories = false                  # also write the partitioned trajectories/ dataset
    lane_width = 3.0                      # [m], lane departure above lane_width / 2
    spin_threshold_deg = 90.0             # [deg], spin-out above it
    episode_gap = 0.01                    # [s], contact resuming sooner is the same episode

Paths (vehicle and model numbers 1-based as in MEDUSA's tables, `*` = all):
  vehicles.N.{x, y, speed, heading | orientation_deg, model}
  vehicles.N.{tire_speed, steering_deg}          whole driver table (set: every value; offset/scale)
  vehicles.N.{tire_speed, steering_deg}.{values, times}.K   one knot (K 1-based)
  models.M.<ModelSpec field>, models.M.contact_dims.K, models.M.eq_F.J.I (eq_F[J-1][I-1])
  tire.<field>, contact.<field>, road.points.K.{x, y, z, bank}
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
When every chunk is there, <out>/scenarios.parquet is written (io.scenarios_table).
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import time
import tomllib
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import build as build_mod
from . import io as io_mod
from . import road as road_mod
from .inputs import _Errors, _settings, load_scenario, scenario_from_dict
from .legacy import KEYWORD_FIELDS, MedusaInputError, model_problems
from .outcomes import VEHICLE_METRICS, Outcomes, summarize_batch
from .params import CRUSH_CONTACT_DEFAULTS, GOODYEAR_185SR14, ContactParams, Settings, vehicle_params
from .scenario import CRUSH_FIELDS, DriverTable, ModelSpec, RoadSpec, Scenario
from .simulate import simulate
from .state import CONTACT_WARM_SIZE, STATUS_NAMES, PairState, VehicleState, pair_indices

__all__ = [
    "Study", "Parameter", "Distribution", "Sampler", "Outputs", "SweepSummary",
    "load_study", "study_from_dict", "design", "scenario_for", "scenarios_for", "build_scenarios",
    "run_study", "run_chunk", "merge_results", "finalize", "parse_shard", "auto_batch_size",
    "METRIC_GROUPS", "StudyError",
]

StudyError = MedusaInputError  # study files fail with the same error class as scenario files

FORMAT_VERSION = 1
CONTACT_DEFAULTS = dict(p1=2e4, p2=100.0, stiffness=1e6, damping=1e4, eps1=0.4, eps2=0.4, **CRUSH_CONTACT_DEFAULTS)

METRIC_GROUPS = {
    "contact": ("first_contact_time", "last_contact_time", "contact_duration", "contact_episodes",
                "peak_contact_force", "max_penetration"),
    "delta_v": ("delta_v", "delta_v_vec", "delta_v_body"),
    "pdof": ("pdof_deg", "pdof_clock"),
    "final": ("final_x", "final_y", "final_z", "final_vx", "final_vy", "final_vz", "final_speed",
              "final_heading", "final_yaw_rate"),
    "handling": ("max_heading_change", "spin_out", "max_lateral_excursion", "lane_departure"),
    "energy": ("energy_start", "energy_end"),
    "crash": ("max_crush", "residual_crush", "pulse_duration", "mean_decel_g", "peak_decel_g", "restitution",
              "absorbed_energy", "ees"),
}
assert set(itertools.chain(*METRIC_GROUPS.values())) == set(VEHICLE_METRICS)

_TOP_KEYS = ("name", "description", "scenario", "simulation", "contact", "tire", "sampler", "parameters",
             "run", "outputs")
_DIST_KEYS = ("uniform", "normal", "truncnormal", "truncated_normal", "choice", "values")
_PARAM_KEYS = _DIST_KEYS + ("mode", "levels", "paths", "path")
_MODES = ("set", "offset", "scale")
_SAMPLERS = ("grid", "random", "lhs", "sobol")
_VEHICLE_FIELDS = {"x": "x", "y": "y", "speed": "speed", "heading": "orientation",
                   "orientation_deg": "orientation", "orientation": "orientation"}
_DRIVER_FIELDS = ("tire_speed", "steering_deg")
_ROAD_COORDS = {"x": 0, "y": 1, "z": 2, "bank": 3, "bank_deg": 3}
_MODEL_SCALARS = [f.name for f in dataclasses.fields(ModelSpec) if f.name not in ("contact_dims", "eq_F")]


# ============================================================================ spec


@dataclass(frozen=True)
class Distribution:
    """kind: uniform (lo, hi) | normal (mean, std) | truncnormal (mean, std, low, high) |
    choice (values...) | values (values...)."""

    kind: str
    args: tuple

    @property
    def fixed(self) -> bool:
        return self.kind == "values"

    def support(self) -> tuple[float, float]:
        """Smallest and largest value the distribution can give."""
        a = self.args
        if self.kind == "uniform":
            return a[0], a[1]
        if self.kind == "normal":
            return -math.inf, math.inf
        if self.kind == "truncnormal":
            return a[2], a[3]
        return min(a), max(a)

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """Values at unit-interval points u (inverse CDF)."""
        from scipy import stats

        a = self.args
        u = np.clip(np.asarray(u, float), 1e-12, 1.0 - 1e-12)
        if self.kind == "uniform":
            return a[0] + u * (a[1] - a[0])
        if self.kind == "normal":
            return stats.norm.ppf(u, loc=a[0], scale=a[1])
        if self.kind == "truncnormal":
            lo, hi = (a[2] - a[0]) / a[1], (a[3] - a[0]) / a[1]
            return np.clip(stats.truncnorm.ppf(u, lo, hi, loc=a[0], scale=a[1]), a[2], a[3])
        vals = np.asarray(a, float)
        return vals[np.minimum((u * len(vals)).astype(int), len(vals) - 1)]

    def levels(self, k: int | None) -> np.ndarray:
        """Grid levels: the listed values, or k points (uniform: evenly spaced with the ends;
        normal/truncnormal: quantiles at (i + 1/2)/k)."""
        if self.kind in ("choice", "values"):
            return np.asarray(self.args, float)
        if self.kind == "uniform":
            return np.linspace(self.args[0], self.args[1], k)
        return self.ppf((np.arange(k) + 0.5) / k)

    def as_dict(self) -> dict:
        return {self.kind: list(self.args)}


@dataclass(frozen=True)
class Target:
    """One addressed value of a scenario. kind: vehicle | vehicle_model | driver | model |
    tire | contact | road. index: 0-based numbers (vehicles/models/knots/points)."""

    path: str
    kind: str
    items: tuple[int, ...] = ()  # vehicle or model indices (0-based)
    name: str = ""  # field name
    part: str = ""  # driver: "all" | "values" | "times"
    index: tuple[int, ...] = ()  # knot, contact_dims, eq_F or road point/coordinate indices


@dataclass(frozen=True)
class Parameter:
    """A perturbed parameter: column `name`, distribution, mode, and the targets it sets
    (with coefficients)."""

    name: str
    dist: Distribution
    mode: str
    targets: tuple[tuple[Target, float], ...]
    levels: int | None = None

    def as_dict(self) -> dict:
        d = {**self.dist.as_dict(), "mode": self.mode, "paths": {t.path: c for t, c in self.targets}}
        if self.levels is not None:
            d["levels"] = self.levels
        return d


@dataclass(frozen=True)
class Sampler:
    kind: str = "sobol"
    n: int | None = None
    seed: int = 0
    scramble: bool = True


@dataclass(frozen=True)
class Outputs:
    metrics: tuple[str, ...] = tuple(VEHICLE_METRICS)
    trajectories: bool = False
    lane_width: float = 3.0
    spin_threshold_deg: float = 90.0
    episode_gap: float = 0.01


@dataclass
class Study:
    """A validated study (module docstring). `text` is the study file as written."""

    name: str
    base: Scenario
    settings: Settings
    parameters: list[Parameter]
    sampler: Sampler
    outputs: Outputs = field(default_factory=Outputs)
    tire: dict = field(default_factory=dict)
    contact: dict = field(default_factory=lambda: dict(CONTACT_DEFAULTS))
    batch: int | None = None
    description: str = ""
    source: str = "<study>"
    text: str = ""

    @property
    def n_vehicles(self) -> int:
        return len(self.base.vehicles)

    @property
    def tracker(self) -> Outcomes:
        o = self.outputs
        return Outcomes(lane_width=o.lane_width, spin_threshold_deg=o.spin_threshold_deg, episode_gap=o.episode_gap)

    def spec(self) -> dict:
        """The resolved study as plain JSON-able data (what the fingerprint hashes)."""
        return {
            "format": FORMAT_VERSION,
            "name": self.name,
            "base": dataclasses.asdict(self.base),
            "settings": dataclasses.asdict(self.settings),
            "tire": dict(sorted(self.tire.items())),
            "contact": dict(sorted(self.contact.items())),
            "sampler": dataclasses.asdict(self.sampler),
            "parameters": {p.name: p.as_dict() for p in self.parameters},
            "outputs": dataclasses.asdict(self.outputs),
        }

    def fingerprint(self, chunk_size: int) -> str:
        """Hash of the resolved spec and the chunk size: chunks with equal fingerprints are
        interchangeable."""
        blob = json.dumps({"spec": self.spec(), "chunk_size": chunk_size}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


def load_study(path: str | Path) -> Study:
    """Read and validate a study file (module docstring). Raises StudyError naming the key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise StudyError(f"{path}: cannot open file ({e.strerror})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise StudyError(f"{path}: not valid TOML: {e}") from None
    return study_from_dict(data, base_dir=path.parent, source=str(path), default_name=path.stem, text=text)


def study_from_dict(data: dict, base_dir: str | Path = ".", source: str = "<study>", default_name: str = "study",
                    text: str = "") -> Study:
    """A validated Study from a parsed study table. Every sample is generated and checked
    here too (impossible models, bad road points, ...), so a Study that loads will run."""
    err = _Errors(source)
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
    sim = {**sim, **_settings(data.get("simulation", {}), err)}
    settings = Settings(**sim)

    contact = dict(CONTACT_DEFAULTS)
    for k, v in err.table(data.get("contact", {}), "contact").items():
        if k not in CONTACT_DEFAULTS:
            err.fail(f"contact.{k}", f"unknown contact parameter; expected one of {', '.join(CONTACT_DEFAULTS)}")
        contact[k] = err.number(v, f"contact.{k}")
    _check_contact(contact, lambda k, msg: err.fail(f"contact.{k}", msg))
    tire = {}
    for k, v in err.table(data.get("tire", {}), "tire").items():
        if k not in GOODYEAR_185SR14:
            err.fail(f"tire.{k}", f"unknown tire parameter; expected one of {', '.join(GOODYEAR_185SR14)}")
        tire[k] = err.number(v, f"tire.{k}")

    sampler = _sampler(data.get("sampler", {}), err)
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
    outputs = _outputs(data.get("outputs", {}), err)

    study = Study(name=name, base=base, settings=settings, parameters=params, sampler=sampler, outputs=outputs,
                  tire=tire, contact=contact, batch=batch, description=description, source=source, text=text)
    ids, cols = design(study)
    scenarios_for(study, cols, ids)  # every sample is checked before anything runs,
    row = {k: v[0] for k, v in cols.items()}
    for p in params:  # and so is each end of every bounded range (with the other values of sample 0)
        for x in p.dist.support():
            if math.isfinite(x):
                scenario_for(study, {**row, p.name: x}, sample_id=-1)
    return study


def _check_contact(c: dict, fail):
    for k in ("p1", "p2", "stiffness", "damping"):
        if k in c and not c[k] >= 0.0:
            fail(k, f"{c[k]:g} must be >= 0")
    for k in ("mu", "mu_barrier", "crush_rate", "width_min"):
        if k in c and not c[k] >= 0.0:
            fail(k, f"{c[k]:g} must be >= 0")
    if "v_slip" in c and not c["v_slip"] > 0.0:
        fail("v_slip", f"{c['v_slip']:g} must be > 0 (the friction regularisation speed)")
    if "unload_exp" in c and not c["unload_exp"] >= 1.0:
        fail("unload_exp", f"{c['unload_exp']:g} must be >= 1 (unloading below the loading line)")
    for k in ("eps1", "eps2"):
        if k in c and not 0.0 < c[k] <= 2.0:
            fail(k, f"squareness exponent {c[k]:g} must lie in (0, 2] (convex superellipsoid)")


def _sampler(t, err: _Errors) -> Sampler:
    t = err.table(t, "sampler")
    err.keys(t, ("kind", "n", "seed", "scramble"), "sampler")
    kind = t.get("kind", "sobol")
    if kind not in _SAMPLERS:
        err.fail("sampler.kind", f"one of {', '.join(_SAMPLERS)} expected, got {kind!r}")
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


def _outputs(t, err: _Errors) -> Outputs:
    t = err.table(t, "outputs")
    err.keys(t, ("metrics", "trajectories", "lane_width", "spin_threshold_deg", "episode_gap"), "outputs")
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
    return Outputs(metrics=chosen, trajectories=traj, lane_width=lane, spin_threshold_deg=spin, episode_gap=gap)


# ---------------------------------------------------------------------------- parameters


def _flatten_parameters(t, err: _Errors, prefix: str = "") -> list[tuple[str, dict]]:
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


def _distribution(t: dict, where: str, err: _Errors) -> Distribution:
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


def _one_based(text: str, n: int, where: str, what: str, err: _Errors) -> list[int]:
    if text == "*":
        return list(range(n))
    if not text.isdigit() or not 1 <= int(text) <= n:
        err.fail(where, f"{what} number 1..{n} (or *) expected, got '{text}'")
    return [int(text) - 1]


def parse_target(path: str, base: Scenario, where: str, err: _Errors) -> Target:
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
        if fld in _DRIVER_FIELDS:
            attr = "steering" if fld == "steering_deg" else "tire_speed"
            if len(parts) == 3:
                return Target(path, "driver", ks, attr, "all")
            if len(parts) == 5 and parts[3] in ("values", "times"):
                n_knots = min(len(getattr(base.vehicles[k], attr).times) for k in ks)
                knot = _one_based(parts[4], n_knots, where, f"a knot of {fld}", err)
                return Target(path, "driver", ks, attr, parts[3], tuple(knot))
        err.fail(where, f"{bad}; vehicle fields: {', '.join(_VEHICLE_FIELDS)}, model, tire_speed, steering_deg "
                 "(whole table, or .values.K / .times.K)")
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
        err.fail(where, f"{bad}; model fields: {', '.join(_MODEL_SCALARS)}, contact_dims.K, eq_F.J.I")
    if head == "tire":
        if len(parts) != 2 or parts[1] not in GOODYEAR_185SR14:
            err.fail(where, f"{bad}; tire fields: {', '.join(GOODYEAR_185SR14)}")
        return Target(path, "tire", name=parts[1])
    if head == "contact":
        if len(parts) != 2 or parts[1] not in CONTACT_DEFAULTS:
            err.fail(where, f"{bad}; contact fields: {', '.join(CONTACT_DEFAULTS)}")
        return Target(path, "contact", name=parts[1])
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


def _parameters(t, base: Scenario, sampler: Sampler, err: _Errors) -> list[Parameter]:
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


# ============================================================================ sampling


def _qmc(cls, d: int, seed: int, **kw):
    try:
        return cls(d, rng=seed, **kw)
    except TypeError:  # scipy < 1.15
        return cls(d, seed=seed, **kw)


def unit_design(kind: str, n: int, d: int, seed: int, scramble: bool = True) -> np.ndarray:
    """(n, d) points in [0, 1): random (numpy PCG64), lhs or sobol (scipy.stats.qmc)."""
    from scipy.stats import qmc

    if kind == "random":
        return np.random.default_rng(seed).random((n, d))
    if kind == "lhs":
        return _qmc(qmc.LatinHypercube, d, seed, scramble=scramble).random(n)
    if kind == "sobol":
        s = _qmc(qmc.Sobol, d, seed, scramble=scramble)
        m = int(round(math.log2(n))) if n > 0 else 0
        if 2**m == n:
            return s.random_base2(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "balance properties ... power of 2"
            return s.random(n)
    raise ValueError(f"unknown sampler {kind!r}")


def design(study: Study) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(sample ids (N,), {parameter name: values (N,)}) in sample-id order, reproducible from
    the sampler's seed. Grid: full factorial, the first parameter varying slowest. Others:
    the sampled design (n rows) for each combination of the fixed lists (outer loop)."""
    ps = study.parameters
    s = study.sampler
    if s.kind == "grid":
        axes = [p.dist.levels(p.levels) for p in ps]
        mesh = np.meshgrid(*axes, indexing="ij")
        cols = {p.name: m.reshape(-1) for p, m in zip(ps, mesh)}
    else:
        fixed = [p for p in ps if p.dist.fixed]
        drawn = [p for p in ps if not p.dist.fixed]
        u = unit_design(s.kind, s.n, len(drawn), s.seed, s.scramble)
        combos = list(itertools.product(*[p.dist.args for p in fixed])) or [()]
        cols = {}
        for p in ps:
            if p.dist.fixed:
                j = fixed.index(p)
                col = np.repeat([c[j] for c in combos], s.n)
            else:
                col = np.tile(p.dist.ppf(u[:, drawn.index(p)]), len(combos))
            cols[p.name] = np.asarray(col, float)
    n = len(next(iter(cols.values())))
    return np.arange(n, dtype=np.int64), cols


# ============================================================================ scenarios


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
            for fld in CRUSH_FIELDS:  # crush coefficients (crush law) must stay positive
                if not getattr(model, fld) > 0.0:
                    fail(("model",), lambda t, m=m, fld=fld: m in t.items and t.name == fld,
                         f"model {m + 1}: {fld} = {getattr(model, fld):g} must be > 0")
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
        _check_contact(contact, lambda key, msg: fail(("contact",), lambda t: t.name == key, f"contact.{key}: {msg}"))
    if "tire" in touched:
        for key, x in tire.items():
            if not math.isfinite(x):
                fail(("tire",), lambda t: t.name == key, f"tire.{key} is not finite")
    if "road" in touched:
        try:
            road_mod._validate(sc.road.points)
        except ValueError as e:
            fail(("road",), lambda t: True, str(e))


# ============================================================================ arrays


def _np_tree(tree):
    return jax.tree.map(np.asarray, tree)


def _key(obj) -> str:
    return json.dumps(dataclasses.asdict(obj) if dataclasses.is_dataclass(obj) else obj, sort_keys=True)


def build_scenarios(items: list[tuple], dt: float, n_vehicles: int | None = None):
    """(Batch, SimState) for [(Scenario, tire dict, contact dict)], equal leaf for leaf to
    build.build_batch (which takes one tire and contact for all) but fast for thousands of
    scenarios: vehicle parameters and roads are computed once per distinct model/road, the
    rest is numpy, and the initial road tracking is one vmapped call."""
    scenarios = [it[0] for it in items]
    n_v = n_vehicles or max(len(s.vehicles) for s in scenarios)
    k = build_mod._table_length(scenarios)
    kinds = {s.road.points is None for s in scenarios}
    if len(kinds) > 1:
        raise ValueError("a batch cannot mix the flat plane and spline roads")
    flat = kinds.pop()
    b = len(items)

    vp_cache, vp_list, vp_idx = {}, [], np.zeros((b, n_v), np.int64)
    road_cache, road_list, road_idx = {}, [], np.zeros(b, np.int64)
    drv = {f: np.zeros((b, n_v, k)) for f in ("st", "sv", "vt", "vv")}
    drv_lin = {f: np.zeros((b, n_v)) for f in ("sl", "vl")}
    r0 = np.zeros((b, n_v, 3))
    F0 = np.zeros((b, n_v, 3, 3))
    v0 = np.zeros((b, n_v, 3))
    valid = np.zeros((b, n_v), bool)
    for i, (sc, tire, _) in enumerate(items):
        tkey = json.dumps(tire, sort_keys=True)
        if not flat:
            rk = _key(sc.road)
            if rk not in road_cache:
                road_cache[rk] = len(road_list)
                road_list.append(_np_tree(road_mod.build_road(sc.road)))
            road_idx[i] = road_cache[rk]
        valid[i, : len(sc.vehicles)] = True
        for j in range(n_v):
            veh = sc.vehicles[min(j, len(sc.vehicles) - 1)]  # padding repeats the last vehicle
            model = sc.models[veh.model]
            mk = _key(model) + tkey
            if mk not in vp_cache:
                vp_cache[mk] = len(vp_list)
                vp_list.append(_np_tree(vehicle_params(model, tire or None)))
            vp_idx[i, j] = vp_cache[mk]
            drv["st"][i, j], drv["sv"][i, j], drv_lin["sl"][i, j] = build_mod._table_arrays(veh.steering, k, math.pi / 180.0)
            drv["vt"][i, j], drv["vv"][i, j], drv_lin["vl"][i, j] = build_mod._table_arrays(veh.tire_speed, k, 1.0)
            th = veh.orientation * math.pi / 180.0
            c, s = math.cos(th), math.sin(th)
            Q = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            F0[i, j] = Q @ np.asarray(model.eq_F, dtype=float)
            r0[i, j] = (veh.x, veh.y, model.eq_r3)
            v0[i, j] = (veh.speed * c, veh.speed * s, 0.0)

    def gather(trees, idx):
        stacked = jax.tree.map(lambda *xs: np.stack(xs), *trees)
        return jax.tree.map(lambda x: x[idx], stacked)

    f64 = partial(jnp.asarray, dtype=jnp.float64)
    vehicle = jax.tree.map(f64, gather(vp_list, vp_idx))
    driver = build_mod.DriverParams(f64(drv["st"]), f64(drv["sv"]), f64(drv_lin["sl"]),
                                    f64(drv["vt"]), f64(drv["vv"]), f64(drv_lin["vl"]))
    cnames = [f.name for f in dataclasses.fields(ContactParams)]
    contact = ContactParams(**{n: f64(np.array([float(it[2][n]) for it in items])) for n in cnames})
    road = None if flat else jax.tree.map(f64, gather(road_list, road_idx))
    seg = np.zeros((b, n_v), np.int32)
    s_par = np.zeros((b, n_v))
    if not flat:
        roads_v = jax.tree.map(lambda x: jnp.repeat(x, n_v, axis=0), road)
        sg, sp = jax.vmap(road_mod.initial_tracking)(roads_v, f64(r0.reshape(-1, 3)))
        seg, s_par = np.asarray(sg).reshape(b, n_v), np.asarray(sp).reshape(b, n_v)
    vs = VehicleState(r=f64(r0), F=f64(F0), v=f64(v0), W=f64(np.zeros((b, n_v, 3, 3))),
                      alpha_lag=f64(np.zeros((b, n_v, 4))), alpha_rate=f64(np.zeros((b, n_v, 4))),
                      road_seg=jnp.asarray(seg, jnp.int32), road_s=f64(s_par))
    n_pairs = len(pair_indices(n_v)[0])
    pairs = PairState(gamma=f64(np.zeros((b, n_pairs, 2))), warm=f64(np.zeros((b, n_pairs, CONTACT_WARM_SIZE))),
                      in_contact=jnp.zeros((b, n_pairs), bool), crush=f64(np.zeros((b, n_pairs))))
    barriers, bstate = build_mod.batch_barriers(scenarios, n_v)
    batch = build_mod.Batch(vehicle=vehicle, driver=driver, valid=jnp.asarray(valid), contact=contact, road=road,
                            barriers=barriers)
    return batch, build_mod.initial_state(vs, pairs, dt, bstate)


# ============================================================================ running


@partial(jax.jit, static_argnames=("settings", "tracker", "record"))
def _run_chunk(batch, state, settings: Settings, tracker: Outcomes, record: bool):
    res = simulate(batch, state, settings, tracker=tracker, record=record)
    return summarize_batch(batch, res.final, res.metrics, tracker), (res.samples if record else None)


def _sharding(n_devices: int | None = None):
    """NamedSharding of the batch axis over a 1-D mesh of the local devices (None for one)."""
    devs = jax.local_devices()[: n_devices or None]
    if len(devs) <= 1:
        return None, 1
    mesh = jax.sharding.Mesh(np.array(devs), ("batch",))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch")), len(devs)


def run_chunk(study: Study, items: list[tuple], chunk_size: int | None = None, sharding=None):
    """Simulate [(Scenario, tire, contact)] padded to `chunk_size` (repeating the last item):
    ({metric: numpy [n, ...]}, Samples as numpy [n, S, ...] or None, valid [n, V]) for the
    n = len(items) real rows."""
    n = len(items)
    size = chunk_size or n
    padded = list(items) + [items[-1]] * (size - n)
    batch, state = build_scenarios(padded, study.settings.dt, n_vehicles=study.n_vehicles)
    if sharding is not None:
        batch, state = jax.device_put((batch, state), sharding)
    record = study.outputs.trajectories
    metrics, samples = _run_chunk(batch, state, study.settings, study.tracker, record)
    metrics = {k: np.asarray(v)[:n] for k, v in jax.device_get(metrics).items()}
    if record:
        samples = jax.tree.map(lambda x: np.asarray(x)[:n], jax.device_get(samples))
    return metrics, samples, np.asarray(batch.valid)[:n]


def auto_batch_size(n_samples: int, n_devices: int = 1, backend: str | None = None) -> int:
    """Default chunk size: up to 4096 scenarios per device on GPU/TPU, 256 on CPU (where
    throughput grows with the chunk up to a few hundred: benchmarks/RESULTS.md, Studies)."""
    backend = backend or jax.default_backend()
    per_device = 256 if backend == "cpu" else 4096
    b = min(n_samples, per_device * n_devices)
    return int(math.ceil(b / n_devices) * n_devices)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """'i/N' (0 <= i < N) -> (i, N)."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)):
        raise StudyError(f"--shard: 'i/N' with 0 <= i < N expected, got {text!r}")
    return int(m.group(1)), int(m.group(2))


@dataclass
class SweepSummary:
    out: Path
    n_samples: int
    chunk_size: int
    n_chunks: int
    chunks_run: list[int]
    chunks_skipped: list[int]
    complete: bool  # every chunk present: scenarios.parquet written
    wall_time: float  # [s] of this call
    scenarios_run: int
    status_counts: dict = field(default_factory=dict)

    @property
    def scenarios_per_s(self) -> float:
        return self.scenarios_run / self.wall_time if self.wall_time > 0 else float("nan")


def _chunk_path(out: Path, k: int) -> Path:
    return out / "chunks" / f"chunk-{k:05d}.parquet"


def _chunk_meta(path: Path) -> dict:
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items()}


def _study_meta(study: Study, chunk_size: int, n: int) -> dict:
    return {
        "jaxmedusa.study": study.text,
        "jaxmedusa.study_spec": json.dumps(study.spec(), sort_keys=True, default=str),
        "jaxmedusa.study_name": study.name,
        "jaxmedusa.fingerprint": study.fingerprint(chunk_size),
        "jaxmedusa.chunk_size": str(chunk_size),
        "jaxmedusa.n_samples": str(n),
        "jaxmedusa.n_vehicles": str(study.n_vehicles),
        "jaxmedusa.parameters": json.dumps([p.name for p in study.parameters]),
    }


def _progress(enabled: bool, total: int):
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task):
            s = task.finished_speed or task.speed
            return Text("-- scen/s" if s is None else f"{s:,.1f} scen/s")

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), Rate(),
                    TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), disable=not enabled)


def run_study(study: Study, out: str | Path | None = None, batch: int | None = None,
              shard: tuple[int, int] | str | None = None, resume: bool = False, progress: bool = True,
              n_devices: int | None = None) -> SweepSummary:
    """Run a study (module docstring). out: default results/<name>. batch: chunk size
    (default study.batch, else auto_batch_size), rounded up to a multiple of the devices
    used. shard: (i, N) or 'i/N'. resume: keep chunks already written by the same study
    and chunk size (without it, old chunk files are removed first)."""
    out = Path(out) if out is not None else Path("results") / study.name
    shard = parse_shard(shard) if isinstance(shard, str) else shard
    sharding, n_dev = _sharding(n_devices)
    ids, cols = design(study)
    n = len(ids)
    size = batch or study.batch or auto_batch_size(n, n_dev)
    size = int(math.ceil(size / n_dev) * n_dev)
    n_chunks = math.ceil(n / size)
    mine = [k for k in range(n_chunks) if shard is None or k % shard[1] == shard[0]]
    meta = _study_meta(study, size, n)
    fp = meta["jaxmedusa.fingerprint"]

    if not resume:  # a fresh run: forget earlier results (all of them, or this shard's chunks)
        (out / "scenarios.parquet").unlink(missing_ok=True)
        if shard is None:
            shutil.rmtree(out / "chunks", ignore_errors=True)
            shutil.rmtree(out / "trajectories", ignore_errors=True)
        for k in mine:
            _chunk_path(out, k).unlink(missing_ok=True)
            shutil.rmtree(out / "trajectories" / f"chunk={k:05d}", ignore_errors=True)
    todo, skipped = [], []
    for k in mine:
        p = _chunk_path(out, k)
        if resume and p.exists():
            got = _chunk_meta(p).get("jaxmedusa.fingerprint")
            if got != fp:
                raise StudyError(f"{p}: written by a different study or chunk size (fingerprint {got}, "
                                 f"this run {fp}); rerun without --resume, or with the same study and --batch")
            skipped.append(k)
        else:
            todo.append(k)

    start = time.perf_counter()
    names = list(cols)
    done_rows = 0
    with _progress(progress, len(todo)) as bar:
        task = bar.add_task(study.name, total=sum(min(size, n - k * size) for k in todo))
        for k in todo:
            sl = slice(k * size, min(n, (k + 1) * size))
            items = scenarios_for(study, {c: cols[c][sl] for c in names}, ids[sl])
            metrics, samples, valid = run_chunk(study, items, size, sharding)
            if samples is not None:
                traj = io_mod.trajectory_table(samples, valid, ids=ids[sl])
                io_mod.write_table(traj, out / "trajectories" / f"chunk={k:05d}" / "part-0.parquet")
            table = io_mod.scenarios_table(ids[sl], {c: cols[c][sl] for c in names}, metrics,
                                           study.n_vehicles, study.outputs.metrics)
            io_mod.write_table(table, _chunk_path(out, k), io_mod.provenance({**meta, "jaxmedusa.chunk": str(k)}))
            done_rows += sl.stop - sl.start
            bar.update(task, advance=sl.stop - sl.start)
    wall = time.perf_counter() - start

    complete = all(_chunk_path(out, k).exists() for k in range(n_chunks))
    counts = {}
    if complete:
        table = finalize(out)
        counts = _status_counts(table)
    return SweepSummary(out=out, n_samples=n, chunk_size=size, n_chunks=n_chunks, chunks_run=todo,
                        chunks_skipped=skipped, complete=complete, wall_time=wall, scenarios_run=done_rows,
                        status_counts=counts)


def _status_counts(table: pa.Table) -> dict:
    names = table.column("status_name").to_pylist()
    return {s: names.count(s) for s in sorted(set(names))}


def _read_chunks(folder: Path) -> dict[int, Path]:
    return {int(p.stem.split("-")[1]): p for p in sorted((folder / "chunks").glob("chunk-*.parquet"))}


def finalize(out: str | Path) -> pa.Table:
    """Join <out>/chunks/*.parquet (all chunks of one study) into <out>/scenarios.parquet."""
    out = Path(out)
    chunks = _read_chunks(out)
    if not chunks:
        raise StudyError(f"{out}: no chunk files in {out / 'chunks'}")
    metas = {k: _chunk_meta(p) for k, p in chunks.items()}
    first = metas[min(metas)]
    fp = first["jaxmedusa.fingerprint"]
    bad = [k for k, m in metas.items() if m.get("jaxmedusa.fingerprint") != fp]
    if bad:
        raise StudyError(f"{out}: chunks {bad} belong to a different study or chunk size than chunk {min(metas)}")
    n, size = int(first["jaxmedusa.n_samples"]), int(first["jaxmedusa.chunk_size"])
    missing = [k for k in range(math.ceil(n / size)) if k not in chunks]
    if missing:
        raise StudyError(f"{out}: chunks {missing} are missing (run the remaining shards, or --resume)")
    table = pa.concat_tables([pq.read_table(chunks[k]) for k in sorted(chunks)])
    table = table.sort_by("sample_id")
    keep = {k: v for k, v in first.items() if k != "jaxmedusa.chunk"}
    table = table.replace_schema_metadata(None)
    io_mod.write_table(table, out / "scenarios.parquet", keep)
    return table


def merge_results(folders: list[str | Path], out: str | Path) -> pa.Table:
    """Join the chunk files of several shard output folders into `out` (chunks copied, plus
    trajectories partitions) and write out/scenarios.parquet. All must come from one study
    and chunk size; every chunk must be present in some folder."""
    out = Path(out)
    (out / "chunks").mkdir(parents=True, exist_ok=True)
    for f in folders:
        f = Path(f)
        if not (f / "chunks").is_dir():
            raise StudyError(f"{f}: not a sweep output folder (no chunks/)")
        if f.resolve() == out.resolve():
            continue
        for k, p in _read_chunks(f).items():
            dst = _chunk_path(out, k)
            tdir = f / "trajectories" / f"chunk={k:05d}"
            if tdir.is_dir():
                tdst = out / "trajectories" / tdir.name
                shutil.rmtree(tdst, ignore_errors=True)
                shutil.copytree(tdir, tdst)
            tmp = dst.with_name(f".{dst.name}.tmp")
            shutil.copyfile(p, tmp)
            os.replace(tmp, dst)
    return finalize(out)


def status_name(code: int) -> str:
    return STATUS_NAMES.get(int(code), f"code{int(code)}")
