"""The inference file: a fit file (fit/spec.py) whose unknowns carry priors.

    from jaxmedusa.infer import load_infer
    spec = load_infer("studies/infer_offset_brake.toml")

Everything of the fit file stays ([scenario], [simulation], [contact], [tire],
[[observations]] with their sigma, [fit]); each unknown adds a `prior` (priors.py), and
`initial` becomes optional (default: the prior's median); bounds, if given, are the fit's
only (the sampler's support is the prior's):

    [unknowns.v2_speed]
    path = "vehicles.2.speed"
    prior = { normal = [20.0, 3.0] }      # normal, uniform, lognormal, truncated_normal

Nuisance parameters are unknowns too (sampled, reported, marginalised by looking only at
the others). Besides the fit's paths, these model paths are accepted here (model.py):
    tires.friction             peak tire-road friction of every tire at its rated load [-]
    vehicles.N.crush_scale     factor on vehicle N's crush-law Campbell coefficients [-]
    vehicles.N.mass            vehicle N's mass [kg], its inertia scaled with it (model.py)

    [infer]                               # all optional
    chains = 8                            # NUTS chains, one vmapped batch
    draws = 500                           # kept draws per chain
    warmup = 500                          # window-adaptation steps per chain
    seed = 0
    likelihood = "normal"                 # or "student_t": residual/sigma ~ t(nu)
    nu = 4.0                              # degrees of freedom of the Student-t
    gradient = "auto"                     # "forward" | "reverse" | "auto" (posterior.py's rule)
    target_accept = 0.8                   # the step-size adaptation's target
    mass_matrix = "dense"                 # or "diagonal"; default dense for <= DENSE_MAX_UNKNOWNS
                                          #   unknowns (10), diagonal above (docs/inference.md)
    max_tree_depth = 8                    # NUTS doublings per draw at most
    start = "prior"                       # "prior": chains start near the initial values;
                                          #   "fit": from `jaxmedusa fit`'s answer, run first

Errors exit with code 2 and name the file and the key: an unknown family, a non-positive
scale, a start value outside the prior's support, an unknown without a prior (all such
unknowns are named).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from jaxmedusa.fit.spec import FitError, FitSpec, fit_from_dict
from jaxmedusa.infer.priors import Prior, parse_prior
from jaxmedusa.io.validation import InputErrors, read_toml

__all__ = ["InferSpec", "InferOptions", "Nuisance", "load_infer", "infer_from_dict", "NUISANCE_PATHS",
           "DENSE_MAX_UNKNOWNS", "observed_at"]

_INFER_KEYS = ("chains", "draws", "warmup", "seed", "likelihood", "nu", "gradient", "target_accept",
               "max_tree_depth", "start", "mass_matrix")
LIKELIHOODS = ("normal", "student_t")
GRADIENTS = ("auto", "forward", "reverse")
STARTS = ("prior", "fit")
MASS_MATRICES = ("dense", "diagonal")
# A dense inverse mass matrix by default up to this many unknowns: the window adaptation
# estimates n (n + 1) / 2 covariances from its slow windows' draws (a few hundred), which is
# enough for ten; above, a diagonal one (docs/inference.md, "Method").
DENSE_MAX_UNKNOWNS = 10
NUISANCE_PATHS = ("tires.friction", "vehicles.N.crush_scale", "vehicles.N.mass")
_PER_VEHICLE = re.compile(r"^vehicles\.(\d+)\.(crush_scale|mass)$")


@dataclass(frozen=True)
class InferOptions:
    chains: int = 8
    draws: int = 500
    warmup: int = 500
    seed: int = 0
    likelihood: str = "normal"
    nu: float = 4.0
    gradient: str = "auto"
    target_accept: float = 0.8
    max_tree_depth: int = 8
    start: str = "prior"
    mass_matrix: str | None = None  # "dense" | "diagonal"; None: by DENSE_MAX_UNKNOWNS (InferSpec.dense_mass)


@dataclass(frozen=True)
class Nuisance:
    """A model parameter the fit cannot set (model.py sets it in the built arrays)."""

    name: str
    path: str
    kind: str  # "friction" | "crush_scale" | "mass"
    vehicle: int | None  # 0-based, for crush_scale and mass
    initial: float


@dataclass
class InferSpec:
    """A validated inference file: the fit, then one prior per parameter, in the order
    fit.unknowns + nuisance (the order of every parameter vector in infer/)."""

    fit: FitSpec
    nuisance: list[Nuisance]
    priors: list[Prior]
    options: InferOptions = field(default_factory=InferOptions)

    @property
    def names(self) -> list[str]:
        return [u.name for u in self.fit.unknowns] + [n.name for n in self.nuisance]

    @property
    def paths(self) -> list[str]:
        return [u.path for u in self.fit.unknowns] + [n.path for n in self.nuisance]

    @property
    def initial(self) -> list[float]:
        return [u.initial for u in self.fit.unknowns] + [n.initial for n in self.nuisance]

    @property
    def name(self) -> str:
        return self.fit.name

    @property
    def dense_mass(self) -> bool:
        """A dense inverse mass matrix: the file's [infer] mass_matrix, else n <= DENSE_MAX_UNKNOWNS."""
        if self.options.mass_matrix is None:
            return len(self.priors) <= DENSE_MAX_UNKNOWNS
        return self.options.mass_matrix == "dense"

    @property
    def source(self) -> str:
        return self.fit.source


