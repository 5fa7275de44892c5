"""The study specification: a validated Study and its parts (no file reading here).

A Study is a base scenario, static Settings, perturbed Parameters (a Distribution, a mode
and the Targets a sample sets), a Sampler and the Outputs wanted. `Study.spec()` is the
resolved study as plain data and `Study.fingerprint` its hash, which chunk files carry.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from jaxmedusa.analysis.outcomes import VEHICLE_METRICS, Outcomes
from jaxmedusa.core.params import CONTACT_DEFAULTS, SHAPE_EXPONENTS, Settings
from jaxmedusa.core.scenario import Scenario
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.io.tables import metric_columns

__all__ = ["Study", "Parameter", "Distribution", "Target", "Sampler", "Outputs", "StudyError", "METRIC_GROUPS",
           "FORMAT_VERSION", "check_contact", "ExplicitDesign"]

StudyError = MedusaInputError  # study files fail with the same error class as scenario files

FORMAT_VERSION = 1

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
    "damage": ("c1", "c2", "c3", "c4", "c5", "c6", "damage_width", "damage_offset", "crash3_energy",
               "collision_delta_v", "collision_pdof_clock", "cdc"),
    "articulation": ("max_articulation", "jackknife", "sway_decay", "sway_peaks"),  # towed vehicles (docs/trailers.md)
    "rest": ("rest_x", "rest_y", "rest_heading", "rest_time", "distance", "skid_length"),  # analysis/rest.py
}
assert set(itertools.chain(*METRIC_GROUPS.values())) == set(VEHICLE_METRICS)


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
    tire | contact | road | zone | hitch (a towed vehicle's hitch or kingpin coordinate).
    index: 0-based numbers (vehicles/models/knots/points)."""

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
    sway_start: float = 2.5  # [s], the sway decay rate's peaks after it (analysis/sway.py)
    # forward-mode gradient columns d_<of>_d_<wrt> (study/gradients.py): scenario-table
    # columns `of` (e.g. "v2_delta_v") and parameter names `wrt`
    gradients_of: tuple[str, ...] = ()
    gradients_wrt: tuple[str, ...] = ()
    sensitivity: tuple[str, ...] = ()  # columns `jaxmedusa sensitivity` analyses (default: all that vary)


@dataclass(frozen=True, eq=False)
class ExplicitDesign:
    """A design given as a matrix instead of the sampler's draws (e.g. a SALib Saltelli or
    Morris design, analysis/sensitivity.py). label: what made it (part of the fingerprint);
    columns: {parameter name: (N,) values}."""

    label: str
    columns: dict

    def digest(self) -> str:
        h = hashlib.sha256(self.label.encode())
        for k in sorted(self.columns):
            h.update(k.encode())
            h.update(np.ascontiguousarray(self.columns[k], dtype=np.float64).tobytes())
        return h.hexdigest()[:20]


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
    explicit: ExplicitDesign | None = None  # run this design instead of the sampler's (design.py)
    # [simulation] precision: "float64" or "float32" (study/precision.py, checked against
    # float64 on the base scenario at the start); precision_margin scales that check's tolerances
    precision: str = "float64"
    precision_margin: float = 1.0
    # [simulation] time_loop: "auto", "whole" or "dispatched" (study/loop_choice.py)
    time_loop: str = "auto"

    @property
    def n_vehicles(self) -> int:
        return len(self.base.vehicles)

    @property
    def tracker(self) -> Outcomes:
        """The outcome tracker of the study's metrics: the damage and rest groups' in-run
        trackers only when one of their metrics is asked for (they cost nothing otherwise)."""
        o = self.outputs
        columns = set(o.gradients_of)  # a gradient column may name a metric the table leaves out
        asked = set(o.metrics) | {m for m in VEHICLE_METRICS if columns & set(metric_columns(m, self.n_vehicles))}
        damage, rest = (bool(asked & set(METRIC_GROUPS[g])) for g in ("damage", "rest"))
        return Outcomes(lane_width=o.lane_width, spin_threshold_deg=o.spin_threshold_deg, episode_gap=o.episode_gap,
                        sway_start=o.sway_start, damage=damage, rest=rest)

    @property
    def static_exponents(self) -> bool:
        """Whether its chunks compile the squareness exponents in (build.build_batch): yes
        unless a parameter perturbs them, whose chunks would otherwise compile anew
        whenever a chunk's exponents happened to agree."""
        return not any(t.kind == "contact" and t.name in SHAPE_EXPONENTS
                       for p in self.parameters for t, _ in p.targets)

    def spec(self) -> dict:
        """The resolved study as plain JSON-able data (what the fingerprint hashes)."""
        return {
            "format": FORMAT_VERSION,
            "name": self.name,
            "base": dataclasses.asdict(self.base),
            # (time_loop: the study's own field below; the chunks' settings get the plan's choice)
            "settings": {k: v for k, v in dataclasses.asdict(self.settings).items() if k != "time_loop"},
            "tire": dict(sorted(self.tire.items())),
            "contact": dict(sorted(self.contact.items())),
            "sampler": dataclasses.asdict(self.sampler),
            "parameters": {p.name: p.as_dict() for p in self.parameters},
            "outputs": dataclasses.asdict(self.outputs),
            **({"design": {"label": self.explicit.label, "digest": self.explicit.digest()}} if self.explicit else {}),
            # only where not the default: a float64 study's spec and fingerprint are unchanged
            **({"precision": self.precision} if self.precision != "float64" else {}),
            **({"precision_margin": self.precision_margin} if self.precision_margin != 1.0 else {}),
            **({"time_loop": self.time_loop} if self.time_loop != "auto" else {}),
        }

    def fingerprint(self, chunk_size: int) -> str:
        """Hash of the resolved spec and the chunk size: chunks with equal fingerprints are
        interchangeable."""
        blob = json.dumps({"spec": self.spec(), "chunk_size": chunk_size}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


def check_contact(c: dict, fail):
    """Calls fail(key, message) for each contact parameter out of its range."""
    for k in ("p1", "p2", "stiffness", "damping"):
        if k in c and not c[k] >= 0.0:
            fail(k, f"{c[k]:g} must be >= 0")
    for k in ("eps1", "eps2"):
        if k in c and not 0.0 < c[k] <= 2.0:
            fail(k, f"squareness exponent {c[k]:g} must lie in (0, 2] (convex superellipsoid)")
    for k in ("mu", "mu_barrier", "crush_rate", "width_min"):  # the crush law (docs/crash-law.md)
        if k in c and not c[k] >= 0.0:
            fail(k, f"{c[k]:g} must be >= 0")
    if "v_slip" in c and not c["v_slip"] > 0.0:
        fail("v_slip", f"{c['v_slip']:g} must be > 0 [m/s] (the friction regularisation speed)")
    if "unload_exp" in c and not c["unload_exp"] >= 1.0:
        fail("unload_exp", f"{c['unload_exp']:g} must be >= 1 (unloading below the loading line)")
    if "restitution_high" in c and not 0.0 <= c["restitution_high"] < 1.0:
        fail("restitution_high", f"{c['restitution_high']:g} must lie in [0, 1)")
