"""Static equilibrium: statics by hand, and a vehicle left at rest there stays put."""
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from jaxmedusa.build import build_batch
from jaxmedusa.analysis.equilibrium import pitch_deg, solve_equilibrium
from jaxmedusa.io.medusa_files import read_models
from jaxmedusa.core.params import Settings
from jaxmedusa.solver.simulate import simulate
from jaxmedusa_cli.app import app

from helpers import EXAMPLES, single


def test_wheel_loads_balance_weight_and_pitch_moment(models):
    m = models[0]
    eq = solve_equilibrium(m)
    weight = m.mass * 9.81
    assert eq.wheel_loads.sum() == pytest.approx(weight, rel=1e-9)
    # With H1 = H2 = 0 the axle loads are statically determinate: front = W L2 / (L1 + L2).
    front = weight * m.l2 / (m.l1 + m.l2)
    np.testing.assert_allclose(eq.wheel_loads, [front / 2, front / 2, (weight - front) / 2, (weight - front) / 2],
                               rtol=1e-9)
    # moments about the centre of mass balance (pitch and roll)
    assert (eq.wheel_loads[:2].sum() * m.l1 - eq.wheel_loads[2:].sum() * m.l2) == pytest.approx(0.0, abs=1e-6)
    assert (eq.wheel_loads[[0, 2]].sum() - eq.wheel_loads[[1, 3]].sum()) == pytest.approx(0.0, abs=1e-6)


def test_file_equilibrium_is_not_an_equilibrium(models):
    # Known problem (seeds README): model 1's file says pitch -4.3 deg, the truth is nearer -0.8 deg.
    eq = solve_equilibrium(models[0])
    assert pitch_deg(models[0].eq_F) == pytest.approx(-4.3, abs=0.05)
    assert pitch_deg(eq.F) == pytest.approx(-0.8, abs=0.05)


def test_vehicle_at_rest_at_equilibrium_stays_put(model1_at_equilibrium):
    settings = Settings(end_time=1.0, save_every=0.1)
    batch, state = build_batch([single(model1_at_equilibrium)], dt=settings.dt)
    res = simulate(batch, state, settings)
    r = np.asarray(res.samples.r[0, :, 0])[np.asarray(res.samples.saved[0])]
    assert np.max(np.abs(r - r[0])) < 1e-6
    assert np.max(np.abs(np.asarray(res.final.vehicles.F[0, 0]) - np.asarray(model1_at_equilibrium.eq_F))) < 1e-6


def test_cli_prints_a_model_file_that_reads_back(tmp_path):
    result = CliRunner().invoke(app, ["equilibrium", str(EXAMPLES / "offset" / "model.dat")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "model.dat"
    out.write_text(result.output)
    solved = read_models(out)
    assert len(solved) == 2
    assert pitch_deg(solved[0].eq_F) == pytest.approx(-0.79, abs=0.01)
    assert math.isclose(solved[1].mass, 1573.0)
