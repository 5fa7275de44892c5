"""Fit files: bad ones exit with code 2 naming the file and the key, before anything runs;
good ones parse into the unknowns and observations written; the bounds' smooth map."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import tomli_w
from typer.testing import CliRunner

from helpers import EXAMPLES
from jaxmedusa.fit import FitProblem, fit_from_dict
from jaxmedusa_cli.app import app

GOOD = {
    "scenario": {"path": str(EXAMPLES / "straight")},
    "simulation": {"end_time": 0.4},
    "unknowns": {"v1_speed": {"path": "vehicles.1.speed", "initial": 18.0, "bounds": [15.0, 28.0]},
                 "v1_steer": {"path": "vehicles.1.steering_deg", "initial": 0.5}},
    "observations": [{"vehicle": 1, "time": 0.3, "x": 6.3, "y": 0.1, "heading_deg": 1.0,
                      "sigma": {"x": 0.01, "y": 0.01, "heading_deg": 0.05}},
                     {"vehicle": 1, "time": "end", "speed": 21.0, "sigma": {"speed": 0.01}}],
    "fit": {"starts": 3, "max_iterations": 5},
}


def _bad(tmp_path, edit):
    """Run `jaxmedusa fit` on GOOD changed by edit(table); return (result, fit file, out folder)."""
    data = copy.deepcopy(GOOD)
    edit(data)
    path = tmp_path / "bad_fit.toml"
    path.write_bytes(tomli_w.dumps(data).encode())
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["fit", str(path), "--out", str(out), "--no-progress"])
    return result, path, out


CASES = {
    "unknown path": (lambda d: d["unknowns"]["v1_speed"].update(path="vehicles.3.speed"), "unknowns.v1_speed"),
    "unknown field": (lambda d: d["unknowns"]["v1_speed"].update(path="vehicles.1.sped"), "unknowns.v1_speed"),
    "model path cannot be fitted": (lambda d: d["unknowns"]["v1_speed"].update(path="models.1.mass"),
                                    "unknowns.v1_speed.path"),
    "missing sigma": (lambda d: d["observations"][0]["sigma"].pop("y"), "observations[0].sigma.y"),
    "time beyond end": (lambda d: d["observations"][0].update(time=0.5), "observations[0].time"),
    "initial outside bounds": (lambda d: d["unknowns"]["v1_speed"].update(initial=30.0), "unknowns.v1_speed.bounds"),
    "initial on a bound": (lambda d: d["unknowns"]["v1_speed"].update(initial=15.0), "unknowns.v1_speed.bounds"),
    "unknown top-level key": (lambda d: d.update(fits={"starts": 2}), "fits"),
    "unknown unknowns key": (lambda d: d["unknowns"]["v1_steer"].update(inital=1.0), "unknowns.v1_steer.inital"),
    "unknown observation key": (lambda d: d["observations"][1].update(heading=3.0), "observations[1].heading"),
    "vehicle out of range": (lambda d: d["observations"][1].update(vehicle=2), "observations[1].vehicle"),
    "no quantity": (lambda d: d["observations"][1].pop("speed"), "observations[1]"),
    "negative sigma": (lambda d: d["observations"][1]["sigma"].update(speed=-1.0), "observations[1].sigma.speed"),
    "zero starts": (lambda d: d["fit"].update(starts=0), "fit.starts"),
    "bad law": (lambda d: d["simulation"].update(contact_law="glue"), "simulation.contact_law"),
    # two vehicles under the MEDUSA law: its default shape, MEDUSA's own search, has no derivatives
    "search shape": (lambda d: d["scenario"].update(path=str(EXAMPLES / "offset")), "simulation.contact_geometry"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_fit_file_exits_2_naming_file_and_key(tmp_path, case):
    edit, key = CASES[case]
    result, path, out = _bad(tmp_path, edit)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())  # rich may wrap long lines
    assert str(path) in text and f"{key}:" in text, text
    assert "Traceback" not in result.output
    assert not out.exists()  # nothing ran, nothing was written


def test_good_file_parses_unknowns_and_observations():
    spec = fit_from_dict(copy.deepcopy(GOOD), source="good.toml")
    assert [u.name for u in spec.unknowns] == ["v1_speed", "v1_steer"]
    assert spec.unknowns[0].bounds == (15.0, 28.0) and spec.unknowns[1].bounds is None
    assert spec.unknowns[1].spread == 1.0  # default max(0.1 |0.5|, 1)
    assert spec.observations[1].time == 0.4  # "end" = simulation.end_time
    assert spec.n_residuals == 4 and spec.options.starts == 3 and spec.options.max_iterations == 5


def test_bounds_map_is_smooth_and_inverts():
    problem = FitProblem(fit_from_dict(copy.deepcopy(GOOD)))
    x = np.array([[15.0 + 1e-9, -3.0], [21.5, 0.5], [28.0 - 1e-9, 40.0]])
    z = np.stack([problem.to_z(r) for r in x])
    back = np.stack([np.asarray(problem.to_x(r)) for r in z])
    # round trip through log/sigmoid: float64 relative rounding times |x| / (x - lo) near a bound
    np.testing.assert_allclose(back, x, rtol=1e-6, atol=1e-6)
    # any z maps strictly inside the bounds (the solver cannot leave them)
    far = np.asarray(problem.to_x(np.array([-30.0, 0.0]))), np.asarray(problem.to_x(np.array([30.0, 0.0])))
    assert 15.0 <= far[0][0] < 15.0 + 1e-9 and 28.0 - 1e-9 < far[1][0] <= 28.0
    assert math.isclose(float(problem.to_x(np.array([0.0, 2.0]))[1]), 0.5 + 2.0 * 1.0)  # initial + spread z
