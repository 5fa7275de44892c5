"""Plain-Python scenario descriptions (what the input files say), before they become arrays.

These dataclasses are the meeting point of the readers (`io/medusa_files.py`, `io/scenario_toml.py`),
the study perturbations (`study/perturb.py`) and the builder (`build.py`).
Units are those of the MEDUSA files: SI, except angles, which are in degrees here
(ORIENTATION, STEERING, road banking) and become radians when arrays are built.
Vehicles are numbered from 0 in code (MEDUSA's vehicle 1 is index 0).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class AxleSpec:
    """An axle behind MEDUSA's front and rear axles (not in MEDUSA): a tandem or tridem axle
    of a truck (docs/vehicles-and-scenes.md). Its two wheels follow the rear wheels' heading."""

    l: float  # distance of the axle behind the centre of mass [m] (as L2)
    track: float  # track width [m] (as B)
    h: float  # centre of mass above the axle's assembly points [m] (as H2)
    c: float  # spring per wheel [N/m] (as C2)
    d: float  # damper per wheel [N s/m] (as D2)
    # True: a load-equalising (walking-beam / equalised leaf) tandem with the axle in front of
    # it: the wheels of a side share their spring forces equally, as the EDC programs split a
    # tandem's load ("the loads at wheels 3 and 5 are split equally").
    equalised: bool = True


@dataclass
class ModelSpec:
    """One MODEL block of model.dat (report section 2.2, init.c `read_models()`)."""

    mass: float  # MASS [kg]
    ix: float  # IX = J0^11 [kg m^2]
    iy: float  # IY = J0^22 [kg m^2]
    iz: float  # IZ = J0^33 [kg m^2]
    young: float  # E [N/m^2]
    nu: float  # NU, Poisson's ratio [-]
    volume: float  # VOLUME [m^3]
    l1: float  # L1, CM to front axle [m]
    l2: float  # L2, CM to rear axle [m]
    track: float  # B, track width [m]
    h1: float  # H1, CM above front assembly points [m]
    h2: float  # H2, CM above rear assembly points [m]
    spring_ref: float  # SPRING_REF, unstretched spring length [m]
    c1: float  # C1 front spring [N/m]
    c2: float  # C2 rear spring [N/m]
    d1: float  # D1 front damper [N s/m]
    d2: float  # D2 rear damper [N s/m]
    tire_lag: float  # TIRE, lag tau [s]
    contact_dims: tuple[float, float, float]  # CONTACT A1 A2 A3: length, width, height [m]
    eq_r3: float  # EQUILIBRIUM R3 [m]
    eq_F: tuple[tuple[float, float, float], ...]  # 3x3, eq_F[j][i] = D(i+1)(j+1): columns are directors
    tire_model: str = "calspan"  # a name of physics.tire.TIRES (MEDUSA files: always CALSPAN)
    # Crush stiffness of the crush law (contact/laws/crush.py, docs/crash-law.md): Campbell's
    # F/w = A + B C per face, A [N/m], B [N/m^2]. Not in MEDUSA's model.dat; the defaults are a
    # mid-size car calibrated to the NCAP full-width frontal test.
    crush_a_front: float = 44.0e3
    crush_b_front: float = 550.0e3
    crush_a_rear: float = 40.0e3
    crush_b_rear: float = 500.0e3
    crush_a_side: float = 20.0e3
    crush_b_side: float = 350.0e3
    # Rolling-resistance coefficient f_r [-] (EDC "Longitudinal tire force"; not in MEDUSA, 0:
    # a free-rolling MEDUSA car never slows). Typical: 0.010-0.015 for cars on asphalt.
    rolling_resistance: float = 0.0
    # Structural damping of the chassis's elastic deformation [s]: the stiffness-proportional
    # (Rayleigh) coefficient beta, so that an elastic mode of angular frequency omega has the
    # damping ratio beta omega / 2 (physics/vehicle.py `viscous_director_forces`). Not in
    # MEDUSA, whose Cosserat chassis rings undamped (0: MEDUSA's results unchanged).
    chassis_damping: float = 0.0
    # Further axles behind the rear one (L2), front to rear; () for MEDUSA's two-axle car.
    extra_axles: tuple[AxleSpec, ...] = ()
    # Tire parameter overrides per axle, front to rear (dicts of the tire model's parameters;
    # () or {} for an axle: the vehicle's tires). Trucks: steer and drive tires differ.
    tires_by_axle: tuple[dict, ...] = ()
    # What the model is (core/hitches.py VEHICLE_KINDS): "car" or "truck" (self-propelled), or
    # "trailer" (towed at a hitch: no steering, no drive; docs/trailers.md). A trailer with one
    # axle gives its front axle no spring (c1 = d1 = 0): those wheels are never loaded.
    kind: str = "car"

    @property
    def n_axles(self) -> int:
        return 2 + len(self.extra_axles)


