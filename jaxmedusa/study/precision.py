"""Single precision for studies: `precision = "float32"` in a study's [simulation].

    [simulation]
    precision = "float32"        # default "float64"
    precision_margin = 1.0       # optional factor on the derived tolerances (below)

A float32 study runs its whole scenario batch (parameters, state, road and driver tables,
the outcome tracker) in float32 while the process keeps float64 on: `computing_in("float32")`
traces and runs under `jax.enable_x64(False)`, so every array the step creates (a Python or
numpy float64 constant, `jnp.eye(3)`, `jnp.zeros(n)`) is float32 by construction, in every
module, including ones written later; `to_precision` casts the built batch and state.

Why a context and not float32-clean code: under x64 every literal without a dtype is
float64, and one such constant anywhere in the step promotes the loop carry (the first
float32 run of the offset study failed on ~20 carried metrics). The context makes the
float32 program free of float64 by construction; tests/study/test_precision.py checks the
compiled outputs' dtypes and that the program's jaxpr holds no 64-bit value.

JAX 0.10.2 reuses a function's traced constants across the x64 switch: a function traced
with x64 on and traced again with it off kept an int64 constant (a numpy index table of
analysis/damage.py) and failed, and the reverse would put float32 constants into a float64
program silently. `computing_in` therefore clears JAX's tracing caches whenever it switches
the precision, on entry and on exit (`_clear_tracing_caches`): a float64 program traced
after a float32 study is traced afresh, and one compiled before it is called again from
JAX's executable cache without recompiling (keyed by the argument types and the x64 flag);
either gives the same bits as before the float32 study (the test checks this).

The check (`check_base`), run at the start of every float32 study: the study's own base
scenario (padded to the chunk size, so that the float32 program compiled here is the one
the sweep runs) is simulated in float64 and in float32, and every outcome metric is
compared with a tolerance derived from float32's unit round-off u = 2^-24 = 6.0e-8 (eps/2):

    tolerance = margin x min(N x u x S, cap)     (times: min(N u T, dt) + dt)

N the steps the base run attempted, S the scale of the metric's kind in the float64 run
(KINDS below: positions by the largest position, speeds by the largest speed, angles by
1 rad or more, energies by the start energy, forces and decelerations by their own value,
times by end_time). N u S bounds the round-off of a sum of N terms of magnitude up to S
(Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 4.2: recursive
summation), which is what a run that does not amplify round-off accumulates: the state is
such a sum, each step rounding it once. Counts, flags, codes and the status must agree
exactly. The cap (CAPS_ABS, CAPS_REL) is about the error the default time step already
carries: with many steps the bound grows past what a study can afford (60,000 steps of
5e-5 s over 66 m: 0.24 m). A metric beyond its tolerance means the run amplifies round-off
(a contact that switches on or off a step earlier, a chaotic collision) or takes too many
steps for float32: the study is refused (StudyError, exit 2) with the metric and its
figures (docs/numerics.md, "Single precision", has the measurements). The figures (max abs/rel difference and tolerance
per metric) go into the Parquet tables' metadata (`jaxmedusa.precision_check`).
"""
from __future__ import annotations

import contextlib
import json
import math
import warnings

import jax
import numpy as np

from jaxmedusa.study.spec import Study, StudyError

__all__ = ["PRECISIONS", "computing_in", "to_precision", "check_base", "compare", "tolerances", "KINDS",
           "UNIT_ROUNDOFF"]

PRECISIONS = ("float64", "float32")
UNIT_ROUNDOFF = 2.0 ** -24  # float32's u (half its machine epsilon 1.19e-7)
_RAD_DEG = 180.0 / math.pi

