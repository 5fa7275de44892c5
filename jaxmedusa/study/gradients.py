"""Gradient columns of a sweep: d(outcome)/d(study parameter) by forward mode, in the same run.

A study asks for them in `[outputs]`:

    gradients = { of = ["v2_delta_v", "v2_final_y"], wrt = ["lateral_offset", "speed_difference"] }

and the scenarios table gains one column per pair, `d_<of>_d_<wrt>` (for example
`d_v2_delta_v_d_speed_difference`), in the units of `of` per unit of `wrt`.

How: one tangent per `wrt` parameter, vmapped, through `jax.jvp` of the whole batched run
(simulate with the outcomes tracker, then the metrics): the primal metrics come out of the
same call, so a gradient sweep is one compiled run per chunk (cost ~ 1 + P tangent runs).
The tangent of the scenario -> arrays build (build.py; numpy, not traced) is the central
difference of the build at x +- h with h = 1e-6 * max(|x|, range width): every build map
a study parameter goes through is affine (positions, speeds, masses, inertias, contact and
tire parameters: exact up to round-off) or a closed-form smooth function (orientation's
cos/sin, Lame constants: truncation ~h^2 ~ 1e-12 relative), so the tangent entering the
simulation is exact to ~1e-9; the derivative THROUGH the simulation is forward mode
(docs/sensitivity.md: what these derivatives mean at contact onset and under MEDUSA's law).

Parameters that can be differentiated: those with a continuous distribution (uniform,
normal, truncnormal) or a list of numbers (`values = [...]`, `choice = [...]`: the derivative
at each listed point); not a vehicle's model number. Outputs: float per-vehicle metrics
(`GRADIENT_METRICS`; counts, flags and the PDOF clock hour have no derivative).
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.analysis.outcomes import VEHICLE_METRICS, Outcomes, summarize_batch
from jaxmedusa.build import build_batch
from jaxmedusa.contact.shapes import SHAPES
from jaxmedusa.contact.stage import shape_name
from jaxmedusa.core.params import Settings
from jaxmedusa.io.tables import METRIC_UNITS, metric_columns
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.study.perturb import scenario_for
from jaxmedusa.study.spec import Study

__all__ = ["GRADIENT_METRICS", "gradient_column", "output_columns", "check_gradients", "check_differentiable",
           "chunk_gradients", "run_batch_jvp", "is_differentiable", "parameter_unit", "gradient_units", "REL_STEP"]

# Metrics with a derivative (floats); counts, flags and clock hours are left out.
GRADIENT_METRICS = tuple(m for m in VEHICLE_METRICS
                         if m not in ("contact_episodes", "pdof_clock", "spin_out", "lane_departure",
                                       "collision_pdof_clock", "cdc"))
REL_STEP = 1e-6  # relative step of the build's central difference (module docstring)

# Units of the values a study path sets (for the unit metadata of gradient columns).
_PATH_UNITS = {"x": "m", "y": "m", "speed": "m/s", "heading": "deg", "orientation_deg": "deg",
               "orientation": "deg", "tire_speed": "m/s", "steering_deg": "deg", "mass": "kg", "ix": "kg m^2",
               "iy": "kg m^2", "iz": "kg m^2", "stiffness": "N/m", "damping": "N s/m", "contact_dims": "m",
               "l1": "m", "l2": "m", "track": "m", "c1": "N/m", "c2": "N/m", "d1": "N s/m", "d2": "N s/m",
               **{f"crush_a_{f}": "N/m" for f in ("front", "rear", "side")},
               **{f"crush_b_{f}": "N/m^2" for f in ("front", "rear", "side")},
               "mu": "-", "mu_barrier": "-", "v_slip": "m/s", "crush_rate": "s/m", "unload_exp": "-",
               "width_min": "m", "restitution_high": "-"}


def gradient_column(of: str, wrt: str) -> str:
    """Column name of d(of)/d(wrt)."""
    return f"d_{of}_d_{wrt}"


def output_columns(n_vehicles: int) -> dict[str, tuple[str, int, int | None]]:
    """{scenario-table column: (metric, vehicle 0-based, vector component or None)} of every
    differentiable per-vehicle metric column."""
    out = {}
    for m in GRADIENT_METRICS:
        cols = metric_columns(m, n_vehicles)
        if VEHICLE_METRICS[m] == ():
            out.update({c: (m, k, None) for k, c in enumerate(cols)})
        else:
            out.update({c: (m, j // 3, j % 3) for j, c in enumerate(cols)})
    return out


def parameter_unit(study: Study, name: str) -> str:
    """Unit of a study parameter's value, from the field its first path sets ('' if unknown;
    '-' for mode "scale", a factor)."""
    p = next(p for p in study.parameters if p.name == name)
    if p.mode == "scale":
        return "-"
    parts = p.targets[0][0].path.split(".")
    for part in reversed(parts):
        if part in _PATH_UNITS:
            return _PATH_UNITS[part]
    return ""


def check_gradients(of, wrt, parameters, n_vehicles: int, fail):
    """Validate `[outputs] gradients`: calls fail(key, message) naming the key and the valid
    names. parameters: the study's Parameter list."""
    valid_of = output_columns(n_vehicles)
    for name in of:
        if name not in valid_of:
            fail("outputs.gradients.of", f"unknown output {name!r}; valid: {', '.join(valid_of)}")
    cont = [p.name for p in parameters if is_differentiable(p)]
    for name in wrt:
        if name not in cont:
            fail("outputs.gradients.wrt", f"unknown or non-continuous parameter {name!r}; valid (parameters with a "
                 f"uniform, normal or truncnormal distribution, or a list of numbers): {', '.join(cont) or 'none'}")


