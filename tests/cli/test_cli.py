"""The `jaxmedusa` command: run writes its tables; bad input gives a clear error, not a traceback."""
import pandas as pd
import pytest
from typer.testing import CliRunner

from jaxmedusa_cli.app import app

from helpers import EXAMPLES


def test_run_writes_trajectory_table(tmp_path):
    result = CliRunner().invoke(app, ["run", str(EXAMPLES / "straight"), "-t", "0.1", "-s", "0.02", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    table = pd.read_parquet(tmp_path / "straight" / "trajectory.parquet")
    assert list(table["time"].round(12)) == pytest.approx([0.0, 0.02, 0.04, 0.06, 0.08, 0.1])
    assert (table["vehicle"] == 1).all()
    assert table["x"].iloc[-1] == pytest.approx(2.2, rel=1e-9)  # 22 m/s free rolling for 0.1 s
    assert "status ok" in result.output
    # a MEDUSA folder names no shape: the MEDUSA law's own, contact.c's search
    assert "contact law medusa on shape medusa_search" in " ".join(result.output.split())
    t, n = 0.0, 0  # main.c's `while (t <= t2) t += dt` in doubles: the steps MEDUSA's rule takes
    while t <= 0.1:
        t, n = t + 5e-5, n + 1
    assert f"steps: {n} accepted, 0 rejected, 0 accepted in contact" in " ".join(result.output.split())


def test_run_reports_bad_input_without_traceback(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("model.dat", "road.dat"):
        (bad / name).write_text((EXAMPLES / "straight" / name).read_text())
    (bad / "platoon.dat").write_text("NUMBER_OF_VEHICLES 1\nVEHICLE_HAS_MODEL 7 INITIALLY_WITH X 0 Y 0\n")
    result = CliRunner().invoke(app, ["run", str(bad), "-t", "0.01", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "platoon.dat" in result.output and "line 2" in result.output
    assert "Traceback" not in result.output


def test_run_rejects_unknown_contact_names(tmp_path):
    for option, kind, valid in (("--contact-law", "contact law", "medusa, physical, crush"),
                                ("--contact-geometry", "contact shape", "superellipsoid, ellipsoid, box")):
        result = CliRunner().invoke(app, ["run", str(EXAMPLES / "straight"), "-t", "0.01", option, "soft",
                                          "--out", str(tmp_path)])
        out = " ".join(result.output.split())
        assert result.exit_code == 2, result.output
        assert f"unknown {kind} 'soft'" in out and valid in out and "Traceback" not in out
    assert not (tmp_path / "straight").exists()  # nothing ran
