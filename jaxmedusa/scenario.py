"""Plain-Python scenario descriptions (what the input files say), before they become arrays.

These dataclasses are the meeting point of the readers (`legacy.py`, TOML scenarios),
the study perturbations (`study.py`) and the array builders (`params.py`, `state.py`).
Units are those of the MEDUSA files: SI, except angles, which are in degrees here
(ORIENTATION, STEERING, road banking) and become radians when arrays are built.
Vehicles are numbered from 0 in code (MEDUSA's vehicle 1 is index 0).
"""
from __future__ import annotations

from dataclasses import dataclass, field


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
    # Crush stiffness (crush law, docs/crash-law.md): Campbell's F/w = A + B C per face, A [N/m],
    # B [N/m^2]; not in MEDUSA's model.dat (defaults: a mid-size car, calibrated to NCAP).
    crush_a_front: float = 44.0e3
    crush_b_front: float = 550.0e3
    crush_a_rear: float = 40.0e3
    crush_b_rear: float = 500.0e3
    crush_a_side: float = 20.0e3
    crush_b_side: float = 350.0e3

CRUSH_FIELDS = ("crush_a_front", "crush_b_front", "crush_a_rear", "crush_b_rear", "crush_a_side", "crush_b_side")


@dataclass
class DriverTable:
    """A time table for a driver input. `kind` is "constant" (piecewise constant:
    value[i] holds from times[i] until times[i+1]; value[0] before times[0]) or
    "linear" (piecewise linear, held constant outside the table)."""

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


@dataclass
class RoadSpec:
    """road.dat: at least 4 user points (x, y, z [m], banking [deg]).
    `points` is None for MEDUSA's ideal flat plane z = 0."""

    points: tuple[tuple[float, float, float, float], ...] | None = None


@dataclass
class Scenario:
    """A whole MEDUSA run: the model database, the platoon, and the road."""

    name: str
    models: list[ModelSpec]
    vehicles: list[VehicleSpec]
    road: RoadSpec = field(default_factory=RoadSpec)
    barriers: list = field(default_factory=list)  # barrier.BarrierSpec, rigid walls (not in MEDUSA)