# metric -> kind (the scale S of its tolerance); a metric not listed is compared relative to
# its own value (at least 1). "exact": counts, flags, codes and the status.
KINDS = {
    **dict.fromkeys(("final_x", "final_y", "final_z", "rest_x", "rest_y", "distance", "skid_length",
                     "max_lateral_excursion"), "position"),
    **dict.fromkeys(("max_crush", "residual_crush", "max_penetration", "c1", "c2", "c3", "c4", "c5", "c6",
                     "damage_width", "damage_offset"), "crush"),
    **dict.fromkeys(("final_vx", "final_vy", "final_vz", "final_speed", "delta_v", "delta_v_vec", "delta_v_body",
                     "collision_delta_v", "ees"), "speed"),
    **dict.fromkeys(("final_heading", "max_heading_change", "rest_heading", "pdof_deg", "max_articulation"), "angle"),
    **dict.fromkeys(("final_yaw_rate", "sway_decay"), "rate"),
    **dict.fromkeys(("end_time", "rest_time", "first_contact_time", "last_contact_time", "contact_duration",
                     "pulse_duration"), "time"),
    **dict.fromkeys(("energy_start", "energy_end", "absorbed_energy", "crash3_energy"), "energy"),
    **dict.fromkeys(("peak_contact_force", "peak_decel_g", "mean_decel_g", "restitution"), "own"),
    **dict.fromkeys(("status", "steps", "rejected_steps", "contact_steps", "contact_runs", "episodes",
                     "contact_episodes", "pdof_clock", "collision_pdof_clock", "cdc", "spin_out", "lane_departure",
                     "jackknife", "sway_peaks"), "exact"),
}


# The most a float32 run may differ from float64 whatever its round-off bound: about the
# error the default step already carries (docs/numerics.md, "The crush law": 4e-4 s against
# 5e-5 s moved final x and y by 2.2 and 6.5 mm, the heading by 0.009 deg, delta-V by
# 0.055 %), so that float32 never adds more than the time step does. Absolute per kind
# (SI units; angles in degrees as in the tables), or relative to the kind's scale S.
CAPS_ABS = {"position": 5e-3, "crush": 1e-3, "speed": 5e-3, "angle": 0.01, "rate": 0.1}
CAPS_REL = {"energy": 1e-4, "own": 1e-3, "other": 1e-3}


def _current() -> str:
    return "float64" if jax.config.jax_enable_x64 else "float32"


