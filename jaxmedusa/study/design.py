"""Designs: the parameter values of every sample, reproducible from the sampler's seed.

SAMPLERS maps the names of `[sampler] kind` to unit-cube designs: "random" (numpy PCG64),
"lhs" and "sobol" (scipy.stats.qmc), and "grid" (the full factorial of each parameter's
levels, no unit design). Adding a sampler: a function (n, d, seed, scramble) -> (n, d)
points in [0, 1) and one SAMPLERS.register line.
"""
from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.stats import qmc

from jaxmedusa.core.registry import Registry
from jaxmedusa.study.spec import Study

__all__ = ["SAMPLERS", "SamplerKind", "unit_design", "design"]


@dataclass(frozen=True)
class SamplerKind:
    """unit(n, d, seed, scramble) -> (n, d) points in [0, 1); None for the full-factorial grid."""

    name: str
    unit: Callable | None


def _qmc(cls, d: int, seed: int, **kw):
    try:
        return cls(d, rng=seed, **kw)
    except TypeError:  # scipy < 1.15
        return cls(d, seed=seed, **kw)


def _random(n: int, d: int, seed: int, scramble: bool = True) -> np.ndarray:
    return np.random.default_rng(seed).random((n, d))


def _lhs(n: int, d: int, seed: int, scramble: bool = True) -> np.ndarray:
    return _qmc(qmc.LatinHypercube, d, seed, scramble=scramble).random(n)


def _sobol(n: int, d: int, seed: int, scramble: bool = True) -> np.ndarray:
    s = _qmc(qmc.Sobol, d, seed, scramble=scramble)
    m = int(round(math.log2(n))) if n > 0 else 0
    if 2**m == n:
        return s.random_base2(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "balance properties ... power of 2"
        return s.random(n)


SAMPLERS: Registry[SamplerKind] = Registry("sampler")
SAMPLERS.register("grid", SamplerKind("grid", None))  # full factorial of the levels
SAMPLERS.register("random", SamplerKind("random", _random))  # numpy PCG64
SAMPLERS.register("lhs", SamplerKind("lhs", _lhs))  # scipy.stats.qmc.LatinHypercube
SAMPLERS.register("sobol", SamplerKind("sobol", _sobol))  # scipy.stats.qmc.Sobol (n a power of 2 is best)


def unit_design(kind: str, n: int, d: int, seed: int, scramble: bool = True) -> np.ndarray:
    """(n, d) points in [0, 1) of the sampler `kind` (not "grid")."""
    sk = SAMPLERS.resolve(kind)
    if sk.unit is None:
        raise ValueError(f"sampler {kind!r} has no unit design")
    return sk.unit(n, d, seed, scramble)


def design(study: Study) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(sample ids (N,), {parameter name: values (N,)}) in sample-id order, reproducible from
    the sampler's seed. study.explicit: that design as given. Grid: full factorial, the first parameter varying slowest. Others:
    the sampled design (n rows) for each combination of the fixed lists (outer loop)."""
    ps = study.parameters
    s = study.sampler
    if study.explicit is not None:  # a given design matrix (e.g. SALib's), in its row order
        cols = {p.name: np.asarray(study.explicit.columns[p.name], float) for p in ps}
    elif SAMPLERS.resolve(s.kind).unit is None:  # the grid
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
