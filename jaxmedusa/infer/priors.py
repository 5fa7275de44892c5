"""Prior distributions of the unknowns, and the map of each onto the whole real line.

    prior = parse_prior({"normal": [20.0, 3.0]}, "unknowns.v2_speed.prior", err)
    prior.log_pdf(x)          # log density [1/unit] (jnp, differentiable)
    x = prior.to_x(u)         # unconstrained u -> x in the support; log |dx/du| by log_jacobian(u)

Families (the key of the one-entry `prior` table of an unknown, parameters in the unknown's
units):
    normal = [mu, sd]                      support R
    uniform = [lo, hi]                     support (lo, hi)
    lognormal = [mu, sigma]                support (0, inf); log x ~ N(mu, sigma)
    truncated_normal = [mu, sd, lo, hi]    support (lo, hi); lo or hi may be -inf/inf ("-inf", "inf")

NUTS moves in u: x = u (normal), x = exp(u) (lognormal), x = lo + (hi - lo) sigmoid(u) on
an interval (uniform, truncated normal; half-lines x = lo + exp(u), x = hi - exp(u)). The
densities are scipy.stats' (tests/infer compare them); the draws for simulation-based
calibration come from scipy.stats too.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

__all__ = ["Prior", "FAMILIES", "parse_prior"]

# family -> parameter names, in the file's order
FAMILIES = {"normal": ("mu", "sd"), "uniform": ("lo", "hi"), "lognormal": ("mu", "sigma"),
            "truncated_normal": ("mu", "sd", "lo", "hi")}
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True)
class Prior:
    """One unknown's prior: `family` (a FAMILIES key) and its parameters (FAMILIES order)."""

    family: str
    params: tuple[float, ...]

    # ---------------------------------------------------------------- support
    @property
    def support(self) -> tuple[float, float]:
        f, p = self.family, self.params
        if f == "uniform":
            return p[0], p[1]
        if f == "truncated_normal":
            return p[2], p[3]
        if f == "lognormal":
            return 0.0, math.inf
        return -math.inf, math.inf

    def contains(self, x: float) -> bool:
        """x strictly inside the support (where the density is positive and the map finite)."""
        lo, hi = self.support
        return lo < x < hi

    def describe(self) -> str:
        return f"{self.family}({', '.join(f'{v:g}' for v in self.params)})"

    # ---------------------------------------------------------------- density
    def log_pdf(self, x):
        """log p(x) (jnp; -inf outside the support is never reached: NUTS moves in u)."""
        f, p = self.family, self.params
        if f == "normal":
            mu, sd = p
            return -0.5 * ((x - mu) / sd) ** 2 - math.log(sd) - _LOG_SQRT_2PI
        if f == "uniform":
            return jnp.full_like(x, -math.log(p[1] - p[0]))
        if f == "lognormal":
            mu, s = p
            lx = jnp.log(x)
            return -0.5 * ((lx - mu) / s) ** 2 - math.log(s) - _LOG_SQRT_2PI - lx
        mu, sd, lo, hi = p  # truncated normal: the normal renormalised on (lo, hi)
        mass = float(stats.norm.cdf((hi - mu) / sd) - stats.norm.cdf((lo - mu) / sd))
        return -0.5 * ((x - mu) / sd) ** 2 - math.log(sd) - _LOG_SQRT_2PI - math.log(mass)

    # ---------------------------------------------------------------- unconstrained map
    def to_x(self, u):
        lo, hi = self.support
        if self.family == "lognormal":
            return jnp.exp(u)
        if math.isfinite(lo) and math.isfinite(hi):
            return lo + (hi - lo) * jax.nn.sigmoid(u)
        if math.isfinite(lo):
            return lo + jnp.exp(u)
        if math.isfinite(hi):
            return hi - jnp.exp(u)
        return u

    def log_jacobian(self, u):
        """log |dx/du| of to_x."""
        lo, hi = self.support
        if self.family == "lognormal" or (math.isfinite(lo) != math.isfinite(hi)):
            return u
        if math.isfinite(lo):
            return math.log(hi - lo) + jax.nn.log_sigmoid(u) + jax.nn.log_sigmoid(-u)
        return jnp.zeros_like(u)

    def to_u(self, x) -> np.ndarray:
        """Inverse of to_x (numpy; x inside the support)."""
        x = np.asarray(x, float)
        lo, hi = self.support
        if self.family == "lognormal":
            return np.log(x)
        if math.isfinite(lo) and math.isfinite(hi):
            s = np.clip((x - lo) / (hi - lo), 1e-12, 1 - 1e-12)
            return np.log(s) - np.log1p(-s)
        if math.isfinite(lo):
            return np.log(x - lo)
        if math.isfinite(hi):
            return np.log(hi - x)
        return x

    # ---------------------------------------------------------------- scipy
    def scipy(self):
        """The same distribution as a frozen scipy.stats one (draws, quantiles, tests)."""
        f, p = self.family, self.params
        if f == "normal":
            return stats.norm(p[0], p[1])
        if f == "uniform":
            return stats.uniform(p[0], p[1] - p[0])
        if f == "lognormal":
            return stats.lognorm(s=p[1], scale=math.exp(p[0]))
        mu, sd, lo, hi = p
        return stats.truncnorm((lo - mu) / sd, (hi - mu) / sd, loc=mu, scale=sd)

    def median(self) -> float:
        return float(self.scipy().median())


def _bound(v, key: str, err) -> float:
    """A number, or "-inf"/"inf" (TOML has inf too) for a truncated normal's open side."""
    if isinstance(v, str) and v.strip().lower() in ("inf", "+inf", "-inf"):
        return -math.inf if v.strip().startswith("-") else math.inf
    if isinstance(v, float) and math.isinf(v):
        return v
    return err.number(v, key)


def parse_prior(table, where: str, err) -> Prior:
    """A validated Prior from `prior = { family = [params] }`; errors (exit code 2) name
    `where` (e.g. "unknowns.v2_speed.prior") and the family's key."""
    table = err.table(table, where)
    if len(table) != 1:
        err.fail(where, f"one family expected (one of {', '.join(FAMILIES)}), got {list(table) or 'none'}")
    (family, raw), = table.items()
    key = f"{where}.{family}"
    if family not in FAMILIES:
        err.fail(key, f"unknown prior family '{family}'; known: {', '.join(FAMILIES)}")
    names = FAMILIES[family]
    raw = err.array(raw, key)
    if len(raw) != len(names):
        err.fail(key, f"[{', '.join(names)}] expected ({len(names)} numbers), got {raw!r}")
    if family == "truncated_normal":
        vals = [err.number(raw[0], key), err.number(raw[1], key), _bound(raw[2], key, err), _bound(raw[3], key, err)]
    else:
        vals = [err.number(v, key) for v in raw]
    if family in ("normal", "lognormal", "truncated_normal"):
        scale_name, scale = names[1], vals[1]
        if not scale > 0:
            err.fail(key, f"scale {scale_name} = {scale:g} must be > 0")
    if family in ("uniform", "truncated_normal"):
        lo, hi = vals[-2], vals[-1]
        if not lo < hi:
            err.fail(key, f"lower bound {lo:g} must be below upper bound {hi:g}")
    prior = Prior(family, tuple(float(v) for v in vals))
    if family == "truncated_normal":
        mu, sd, lo, hi = prior.params
        if not stats.norm.cdf((hi - mu) / sd) - stats.norm.cdf((lo - mu) / sd) > 1e-12:
            err.fail(key, f"(lo, hi) = ({lo:g}, {hi:g}) holds no mass of normal({mu:g}, {sd:g})")
    return prior
