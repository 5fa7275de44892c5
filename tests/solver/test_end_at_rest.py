"""end_condition = "rest": runs that end once every vehicle is still, end_time the limit.

The vehicles slow down by their driven front wheels: a front tire speed of 0.11 m/s (above
the 0.1 m/s free-rolling limit, physics/vehicle.py) brakes the car through the longitudinal
slip 1 - 0.11 / vx, down to a crawl at 0.11 m/s, below the test's rest_speed of 0.2 m/s.
A car whose front wheels roll freely keeps its speed and never comes to rest.
"""
import dataclasses

import jax
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.status import Status
from jaxmedusa.io.medusa_files import read_models
from jaxmedusa.solver.end_condition import wheel_reach, yaw_rate
from jaxmedusa.solver.simulate import simulate

from helpers import EXAMPLES, single

SAVE = 0.01  # [s]
HOLD = 0.2  # [s]
REST_SPEED = 0.2  # [m/s]
# the constant control with 2e-4 s steps: a short compile, and no step size that depends on the batch
SETTINGS = Settings(end_time=1.5, dt=2e-4, step_control="constant", save_every=SAVE, contact=False,
                    end_condition="rest", rest_speed=REST_SPEED, rest_hold=HOLD)


@pytest.fixture(scope="module")
def model():
    return read_models(EXAMPLES / "offset" / "model.dat")[0]


@pytest.fixture(scope="module")
def scenarios(model):
    # braked from 3 m/s and from 1.5 m/s (rest at different times); free rolling at 10 m/s (never at rest)
    return [single(model, speed=3.0, tire_speed=0.11), single(model, speed=1.5, tire_speed=0.11),
            single(model, speed=10.0, tire_speed=0.0)]


@pytest.fixture(scope="module")
def batch_run(scenarios):
    batch, state = build_batch(scenarios, dt=SETTINGS.dt)
    return batch, jax.device_get(simulate(batch, state, SETTINGS))


def _saved(res, b):
    keep = np.asarray(res.samples.saved[b])
    return (np.asarray(res.samples.t[b])[keep], np.asarray(res.samples.v[b])[keep],
            np.asarray(res.samples.F[b])[keep], np.asarray(res.samples.W[b])[keep])


def _still_from(t, v, F, W, reach):
    """The moment the sampled motion last went below both thresholds, by linear
    interpolation of the sampled speed (module docstring of solver/end_condition.py)."""
    speed = np.hypot(v[:, 0, 0], v[:, 0, 1])
    turn = np.abs(np.asarray(yaw_rate(F[:, 0], W[:, 0]))) * reach
    excess = np.maximum(speed, turn) - REST_SPEED
    last_above = np.nonzero(excess >= 0.0)[0][-1]
    i = last_above
    return t[i] + (t[i + 1] - t[i]) * excess[i] / (excess[i] - excess[i + 1])


def test_run_stops_one_hold_after_every_speed_falls_below_the_threshold(batch_run):
    batch, res = batch_run
    reach = float(wheel_reach(np.asarray(batch.vehicle.X[0, 0])))
    stops = []
    for b in (0, 1):
        t, v, F, W = _saved(res, b)
        t_still = _still_from(t, v, F, W, reach)
        t_stop = float(res.final.clock.t[b])
        # The run stops on the first step whose end lies rest_hold after the first still
        # step: t_stop - t_still in [HOLD, HOLD + 2 dt]. t_still comes from samples 10 ms
        # apart, linearly interpolated; the speed's curvature over one interval moves that
        # crossing by far less than a save interval, the tolerance here.
        assert abs(t_stop - (t_still + HOLD)) <= SAVE, (b, t_stop, t_still)
        assert int(res.final.clock.status[b]) == Status.OK
        stops.append(t_stop)
        # the samples stop at the rest time: the last one is the state where the run stopped
        assert t[-1] == pytest.approx(t_stop, abs=1e-12)
        np.testing.assert_allclose(np.asarray(res.samples.r[b])[np.asarray(res.samples.saved[b])][-1],
                                   np.asarray(res.final.vehicles.r[b]), atol=1e-12)
        assert np.all(np.diff(t) > 0.0)
    assert stops[1] < stops[0] - 0.1  # the slower car rests sooner: different stop times in one batch


