"""Trailer inputs: the TOML keys of a towed vehicle, the checks that exit with code 2 naming
the key, and the placement of a trailer at its hitch (docs/trailers.md)."""
from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.io.scenario_toml import scenario_from_dict
from jaxmedusa.io.validation import MedusaInputError

CARAVAN = Path(__file__).resolve().parents[2] / "studies" / "caravan.toml"


def caravan():
    with open(CARAVAN, "rb") as f:
        return tomllib.load(f)


def load(data):
    return scenario_from_dict(data, source="caravan.toml", default_name="caravan")[0]


def test_caravan_is_placed_at_its_hitch_with_the_car_speed_and_heading():
    data = caravan()
    data["vehicles"][0].update(x=10.0, y=-3.0, orientation_deg=30.0)
    sc = load(data)
    assert sc.vehicles[1].towed_by == 0 and sc.models[1].kind == "trailer"
    batch, state = build_batch([sc])
    r, F, v = (np.asarray(x)[0] for x in (state.vehicles.r, state.vehicles.F, state.vehicles.v))
    hitch = np.array(sc.vehicles[1].hitch)
    kingpin = np.array(sc.vehicles[1].kingpin)
    # the kingpin sits on the hitch (eq. 1.2 at both anchors), to round-off
    np.testing.assert_allclose(r[0] + F[0] @ hitch, r[1] + F[1] @ kingpin, atol=1e-12)
    # heading and speed are the car's: 30 deg, 25 m/s
    assert math.isclose(math.degrees(math.atan2(F[1][1, 0], F[1][0, 0])), 30.0, abs_tol=1e-9)
    np.testing.assert_allclose(v[1], v[0], atol=1e-12)
    # by hand: the caravan's centre lies hitch - kingpin = 6.251 m behind the car's along 30
    # deg; 2 cm: the car's equilibrium pitch (0.8 deg) shortens its 2.5 m lever by < 1 mm
    d = -2.491 - 3.76
    assert math.isclose(r[1][0], 10.0 + d * math.cos(math.radians(30.0)), abs_tol=0.02)
    assert math.isclose(r[1][1], -3.0 + d * math.sin(math.radians(30.0)), abs_tol=0.02)
    j = batch.joints
    assert bool(j.excluded[0, 0]) and int(j.body_a[0, 0]) == 0 and int(j.body_b[0, 0]) == 1


@pytest.mark.parametrize("change, key", [
    (lambda d: d["vehicles"][1].update(towed_by=2), "vehicles[2].towed_by"),  # itself
    (lambda d: d["vehicles"][1].update(towed_by=5), "vehicles[2].towed_by"),  # no such vehicle
    (lambda d: d["vehicles"][1].update(towed_by=True), "vehicles[2].towed_by"),
    (lambda d: d["vehicles"][1].update(steering_deg=1.0), "vehicles[2].steering_deg"),
    (lambda d: d["vehicles"][1].update(tire_speed=3.0), "vehicles[2].tire_speed"),
    (lambda d: d["vehicles"][1].pop("hitch"), "vehicles[2].hitch"),
    (lambda d: d["vehicles"][1].update(kingpin=[1.0, 2.0]), "vehicles[2].kingpin"),
    (lambda d: d["vehicles"][1].update(x=1.0), "vehicles[2].x"),  # x without y, orientation_deg
    (lambda d: d["vehicles"][1].pop("towed_by"), "vehicles[2].towed_by"),  # a trailer with no tow vehicle
    (lambda d: (d["vehicles"][0].update(towed_by=2, hitch=[0, 0, 0], kingpin=[0, 0, 0], orientation_deg=0.0),
                [d["vehicles"][0].pop(k) for k in ("steering_deg", "tire_speed")]), "vehicles[1].towed_by"),  # a car
    (lambda d: d["models"][1].update(kind="wagon"), "models[2].kind"),
])
def test_bad_trailer_inputs_name_the_key(change, key):
    data = caravan()
    change(data)
    with pytest.raises(MedusaInputError) as e:
        load(data)
    assert key in str(e.value), str(e.value)


def test_a_cycle_of_couplings_names_the_key():
    data = caravan()
    data["models"][0]["kind"] = "trailer"  # both are trailers, each towing the other
    data["vehicles"][0].update(towed_by=2, hitch=[0.0, 0.0, 0.0], kingpin=[0.0, 0.0, 0.0], orientation_deg=0.0)
    for key in ("steering_deg", "tire_speed"):
        data["vehicles"][0].pop(key)
    with pytest.raises(MedusaInputError) as e:
        load(copy.deepcopy(data))
    assert "towed_by" in str(e.value) and "cycle" in str(e.value)
