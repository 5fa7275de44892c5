"""The fit's residuals as a differentiable function of the unknowns.

    problem = FitProblem(spec)            # spec: fit.spec.FitSpec
    r = problem.residuals(x)              # x (n,) unknowns in path units -> r (m,), (model - data) / sigma

The base scenario is built once (build.build_batch, batch of 1). An unknown then sets its
path directly in the built arrays, inside JAX, so that the simulation's derivatives reach
it: initial positions r (X, Y), the initial velocity SPEED (cos th, sin th, 0) and directors
Q(th) F_eq (init.c `read_vehicles()`; th = ORIENTATION), driver-table knots (steering in
rad, as build.table_arrays stores them), per-wheel brake and throttle knots (the built
WheelTables; a brake fraction only within [0, 1], lock not at all: fit/spec.py) and the
scenario's contact parameters.

The states at the observation times are captured inside the run by
fit.observe.ObservationTracker (cubic Hermite interpolation across the step that crosses
each time). Heading is main.c's atan2(d12, d11); heading residuals are wrapped to
(-180, 180] deg; speed is |(vx, vy)|. Observations at rest (time "rest") read the final
state of the run, which ends at rest (end_condition = "rest"); skid_length reads the longest
wheel mark of the whole run (analysis/rest.py's tracker, run beside the observation tracker
when a skid length is observed). A run that fails (status not ok, not_at_rest included:
the rest it was to reach did not come) gives residuals of
FAILED_RESIDUAL: finite, so the solver sees a worse cost and shrinks its step instead of
meeting NaN.

Bounds are a smooth reparameterisation (not clipping): a bounded unknown is
x = lo + (hi - lo) sigmoid(z), an unbounded one x = initial + spread z. The solver works in
z, where every z is allowed and the scales of the unknowns are comparable.
"""
from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.analysis.rest import RestTracker
from jaxmedusa.build import build_batch
from jaxmedusa.core.pytree import replace
from jaxmedusa.core.safe_math import heading, safe_hypot
from jaxmedusa.core.scenario import WHEEL_TABLES, DriverTable, Scenario
from jaxmedusa.core.status import Status
from jaxmedusa.analysis.damage import first_collision_metrics
from jaxmedusa.fit.spec import CRUSH_QUANTITIES, FitSpec
from jaxmedusa.physics import road as road_mod
from jaxmedusa.fit.observe import ObservationTracker, Observed
from jaxmedusa.solver.simulate import finish, init_metrics, simulate
from jaxmedusa.solver.trackers import CombinedTracker

__all__ = ["FitProblem", "FAILED_RESIDUAL", "wrap_degrees"]

# Residual of every observation when the run fails: far above any residual of a run that
# stays within a few hundred standard deviations of the data, so a failing trial point
# always loses against the current one.
FAILED_RESIDUAL = 1e6


def _with_wheel_tables(base: Scenario, unknowns) -> Scenario:
    """The base scenario, with a brake table of 0 on the first vehicle when an unknown sets a
    per-wheel table and no vehicle has one: the build then holds the tables as arrays
    (build.batch_wheel_tables compiles them out otherwise); a table of 0 changes no force."""
    if not any(u.target.kind == "wheel" for u in unknowns):
        return base
    if any(getattr(v, n) is not None for v in base.vehicles for n in WHEEL_TABLES):
        return base
    first = dataclasses.replace(base.vehicles[0], brake=DriverTable())
    return dataclasses.replace(base, vehicles=[first, *base.vehicles[1:]])


def wrap_degrees(d):
    """Angle differences [deg] wrapped to (-180, 180]: a heading of 359.9 deg observed as
    -0.1 deg is a residual of 0. Smooth everywhere except at +-180 deg itself."""
    return jnp.rad2deg(jnp.arctan2(jnp.sin(jnp.deg2rad(d)), jnp.cos(jnp.deg2rad(d))))


