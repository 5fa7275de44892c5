"""Plain helpers the tests share (scenario builders, paths); fixtures are in conftest.py.

Importable from every test folder because pytest puts tests/ on sys.path for conftest.py.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from jaxmedusa.core.scenario import DriverTable, Scenario, VehicleSpec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "studies" / "medusa"


def single(model, name="single", speed=0.0, steering_deg=0.0, tire_speed=0.0, x=0.0, y=0.0, orientation=0.0):
    """A one-vehicle scenario on the flat plane with constant driver inputs."""
    veh = VehicleSpec(model=0, x=x, y=y, orientation=orientation, speed=speed,
                      tire_speed=DriverTable(values=(tire_speed,)), steering=DriverTable(values=(steering_deg,)))
    return Scenario(name=name, models=[model], vehicles=[veh])


def without_damping(model):
    return replace(model, d1=0.0, d2=0.0)
