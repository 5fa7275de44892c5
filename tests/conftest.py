"""Shared fixtures: the report's Appendix C models and small scenario builders."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# One compilation cache for the whole test run (core/compile_cache.py): a folder made new by
# the run's first process, shared by the xdist workers and by the CLI processes that tests
# start (they inherit the variable), removed at the end. The same program (the offset study's
# loop, the report's examples) is compiled by several tests, on both workers and in child
# processes; with the cache it compiles once per run (few do: 16 s of compilation saved in a
# default run on 2 cores, 2026-11-26). Every run starts empty, as on CI, and
# never touches the user's cache folder. A loaded program is the one compiled, bit for bit
# (tests/core/test_executable_cache.py). Tests of the cache itself set the variable
# themselves; JAXMEDUSA_COMPILE_CACHE=0 in the environment turns it off for a run.
if "JAXMEDUSA_COMPILE_CACHE" not in os.environ:
    os.environ["JAXMEDUSA_COMPILE_CACHE"] = tempfile.mkdtemp(prefix="jaxmedusa-test-cache-")
    _OWN_CACHE = os.environ["JAXMEDUSA_COMPILE_CACHE"]  # this process made it: it removes it
else:
    _OWN_CACHE = None

import jaxmedusa  # noqa: F401  (enables float64)
from jaxmedusa.core import compile_cache
from jaxmedusa.io.medusa_files import read_models

from helpers import EXAMPLES, single

compile_cache.enable()  # in this process too: a library test compiles what a CLI test compiled


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
# over its tests: a run of main on the idle machine with the run's shared compilation cache
# (2026-11-26, --durations); groups under ~8 s are left out. Measured, not counted: the cost
# of a group is mostly its compiled loops (1-40 s each), which depend on shapes, settings and
# shape functions that no collection-time count sees. Only the order of the groups depends on
# these figures: a stale one makes the run slower, never wrong.
GROUP_SECONDS = {
    "tests/infer/test_calibration.py": 85,  # 25 s + about 60 s of the contact SBC (2026-11-26)
    "offset_medusa_search": 62,
    "sens_offset_jvp": 54,
    "tests/infer/test_worked_example_gradient.py": 45,  # measured alone, 2026-11-26
    "tests/fit/test_fit_offset_example.py": 43,
    "tests/test_examples.py": 42,
    "crush_batches": 36,
    "tests/solver/test_simulate.py": 35,
    "tests/contact/test_contact.py": 33,
    "tests/solver/test_save_grid.py": 30,
    "tests/analysis/test_outcomes.py": 29,
    "tests/study/test_study.py": 28,
    "tests/study/test_precision.py": 27,
    "tests/contact/test_medusa_search.py": 27,
    "tests/infer/test_mass_prior.py": 27,
    "tests/core/test_executable_cache.py": 26,
    "tests/solver/test_reverse_gradient.py": 24,
    "tests/contact/test_law_x_shape.py": 23,
    "tests/infer/test_infer_cli.py": 23,
    "tests/study/test_interrupt.py": 23,
    "tests/analysis/test_crash_calibration.py": 22,
    "tests/fit/test_rest_derivative_collision.py": 22,
    "tests/contact/test_contact_dynamics.py": 21,
    "tests/physics/test_road_dynamics.py": 21,
    "tests/physics/test_road.py": 19,
    "tests/solver/test_failure_isolation.py": 19,
    "tests/solver/test_adjoint.py": 18,
    "tests/articulated/test_sway_critical_speed.py": 17,  # the linearisation jitted (2026-11-27)
    "tests/solver/test_energy_balance.py": 16,
    "sens_offset_sweep": 16,
    "tests/contact/test_contact_gradient.py": 16,
    "tests/study/test_ray.py": 16,
    "tests/analysis/test_step_counts.py": 16,
    "tests/contact/test_implicit_gradients.py": 15,
    "tests/contact/test_gauge_derivatives.py": 15,
    "tests/infer/test_chain_devices.py": 15,
    "tests/analysis/test_crash_pulse.py": 14,
    "tests/infer/test_dense_mass.py": 14,
    "tests/fit/test_fit_brake.py": 14,
    "tests/plot/test_plan_view.py": 11,
    "tests/solver/test_step_controls.py": 11,
    "tests/infer/test_gradient_modes.py": 11,
    "tests/fit/test_fit_recovery.py": 11,
    "tests/physics/test_braking.py": 10,
    "tests/articulated/test_jackknife.py": 10,
    "tests/study/test_failure_sweep.py": 10,
    "tests/contact/test_branchless.py": 10,
    "tests/articulated/test_split_mu_jackknife.py": 10,
    "tests/io/test_tables_values.py": 10,
    "tests/cli/test_cli_app.py": 9,
    "tests/articulated/test_joint_limits.py": 9,
    "tests/contact/test_crush_law.py": 9,
    "tests/solver/test_step_control.py": 9,
    "tests/physics/test_axles.py": 8,
    "tests/fit/test_fit_crush.py": 8,
    "tests/articulated/test_semitrailer_statics.py": 8,
    "tests/physics/test_driver_tables.py": 8,
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



def pytest_unconfigure(config):
    if _OWN_CACHE is not None and not hasattr(config, "workerinput"):
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)
