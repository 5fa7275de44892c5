"""Parameter pytrees: vehicle model, tire set, driver inputs, contact law; simulation settings; Batch.

Every array field of a per-vehicle pytree has leading axes [batch, vehicle] once batched
(`build.py` stacks them). Field shapes below are for one vehicle.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.pytree import pytree_dataclass

GRAVITY = 9.81  # [m/s^2], vehicle.c hard-codes 9.81


@pytree_dataclass(meta=("models",))
class TireSet:
    """The tires of one vehicle: which of the batch's tire models it uses, and their parameters.

    models: static tuple of the tire-model names present in the batch (physics.tire.TIRES),
        the same for every vehicle of a batch; index: () int32, this vehicle's model, an
        index into `models`; params: one parameter pytree per entry of `models` (those of
        the models this vehicle does not use hold that model's defaults). With one model
        the tire force is a direct call; with several it is a `lax.switch` on `index`.
    """

    models: tuple
    index: jnp.ndarray
    params: tuple


@pytree_dataclass
class VehicleParams:
    """One vehicle model, in the form the equations of motion use.

    mass [kg]; my (3,) inertia parameters my^11, my^22, my^33 of eq (1.9) [kg m^2];
    lam = V*lambda/2 and tm = V*mu [N m] (init.c `lam`, `tm`, eqs 1.12-1.13);
    X (W, 3): material coordinates X_q^i of the suspension assembly points, eq (1.11) [m],
    W = 4 for MEDUSA's car (FL, FR, RL, RR), 2 per axle for more (padding wheels of a
    smaller vehicle in the batch have C = D = 0: never loaded);
    spring_ref [m]; C (W,) [N/m]; D (W,) [N s/m]; tau_inv = 1/TIRE [1/s];
    contact_axes (3,): semi-axes of the contact superellipsoid, half of CONTACT A1 A2 A3 [m];
    eq_r3 [m] and eq_F (3, 3): the EQUILIBRIUM block (columns are directors);
    crush_a (3,) [N/m], crush_b (3,) [N/m^2]: Campbell coefficients of the front, rear and
    side faces (the crush law, contact/laws/crush.py).
    """

    mass: jnp.ndarray
    my: jnp.ndarray
    lam: jnp.ndarray
    tm: jnp.ndarray
    X: jnp.ndarray
    spring_ref: jnp.ndarray
    C: jnp.ndarray
    D: jnp.ndarray
    tau_inv: jnp.ndarray
    contact_axes: jnp.ndarray
    eq_r3: jnp.ndarray
    eq_F: jnp.ndarray
    tire: TireSet  # the tire model(s) and parameters (all four tires alike)
    crush_a: jnp.ndarray  # (3,) front, rear, side [N/m]
    crush_b: jnp.ndarray  # (3,) front, rear, side [N/m^2]
    # rolling-resistance coefficient f_r [-]: force f_r Fz against each wheel's travel (EDC,
    # "Longitudinal tire force"; physics/wheel_controls.py). 0 in MEDUSA, whose car rolls freely.
    rolling_resistance: jnp.ndarray | float = 0.0
    # (W, W) load equaliser of tandem axles (physics/vehicle.py): the wheel loads are
    # equalise @ (spring forces); None for batches of two-axle cars (compiled out).
    equalise: jnp.ndarray | None = None
    # stiffness-proportional damping coefficient beta [s] of the chassis's elastic modes
    # (ModelSpec.chassis_damping); None for batches without it (compiled out: MEDUSA's chassis).
    chassis_damping: jnp.ndarray | None = None


def inertia_parameters(ix: float, iy: float, iz: float) -> np.ndarray:
    """my^11, my^22, my^33 from the principal moments J0^11, J0^22, J0^33: inverse of eq (1.9)."""
    return 0.5 * np.array([-ix + iy + iz, ix - iy + iz, ix + iy - iz])


def lame_constants(young: float, nu: float) -> tuple[float, float]:
    """Lame constants (lambda, mu) from E and nu, eq (1.13)."""
    return young * nu / ((1 + nu) * (1 - 2 * nu)), young / (2 * (1 + nu))


@pytree_dataclass
class DriverParams:
    """Driver time tables for one vehicle (K knots, padded by repeating the last knot).

    steer_times, steer_values (K,): steering angle [rad]; steer_linear: 1.0 for piecewise
    linear, 0.0 for piecewise constant. speed_*: front tire circumferential speed
    R*omega [m/s] (TIRE_SPEED); |speed| <= 0.1 means free-rolling front wheels.
    """

    steer_times: jnp.ndarray
    steer_values: jnp.ndarray
    steer_linear: jnp.ndarray
    speed_times: jnp.ndarray
    speed_values: jnp.ndarray
    speed_linear: jnp.ndarray
    wheels: WheelTables | None = None  # per-wheel brake, lock, throttle; None: none in the batch (compiled out)


@pytree_dataclass
class WheelTables:
    """Per-wheel driver tables of one vehicle (physics/wheel_controls.py), Kw knots padded by
    repeating the last knot, W wheels (FL, FR, RL, RR, then further axles left, right; wheels
    a vehicle lacks hold 0).

    brake_* : brake fraction [-] of the available friction (EDC: attempted force = fraction x
    mu_peak x Fz; 1.0 the threshold of lock, above 1 the wheel locks); lock_*: 1 locked (full
    slide at mu_slide), 0 rolling; throttle_*: drive force [N] (limited by friction).
    *_times (Kw,), *_values (Kw, W), *_linear (): 1.0 piecewise linear, 0.0 piecewise constant.
    """

    brake_times: jnp.ndarray
    brake_values: jnp.ndarray
    brake_linear: jnp.ndarray
    lock_times: jnp.ndarray
    lock_values: jnp.ndarray
    lock_linear: jnp.ndarray
    throttle_times: jnp.ndarray
    throttle_values: jnp.ndarray
    throttle_linear: jnp.ndarray


@pytree_dataclass
class ZoneParams:
    """Friction zones of one scenario's road (physics/friction.py), leaves [NZ, ...] ([B, NZ, ...]
    batched), NZ the most zones of any scenario of the batch, NP the most polygon corners.

    corners (NZ, NP, 2): polygon corners [m] (a polygon with fewer corners repeats its last
    one: a zero-length edge changes nothing); mu_peak, mu_slide (NZ,) [-]; width (NZ,):
    smoothing width [m] (0: a sharp boundary); valid (NZ,) bool, False for padding zones."""

    corners: jnp.ndarray
    mu_peak: jnp.ndarray
    mu_slide: jnp.ndarray
    width: jnp.ndarray
    valid: jnp.ndarray


@dataclass(frozen=True)
class ContactParams:
    """Contact law parameters (per scenario). p1 [1/s^2 per m] and p2 [1/s] are MEDUSA's
    penalty multipliers (vehicle.c CONSTRAINT_MULTIPLIER1/2); stiffness [N/m] and damping
    [N s/m] belong to the physical law; eps1, eps2 are the squareness exponents.
    The crush law (contact/laws/crush.py, docs/crash-law.md): mu, mu_barrier [-] Coulomb
    friction between vehicles and against barriers; v_slip [m/s] stick-slip regularisation
    speed; crush_rate [s/m] rate factor zeta; unload_exp [-] unloading exponent n (>= 1) below
    the damage threshold; restitution_high [-] the restitution of a severe crush (the
    unloading exponent follows the crush depth between the two); width_min [m] least engaged
    width.

    eps1 and eps2 are arrays [B] (traced, differentiable), or Python floats: the same for
    every scenario of the batch and part of the pytree's structure, so compiled in
    (`build.build_batch(static_exponents=True)`, its default where they agree). Static
    exponents let the narrow phase use integer powers (|y|^5 by multiplication for the
    report's 0.4 instead of exp(5 log |y|)): a near pair's step 3.4x cheaper in the offset
    study (benchmarks/RESULTS.md, "Static squareness exponents"). Replacing a float by an
    array (a fit's unknown) makes it traced again."""

    p1: jnp.ndarray
    p2: jnp.ndarray
    stiffness: jnp.ndarray
    damping: jnp.ndarray
    eps1: jnp.ndarray | float
    eps2: jnp.ndarray | float
    mu: jnp.ndarray
    mu_barrier: jnp.ndarray
    v_slip: jnp.ndarray
    crush_rate: jnp.ndarray
    unload_exp: jnp.ndarray
    width_min: jnp.ndarray
    restitution_high: jnp.ndarray


# Fields of ContactParams that may be static Python floats (ContactParams docstring).
SHAPE_EXPONENTS = ("eps1", "eps2")


def _contact_flatten(cp: ContactParams):
    """Children (with keys) and aux of a ContactParams: static exponents go to the aux data."""
    static = tuple((n, getattr(cp, n)) for n in SHAPE_EXPONENTS if isinstance(getattr(cp, n), float))
    fixed = {n for n, _ in static}
    names = tuple(f.name for f in dataclasses.fields(cp) if f.name not in fixed)
    return [(jax.tree_util.GetAttrKey(n), getattr(cp, n)) for n in names], (names, static)


def _contact_unflatten(aux, children) -> ContactParams:
    names, static = aux
    return ContactParams(**dict(zip(names, children)), **dict(static))


jax.tree_util.register_pytree_with_keys(ContactParams, _contact_flatten, _contact_unflatten)


# The one place for contact defaults: vehicle.c's CONSTRAINT_MULTIPLIER1/2, the physical
# law's spring and dashpot, the report's squareness exponents (report V: 0.4), and the crush
# law's friction, rate and unloading constants (sources in docs/crash-law.md).
CONTACT_DEFAULTS = dict(p1=2e4, p2=100.0, stiffness=1e6, damping=1e4, eps1=0.4, eps2=0.4,
                        mu=0.5, mu_barrier=0.3, v_slip=0.1, crush_rate=0.0, unload_exp=24.5, width_min=0.1,
                        restitution_high=0.10)


def contact_params(**values) -> ContactParams:
    """ContactParams from keyword floats (default: CONTACT_DEFAULTS)."""
    unknown = set(values) - set(CONTACT_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown contact parameter(s) {sorted(unknown)}; expected {sorted(CONTACT_DEFAULTS)}")
    v = {**CONTACT_DEFAULTS, **values}
    return ContactParams(**{k: np.asarray(float(x)) for k, x in v.items()})


# A save time within GRID_SNAP save intervals of end_time is end_time, and a clock within
# it of a save time has reached it: far above the round-off of t (~1e-13 s after 6e4 steps)
# and far below a step (1e-8 s for 0.01 s against steps >= 5e-6 s).
GRID_SNAP = 1e-6


@dataclass(frozen=True)
class Settings:
    """Static simulation settings (hashable: a change recompiles).

    end_time, dt, save_every [s] mirror MEDUSA's -t, -d, -s. step_control names the rule
    that changes dt (solver.step_control.STEP_CONTROLS: "medusa", main.c's rule, or
    "constant"); dt_min, shrink, grow and hold_steps are the "medusa" rule's constants
    (DT_MIN, 1.4641, 1.1, just_reduced = 100). tires=False switches tire forces off (for
    energy checks). contact_law names a law of contact.laws.LAWS ("medusa", "physical",
    "crush"; a law that does not shrink the step on contact, as "crush", makes the
    "medusa" step control take constant steps),
    contact_geometry a shape of contact.shapes.SHAPES ("superellipsoid", "ellipsoid", "box",
    "medusa_search": contact.c's own search), or None for the law's default shape
    (ContactLaw.default_shape: "medusa_search" for "medusa", "superellipsoid" for the others;
    contact.stage.shape_name gives the name in use).
    end_condition names when a run ends (solver.end_condition.END_CONDITIONS): "time" at
    end_time, or "rest" once every vehicle has been still for rest_hold [s], end_time being
    the limit; still = horizontal speed of the centre of mass below rest_speed [m/s] and yaw
    rate below rest_speed / R, R the vehicle's largest horizontal wheel distance from its
    centre of mass (no wheel moves faster than rest_speed by the turning alone).
    time_loop: how XLA's CPU compiler runs the time loop (solver/time_loop.py): "whole"
    (fastest steps) or "dispatched" (compiles in about 40 % of the time, steps 1.4-1.8x as long).
    Names are checked where they are read (files, CLI) and resolved once per compilation.
    """

    end_time: float = 1.0
    dt: float = 5e-5
    save_every: float = 0.01
    dt_min: float = 5e-6
    shrink: float = 1.4641
    grow: float = 1.1
    hold_steps: int = 100
    tires: bool = True
    contact: bool = True
    contact_law: str = "medusa"
    contact_geometry: str | None = None
    step_control: str = "medusa"
    end_condition: str = "time"
    rest_speed: float = 0.05
    rest_hold: float = 0.2
    time_loop: str = "whole"

    def __post_init__(self):
        """Reject settings that cannot run (a zero dt would never end, a NaN end time would
        fail deep inside XLA): ValueError naming the field. Shared by the CLI, TOML files
        and the Python API, since every path builds a Settings."""
        def fail(name, expected):
            raise ValueError(f"Settings.{name}: {expected} expected, got {getattr(self, name)!r}")

        for name in ("end_time", "dt", "save_every", "dt_min", "shrink", "grow", "rest_speed", "rest_hold"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) \
                    or not math.isfinite(v):
                fail(name, "a finite number")
        for name in ("dt", "save_every", "dt_min", "rest_hold"):
            if not getattr(self, name) > 0:
                fail(name, "a number > 0 [s]")
        if not self.rest_speed > 0:
            fail("rest_speed", "a number > 0 [m/s]")
        if not self.end_time >= 0:
            fail("end_time", "a number >= 0 [s]")
        if not self.shrink > 1.0:
            fail("shrink", "a factor > 1 (the step shrinks by it)")
        if not self.grow >= 1.0:
            fail("grow", "a factor >= 1 (the step grows by it)")
        if isinstance(self.hold_steps, bool) or not isinstance(self.hold_steps, (int, np.integer)) \
                or self.hold_steps < 0:
            fail("hold_steps", "a whole number >= 0")
        for name in ("tires", "contact"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                fail(name, "true or false")
        if self.time_loop not in ("whole", "dispatched"):  # (solver.time_loop.TIME_LOOPS)
            fail("time_loop", '"whole" or "dispatched"')
        for name in ("contact_law", "contact_geometry", "step_control", "end_condition"):
            value = getattr(self, name)
            if not isinstance(value, str) and not (name == "contact_geometry" and value is None):
                fail(name, "a name (string)")
        if self.n_samples > 10_000_000:  # the sample buffer is [B, S, ...]: this many rows is a mistake
            fail("save_every", f"a save interval giving at most 1e7 samples up to end_time {self.end_time:g} s")

    @property
    def n_samples(self) -> int:
        """Saved samples per scenario: the grid 0, s, 2 s, ... before end_time, and end_time
        itself (solver/save_grid.py); a grid time within GRID_SNAP s of end_time is end_time."""
        return int(np.ceil(self.end_time / self.save_every - GRID_SNAP)) + 1


@pytree_dataclass
class BarrierParams:
    """The rigid barriers of one scenario (core.scenario.BarrierSpec as arrays, built by
    build.py), leaves [NB, ...] ([B, NB, ...] once batched).

    kind (NB,): 0.0 plane, 1.0 box; point (NB, 3): a point of the plane or the box centre [m];
    normal (NB, 3): the plane's outward unit normal; axes (NB, 3, 3): the box axes as
    columns; half (NB, 3): the box half-sizes [m]."""

    kind: jnp.ndarray
    point: jnp.ndarray
    normal: jnp.ndarray
    axes: jnp.ndarray
    half: jnp.ndarray


@pytree_dataclass
class Batch:
    """Everything constant during a run, with leading axes [batch, vehicle] or [batch]
    (built by `jaxmedusa.build`)."""

    vehicle: VehicleParams  # [B, V]
    driver: DriverParams  # [B, V, K]
    valid: jnp.ndarray  # [B, V] bool: False for padding vehicles
    contact: ContactParams  # [B]
    road: object  # physics.road.RoadParams with leaves [B, ...], or None for the flat plane z = 0
    barriers: BarrierParams | None = None  # [B, NB, ...], or None: no barriers (contact/barrier.py)
    zones: ZoneParams | None = None  # [B, NZ, ...], or None: no friction zones (physics/friction.py)
    joints: object = None  # contact.joints.JointParams [B, J, ...] (hitches), or None: no joints (compiled out)
