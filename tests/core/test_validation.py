"""Validation in one place (issue 17): Settings, models and vehicles are checked when they
are built, so the Python API fails as clearly as the CLI and the files (ValueError naming
the field), instead of hanging (dt = 0) or failing deep inside XLA (NaN end time)."""
from __future__ import annotations

import dataclasses
import math

import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import DriverTable, director_problems
from jaxmedusa.physics.vehicle import vehicle_params

from conftest import single


@pytest.mark.parametrize("kw, field", [
    (dict(end_time=0.01, dt=0.0), "Settings.dt"),  # the hang
    (dict(dt=-1e-4), "Settings.dt"),
    (dict(dt=math.nan), "Settings.dt"),
    (dict(end_time=math.nan), "Settings.end_time"),
    (dict(end_time=-1.0), "Settings.end_time"),
    (dict(end_time=math.inf), "Settings.end_time"),
    (dict(save_every=0.0), "Settings.save_every"),
    (dict(dt_min=0.0), "Settings.dt_min"),
    (dict(shrink=1.0), "Settings.shrink"),
    (dict(grow=0.5), "Settings.grow"),
    (dict(hold_steps=-1), "Settings.hold_steps"),
    (dict(hold_steps=1.5), "Settings.hold_steps"),
    (dict(tires="yes"), "Settings.tires"),
    (dict(end_time="1.0"), "Settings.end_time"),
    (dict(end_time=1e6, save_every=1e-6), "Settings.save_every"),  # 1e12 sample rows
])
def test_bad_settings_name_the_field(kw, field):
    with pytest.raises(ValueError, match=rf"^{field}: .* expected, got"):
        Settings(**kw)


def test_edge_settings_are_valid():
    assert Settings(end_time=0.0).n_samples == 1  # the initial state only
    assert Settings(end_time=1, dt=1e-4, save_every=1).end_time == 1  # ints are numbers


def test_models_and_vehicles_are_checked_when_built(models):
    m = models[0]
    with pytest.raises(ValueError, match=r"ModelSpec.mass \(MASS\): MASS -1 must be > 0"):
        vehicle_params(dataclasses.replace(m, mass=-1.0))
    with pytest.raises(ValueError, match=r"ModelSpec.tire_lag \(TIRE\)"):
        vehicle_params(dataclasses.replace(m, tire_lag=math.nan))
    bad_F = tuple(tuple(r) for r in ((0.9972, 0.0, 0.0749), (0.0, 1.0, 0.0), (-0.0748, 0.0, 0.0)))  # D33 0
    with pytest.raises(ValueError, match=r"eq_F.*not a rotation"):
        vehicle_params(dataclasses.replace(m, eq_F=bad_F))
    sc = single(m, speed=10.0)
    for change, field in [(dict(speed=math.nan), "VehicleSpec.speed"), (dict(x=math.inf), "VehicleSpec.x"),
                          (dict(model=3), "VehicleSpec.model"),
                          (dict(steering=DriverTable(times=(0.0, 1.0, 0.5), values=(0, 1, 2))),
                           "VehicleSpec.steering.times")]:
        bad = dataclasses.replace(sc, vehicles=[dataclasses.replace(sc.vehicles[0], **change)])
        with pytest.raises(ValueError, match=rf"vehicle 1: {field}"):
            build_batch([bad])
    build_batch([sc])  # the unchanged scenario builds


def test_director_tolerance_separates_rounding_from_cut_numbers():
    """The report's directors (4 printed digits) are 1e-4 off a rotation; 3 digits a few 1e-4;
    a cut number (0.9972 -> 0.99) at least 1.4e-2, above the 1e-2 tolerance."""
    c, s = 0.9972, 0.0749
    report = ((c, 0.0, s), (0.0, 1.0, 0.0), (-0.0748, 0.0, c))
    assert director_problems(report) == []
    three = tuple(tuple(round(x, 3) for x in r) for r in report)
    assert director_problems(three) == []
    cut = ((c, 0.0, s), (0.0, 1.0, 0.0), (-0.0748, 0.0, 0.99))
    (kw, why), = director_problems(cut)
    assert kw == "D31" and "director 3" in why
    mirror = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, -1.0))  # orthonormal, det -1: not a rotation
    assert director_problems(mirror)