@dataclass
class DriverTable:
    """A time table for a driver input. `kind` is "constant" (piecewise constant:
    value[i] holds from times[i] until times[i+1]; value[0] before times[0]) or
    "linear" (piecewise linear, held constant outside the table). In a per-wheel table
    (VehicleSpec.brake, lock, throttle) a value is a number (every wheel) or a tuple with
    one number per wheel (FL, FR, RL, RR, then further axles left, right)."""

    times: tuple[float, ...] = (0.0,)  # [s], non-decreasing
    values: tuple[float, ...] = (0.0,)
    kind: str = "constant"


@dataclass
class VehicleSpec:
    """One vehicle of platoon.dat (init.c `read_vehicles()`)."""

    model: int  # index into Scenario.models, 0-based (MEDUSA's VEHICLE_HAS_MODEL 1 is 0)
    x: float  # X [m]
    y: float  # Y [m]
    orientation: float  # ORIENTATION [deg], ccw about E3 from E1
    speed: float  # SPEED [m/s]
    tire_speed: DriverTable = field(default_factory=DriverTable)  # TIRE_SPEED [m/s]; |v|<=0.1 free rolling
    steering: DriverTable = field(default_factory=DriverTable)  # STEERING [deg], positive turns left
    # Per-wheel tables (not in MEDUSA; physics/wheel_controls.py), None when absent: brake
    # fraction of mu_peak Fz [-] (1.0 the threshold of lock), lock (1 locked: full slide at
    # mu_slide), throttle: drive force per wheel [N].
    brake: DriverTable | None = None
    lock: DriverTable | None = None
    throttle: DriverTable | None = None
    # Articulated vehicles (core/hitches.py, docs/trailers.md): the tow vehicle's index
    # (0-based; files give its number from 1), the coupling point in the tow vehicle's body
    # frame from its centre of mass (hitch) and in this vehicle's (kingpin) [m]. None: not towed.
    towed_by: int | None = None
    hitch: tuple[float, float, float] = (0.0, 0.0, 0.0)
    kingpin: tuple[float, float, float] = (0.0, 0.0, 0.0)
    # True: x, y, orientation (and speed, if `speed_from_tow`) come from the tow vehicle's pose
    # and the hitch geometry when the batch is built (core.hitches.placed_poses).
    place_at_hitch: bool = False
    speed_from_tow: bool = False
    # The coupling's kind ("ball" or "fifth_wheel", core.hitches.HITCH_TYPES) and its relative
    # pitch and roll limits [deg] (None: the kind's default; contact/joint_limits.py).
    hitch_type: str = "ball"
    pitch_limit_deg: float | None = None
    roll_limit_deg: float | None = None


WHEEL_TABLES = ("brake", "lock", "throttle")  # the per-wheel tables of a VehicleSpec


@dataclass(frozen=True)
class ZoneSpec:
    """A friction zone of the road (TOML `[[road.zones]]`, physics/friction.py): a polygon of
    >= 3 corners (x, y) [m] in the plan view, its peak and sliding friction [-], and an
    optional smoothing width [m] of its boundary (0: a sharp boundary)."""

    polygon: tuple[tuple[float, float], ...]
    mu_peak: float
    mu_slide: float
    width: float = 0.0


@dataclass
class RoadSpec:
    """road.dat: at least 4 user points (x, y, z [m], banking [deg]).
    `points` is None for MEDUSA's ideal flat plane z = 0."""

    points: tuple[tuple[float, float, float, float], ...] | None = None
    zones: tuple[ZoneSpec, ...] = ()  # friction zones on the road (not in MEDUSA)


@dataclass(frozen=True)
class BarrierSpec:
    """One rigid barrier (not in MEDUSA; TOML `[[barriers]]`, contact/barrier.py). Lengths in m.

    kind "plane": `position` a point of the wall face, `normal` its outward normal (towards
    free space; normalised when built). kind "box": `position` its centre, `size` its full
    length, width, height along its own axes, `yaw_deg` [deg] its turn about E3."""

    kind: str  # "plane" | "box"
    position: tuple[float, float, float]
    normal: tuple[float, float, float] = (-1.0, 0.0, 0.0)  # plane only
    size: tuple[float, float, float] = (1.0, 1.0, 1.0)  # box only
    yaw_deg: float = 0.0  # box only


