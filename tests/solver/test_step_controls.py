"""Step controls (solver/step_control.py): each rule on hand-made clocks, then in a run."""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.state import ScenarioClock
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.solver.step_control import CONSTANT, MEDUSA, STEP_CONTROLS, StepProposal

S = Settings()  # main.c's constants: dt 5e-5, DT_MIN 5e-6, shrink 1.4641, grow 1.1, hold 100


def clock(dt, hold=-1, t=0.0):
    f = jnp.asarray
    return ScenarioClock(t=f(t), dt=f(dt), hold=f(hold, jnp.int32), t_saved=f(0.0), status=f(0, jnp.int32),
                         steps=f(0, jnp.int32))


def decide(control, c, touching):
    accept, dt, hold = control.decide(c, StepProposal(touching=jnp.asarray(touching)), S)
    return bool(accept), float(dt), int(hold)


def test_medusa_shrinks_and_redoes_a_step_in_contact_and_holds():
    accept, dt, hold = decide(MEDUSA, clock(5e-5), True)
    assert not accept and dt == 5e-5 / 1.4641 and hold == 100  # main.c: dt /= 1.4641, just_reduced = 100


def test_medusa_takes_the_step_in_contact_below_dt_min():
    accept, dt, hold = decide(MEDUSA, clock(4.9e-6, hold=40), True)
    assert accept and dt == 4.9e-6 and hold == 39  # no growth while touching


def test_medusa_holds_then_grows_by_1_1_up_to_the_initial_step():
    assert decide(MEDUSA, clock(1e-5, hold=5), False) == (True, 1e-5, 4)  # still holding
    assert decide(MEDUSA, clock(1e-5, hold=0), False) == (True, 1e-5, -1)  # the hold ends with this step
    accept, dt, hold = decide(MEDUSA, clock(1e-5, hold=-1), False)
    assert accept and dt == pytest.approx(1.1e-5, rel=1e-15) and hold == -2
    assert decide(MEDUSA, clock(5e-5, hold=-1), False)[1] == 5e-5  # never above settings.dt


def test_constant_takes_every_step_and_never_changes_dt():
    for touching in (False, True):
        assert decide(CONSTANT, clock(5e-5, hold=7), touching) == (True, 5e-5, 7)


def test_end_rules():
    end = S.end_time
    assert bool(MEDUSA.running(clock(5e-5, t=end), S)) and not bool(MEDUSA.running(clock(5e-5, t=end + 1e-12), S))
    # constant: the step that ends at end_time is the last, despite round-off in t
    assert bool(CONSTANT.running(clock(5e-5, t=end - 5e-5 - 1e-12), S))
    assert not bool(CONSTANT.running(clock(5e-5, t=end - 5e-5 * 0.4), S))


@pytest.fixture(scope="module")
def offset_run(examples):
    scenario, _ = load_scenario(examples / "offset")
    settings = Settings(end_time=1.0, save_every=0.05, contact_geometry="superellipsoid")
    batch, state = build_batch([scenario], dt=settings.dt)
    return batch, state, settings


def test_runs_under_each_control(offset_run):
    """The report's offset collision (contact from ~0.8 s): MEDUSA's control shrinks dt in
    contact but never below DT_MIN/1.4641 and ends after t > end_time; the constant control
    takes exactly end_time/dt steps of the initial dt."""
    batch, state, settings = offset_run
    med = simulate(batch, state, settings, record=False).final
    con = simulate(batch, state, dataclasses.replace(settings, step_control="constant"), record=False).final
    assert float(med.clock.t[0]) > 1.0 and int(med.clock.steps[0]) > 20000  # extra steps: shrunk in contact
    assert float(med.clock.dt[0]) >= S.dt_min / S.shrink
    assert int(con.clock.steps[0]) == 20000 and float(con.clock.dt[0]) == 5e-5
    assert float(con.clock.t[0]) == pytest.approx(1.0, abs=1e-9)  # 20000 additions of 5e-5: round-off only
    assert int(med.clock.status[0]) == int(con.clock.status[0]) == 0


def test_unknown_control_fails_before_tracing(offset_run):
    batch, state, settings = offset_run
    with pytest.raises(ValueError, match="unknown step control 'pi'; valid: medusa, constant"):
        simulate(batch, state, dataclasses.replace(settings, step_control="pi"), record=False)
