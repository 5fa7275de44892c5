"""`jaxmedusa sensitivity`: a DGSM run end to end on the simulator, and bad input -> exit 2."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from jaxmedusa_cli.app import app

DATA = Path(__file__).resolve().parents[1] / "data"
# one worker under `pytest -n` (--dist loadgroup): tests/study/test_gradients.py and the DGSM run of
# tests/cli/test_sensitivity_cli.py compile the same forward-mode chunk (16 scenarios, 2 tangents)
pytestmark = pytest.mark.xdist_group("sens_offset_jvp")


def _study(tmp_path, old: str = "", new: str = "") -> Path:
    text = (DATA / "sens_offset.toml").read_text().replace("../../studies", str(DATA.parent.parent / "studies"))
    p = tmp_path / "s.toml"
    p.write_text(text.replace(old, new) if old else text)
    return p


def test_dgsm_run_writes_the_sensitivity_table(tmp_path):
    # the same study, chunk size and tangents as tests/study/test_gradients.py: one compilation
    study = _study(tmp_path, "[outputs]\n", '[outputs]\nsensitivity = ["v2_delta_v", "v2_final_y"]\n')
    out = tmp_path / "out"
    # 16 points: chunks of 16 with 2 tangents, the shape of tests/study/test_gradients.py (one compile)
    r = CliRunner().invoke(app, ["sensitivity", str(study), "--method", "dgsm", "--n", "16", "--out", str(out),
                                 "--no-progress"])
    assert r.exit_code == 0, r.output
    t = pd.read_parquet(out / "sensitivity.parquet")
    assert list(t.columns) == ["output", "parameter", "method", "index", "value", "conf"]
    assert len(t) == 2 * 2 * 2  # outputs x parameters x (nu, dgsm)
    s = pd.read_parquet(out / "scenarios.parquet")
    # nu by hand from the gradient columns: the mean of the squared derivative
    d = s["d_v2_delta_v_d_speed_difference"].to_numpy()
    nu = t[(t.output == "v2_delta_v") & (t.parameter == "speed_difference") & (t["index"] == "nu")]["value"].item()
    assert nu == pytest.approx(np.mean(d**2), rel=1e-14)  # summation order only
    dg = t[(t.output == "v2_delta_v") & (t.parameter == "speed_difference") & (t["index"] == "dgsm")]["value"].item()
    assert dg == pytest.approx(np.mean(d**2) * (4.0 - 2.0) ** 2 / (np.pi**2 * np.var(s["v2_delta_v"])), rel=1e-14)


def test_bad_method_and_distribution_exit_2_naming_them(tmp_path):
    study = _study(tmp_path)
    r = CliRunner().invoke(app, ["sensitivity", str(study), "--method", "fast"])
    assert r.exit_code == 2 and "--method" in r.output and "sobol, morris, dgsm" in r.output
    study = _study(tmp_path, "lateral_offset = { uniform = [0.2, 0.9],", "lateral_offset = { normal = [0.5, 0.1],")
    r = CliRunner().invoke(app, ["sensitivity", str(study), "--method", "morris"])
    assert r.exit_code == 2 and "parameters.lateral_offset" in r.output and "normal" in r.output
    r = CliRunner().invoke(app, ["sensitivity", str(study), "--method", "sobol", "--n", "3"])
    assert r.exit_code == 2 and "power of 2" in r.output
