"""Rest metrics (analysis/rest.py): rest position, heading and time, distance; their table columns."""
import numpy as np
import pytest

import jax

from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.status import Status
from jaxmedusa.io.medusa_files import read_models
from jaxmedusa.io.tables import scenarios_table
from jaxmedusa.study.spec import METRIC_GROUPS

from helpers import EXAMPLES, single

DT = 2e-4
# the settings of tests/solver/test_end_at_rest.py
SETTINGS = Settings(end_time=1.5, dt=DT, step_control="constant", save_every=0.01, contact=False,
                    end_condition="rest", rest_speed=0.2, rest_hold=0.2)
SPEEDS = (3.0, 1.5, 10.0)


@pytest.fixture(scope="module")
def run():
    from jaxmedusa.solver.simulate import simulate

    m = read_models(EXAMPLES / "offset" / "model.dat")[0]
    # braked to a crawl by the front tire speed, one of them steered; one free rolling (never at rest)
    sc = [single(m, speed=3.0, tire_speed=0.11), single(m, speed=1.5, tire_speed=0.11, steering_deg=10.0),
          single(m, speed=10.0)]
    batch, state = build_batch(sc, dt=DT)
    res = jax.device_get(simulate(batch, state, SETTINGS, tracker=Outcomes()))
    return batch, res, jax.device_get(outcome_arrays(batch, res.final, res.metrics, Outcomes()))


def test_distance_is_the_integral_of_the_sampled_speed(run):
    _, res, out = run
    for b, v0 in enumerate(SPEEDS):
        keep = np.asarray(res.samples.saved[b])
        t = np.asarray(res.samples.t[b])[keep]
        v = np.asarray(res.samples.v[b])[keep][:, 0]
        integral = np.trapezoid(np.hypot(v[:, 0], v[:, 1]), t)
        # Euler's r_n+1 - r_n = dt v_n sums the speed at each step's start: dt/2 (v_start -
        # v_end) above the exact integral; the trapezoid rule on 10 ms samples adds
        # (h^2 / 12) |delta a| < 1e-4 m for these decelerations (< 10 m/s^2)
        assert out["distance"][b, 0] == pytest.approx(integral, abs=0.5 * DT * v0 + 1e-4), b


def test_rest_position_heading_and_time(run):
    _, res, out = run
    for b in (0, 1):  # at rest: the final state, and the clock's still time
        assert out["rest_x"][b, 0] == float(res.final.vehicles.r[b, 0, 0])
        assert out["rest_y"][b, 0] == float(res.final.vehicles.r[b, 0, 1])
        assert out["rest_time"][b, 0] == float(res.final.clock.still_since[b, 0])
        # the run ended rest_hold after the vehicle became still (one step of slack, 2e-4 s)
        assert float(res.final.clock.t[b]) - out["rest_time"][b, 0] == pytest.approx(0.2, abs=DT + 1e-9)
        assert out["rest_heading"][b, 0] == pytest.approx(out["final_heading"][b, 0], abs=1e-12)
    # the steered car turned left (positive heading, degrees): by its path's curvature, with a
    # wheelbase of 2.5 m and 10 deg of steer its heading turns 0.07 rad per m (~ 4 deg/m) at low speed
    assert 0.0 < out["rest_heading"][1, 0] < 4.1 * out["distance"][1, 0]
    assert out["rest_time"][2, 0] == -1.0 and int(out["status"][2]) == Status.NOT_AT_REST


def test_rest_columns_are_null_where_the_vehicle_still_moves(run):
    _, _, out = run
    table = scenarios_table(np.arange(3), {}, out, 1, METRIC_GROUPS["rest"])
    assert table.column("status_name").to_pylist() == ["ok", "ok", "not_at_rest"]
    for col in ("v1_rest_x", "v1_rest_y", "v1_rest_heading", "v1_rest_time"):
        values = table.column(col).to_pylist()
        assert values[2] is None and values[0] is not None, col
    assert table.column("v1_distance").to_pylist()[2] == pytest.approx(15.0, rel=1e-9)  # 10 m/s for 1.5 s
    assert table.schema.field("v1_rest_heading").metadata[b"unit"] == b"deg"
