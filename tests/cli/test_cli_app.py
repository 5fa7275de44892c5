"""The study commands through the real `jaxmedusa` app (jaxmedusa_cli.app, as installed):
sweep whole and in shards, merge, show; bad input exits 2; a command group that fails to
import is an error, not a missing command; `jaxmedusa run` imports only what it uses."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from jaxmedusa_cli import run_commands
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
    group = typer.main.get_command(app)
    with group.make_context("jaxmedusa", []) as ctx:
        for name in ("run", "equilibrium", "sweep", "merge", "show"):
            assert name in group.list_commands(ctx) and group.get_command(ctx, name).name == name


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
    # the study commands are imported when called (app.py loads command groups lazily): a
    # module that fails to import is an ImportError then, never a silently missing command
    monkeypatch.setitem(sys.modules, "jaxmedusa_cli.study_commands", None)  # import fails
    monkeypatch.delattr(importlib.import_module("jaxmedusa_cli"), "study_commands", raising=False)
    app_module = importlib.import_module("jaxmedusa_cli.app")
    app_module._group.cache_clear()
    res = CliRunner().invoke(app, ["sweep", "--help"])
    app_module._group.cache_clear()
    assert res.exit_code != 0 and isinstance(res.exception, ImportError)


def test_help_lists_every_command():
    out = CliRunner().invoke(app, ["--help"]).output
    for name in ("run", "equilibrium", "sweep", "show", "merge", "sensitivity", "fit", "plot", "animate"):
        assert f" {name} " in out, (name, out)


# Heavy libraries only some commands need: importing them took 1.5-2 s of every `jaxmedusa run`.
HEAVY = ("matplotlib", "scipy.stats", "scipy.signal", "optimistix", "SALib", "ray")


@pytest.mark.parametrize("module", ["jaxmedusa_cli.app", "jaxmedusa_cli.run_commands"])
def test_the_run_command_does_not_import_what_it_does_not_use(module):
    code = f"import sys, {module}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "", f"{module} imports {out.strip()}"
    # and the check can fail: the study commands do import scipy.stats (their samplers)
    code = "import sys, jaxmedusa_cli.study_commands; print('scipy.stats' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "True"


def test_no_command_runs_the_default_example(monkeypatch):
    # `jaxmedusa` alone is `jaxmedusa run` with run's defaults (the click command is invoked
    # with an empty argument list; calling the function itself left its defaults unparsed)
    class Called(Exception):
        pass

    def fake_run_scenario(path, **kw):
        raise Called(path, kw)

    monkeypatch.setattr(run_commands, "run_scenario", fake_run_scenario)
    res = CliRunner().invoke(app, ["--no-compile-cache"])
    assert isinstance(res.exception, Called), res.output
    path, kw = res.exception.args
    assert path == run_commands.DEFAULT_EXAMPLE and kw["end_time"] is None and kw["dt"] is None