class FitProblem:
    """Residuals of a FitSpec (module docstring). Methods are pure JAX in x or z (vmap,
    jit and forward-mode derivatives pass)."""

    def __init__(self, spec: FitSpec):
        self.spec = spec
        s = spec.settings
        base = _with_wheel_tables(spec.base, spec.unknowns)
        self.batch, self.state0 = build_batch([base], dt=s.dt, contact=spec.contact, tire=spec.tire or None)
        veh = base.vehicles
        self._ic = {
            "x": np.array([v.x for v in veh], float), "y": np.array([v.y for v in veh], float),
            "speed": np.array([v.speed for v in veh], float),
            "orientation": np.array([v.orientation for v in veh], float),  # [deg]
        }
        self._knots = {name: [len(getattr(v, name).times) for v in veh] for name in ("steering", "tire_speed")}
        # per-wheel tables (brake, throttle): an absent table is one knot of 0 (build.wheel_table_arrays)
        self._knots.update({name: [len(getattr(v, name).times) if getattr(v, name) is not None else 1 for v in veh]
                            for name in WHEEL_TABLES})
        self._wheels = [2 * base.models[v.model].n_axles for v in veh]  # real wheels per vehicle (FL, FR, RL, RR, ..)
        u = spec.unknowns
        self.lower = np.array([x.lower for x in u])
        self.upper = np.array([x.upper for x in u])
        self.initial = np.array([x.initial for x in u])
        self.spread = np.array([x.spread for x in u])
        self.bounded = np.array([x.bounds is not None for x in u])
        rows = [(o.index, o.vehicle, o.time, q, v, sg) for o in spec.observations for q, v, sg in o.values]
        self.rows = rows  # one per residual: (observation, vehicle 0-based, time, quantity, value, sigma)
        self._value = np.array([r[4] for r in rows])
        self._sigma = np.array([r[5] for r in rows])
        self._is_heading = np.array([r[3] == "heading_deg" for r in rows])
        self._at_rest = np.array([o.at_rest for o in spec.observations for _ in o.values])
        self.times = sorted({o.time for o in spec.observations if not o.at_rest})
        crush = any(r[3] in CRUSH_QUANTITIES for r in rows)  # C1..C6 observed: track the crush profiles
        skids = any(r[3] == "skid_length" for r in rows)
        # the rest tracker (skid marks) only where a skid length is observed: no extra work otherwise
        self.tracker = CombinedTracker((ObservationTracker(tuple(self.times), damage=crush),
                                        RestTracker() if skids else None))

    @property
    def n_unknowns(self) -> int:
        return len(self.spec.unknowns)

    # ------------------------------------------------------------------ reparameterisation

    def to_x(self, z):
        """Unknowns (n,) in path units from the solver's variables z (n,)."""
        lo = jnp.where(self.bounded, self.lower, 0.0)
        hi = jnp.where(self.bounded, self.upper, 1.0)
        return jnp.where(self.bounded, lo + (hi - lo) * jax.nn.sigmoid(z), self.initial + self.spread * z)

    def to_x_host(self, z):
        """to_x in numpy, for host code that must not dispatch JAX work (an interrupt hook)."""
        z = np.asarray(z, float)
        lo = np.where(self.bounded, self.lower, 0.0)
        hi = np.where(self.bounded, self.upper, 1.0)
        return np.where(self.bounded, lo + (hi - lo) / (1.0 + np.exp(-z)), self.initial + self.spread * z)

    def to_z(self, x):
        """Inverse of to_x (numpy; x strictly inside its bounds)."""
        x = np.asarray(x, float)
        lo = np.where(self.bounded, self.lower, 0.0)
        hi = np.where(self.bounded, self.upper, 1.0)
        u = np.clip((x - lo) / (hi - lo), 1e-12, 1 - 1e-12)
        return np.where(self.bounded, np.log(u) - np.log1p(-u), (x - self.initial) / self.spread)

    # ------------------------------------------------------------------ the scenario of x

    def apply(self, x):
        """(Batch, initial SimState) of the base scenario with every unknown set to x (n,)."""
        batch, state = self.batch, self.state0
        ic = {k: jnp.asarray(v) for k, v in self._ic.items()}
        touched_ic = False
        driver = {f: getattr(batch.driver, f) for f in ("steer_times", "steer_values", "speed_times", "speed_values")}
        contact = {}
        wheels = None if batch.driver.wheels is None else {
            f: getattr(batch.driver.wheels, f) for n in WHEEL_TABLES for f in (f"{n}_times", f"{n}_values")}
        for i, u in enumerate(self.spec.unknowns):
            t, xi = u.target, x[i]
            if t.kind == "vehicle":
                ic[t.name] = ic[t.name].at[jnp.asarray(t.items)].set(xi)
                touched_ic = True
            elif t.kind == "driver":
                prefix = "steer" if t.name == "steering" else "speed"
                scale = math.pi / 180.0 if t.name == "steering" else 1.0  # steering tables hold rad
                part = "times" if t.part == "times" else "values"
                value = xi if part == "times" else xi * scale
                arr = driver[f"{prefix}_{part}"]
                for k in t.items:
                    if t.part == "all":
                        arr = arr.at[0, k, :].set(value)
                    else:
                        j, last = t.index[0], self._knots[t.name][k] - 1
                        # the padding repeats the last knot: setting the last knot sets the padding
                        arr = arr.at[0, k, j:].set(value) if j == last else arr.at[0, k, j].set(value)
                driver[f"{prefix}_{part}"] = arr
            elif t.kind == "wheel":  # brake [-] or throttle [N] knots, arrays [1, V, Kw(, W)]
                self._set_wheel_knots(wheels, t, xi)
            elif t.kind == "contact":
                contact[t.name] = jnp.reshape(xi, (1,))
            else:  # spec.py admits only the kinds above
                raise ValueError(f"unknown {u.name}: path {u.path} cannot be fitted")
        if wheels is not None:
            driver["wheels"] = replace(batch.driver.wheels, **wheels)
        batch = replace(batch, driver=replace(batch.driver, **driver))
        if contact:
            batch = replace(batch, contact=replace(batch.contact, **contact))
        if touched_ic:
            state = self._initial_conditions(batch, state, ic)
        return batch, state

    def _set_wheel_knots(self, wheels, t, xi):
        """Set a per-wheel table's knot(s) in `wheels` ({field: array [1, V, Kw(, W)]}) to xi, as
        study/perturb.py sets the scenario's table: part "all" every knot of every real wheel,
        "values" knot K of every wheel or of wheel W (t.index (K,) or (K, W)), "times" knot K's
        time. The padding repeats the last knot, so setting the last knot sets the padding."""
        for k in t.items:
            last, nw = self._knots[t.name][k] - 1, self._wheels[k]
            if t.part == "times":
                arr, j = wheels[f"{t.name}_times"], t.index[0]
                wheels[f"{t.name}_times"] = arr.at[0, k, j:].set(xi) if j == last else arr.at[0, k, j].set(xi)
                continue
            arr = wheels[f"{t.name}_values"]
            cols = slice(0, nw) if len(t.index) < 2 else t.index[1]  # wheels beyond nw are padding (0)
            if t.part == "all":
                arr = arr.at[0, k, :, cols].set(xi)
            else:
                j = t.index[0]
                arr = arr.at[0, k, j:, cols].set(xi) if j == last else arr.at[0, k, j, cols].set(xi)
            wheels[f"{t.name}_values"] = arr

    def _initial_conditions(self, batch, state, ic):
        """r, F, v of t = 0 from X, Y, SPEED, ORIENTATION [deg] (init.c read_vehicles())."""
        vs = state.vehicles
        th = jnp.deg2rad(ic["orientation"])
        dth = th - jnp.deg2rad(jnp.asarray(self._ic["orientation"]))
        c, s = jnp.cos(dth), jnp.sin(dth)
        z, o = jnp.zeros_like(c), jnp.ones_like(c)
        Q = jnp.stack([jnp.stack([c, -s, z], -1), jnp.stack([s, c, z], -1), jnp.stack([z, z, o], -1)], -2)  # [V,3,3]
        F = jnp.einsum("vij,vjk->vik", Q, vs.F[0])[None]  # F0 = Q(th) F_eq = Q(dth) Q(th_base) F_eq
        r = vs.r.at[0, :, 0].set(ic["x"]).at[0, :, 1].set(ic["y"])
        v = jnp.stack([ic["speed"] * jnp.cos(th), ic["speed"] * jnp.sin(th), jnp.zeros_like(th)], -1)[None]
        new = replace(vs, r=r, F=F, v=v)
        if batch.road is not None:  # the initial tracking point moves with X, Y
            road1 = jax.tree.map(lambda a: a[0], batch.road)
            seg, sp = jax.vmap(lambda rr: road_mod.initial_tracking(road1, rr))(r[0])
            new = replace(new, road_seg=seg[None].astype(vs.road_seg.dtype), road_s=sp[None])
        return replace(state, vehicles=new)

    # ------------------------------------------------------------------ predictions

    def run(self, x, record: bool = True):
        """simulate() of the scenario of x, with samples every save_every (SimResult with
        leaves [1, ...]): for the fitted run's trajectory table."""
        batch, state = self.apply(x)
        return simulate(batch, state, self.spec.settings, record=record)

    def observe(self, x) -> Observed:
        """The vehicles' states at the observation times (fit/observe.py), leaves [1, ...],
        and the final state: one while loop, no samples."""
        obs, _, final = self._evaluate(x)
        return obs, final

    # The loop of an evaluation: the while loop (forward-mode derivatives, as the fit's Jacobian
    # takes them); a subclass may run the checkpointed loop (reverse mode) with a step bound.
    adjoint = "forward"

    def max_steps(self) -> int | None:
        """The checkpointed loop's bound (None: the while loop, or finish()'s own bound)."""
        return None

    def _evaluate(self, x):
        """(Observed, analysis.rest.RestState or None, final SimState), leaves [1, ...]."""
        batch, state = self.apply(x)
        metrics = init_metrics(batch, state, self.tracker)
        final, (obs, rest) = finish(batch, state, metrics, self.spec.settings, self.tracker, adjoint=self.adjoint,
                                    max_steps=self.max_steps())
        return obs, rest, final

    def predict(self, x):
        """(model values (m,) in the observations' units, status of the run ())."""
        obs, rest, final = self._evaluate(x)
        crush = None
        if obs.damage is not None:  # the first collision's C1..C6 (analysis/damage.py), [V]
            dm = jax.tree.map(lambda a: a[0], obs.damage)
            crush = first_collision_metrics(dm, jax.tree.map(lambda a: a[0], self.batch.vehicle))
        out = []
        for (_, k, T, q, _, _), at_rest in zip(self.rows, self._at_rest):
            if q in CRUSH_QUANTITIES:
                out.append(crush[q][k])
                continue
            if q == "skid_length":  # the whole run's longest wheel mark (analysis/skids.py)
                out.append(jnp.max(rest.skids.length[0, k]))
                continue
            if at_rest:  # the final state: the run ended at rest
                vs = final.vehicles
                r, F, v = vs.r[0, k], vs.F[0, k], vs.v[0, k]
            else:
                i = self.times.index(T)
                r, F, v = obs.r[0, i, k], obs.F[0, i, k], obs.v[0, i, k]
            if q == "x":
                out.append(r[0])
            elif q == "y":
                out.append(r[1])
            elif q == "heading_deg":
                out.append(jnp.rad2deg(heading(F)))
            else:
                out.append(safe_hypot(v[0], v[1]))
        ok = (final.clock.status[0] == Status.OK) & jnp.all(obs.seen[0])
        return jnp.stack(out), ok

    def residuals(self, x):
        """(model - observed) / sigma, (m,); heading differences wrapped to (-180, 180] deg.
        A failed run (status not ok) gives FAILED_RESIDUAL everywhere (module docstring)."""
        pred, ok = self.predict(x)
        d = pred - self._value
        d = jnp.where(self._is_heading, wrap_degrees(d), d)
        return jnp.where(ok, d / self._sigma, FAILED_RESIDUAL)

    def residuals_z(self, z, args=None):
        """residuals(to_x(z)): the solver's function (optimistix signature fn(y, args))."""
        return self.residuals(self.to_x(z))