BARRIER_KINDS = ("plane", "box")


@dataclass
class Scenario:
    """A whole MEDUSA run: the model database, the platoon, the road, and rigid barriers."""

    name: str
    models: list[ModelSpec]
    vehicles: list[VehicleSpec]
    road: RoadSpec = field(default_factory=RoadSpec)
    barriers: list[BarrierSpec] = field(default_factory=list)  # rigid walls (not in MEDUSA)
    intended_overlap: bool = False  # vehicles overlapping at t = 0 are meant (io/overlap_check.py)


# (MEDUSA keyword, ModelSpec field) in read_models() order; contact_dims and eq_F are
# spread over A1..A3 and D11..D33 (Dij = eq_F[j-1][i-1]: component j of director i).
MODEL_KEYWORDS = (
    ("MASS", "mass"),
    ("IX", "ix"),
    ("IY", "iy"),
    ("IZ", "iz"),
    ("E", "young"),
    ("NU", "nu"),
    ("VOLUME", "volume"),
    ("L1", "l1"),
    ("L2", "l2"),
    ("B", "track"),
    ("H1", "h1"),
    ("H2", "h2"),
    ("SPRING_REF", "spring_ref"),
    ("C1", "c1"),
    ("C2", "c2"),
    ("D1", "d1"),
    ("D2", "d2"),
    ("TIRE", "tire_lag"),
    ("A1", "contact_dims[0]"),
    ("A2", "contact_dims[1]"),
    ("A3", "contact_dims[2]"),
    ("R3", "eq_r3"),
) + tuple((f"D{i}{j}", f"eq_F[{j - 1}][{i - 1}]") for i in (1, 2, 3) for j in (1, 2, 3))

# MEDUSA keyword -> ModelSpec field path (for error messages about TOML models).
KEYWORD_FIELDS = dict(MODEL_KEYWORDS)

# The crush law's per-face coefficients (ModelSpec fields with defaults; not MEDUSA keywords).
CRUSH_FIELDS = ("crush_a_front", "crush_b_front", "crush_a_rear", "crush_b_rear", "crush_a_side", "crush_b_side")


def axle_problems(model: ModelSpec) -> list[tuple[str, str]]:
    """[(ModelSpec field path, reason)] for impossible further axles or per-axle tires."""
    out = []
    last = model.l2
    for k, a in enumerate(model.extra_axles):
        where = f"extra_axles[{k + 1}]"
        for name in ("l", "track", "h", "c", "d"):
            v = getattr(a, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v)):
                out.append((f"{where}.{name}", f"{name} is {v!r}, not a finite number"))
        if out:
            return out
        if not a.l > last:
            out.append((f"{where}.l", f"l {a.l:g} must lie behind the axle in front of it ({last:g} m behind the "
                        "centre of mass)"))
        if not a.track > 0.0:
            out.append((f"{where}.track", f"track {a.track:g} must be > 0 [m]"))
        for name in ("c", "d"):
            if getattr(a, name) < 0.0:
                out.append((f"{where}.{name}", f"{name} {getattr(a, name):g} must be >= 0"))
        last = a.l
    if len(model.tires_by_axle) not in (0, model.n_axles):
        out.append(("tires_by_axle", f"one table per axle ({model.n_axles}) expected, got {len(model.tires_by_axle)}"))
    return out


def crush_problems(model: ModelSpec) -> list[tuple[str, str]]:
    """[(ModelSpec field, reason)] for crush coefficients that are not finite numbers > 0."""
    out = []
    for f in CRUSH_FIELDS:
        v = getattr(model, f)
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0.0):
            unit = "N/m" if "_a_" in f else "N/m^2"
            out.append((f, f"{f} is {v!r}: a crush coefficient > 0 [{unit}] expected"))
    return out

