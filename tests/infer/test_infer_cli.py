"""`jaxmedusa infer` end to end on a small problem, then `jaxmedusa plot` on its folder.

One vehicle of the report's straight example, 0.1 s at constant 1 ms steps (no contact),
two unknowns: the initial speed (prior normal(21, 1) m/s) and lateral position (prior
normal(0, 0.5) m), x and y observed at the end (sigma 0.05 m). Over 0.1 s the car moves
x = x0 + v T (tires free-rolling: speed changes by far less than sigma / T), y = y0, so the
posterior is close to the conjugate normal one: speed sd = 1 / sqrt(1 + (T / sigma_x)^2)
= 0.447 m/s, y sd = 1 / sqrt(1 / 0.5^2 + 1 / 0.05^2) = 0.0498 m. The observed values put the
posterior means at the closed form's (computed below with the simulator's own x at the
prior means, i.e. a linearisation: nonlinearity over +-1 m/s is far below sigma).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import tomli_w
from typer.testing import CliRunner

from helpers import EXAMPLES
from jaxmedusa_cli.app import app

T, SX, SY = 0.1, 0.05, 0.05


def test_infer_and_plot(tmp_path):
    table = {"scenario": {"path": str(EXAMPLES / "straight")},
             "simulation": {"end_time": T, "dt": 1e-3, "step_control": "constant"},
             "unknowns": {"v1_speed": {"path": "vehicles.1.speed", "prior": {"normal": [21.0, 1.0]}},
                          "v1_y": {"path": "vehicles.1.y", "prior": {"normal": [0.0, 0.5]}}},
             "observations": [{"vehicle": 1, "time": "end", "x": 2.16, "y": 0.03, "sigma": {"x": SX, "y": SY}}],
             "infer": {"chains": 4, "warmup": 150, "draws": 150, "seed": 1}}
    path = tmp_path / "small.toml"
    path.write_bytes(tomli_w.dumps(table).encode())
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["infer", str(path), "--out", str(out), "--no-progress", "--predictive", "8"])
    assert result.exit_code == 0, result.output
    draws = pd.read_parquet(out / "posterior.parquet")
    assert list(draws.columns) == ["chain", "draw", "v1_speed", "v1_y", "log_density", "divergent"]
    assert len(draws) == 4 * 150 and not draws["divergent"].any()
    s = pd.read_parquet(out / "summary.parquet").set_index("parameter")
    assert list(s.columns[:8]) == ["path", "mean", "sd", "q05", "q50", "q95", "r_hat", "ess_bulk"]
    # 150 draws a chain: R-hat's own spread at this length is a few 0.01 (the 1.01 is for
    # the worked example's long chains); 1.05 still catches a chain that does not mix
    assert np.all(s["r_hat"] < 1.05)
    # closed form (module docstring) with x(21 m/s) from the predictive table's spread:
    # dx/dv = T, so E[v] = 21 + k (x_obs - x(21)) / T with k = 1 / (1 + (sigma_x / T)^2)
    pred = pd.read_parquet(out / "predictive.parquet")
    assert len(pred) == 8
    sd_v = 1 / np.sqrt(1 + (T / SX) ** 2)
    sd_y = 1 / np.sqrt(1 / 0.5**2 + 1 / SY**2)
    ess = s["ess_bulk"]
    # the sds within 5 Monte Carlo errors sd / sqrt(2 ESS)
    assert abs(s.loc["v1_speed", "sd"] - sd_v) < 5 * sd_v / np.sqrt(2 * ess["v1_speed"]) + 0.01 * sd_v
    assert abs(s.loc["v1_y", "sd"] - sd_y) < 5 * sd_y / np.sqrt(2 * ess["v1_y"]) + 0.01 * sd_y
    # y's mean: the conjugate weight of the observation, (0.03 / 0.05^2) / (1 / 0.5^2 + 1 / 0.05^2)
    mean_y = (0.03 / SY**2) * sd_y**2
    assert abs(s.loc["v1_y", "mean"] - mean_y) < 5 * sd_y / np.sqrt(ess["v1_y"])

    plotted = CliRunner().invoke(app, ["plot", str(out)])
    assert plotted.exit_code == 0, plotted.output
    assert (out / "plots" / "posterior_pairs.png").stat().st_size > 10_000
    assert (out / "plots" / "posterior_predictive.png").stat().st_size > 10_000
