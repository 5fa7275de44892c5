"""Shared fixtures: the report's Appendix C models and small scenario builders."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import jaxmedusa  # noqa: F401  (enables float64)
from jaxmedusa.io.medusa_files import read_models
from jaxmedusa.core.scenario import DriverTable, Scenario, VehicleSpec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "studies" / "medusa"


@pytest.fixture(scope="session")
def examples() -> Path:
    """The folder of the report's example inputs (studies/medusa)."""
    return EXAMPLES


@pytest.fixture(scope="session")
def single_scenario():
    """The factory `single(model, ...)`: a one-vehicle scenario on the flat plane."""
    return single


@pytest.fixture(scope="session")
def models():
    """The two models of the report's Appendix C model.dat."""
    return read_models(EXAMPLES / "offset" / "model.dat")


@pytest.fixture(scope="session")
def model1_at_equilibrium(models):
    """Appendix C model 1 with its EQUILIBRIUM block replaced by the solved static equilibrium."""
    from jaxmedusa.analysis.equilibrium import solve_equilibrium, with_equilibrium

    return with_equilibrium(models[0], solve_equilibrium(models[0]))


def single(model, name="single", speed=0.0, steering_deg=0.0, tire_speed=0.0, x=0.0, y=0.0, orientation=0.0):
    """A one-vehicle scenario on the flat plane with constant driver inputs."""
    veh = VehicleSpec(model=0, x=x, y=y, orientation=orientation, speed=speed,
                      tire_speed=DriverTable(values=(tire_speed,)), steering=DriverTable(values=(steering_deg,)))
    return Scenario(name=name, models=[model], vehicles=[veh])


def without_damping(model):
    return replace(model, d1=0.0, d2=0.0)
