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


# Seconds each xdist group takes in a default run on a 2-core CPU (`pytest -n 2`), summed
# over its tests: the larger of a run of main under light load (2026-11-26, --durations) and
# half a run under a load of two more processes (per-test wall clock); groups under ~8 s are
# left out. Measured, not counted: the cost of a group is mostly its compiled loops (1-90 s
# each), which depend on shapes, settings and shape functions that no collection-time count
# sees. Only the order of the groups depends on these figures: a stale one makes the run
# slower, never wrong.
GROUP_SECONDS = {
    "offset_medusa_search": 92,
    "crush_batches": 72,
    "sens_offset_jvp": 71,
    "tests/articulated/test_sway_critical_speed.py": 61,
    "tests/fit/test_fit_offset_example.py": 57,
    "tests/test_examples.py": 56,
    "tests/solver/test_simulate.py": 53,
    "tests/contact/test_contact.py": 51,
    "tests/study/test_study.py": 39,
    "tests/solver/test_save_grid.py": 38,
    "tests/study/test_ray.py": 35,
    "tests/infer/test_infer_cli.py": 35,
    "tests/contact/test_medusa_search.py": 34,
    "tests/contact/test_contact_dynamics.py": 33,
    "tests/study/test_interrupt.py": 32,
    "tests/analysis/test_crash_calibration.py": 32,
    "tests/fit/test_rest_derivative_collision.py": 32,
    "tests/analysis/test_outcomes.py": 31,
    "tests/infer/test_mass_prior.py": 31,
    "tests/core/test_executable_cache.py": 31,
    "tests/solver/test_reverse_gradient.py": 31,
    "tests/study/test_precision.py": 30,
    "tests/infer/test_calibration.py": 29,
    "tests/contact/test_contact_gradient.py": 23,
    "tests/analysis/test_step_counts.py": 21,
    "tests/infer/test_chain_devices.py": 20,
    "tests/contact/test_branchless.py": 19,
    "tests/solver/test_failure_isolation.py": 19,
    "sens_offset_sweep": 18,
    "tests/physics/test_road_dynamics.py": 17,
    "tests/articulated/test_jackknife.py": 16,
    "tests/solver/test_adjoint.py": 16,
    "tests/solver/test_energy_balance.py": 15,
    "tests/infer/test_dense_mass.py": 15,
    "tests/physics/test_tire_fiala.py": 14,
    "tests/contact/test_implicit_gradients.py": 14,
    "tests/io/test_tables_values.py": 14,
    "tests/contact/test_law_x_shape.py": 13,
    "tests/articulated/test_trailer_study_paths.py": 13,
    "tests/infer/test_gradient_modes.py": 13,
    "tests/solver/test_step_controls.py": 12,
    "tests/analysis/test_crash_pulse.py": 12,
    "tests/fit/test_fit_brake.py": 12,
    "tests/fit/test_fit_recovery.py": 11,
    "tests/articulated/test_semitrailer_statics.py": 10,
    "tests/plot/test_plan_view.py": 10,
    "tests/fit/test_fit_crush.py": 10,
    "tests/plot/test_animate_cli.py": 9,
    "tests/contact/test_gauge_derivatives.py": 9,
    "tests/physics/test_axles.py": 9,
    "tests/analysis/test_locked_stop.py": 9,
    "tests/articulated/test_joint_limits.py": 9,
    "tests/study/test_sharding.py": 9,
    "tests/solver/test_step_control.py": 8,
}
# A group not in the table: this many seconds a test (most small tests take 0.1-1 s).
UNLISTED_SECONDS_PER_TEST = 0.3


def _group(item) -> str:
    mark = item.get_closest_marker("xdist_group")
    return mark.kwargs.get("name", mark.args[0] if mark.args else "default")


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups into the node ids
def pytest_collection_modifyitems(config, items):
    """Under `pytest -n` (`--dist loadgroup`, pyproject.toml) every test that names no
    xdist_group joins its file's: a file runs on one worker, so its module fixtures and cached
    runs (and the loops they compile, 10-90 s each on a 2-core machine) are built once. Without
    this each test is a unit of its own, the two workers take turns through a file, and both
    compile what the file shares.

    In an xdist worker the groups are then ordered heaviest first (GROUP_SECONDS), the tests
    of a group in their own order: the scheduler hands the groups out in this order
    (pytest_configure turns xdist's reordering by test count off), so the long groups start
    while the other worker has work, and the run ends on small groups instead of one worker
    alone on a minute-long one. A run without -n keeps pytest's order."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    if not hasattr(config, "workerinput"):
        return
    groups = [_group(item) for item in items]
    count, first = {}, {}
    for k, g in enumerate(groups):
        count[g] = count.get(g, 0) + 1
        first.setdefault(g, k)

    def weight(g):
        return GROUP_SECONDS.get(g, UNLISTED_SECONDS_PER_TEST * count[g])

    order = sorted(range(len(items)), key=lambda k: (-weight(groups[k]), first[groups[k]], k))
    items[:] = [items[k] for k in order]


def pytest_configure(config):
    # xdist hands out groups by their number of tests unless told not to; the order is ours
    if getattr(config.option, "dist", "no") == "loadgroup":
        config.option.loadscopereorder = False

