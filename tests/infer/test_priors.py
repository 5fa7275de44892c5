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
    "scenario": {},  # set by _write (helpers.EXAMPLES)
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


@pytest.mark.parametrize("option, key", [({"likelihood": "cauchy"}, "infer.likelihood"),
                                         ({"mass_matrix": "full"}, "infer.mass_matrix"),
                                         ({"target_accept": 1.0}, "infer.target_accept")])
def test_bad_infer_option_exit_2(tmp_path, option, key):
    import copy
    table = copy.deepcopy(BASE)
    table["infer"] = option
    path = _write(tmp_path, table)
    result = CliRunner().invoke(app, ["infer", str(path), "--no-progress"])
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and key in text and str(path) in text, text


def test_mass_matrix_default_by_unknowns():
    """dense up to DENSE_MAX_UNKNOWNS unknowns, unless the file says otherwise."""
    import copy

    from helpers import EXAMPLES
    from jaxmedusa.infer import infer_from_dict
    table = copy.deepcopy(BASE)
    table["scenario"] = {"path": str(EXAMPLES / "straight")}
    assert infer_from_dict(table).dense_mass
    table["infer"] = {"mass_matrix": "diagonal"}
    assert not infer_from_dict(table).dense_mass


def test_likelihoods_equal_scipy():
    """likelihood.log_likelihood: sum of scipy's normal / Student-t log densities of the
    observations (observed = model + sigma e), to round-off."""
    from scipy import stats

    from jaxmedusa.infer.likelihood import log_likelihood
    r = np.array([0.3, -1.2, 2.5, 7.0])
    sigma = np.array([0.05, 0.05, 0.5, 0.1])
    np.testing.assert_allclose(float(log_likelihood(jnp.asarray(r), sigma)),
                               np.sum(stats.norm.logpdf(r * sigma, scale=sigma)), rtol=1e-12)
    np.testing.assert_allclose(float(log_likelihood(jnp.asarray(r), sigma, "student_t", 3.5)),
                               np.sum(stats.t.logpdf(r * sigma, df=3.5, scale=sigma)), rtol=1e-12)


def test_friction_sets_the_peak_at_the_reference_load():
    """model._with_friction: CALSPAN's eq (1.20) peak friction (calspan.peak_friction, the
    simulator's own function) at Fz0 equals the requested mu; Fiala's mu_p is mu and its
    slide/peak ratio is kept."""
    from jaxmedusa.infer.model import REFERENCE_WHEEL_LOAD, _with_friction
    from jaxmedusa.physics.tire import TIRES
    from jaxmedusa.physics.tire.calspan import peak_friction
    calspan = TIRES.resolve("calspan", where="test").params(None)
    for mu in (0.6, 0.75, 0.9):
        p = _with_friction(calspan, jnp.asarray(mu))
        assert abs(float(peak_friction(REFERENCE_WHEEL_LOAD, p)) - mu) < 1e-12
    fiala = TIRES.resolve("fiala", where="test").params(None)
    p = _with_friction(fiala, jnp.asarray(0.7))
    assert abs(float(p.mu_p) - 0.7) < 1e-15
    assert abs(float(p.mu_s / p.mu_p) - float(fiala.mu_s / fiala.mu_p)) < 1e-12
