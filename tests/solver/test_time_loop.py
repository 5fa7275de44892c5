"""solver/time_loop.py: the dispatched time loop stays on XLA's thunk runtime, runs the same
steps as the loop compiled whole, and ends where it does."""
from __future__ import annotations

import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core import xla_flags
from jaxmedusa.core.params import Settings
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.solver.time_loop import while_loop

from helpers import EXAMPLES

SMALL_CALL = "xla_cpu_small_call"  # the attribute XLA gives a loop it compiled whole
ON = pytest.mark.skipif(jax.default_backend() != "cpu" or os.environ.get(xla_flags.OFF_VARIABLE, "1").strip() == "0",
                        reason="the forms concern XLA's CPU backend with jaxmedusa's options")


def _entry(hlo: str) -> str:
    return hlo[hlo.index("\nENTRY "):]


def _loop(form):
    def f(x):  # 3x3 products and a reduction, 37 iterations
        def body(c):
            i, x = c
            return i + 1, jnp.tanh(x @ x.T) + 1e-3 * jnp.sum(x)
        return while_loop(lambda c: c[0] < 37, body, (0, x), form)
    return jax.jit(f)


def test_both_forms_take_the_same_iterations_and_values():
    x = jnp.arange(9.0).reshape(3, 3) / 10
    (n_whole, x_whole), (n_disp, x_disp) = _loop("whole")(x), _loop("dispatched")(x)
    assert int(n_whole) == int(n_disp) == 37  # the token's test never ends the loop early
    # 37 tanh iterations of entries within [-1.01, 1.01]: round-off of a few ulp (1e-15) per step,
    # contracted by tanh' <= 1; 1e-13 bounds any difference of generated code
    np.testing.assert_allclose(np.asarray(x_disp), np.asarray(x_whole), rtol=0, atol=1e-13)


def test_an_unknown_form_is_refused():
    with pytest.raises(ValueError, match="time_loop"):
        _loop("sometimes")(jnp.ones((3, 3)))
    with pytest.raises(ValueError, match="Settings.time_loop"):
        Settings(time_loop="sometimes")


@ON
def test_the_dispatched_loop_is_left_to_the_thunk_runtime():
    hlo_whole = _loop("whole").lower(jnp.ones((3, 3))).compile().as_text()
    hlo_disp = _loop("dispatched").lower(jnp.ones((3, 3))).compile().as_text()
    while_op = re.compile(r"\) while\(")  # an instruction `%w = (tuple type) while(...)`
    assert SMALL_CALL in _entry(hlo_whole) and not while_op.search(_entry(hlo_whole))
    assert SMALL_CALL not in hlo_disp and while_op.search(_entry(hlo_disp))  # for the thunk runtime
    assert re.search(r"= s32\[2\]\S* sort\(", hlo_disp)  # the token XLA could not remove


@ON
def test_a_free_driving_run_is_the_same_either_way():
    """The offset example's two cars, contact off, 0.5 s of MEDUSA's adaptive steps: the same
    steps, and states within round-off of each other."""
    scenario, _ = load_scenario(EXAMPLES / "offset" / "scenario.toml")
    batch, state = build_batch([scenario], dt=5e-5)
    runs = {}
    for form in ("whole", "dispatched"):
        settings = Settings(end_time=0.5, contact=False, time_loop=form)
        hlo = simulate.lower(batch, state, settings, record=False).compile().as_text()
        assert (SMALL_CALL in _entry(hlo)) == (form == "whole")
        runs[form] = simulate(batch, state, settings, record=False).final
    whole, disp = runs["whole"], runs["dispatched"]
    assert int(whole.clock.steps[0]) == int(disp.clock.steps[0]) > 1000
    # free driving is not chaotic: a last-bit difference per step (2e-16 relative) stays below
    # 1e-12 m on positions of ~20 m and 1e-12 m/s on speeds of ~20 m/s over 10^4 steps
    np.testing.assert_allclose(np.asarray(disp.vehicles.r), np.asarray(whole.vehicles.r), rtol=0, atol=1e-12 * 20)
    np.testing.assert_allclose(np.asarray(disp.vehicles.v), np.asarray(whole.vehicles.v), rtol=0, atol=1e-12 * 20)
