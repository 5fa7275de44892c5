"""A car and a centre-axle trailer for the articulated-vehicle tests (docs/trailers.md)."""
from __future__ import annotations

import dataclasses

from jaxmedusa.analysis.equilibrium import solve_equilibrium, with_equilibrium
from jaxmedusa.core.scenario import DriverTable, Scenario, VehicleSpec
from jaxmedusa.io.medusa_files import read_models

from helpers import EXAMPLES

# The trailer: 800 kg, one axle 0.2 m behind its centre of mass (the front "axle" has no
# spring: a centre-axle trailer), kingpin 3.0 m ahead of the centre of mass; the hitch 1.0 m
# behind the car's rear axle. So c = 1.0 m and l_t = 3.2 m.
HITCH_BEHIND_AXLE = 1.0
KINGPIN_X = 3.0
TRAILER_L2 = 0.2
HITCH_Z = -0.2


def car_model():
    m = read_models(EXAMPLES / "offset" / "model.dat")[0]
    return with_equilibrium(m, solve_equilibrium(m))


def trailer_model(car, **changes):
    eye = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    base = dict(kind="trailer", mass=800.0, ix=600.0, iy=1500.0, iz=1600.0, l1=2.0, l2=TRAILER_L2, c1=0.0, d1=0.0,
                eq_F=eye)
    return dataclasses.replace(car, **{**base, **changes})


def hitch(car):
    return (-(car.l2 + HITCH_BEHIND_AXLE), 0.0, HITCH_Z)


def combination(speed, steer_deg=0.0, car=None, trailer=None, name="combination", **trailer_pose):
    """Scenario: the car (vehicle 1, at the origin heading +x, front tire speed = speed) and the
    trailer (vehicle 2) placed at its hitch unless trailer_pose gives x, y, orientation."""
    car = car or car_model()
    trailer = trailer or trailer_model(car)
    v1 = VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=speed, tire_speed=DriverTable((0.0,), (speed,)),
                     steering=DriverTable((0.0,), (steer_deg,)))
    placed = not trailer_pose
    v2 = VehicleSpec(model=1, x=trailer_pose.get("x", 0.0), y=trailer_pose.get("y", 0.0),
                     orientation=trailer_pose.get("orientation", 0.0), speed=trailer_pose.get("trailer_speed", speed),
                     towed_by=0, hitch=hitch(car), kingpin=(KINGPIN_X, 0.0, HITCH_Z), place_at_hitch=placed)
    return Scenario(name, [car, trailer], [v1, v2])