def is_differentiable(p) -> bool:
    """Whether a study Parameter can be a gradient column's `wrt`: a continuous distribution,
    or a grid or choice of numbers (a numeric field evaluated at listed points: the derivative
    at each point); never a vehicle's model number (an index) or a list of names."""
    numeric = p.dist.kind in ("uniform", "normal", "truncnormal") or (
        p.dist.kind in ("values", "choice")
        and all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in p.dist.args))
    return numeric and all(t.kind != "vehicle_model" for t, _ in p.targets)


def check_differentiable(settings: Settings, n_vehicles: int, what: str, fail) -> None:
    """Calls fail("simulation.contact_geometry", message) when vehicles can touch and the
    run's contact shape has its own search (medusa_search): a branchy search of bounded
    loops whose answers flicker between attempts has no useful derivative, so `what`
    (gradient columns, a fit) would be computed from noise."""
    name = shape_name(settings)
    own_search = SHAPES.resolve(name, where="simulation.contact_geometry").geometry is not None
    if n_vehicles > 1 and settings.contact and own_search:
        fail("simulation.contact_geometry", f"{what} need derivatives through contact, and the shape {name!r} "
             "(MEDUSA's own search, the MEDUSA law's default) has none: name an analytic shape "
             "(contact_geometry = \"superellipsoid\"), or use the physical or crush law")


def _split(tree):
    """(float leaves, other leaves, treedef, float positions) of a pytree."""
    leaves, treedef = jax.tree.flatten(tree)
    fi = tuple(i for i, x in enumerate(leaves) if jnp.issubdtype(jnp.asarray(x).dtype, jnp.floating))
    return [leaves[i] for i in fi], [x for i, x in enumerate(leaves) if i not in fi], treedef, fi


def _join(fl, ol, treedef, fi):
    leaves, f, o = [], iter(fl), iter(ol)
    for i in range(len(fl) + len(ol)):
        leaves.append(next(f) if i in fi else next(o))
    return jax.tree.unflatten(treedef, leaves)


@partial(jax.jit, static_argnames=("treedef", "fi", "settings", "tracker"))
def run_batch_jvp(fl, ol, tangents, treedef, fi, settings: Settings, tracker: Outcomes):
    """Metrics of a built chunk and their forward-mode derivatives along P tangents.

    fl, ol: the float and other leaves of (Batch, SimState) (see _split); tangents: the
    float leaves' tangents with a leading axis [P]. Returns (metrics {name: [B, ...]},
    derivatives {name in GRADIENT_METRICS: [P, B, V, ...]})."""

    def run(fl_):
        batch, state = _join(fl_, ol, treedef, fi)
        res = simulate(batch, state, settings, tracker=tracker, record=False)
        m = summarize_batch(batch, res.final, res.metrics, tracker)
        return {k: m[k] for k in GRADIENT_METRICS if k in m}, m  # (a metric group the tracker left off: absent)

    def one(t):
        return jax.jvp(run, (fl,), (t,), has_aux=True)

    primal, tangent, metrics = jax.vmap(one, out_axes=(None, 0, None))(tangents)
    return metrics, tangent


