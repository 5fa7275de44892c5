"""Shared fixtures: the report's Appendix C models and small scenario builders."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

# CLI tests run the `jaxmedusa` app, which turns JAX's persistent compilation cache on in the
# user's cache folder: tests must not write there, and each run must compile cold as CI does
# (tests of the cache itself set the variable themselves).
os.environ.setdefault("JAXMEDUSA_COMPILE_CACHE", "0")

import jaxmedusa  # noqa: F401  (enables float64)
from jaxmedusa.io.medusa_files import read_models

from helpers import EXAMPLES, single


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


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups into the node ids
def pytest_collection_modifyitems(config, items):
    """Under `pytest -n` (`--dist loadgroup`, pyproject.toml) every test that names no
    xdist_group joins its file's: a file runs on one worker, so its module fixtures and cached
    runs (and the loops they compile, 10-90 s each on a 2-core machine) are built once. Without
    this each test is a unit of its own, the two workers take turns through a file, and both
    compile what the file shares."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
