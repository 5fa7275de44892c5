"""`jaxmedusa sensitivity --method sobol|morris` end to end through the simulator, on the
tests' offset study (tests/data/sens_offset.toml: crush law, fixed steps, 0.3 s) with its
`[sampler]` table removed, as docs/sensitivity.md says the method's design replaces it.

Physics: vehicle 2's change of speed in the offset rear-end collision is set by the closing
speed (momentum: delta_v2 = m1 / (m1 + m2) (1 + e) dv for a central impact, so delta_v2 grows
linearly with dv over 2-4 m/s, by ~1 m/s); the lateral offset (0.2-0.9 m) only moves the
contact off the centre line, which turns momentum into yaw and changes delta_v2 by much less.
So speed difference must dominate delta_v, in either method's main index."""
from pathlib import Path
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from jaxmedusa.core.status import Status
from jaxmedusa_cli.app import app

DATA = Path(__file__).resolve().parents[1] / "data"
# one worker under `pytest -n` (--dist loadgroup): both designs run one compiled chunk shape
pytestmark = pytest.mark.xdist_group("sens_offset_sweep")


def _study_without_sampler(tmp_path) -> Path:
    text = (DATA / "sens_offset.toml").read_text().replace("../../studies", str(DATA.parent.parent / "studies"))
    text, n = re.subn(r"\[sampler\]\nkind = \"sobol\"\nn = 4\n", "", text)
    assert n == 1 and "[sampler]" not in text
    # no gradient columns: the plain sweep's compiled loop; both designs run in chunks of 12
    # scenarios (sobol 24 = 2 x 12, morris 12): one compiled shape
    text = re.sub(r"gradients = .*\n", "", text)
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


def _run(tmp_path, method: str, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    out = tmp_path / method
    r = CliRunner().invoke(app, ["sensitivity", str(_study_without_sampler(tmp_path)), "--method", method,
                                 "--n", str(n), "--out", str(out), "--no-progress",
                                 "--batch", "12"])
    assert r.exit_code == 0, r.output  # before the fix: exit 2, "sampler.n: ... got None"
    return pd.read_parquet(out / "sensitivity.parquet"), pd.read_parquet(out / "scenarios.parquet")


def _index(t: pd.DataFrame, output: str, parameter: str, index: str) -> float:
    return t[(t.output == output) & (t.parameter == parameter) & (t["index"] == index)]["value"].item()


def test_sobol_on_a_study_without_sampler_ranks_speed_difference_first_for_delta_v(tmp_path):
    t, s = _run(tmp_path, "sobol", 4)
    assert len(s) == 4 * (2 * 2 + 2)  # Saltelli: N (2D + 2) runs, D = 2
    assert (s["status"] == Status.OK).all()
    st = t[t["index"].isin(["S1", "ST"])]
    assert np.isfinite(st["value"]).all()
    # dv dominates delta_v: its total index is the larger one; with N = 4 the estimates are
    # rough (a confidence half-width of ~0.3 is typical), so only the order is asserted, and
    # that dv alone explains more than half of delta_v's variance (ST_dv > 0.5).
    st_dv = _index(t, "v2_delta_v", "speed_difference", "ST")
    st_y = _index(t, "v2_delta_v", "lateral_offset", "ST")
    assert st_dv > st_y and st_dv > 0.5, (st_dv, st_y)
    # examples/sensitivity_figures.py draws docs/sensitivity.md's bars from such a table
    # (reduced: this run's table, into this test's folder): a PNG of the expected panels
    import importlib.util

    from PIL import Image

    spec = importlib.util.spec_from_file_location(
        "sensitivity_figures", Path(__file__).resolve().parents[2] / "examples" / "sensitivity_figures.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    png = example.sobol_bars(tmp_path / "sobol" / "sensitivity.parquet", folder=tmp_path / "fig")
    assert png == tmp_path / "fig" / "offset_sobol.png"
    with Image.open(png) as im:
        n_outputs = t["output"].nunique()
        assert im.size[0] == round(2.3 * n_outputs * 90)  # one 2.3-inch panel per output at 90 dpi


def test_morris_on_a_study_without_sampler_ranks_speed_difference_first_for_delta_v(tmp_path):
    t, s = _run(tmp_path, "morris", 4)
    assert len(s) == 4 * (2 + 1)  # N (D + 1) runs
    assert (s["status"] == Status.OK).all()
    mu_star = t[t["index"] == "mu_star"]
    assert np.isfinite(mu_star["value"]).all() and (mu_star["value"] >= 0).all()
    m_dv = _index(t, "v2_delta_v", "speed_difference", "mu_star")
    m_y = _index(t, "v2_delta_v", "lateral_offset", "mu_star")
    # mu_star is the mean |elementary effect| over a step of 2/3 of each range, in m/s of
    # delta_v: dv's step (1.33 m/s of closing speed) moves delta_v2 by a fraction of it
    assert m_dv > m_y and m_dv > 0.1, (m_dv, m_y)
