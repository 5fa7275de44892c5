"""One loop, two adjoints: the checkpointed loop gives the forward loop's numbers and
reverse-mode gradients, in-run tracker metrics included."""
from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

from jaxmedusa.analysis.outcomes import Outcomes
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.solver.simulate import simulate, simulate_fixed

SETTINGS = Settings(end_time=0.05, save_every=0.01, step_control="constant")  # 1000 steps of 5e-5 s


@pytest.fixture(scope="module")
def car(models, single_scenario):
    return build_batch([single_scenario(models[0], speed=20.0, steering_deg=2.0)], dt=SETTINGS.dt)


def test_checkpointed_loop_equals_the_while_loop(car):
    """Same step, same control: the bounded scan and the while loop take the same 1000
    steps. The arithmetic is the same; only XLA's fusion of the two loop bodies may differ
    (fused multiply-adds), so states and tracker metrics agree to round-off accumulated
    over 1000 steps: 1e-10 relative is ~1e6 ulps of room and far below any physics."""
    batch, state = car
    tracker = Outcomes()
    fwd = simulate(batch, state, SETTINGS, tracker=tracker)
    rev = simulate(batch, state, SETTINGS, tracker=tracker, adjoint="checkpointed")
    assert int(fwd.final.clock.steps[0]) == int(rev.final.clock.steps[0]) == 1000
    for a, b in zip(jax.tree.leaves((fwd.final, fwd.metrics, fwd.samples)),
                    jax.tree.leaves((rev.final, rev.metrics, rev.samples))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
    # simulate_fixed is the same loop with record=False
    fixed = simulate_fixed(batch, state, dataclasses.replace(SETTINGS, step_control="medusa"))
    np.testing.assert_allclose(np.asarray(fixed.vehicles.r), np.asarray(fwd.final.vehicles.r), rtol=1e-10)


def test_reverse_mode_through_a_tracker_metric(car):
    """d(max heading change)/d(steering) by jax.grad through the checkpointed loop equals
    a central finite difference. The heading change after 0.05 s is smooth in the steering
    offset (no contact, no lift-off); h = 1e-6 rad keeps the FD truncation error ~h^2 and
    its round-off ~1e-16/1e-6 relative, so rel 1e-5 is far above both."""
    batch, state = car
    tracker = Outcomes()

    def turn(offset):
        b = replace(batch, driver=replace(batch.driver, steer_values=batch.driver.steer_values + offset))
        res = simulate(b, state, SETTINGS, tracker=tracker, record=False, adjoint="checkpointed")
        return res.metrics.max_turn[0, 0]

    g = float(jax.grad(turn)(0.0))
    h = 1e-6
    fd = (float(turn(h)) - float(turn(-h))) / (2 * h)
    assert np.isfinite(g) and g > 0.0 and g == pytest.approx(fd, rel=1e-5)


def test_checkpointed_adaptive_control_needs_a_bound(car):
    batch, state = car
    with pytest.raises(ValueError, match="needs max_steps"):
        simulate(batch, state, dataclasses.replace(SETTINGS, step_control="medusa"), adjoint="checkpointed")


def test_finish_from_the_start_takes_the_whole_run_under_both_adjoints(car):
    """`finish` from t = 0: the checkpointed loop's default bound is the whole run (1000
    steps), not one save interval's (200): both adjoints end at end_time after 1000 steps."""
    from jaxmedusa.solver.simulate import finish

    batch, state = car
    fwd, _ = finish(batch, state, None, SETTINGS)
    rev, _ = finish(batch, state, None, SETTINGS, adjoint="checkpointed")
    assert int(fwd.clock.steps[0]) == int(rev.clock.steps[0]) == 1000
    np.testing.assert_allclose(float(rev.clock.t[0]), SETTINGS.end_time, rtol=1e-12)