@contextlib.contextmanager
def computing_in(precision: str):
    """Trace and run in `precision` within the block; a no-op when it is already the one in
    force. A switch clears JAX's tracing caches on entry and on exit (module docstring)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == _current():
        yield
        return
    _clear_tracing_caches()
    try:
        with warnings.catch_warnings(), jax.enable_x64(precision == "float64"):
            # jnp.float64(...) and astype(float64) in the code: float32 here, by intent
            warnings.filterwarnings("ignore", message="Explicitly requested dtype", category=UserWarning)
            yield
    finally:
        _clear_tracing_caches()


def _clear_tracing_caches():
    """JAX's tracing (staging) caches, where the stale constants live. `jax.clear_caches()`
    would also drop every compiled executable, so that each float64 program of the process
    (a test suite's) compiled again after a float32 study: measured 6.3 s against 0.006 s
    for a small study's run. The staging caches alone are a private JAX function: where it
    is missing, everything is cleared."""
    try:
        from jax._src import util
        util.clear_all_caches()
    except (ImportError, AttributeError):
        jax.clear_caches()


def to_precision(tree, precision: str):
    """`tree` with its floating leaves as numpy arrays of `precision` (and, for float32, its
    64-bit integers as 32-bit: the canonical types with x64 off). float64 returns it as is."""
    if precision == "float64":
        return tree

    def cast(x):
        a = np.asarray(x)
        if np.issubdtype(a.dtype, np.floating):
            return a.astype(np.float32)
        if a.dtype == np.int64:
            return a.astype(np.int32)
        if a.dtype == np.uint64:
            return a.astype(np.uint32)
        return a
    return jax.tree.map(cast, tree)


def tolerances(ref: dict, steps: int, end_time: float, dt: float, margin: float = 1.0) -> dict:
    """{metric: (kind, tolerance)} for the metrics of a float64 run `ref` {name: array}
    (module docstring). steps: N, the steps the run attempted."""
    def biggest(kind):
        vals = [np.abs(np.asarray(ref[k], float)) for k, c in KINDS.items() if c == kind and k in ref]
        vals = [v[np.isfinite(v)] for v in vals]
        return max((float(v.max()) for v in vals if v.size), default=0.0)

    nu = steps * UNIT_ROUNDOFF
    scale = {"position": biggest("position"), "crush": biggest("crush"), "speed": biggest("speed"),
             "angle": max(_RAD_DEG, biggest("angle")), "rate": max(_RAD_DEG, biggest("rate")),
             "time": end_time, "energy": biggest("energy")}
    out = {}
    for name, value in ref.items():
        kind = KINDS.get(name, "other")
        if kind == "exact":
            out[name] = (kind, 0.0)
            continue
        if kind in ("own", "other"):
            v = np.abs(np.asarray(value, float))
            own = float(v[np.isfinite(v)].max()) if np.isfinite(v).any() else 0.0
            s = own if kind == "own" else max(own, 1.0)
        else:
            s = scale[kind]
        if kind == "time":  # t rounds like a position; an event may fall one step earlier or later
            tol = min(nu * s, dt) + dt
        else:
            tol = min(nu * s, CAPS_ABS[kind] if kind in CAPS_ABS else CAPS_REL[kind] * s)
        out[name] = (kind, margin * tol)
    return out


def compare(ref: dict, got: dict, tol: dict) -> dict:
    """{metric: {max_abs, max_rel, tolerance, kind, float64, float32}} over every element
    (NaN in both: equal; in one: infinitely far); max_rel over the elements whose float64
    value is not 0 (None if there are none); float64/float32 the values at the largest
    difference."""
    figures = {}
    for name, (kind, t) in tol.items():
        a, b = np.asarray(ref[name], float).ravel(), np.asarray(got[name], float).ravel()
        both_nan = np.isnan(a) & np.isnan(b)
        d = np.where(both_nan, 0.0, np.abs(a - b))
        d = np.where(np.isnan(d), np.inf, d)
        i = int(np.argmax(d)) if d.size else 0
        nonzero = np.abs(a) > 0  # (relative to the float64 value where it is not 0; None if it is 0 throughout)
        rel = d[nonzero] / np.abs(a[nonzero])
        figures[name] = dict(kind=kind, tolerance=t, max_abs=float(d.max()) if d.size else 0.0,
                             max_rel=float(rel.max()) if rel.size else None,
                             float64=float(a[i]) if d.size else 0.0, float32=float(b[i]) if d.size else 0.0)
    return figures


def _rule(f: dict, steps: int) -> str:
    if f["kind"] == "exact":
        return "a count, flag or code: must agree exactly"
    return f"tolerance {f['tolerance']:.3g}, kind {f['kind']}: min({steps} steps x 2^-24 x scale, cap) x margin"


def _numeric(metrics: dict) -> dict:
    return {k: v for k, v in metrics.items() if isinstance(v, np.ndarray) and v.dtype.kind in "biuf"}


def check_base(study: Study, run_chunk, chunk_size: int = 1, sharding=None) -> dict | None:
    """Run the precision check of a float32 study (module docstring); None for float64.
    run_chunk: study.runner.run_chunk (passed in: the runner imports this module).
    Call it inside `computing_in(study.precision)`: the float32 base then compiles the
    program the sweep's chunks run. Raises StudyError (naming the file, the key and the
    worst metric) when a metric is beyond its tolerance; returns the table metadata
    {"jaxmedusa.precision": ..., "jaxmedusa.precision_check": JSON of the figures}."""
    if study.precision == "float64":
        return None
    base = [(study.base, dict(study.tire), dict(study.contact))]
    with computing_in("float64"):
        ref, _, _ = run_chunk(study, base, chunk_size, sharding, precision="float64")
    got, _, _ = run_chunk(study, base, chunk_size, sharding)
    ref, got = _numeric(ref), _numeric(got)
    steps = int(np.max(ref["steps"]) + np.max(ref.get("rejected_steps", 0)))
    s = study.settings
    tol = tolerances(ref, steps, s.end_time, s.dt, study.precision_margin)
    figures = compare(ref, got, tol)
    bad = sorted((f["max_abs"] / f["tolerance"] if f["tolerance"] > 0 else math.inf, k)
                 for k, f in figures.items() if not f["max_abs"] <= f["tolerance"])
    if bad:
        name = bad[-1][1]
        f = figures[name]
        more = f"; {len(bad) - 1} more beyond: {', '.join(k for _, k in bad[-2::-1][:8])}" if len(bad) > 1 else ""
        raise StudyError(
            f"{study.source}: simulation.precision: float32 is outside its tolerance of float64 on the study's "
            f"base scenario: {name} differs by {f['max_abs']:.3g} (float64 {f['float64']:.7g}, float32 "
            f"{f['float32']:.7g}; {_rule(f, steps)}){more}. Use precision = \"float64\" "
            f"(docs/numerics.md, \"Single precision\")")
    summary = dict(steps=steps, unit_roundoff=UNIT_ROUNDOFF, margin=study.precision_margin, metrics=figures)
    return {"jaxmedusa.precision": study.precision, "jaxmedusa.precision_check": json.dumps(summary)}