def test_run_that_meets_end_time_before_rest_is_flagged_and_keeps_its_rows(batch_run):
    _, res = batch_run
    assert int(res.final.clock.status[2]) == Status.NOT_AT_REST
    assert not Status.NOT_AT_REST.failed and Status.NAN.failed
    t, v, _, _ = _saved(res, 2)
    # every grid sample up to end_time is there: the run went to its limit
    np.testing.assert_allclose(t, np.arange(SETTINGS.n_samples) * SAVE, atol=1e-9)
    assert np.hypot(v[-1, 0, 0], v[-1, 0, 1]) > 9.0  # free rolling: still moving
    assert np.isfinite(np.asarray(res.final.vehicles.r[2])).all()


def test_each_scenario_of_a_mixed_batch_equals_its_run_alone(scenarios, batch_run):
    _, res = batch_run
    for b in (0, 2):  # one that rests, one that meets the limit
        batch, state = build_batch([scenarios[b]], dt=SETTINGS.dt)
        alone = jax.device_get(simulate(batch, state, SETTINGS))
        assert float(alone.final.clock.t[0]) == pytest.approx(float(res.final.clock.t[b]), abs=1e-12)
        assert int(alone.final.clock.steps[0]) == int(res.final.clock.steps[b])
        assert int(alone.final.clock.status[0]) == int(res.final.clock.status[b])
        # the same steps on the same numbers; batched and single-scenario programs may order a
        # sum differently: round-off over ~7000 steps of positions of ~3 m, far below 1e-9 m
        np.testing.assert_allclose(np.asarray(alone.final.vehicles.r[0]), np.asarray(res.final.vehicles.r[b]),
                                   rtol=0.0, atol=1e-9)


def test_checkpointed_loop_stops_at_the_same_step(scenarios, batch_run):
    _, res = batch_run
    batch, state = build_batch(scenarios[:2], dt=SETTINGS.dt)
    n = int(round(SETTINGS.end_time / SETTINGS.dt))
    ck = jax.device_get(simulate(batch, state, SETTINGS, record=False, adjoint="checkpointed", max_steps=n))
    for b in (0, 1):
        assert int(ck.final.clock.steps[b]) == int(res.final.clock.steps[b])
        np.testing.assert_allclose(np.asarray(ck.final.vehicles.r[b]), np.asarray(res.final.vehicles.r[b]),
                                   rtol=0.0, atol=1e-9)


def test_time_end_condition_runs_to_end_time(model):
    # the default: no rest, the run goes to end_time even though the car crawls
    s = dataclasses.replace(SETTINGS, end_condition="time", end_time=0.3)
    batch, state = build_batch([single(model, speed=0.15, tire_speed=0.11)], dt=s.dt)
    res = simulate(batch, state, s, record=False)
    assert float(res.final.clock.t[0]) == pytest.approx(0.3, abs=1e-9)
    assert int(res.final.clock.status[0]) == Status.OK


@pytest.mark.parametrize("changes, field", [({"rest_speed": 0.0}, "rest_speed"), ({"rest_hold": -1.0}, "rest_hold"),
                                            ({"end_condition": 3}, "end_condition")])
def test_impossible_settings_name_the_field(changes, field):
    with pytest.raises(ValueError, match=f"Settings.{field}"):
        Settings(**changes)


def test_files_and_options_with_impossible_rest_settings_exit_2(tmp_path):
    from typer.testing import CliRunner

    from jaxmedusa_cli.app import app

    folder = (EXAMPLES / "straight").as_posix()
    for table, key in (('end_condition = "stopped"', "simulation.end_condition"), ("rest_speed = 0.0", "simulation.rest_speed"),
                       ("rest_hold = -0.5", "simulation.rest_hold")):
        scen = tmp_path / "scenario.toml"
        scen.write_text(f'[medusa]\nfolder = "{folder}"\n[simulation]\n{table}\n')
        res = CliRunner().invoke(app, ["run", str(scen), "-t", "0.01", "--out", str(tmp_path)])
        assert res.exit_code == 2 and key in " ".join(res.output.split()), res.output
    res = CliRunner().invoke(app, ["run", str(EXAMPLES / "straight"), "-t", "0.01", "--end-condition", "halt",
                                   "--out", str(tmp_path)])
    assert res.exit_code == 2 and "valid: time, rest" in " ".join(res.output.split()), res.output