def observed_at(spec: InferSpec, end_time: float) -> InferSpec:
    """The same inference with the run and every observation moved to end_time [s] (the
    benchmarks' way to time a shorter simulation of the same problem)."""
    fit = spec.fit
    obs = [replace(o, time=end_time) for o in fit.observations]
    return replace(spec, fit=replace(fit, settings=replace(fit.settings, end_time=end_time), observations=obs))


def load_infer(path: str | Path, options: dict | None = None) -> InferSpec:
    """Read and validate an inference file; `options` (e.g. the CLI's chains/draws/warmup)
    override its [infer] table. Raises FitError (exit code 2) naming the file and the key."""
    path = Path(path)
    data, _ = read_toml(path, FitError)
    return infer_from_dict(data, base_dir=path.parent, source=str(path), default_name=path.stem, options=options)


def infer_from_dict(data: dict, base_dir: str | Path = ".", source: str = "<infer>", default_name: str = "infer",
                    options: dict | None = None) -> InferSpec:
    err = InputErrors(source)
    data = copy.deepcopy(data)
    opts = _options({**err.table(data.pop("infer", {}), "infer"), **(options or {})}, err)
    unknowns = err.table(data.get("unknowns", {}), "unknowns")
    missing = [n for n, u in unknowns.items() if not (isinstance(u, dict) and "prior" in u)]
    if missing:
        err.fail("unknowns", f"no prior for {', '.join(missing)}: inference needs a prior for every unknown, e.g. "
                 "prior = { normal = [mu, sd] } (also uniform = [lo, hi], lognormal = [mu, sigma], "
                 "truncated_normal = [mu, sd, lo, hi])")
    priors, nuisance, fitted = {}, [], {}
    for name, u in unknowns.items():
        where = f"unknowns.{name}"
        prior = parse_prior(u.pop("prior"), f"{where}.prior", err)
        priors[name] = prior
        if "initial" not in u:
            u["initial"] = prior.median()
        init = err.number(u["initial"], f"{where}.initial")
        if not prior.contains(init):
            lo, hi = prior.support
            err.fail(f"{where}.prior", f"{prior.describe()} has no support at the start value {init:g} "
                     f"(support ({lo:g}, {hi:g}); unknowns.{name}.initial)")
        path = u.get("path")
        m = _PER_VEHICLE.match(path) if isinstance(path, str) else None
        if path == "tires.friction" or m:
            extra = set(u) - {"path", "initial"}
            if extra:
                err.fail(f"{where}.{sorted(extra)[0]}", "a model parameter takes path, prior and initial only")
            vehicle = int(m.group(1)) - 1 if m else None
            if init <= 0:
                err.fail(f"{where}.initial", f"{init:g} must be > 0")
            nuisance.append(Nuisance(name, path, m.group(2) if m else "friction", vehicle, init))
        else:
            fitted[name] = u
    data["unknowns"] = fitted
    fit = fit_from_dict(data, base_dir=base_dir, source=source, default_name=default_name)
    n_veh = len(fit.base.vehicles)
    for n in nuisance:
        if n.vehicle is not None and not 0 <= n.vehicle < n_veh:
            err.fail(f"unknowns.{n.name}.path", f"vehicle {n.vehicle + 1} of '{n.path}' is not one of 1..{n_veh}")
    ordered = [priors[u.name] for u in fit.unknowns] + [priors[n.name] for n in nuisance]
    return InferSpec(fit=fit, nuisance=nuisance, priors=ordered, options=opts)


def _options(t: dict, err: InputErrors) -> InferOptions:
    err.keys(t, _INFER_KEYS, "infer")
    vals = {}
    for key, low in (("chains", 1), ("draws", 1), ("warmup", 0), ("seed", 0), ("max_tree_depth", 1)):
        if key in t:
            v = t[key]
            if not isinstance(v, int) or isinstance(v, bool) or v < low:
                err.fail(f"infer.{key}", f"a whole number >= {low} expected, got {v!r}")
            vals[key] = v
    for key, allowed in (("likelihood", LIKELIHOODS), ("gradient", GRADIENTS), ("start", STARTS),
                         ("mass_matrix", MASS_MATRICES)):
        if key in t:
            if t[key] not in allowed:
                err.fail(f"infer.{key}", f"one of {', '.join(allowed)} expected, got {t[key]!r}")
            vals[key] = t[key]
    if "nu" in t:
        nu = err.number(t["nu"], "infer.nu")
        if not nu > 0:
            err.fail("infer.nu", f"degrees of freedom {nu:g} must be > 0")
        vals["nu"] = nu
    if "target_accept" in t:
        a = err.number(t["target_accept"], "infer.target_accept")
        if not 0 < a < 1:
            err.fail("infer.target_accept", f"{a:g} must lie in (0, 1)")
        vals["target_accept"] = a
    return InferOptions(**vals)
