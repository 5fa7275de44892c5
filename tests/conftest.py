"""Shared fixtures: the report's Appendix C models and small scenario builders."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# CLI tests run the `jaxmedusa` app, which turns JAX's persistent compilation cache on in the
# user's cache folder: tests must not write there, and each run must compile cold as CI does
# (tests of the cache itself set the variable themselves).
os.environ.setdefault("JAXMEDUSA_COMPILE_CACHE", "0")

# One persistent compilation cache for the whole test run, in a fresh temporary folder that the
# run's processes share: the first process (pytest itself, or the xdist controller, whose
# environment its workers and every CLI subprocess inherit) creates it; the one that created it
# removes it at the end. A run starts as cold as CI, but a program compiled a second time (in
# the other xdist worker, in a `jaxmedusa` subprocess, or in this process by a new jit of the
# same function) is loaded instead. JAX reads the JAX_* variables when it is imported, so they
# are set before jaxmedusa is; every program is written (min compile time 0: the small
# helpers of a run compile in 0.1-0.5 s each and add up).
_CACHE_ENV = "JAXMEDUSA_TEST_JAX_CACHE"  # its folder; "0" keeps the run without it (to time one against the other)
_OWN_CACHE = _CACHE_ENV not in os.environ
if _OWN_CACHE:  # (a user's own JAX_COMPILATION_CACHE_DIR would make the run warm: replaced)
    os.environ[_CACHE_ENV] = tempfile.mkdtemp(prefix="jaxmedusa-tests-jit-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = os.environ[_CACHE_ENV]
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"

import jax  # noqa: E402

import jaxmedusa  # noqa: F401,E402  (enables float64)

if os.environ[_CACHE_ENV] != "0":  # (should a plugin have imported JAX before this file: the same by hand)
    jax.config.update("jax_compilation_cache_dir", os.environ[_CACHE_ENV])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

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


def pytest_unconfigure(config):
    """Remove the run's compilation cache (only in the process that created it)."""
    if _OWN_CACHE:
        shutil.rmtree(os.environ[_CACHE_ENV], ignore_errors=True)