def _steps(study: Study, columns: dict, wrt) -> dict:
    """Central-difference step of the build for each parameter in wrt, per row (N,)."""
    out = {}
    for name in wrt:
        p = next(p for p in study.parameters if p.name == name)
        lo, hi = p.dist.support()
        width = hi - lo if np.isfinite(hi - lo) else 0.0
        x = np.asarray(columns[name], float)
        out[name] = REL_STEP * np.maximum(np.maximum(np.abs(x), width), 1e-3)
    return out


def chunk_gradients(study: Study, items: list, columns: dict, size: int, sharding=None):
    """Simulate a chunk with gradient columns. items: [(Scenario, tire, contact)] of the n
    real rows; columns: {parameter: (n,)} their design values; size: the chunk size (rows
    padded by repeating the last). Returns (metrics {name: numpy [n, ...]}, valid [n, V],
    {gradient column: numpy (n,)})."""
    o = study.outputs
    of, wrt = list(o.gradients_of), list(o.gradients_wrt)
    n = len(items)
    pad = lambda seq: list(seq) + [seq[-1]] * (size - n)  # noqa: E731
    names = [p.name for p in study.parameters]

    def build(rows):
        rows = pad(rows)
        return build_batch([r[0] for r in rows], study.settings.dt, n_vehicles=study.n_vehicles,
                           tire=[r[1] for r in rows], contact=[r[2] for r in rows],
                           static_exponents=study.static_exponents)

    primal = build(items)
    fl, ol, treedef, fi = _split(primal)
    steps = _steps(study, columns, wrt)
    tangents = []
    for name in wrt:
        h = steps[name]
        side = []
        for sgn in (1.0, -1.0):
            rows = [scenario_for(study, {k: columns[k][i] + (sgn * h[i] if k == name else 0.0) for k in names},
                                 sample_id=i, check=False) for i in range(n)]
            side.append(_split(build(rows))[0])
        hp = np.asarray(pad(list(h)))
        tangents.append([(np.asarray(a) - np.asarray(b)) / (2.0 * hp.reshape((-1,) + (1,) * (np.ndim(a) - 1)))
                         for a, b in zip(*side)])
    stacked = [jnp.asarray(np.stack(ts)) for ts in zip(*tangents)]  # leaves [P, B, ...]
    if sharding is not None:
        spec = jax.sharding.PartitionSpec(None, *sharding.spec)
        stacked = jax.device_put(stacked, jax.sharding.NamedSharding(sharding.mesh, spec))
        fl, ol = jax.device_put((fl, ol), sharding)
    metrics, deriv = run_batch_jvp(fl, ol, stacked, treedef, fi, study.settings, study.tracker)
    metrics = {k: np.asarray(v)[:n] for k, v in jax.device_get(metrics).items()}
    deriv = {k: np.asarray(v)[:, :n] for k, v in jax.device_get(deriv).items()}
    cols = output_columns(study.n_vehicles)
    grads = {}
    for name in of:
        m, k, c = cols[name]
        for j, w in enumerate(wrt):
            d = deriv[m][j, :, k] if c is None else deriv[m][j, :, k, c]
            grads[gradient_column(name, w)] = np.asarray(d, np.float64)
    return metrics, np.asarray(primal[0].valid)[:n], grads


def gradient_units(study: Study, grads: dict | None) -> dict | None:
    """{column: (values, unit)} of gradient columns for io.tables.scenarios_table(extra=...)."""
    if not grads:
        return None
    cols = output_columns(study.n_vehicles)
    out = {}
    for of in study.outputs.gradients_of:
        for w in study.outputs.gradients_wrt:
            c = gradient_column(of, w)
            num, den = METRIC_UNITS.get(cols[of][0], ""), parameter_unit(study, w)
            out[c] = (grads[c], f"{num or '-'}/({den})" if " " in den else f"{num or '-'}/{den or '-'}")
    return out
