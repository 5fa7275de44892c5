"""The study commands through the real `jaxmedusa` app (jaxmedusa_cli.app, as installed):
sweep whole and in shards, merge, show; bad input exits 2; and the app refuses to start
without its study commands instead of silently dropping them."""
from __future__ import annotations

import importlib
import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

from jaxmedusa_cli.app import app

from helpers import EXAMPLES

STUDY = """
name = "cli-offset"
[scenario.medusa]
folder = "{folder}"
[scenario.road]
flat = true
[simulation]
end_time = 0.02
save_every = 0.01
contact = false
[sampler]
kind = "grid"
[parameters]
"vehicles.2.y" = {{ values = [-1.0, -0.3, 0.4, 1.2] }}
[outputs]
metrics = ["final"]
"""


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    path = tmp / "study.toml"
    path.write_text(STUDY.format(folder=(EXAMPLES / "offset").as_posix()))
    return tmp, path


def test_the_app_has_the_study_commands():
    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    assert {"run", "equilibrium", "sweep", "merge", "show"} <= names


def test_sweep_shards_merge_and_show(study):
    tmp, path = study
    whole = invoke("sweep", path, "--batch", 2, "--out", tmp / "whole", "--no-progress")
    assert whole.exit_code == 0, whole.output
    for i in (0, 1):
        r = invoke("sweep", path, "--batch", 2, "--shard", f"{i}/2", "--out", tmp / f"s{i}", "--no-progress")
        assert r.exit_code == 0, r.output
    merged = invoke("merge", tmp / "s0", tmp / "s1", "--out", tmp / "merged")
    assert merged.exit_code == 0, merged.output
    assert "4 scenarios joined" in merged.output
    a = pd.read_parquet(tmp / "whole" / "scenarios.parquet").sort_values("sample_id", ignore_index=True)
    b = pd.read_parquet(tmp / "merged" / "scenarios.parquet").sort_values("sample_id", ignore_index=True)
    assert list(a.sample_id) == [0, 1, 2, 3]
    # each chunk of 2 runs the same scenarios whether or not it is a shard: bit for bit
    pd.testing.assert_frame_equal(a, b[a.columns])
    # the parameter values of the grid, and their effect: vehicle 2 keeps its lateral place
    # in 0.02 s without contact or steering (it moves at most speed * heading ~ 0)
    assert list(a["vehicles.2.y"]) == [-1.0, -0.3, 0.4, 1.2]
    assert a["v2_final_y"].to_numpy() == pytest.approx(a["vehicles.2.y"].to_numpy(), abs=1e-6)
    # MEDUSA's step rule without contact: main.c's `while (t <= t2) t += dt` in doubles
    t, n = 0.0, 0
    while t <= 0.02:
        t, n = t + 5e-5, n + 1
    assert list(a.steps) == [n] * 4 and list(a.rejected_steps) == [0] * 4 and list(a.contact_steps) == [0] * 4
    shown = invoke("show", tmp / "merged")
    assert shown.exit_code == 0 and "4 of 4" in shown.output, shown.output
    assert "rejected_steps" in shown.output  # the counts are among the columns summarised


def test_bad_input_exits_2(study):
    tmp, _ = study
    r = invoke("sweep", tmp / "missing.toml")
    assert r.exit_code == 2 and "missing.toml" in r.output
    r = invoke("merge", tmp / "nowhere", "--out", tmp / "m2")
    assert r.exit_code == 2 and "nowhere" in r.output


def test_a_failing_study_import_is_an_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "jaxmedusa_cli.study_commands", None)  # import fails
    # `from jaxmedusa_cli import study_commands` reads the package attribute first: drop it
    monkeypatch.delattr(importlib.import_module("jaxmedusa_cli"), "study_commands", raising=False)
    monkeypatch.delitem(sys.modules, "jaxmedusa_cli.app")
    with pytest.raises(ImportError):
        importlib.import_module("jaxmedusa_cli.app")
