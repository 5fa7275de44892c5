"""Priors (infer/priors.py) against scipy.stats, and the maps onto R against finite
differences; the inference file's errors (exit code 2, file and key named)."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tomli_w
from typer.testing import CliRunner

from jaxmedusa.infer.priors import Prior
from jaxmedusa_cli.app import app

CASES = [Prior("normal", (20.0, 3.0)), Prior("uniform", (0.6, 0.9)), Prior("lognormal", (0.1, 0.4)),
         Prior("truncated_normal", (1.0, 2.0, 0.0, 4.0)), Prior("truncated_normal", (1.0, 2.0, 0.5, math.inf))]


@pytest.mark.parametrize("prior", CASES, ids=lambda p: p.describe())
def test_density_and_map(prior):
    dist = prior.scipy()
    x = dist.ppf(np.array([0.05, 0.3, 0.5, 0.8, 0.97]))
    # log densities equal scipy's to round-off (1e-12 relative of values of order 1-10)
    np.testing.assert_allclose(np.asarray(prior.log_pdf(jnp.asarray(x))), dist.logpdf(x), rtol=1e-12, atol=1e-12)
    u = prior.to_u(x)
    np.testing.assert_allclose(np.asarray(prior.to_x(jnp.asarray(u))), x, rtol=1e-10)  # inverse maps
    # log |dx/du| against a central difference (h = 1e-6: error ~ h^2 x''' ~ 1e-11)
    h = 1e-6
    fd = (np.asarray(prior.to_x(jnp.asarray(u + h))) - np.asarray(prior.to_x(jnp.asarray(u - h)))) / (2 * h)
    np.testing.assert_allclose(np.asarray(jax.vmap(prior.log_jacobian)(jnp.asarray(u))), np.log(fd), atol=1e-7)


BASE = {
    "scenario": {"path": "../../examples/straight"},
    "simulation": {"end_time": 0.1},
    "unknowns": {"v1_speed": {"path": "vehicles.1.speed", "prior": {"normal": [21.0, 1.0]}},
                 "v1_y": {"path": "vehicles.1.y", "initial": 0.0, "prior": {"normal": [0.0, 0.5]}}},
    "observations": [{"vehicle": 1, "time": "end", "x": 2.1, "sigma": {"x": 0.1}}],
}


def _write(tmp_path, table):
    from helpers import EXAMPLES
    table = {**table, "scenario": {"path": str(EXAMPLES / "straight")}}
    p = tmp_path / "bad.toml"
    p.write_bytes(tomli_w.dumps(table).encode())
    return p


@pytest.mark.parametrize("change, key, words", [
    ({"prior": {"gamma": [2.0, 1.0]}}, "unknowns.v1_speed.prior.gamma", "unknown prior family"),
    ({"prior": {"normal": [21.0, 0.0]}}, "unknowns.v1_speed.prior.normal", "must be > 0"),
    ({"prior": {"lognormal": [0.0, -1.0]}}, "unknowns.v1_speed.prior.lognormal", "must be > 0"),
    ({"prior": {"uniform": [25.0, 30.0]}, "initial": 21.0}, "unknowns.v1_speed.prior", "no support at the start"),
    ({"prior": {"uniform": [3.0, 1.0]}}, "unknowns.v1_speed.prior.uniform", "must be below"),
    (None, "unknowns", "no prior for v1_speed"),
])
def test_bad_files_exit_2(tmp_path, change, key, words):
    import copy
    table = copy.deepcopy(BASE)
    if change is None:
        del table["unknowns"]["v1_speed"]["prior"]
    else:
        table["unknowns"]["v1_speed"].update(change)
    path = _write(tmp_path, table)
    result = CliRunner().invoke(app, ["infer", str(path), "--no-progress"])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert str(path) in text and key in text and words in text, text


def test_bad_infer_option_exit_2(tmp_path):
    import copy
    table = copy.deepcopy(BASE)
    table["infer"] = {"likelihood": "cauchy"}
    path = _write(tmp_path, table)
    result = CliRunner().invoke(app, ["infer", str(path), "--no-progress"])
    assert result.exit_code == 2 and "infer.likelihood" in result.output