def model_problems(model: ModelSpec) -> list[tuple[str, str]]:
    """Physically impossible values of a model, as (MEDUSA keyword, reason) pairs.

    Checks: every number finite; MASS > 0; the inertia parameters of eq (1.9)
    my^11 = (-IX+IY+IZ)/2, my^22 = (IX-IY+IZ)/2, my^33 = (IX+IY-IZ)/2 all > 0 (the
    triangle inequality of the principal moments); E > 0; -1 < NU < 0.5; VOLUME > 0;
    B > 0; SPRING_REF, C1, C2, D1, D2 >= 0; TIRE > 0 (init.c divides by it);
    A1, A2, A3 > 0; the directors D11..D33 a rotation (`director_problems`).
    """
    m = model
    values = {kw: _field_value(m, field) for kw, field in MODEL_KEYWORDS}
    problems: list[tuple[str, str]] = []
    for kw, v in values.items():
        if not (isinstance(v, (int, float)) and math.isfinite(v)):
            problems.append((kw, f"{kw} is {v!r}, not a finite number"))
    if problems:
        return problems

    def positive(kw, what):
        if values[kw] <= 0:
            problems.append((kw, f"{kw} {values[kw]:g} must be > 0 ({what})"))

    def non_negative(kw, what):
        if values[kw] < 0:
            problems.append((kw, f"{kw} {values[kw]:g} must be >= 0 ({what})"))

    positive("MASS", "mass [kg]")
    ix, iy, iz = m.ix, m.iy, m.iz
    for kw, my, formula, others in (
        ("IX", 0.5 * (-ix + iy + iz), "my^11 = (-IX+IY+IZ)/2", "IY + IZ"),
        ("IY", 0.5 * (ix - iy + iz), "my^22 = (IX-IY+IZ)/2", "IX + IZ"),
        ("IZ", 0.5 * (ix + iy - iz), "my^33 = (IX+IY-IZ)/2", "IX + IY"),
    ):
        if my <= 0:
            problems.append(
                (kw, f"IX {ix:g}, IY {iy:g}, IZ {iz:g} violate the triangle inequality: "
                     f"{kw} must be < {others}, but {formula} = {my:g} <= 0")
            )
    positive("E", "Young's modulus [N/m^2]")
    if not -1.0 < m.nu < 0.5:
        problems.append(("NU", f"NU {m.nu:g} must lie in (-1, 0.5) (Poisson's ratio)"))
    positive("VOLUME", "chassis volume [m^3]")
    positive("B", "track width [m]")
    non_negative("SPRING_REF", "unstretched spring length [m]")
    for kw in ("C1", "C2"):
        non_negative(kw, "spring constant [N/m]")
    for kw in ("D1", "D2"):
        non_negative(kw, "damping coefficient [N s/m]")
    positive("TIRE", "tire lag [s]")
    for kw in ("A1", "A2", "A3"):
        positive(kw, "contact dimension [m]")
    problems += director_problems(m.eq_F)
    return problems


# The directors D11..D33 must form a rotation (orthonormal, det +1, init.c takes them as
# the equilibrium orientation). Files print them with 4 decimals (the report's Appendix C:
# |F^T F - I| = 1.0e-4, |det F - 1| = 1.0e-5), 3 decimals give up to ~3e-3; a number cut
# short (D33 0 for 0.9972, 0.99 for 0.9972) gives >= 1.4e-2. 1e-2 separates the two.
DIRECTOR_TOLERANCE = 1e-2


def director_problems(eq_F, tol: float = DIRECTOR_TOLERANCE) -> list[tuple[str, str]]:
    """[(keyword, reason)] when the director matrix (columns are directors; eq_F[j][i] is
    D(i+1)(j+1)) is not within `tol` of a rotation: max |F^T F - I| and |det F - 1|. The
    keyword is D{i}1 of the director furthest from unit length (its line in model.dat)."""
    F = np.asarray(eq_F, dtype=float)
    if F.shape != (3, 3) or not np.all(np.isfinite(F)):
        return [("D11", f"the directors D11..D33 must be 9 finite numbers, got {eq_F!r}")]
    orth = float(np.max(np.abs(F.T @ F - np.eye(3))))
    det = float(np.linalg.det(F))
    if orth <= tol and abs(det - 1.0) <= tol:
        return []
    lengths = np.linalg.norm(F, axis=0)
    worst = int(np.argmax(np.abs(lengths - 1.0)))
    return [(f"D{worst + 1}1", f"the directors D11..D33 are not a rotation: max |F^T F - I| = {orth:.3g}, "
             f"det F = {det:.4g}, director {worst + 1} has length {lengths[worst]:.4g} (tolerance {tol:g}; "
             "a number cut short?)")]


def _field_value(model: ModelSpec, field: str):
    """Value of a field path such as 'mass', 'contact_dims[1]' or 'eq_F[2][0]'."""
    name, *idx = re.split(r"[\[\]]+", field.rstrip("]"))
    value = getattr(model, name)
    for i in idx:
        value = value[int(i)]
    return value
