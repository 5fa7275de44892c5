"""The fit worked example with contact (studies/fit_offset.toml, docs/fit.md), reduced: one
start, four Levenberg-Marquardt steps (about 1 s each; the compile is the rest), through `jaxmedusa fit`. The file's observations are
the simulator's values at the truth (vehicle 2 at 20 m/s, y = 0.4 m) rounded to 1 mm and
0.001 deg with no noise added, far inside the sigmas (0.05 m, 0.5 deg)."""
import math
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from jaxmedusa_cli.app import app

STUDIES = Path(__file__).resolve().parents[2] / "studies"


def test_fit_offset_recovers_vehicle_2_through_the_collision(tmp_path):
    text = (STUDIES / "fit_offset.toml").read_text()
    subs = [('folder = "medusa/offset"', f'folder = "{(STUDIES / "medusa" / "offset").as_posix()}"'),
            ("initial = 16.0", "initial = 18.5"), ("initial = -0.3", "initial = 0.1"),
            ("starts = 4", "starts = 1"), ("max_iterations = 12", "max_iterations = 4")]
    for old, new in subs:
        assert old in text, old
        text = text.replace(old, new)
    assert 'contact_law = "crush"' in text  # the example's collision, as the file runs it
    path = tmp_path / "fit.toml"
    path.write_text(text)
    r = CliRunner().invoke(app, ["fit", str(path), "--out", str(tmp_path / "out"), "--no-progress"])
    assert r.exit_code == 0, r.output
    fit = pd.read_parquet(tmp_path / "out" / "fit.parquet")
    est = dict(zip(fit["parameter"], fit["estimate"]))
    se = dict(zip(fit["parameter"], fit["std_error"]))
    res = pd.read_parquet(tmp_path / "out" / "residuals.parquet")
    assert len(res) == 6
    # What the observations allow, from the sigmas alone: the only error in them is the
    # rounding, at most half a unit (0.5 mm of 0.05 m, 0.0005 deg of 0.5 deg), so at the truth
    # chi^2 <= 4 (0.0005 / 0.05)^2 + 2 (0.0005 / 0.5)^2 = 4.02e-4, and the least-squares fit
    # can only end lower (docs/fit.md: 1.6e-4 at the truth, 6.9e-5 fitted).
    chi2_rounding = 4 * (0.0005 / 0.05) ** 2 + 2 * (0.0005 / 0.5) ** 2
    chi2 = float((res["normalized"] ** 2).sum())
    assert chi2 <= chi2_rounding, res
    # In the linearised problem, estimate - truth = (J^T W J)^-1 J^T W^(1/2) d with d the
    # normalized rounding errors, and row i of that matrix has norm std_error_i: so
    # |estimate_i - truth_i| <= std_error_i |d| <= std_error_i sqrt(4.02e-4) = 0.020 std errors
    # (Cauchy-Schwarz); the fit of docs/fit.md is at 0.002 and 0.010. Recovered through contact:
    bound = math.sqrt(chi2_rounding)
    assert abs(est["v2_speed"] - 20.0) <= bound * se["v2_speed"], (est, se)
    assert abs(est["v2_offset"] - 0.4) <= bound * se["v2_offset"], (est, se)
    # the std errors themselves, (J^T W J)^-1 at the estimate: docs/fit.md's full fit gives
    # 0.0275 m/s and 0.0308 m; a factor 1.5 either way (a Jacobian that lost or doubled a
    # term through the contact) fails
    assert 0.018 < se["v2_speed"] < 0.041 and 0.02 < se["v2_offset"] < 0.046, se
