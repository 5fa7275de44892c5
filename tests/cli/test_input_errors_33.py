"""Input errors and smaller items of issue 33, each found before anything is compiled:
vehicles overlapping at t = 0, an end time shorter than one step, a binary file given as
TOML, a study given to `run` (a fit file to `sensitivity`); `show` on a run's table; the
--ray help; the sweep bar's rate; the sensitivity warning; the sweep map's design name; the
compile notice."""
from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from jaxmedusa.core.scenario import BarrierSpec
from jaxmedusa.io.medusa_files import read_medusa_folder
from jaxmedusa.io.overlap_check import initial_overlaps
from jaxmedusa_cli.app import app

from helpers import EXAMPLES, ROOT


class Simulated(Exception):
    pass


@pytest.fixture
def no_simulation(monkeypatch):
    def refuse(*a, **k):
        raise Simulated

    monkeypatch.setattr("jaxmedusa.run.build_batch", refuse)
    monkeypatch.setattr("jaxmedusa_cli.study_commands.run_study", refuse)


def _invoke(*args):
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res, " ".join(res.output.split())


def _offset(x2: float, y2: float = 0.4, yaw2: float = 0.0):
    s = read_medusa_folder(EXAMPLES / "offset")
    vehicles = [s.vehicles[0], replace(s.vehicles[1], x=x2, y=y2, orientation=yaw2)]
    return replace(s, vehicles=vehicles)


def test_overlap_depth_by_hand():
    """Contact boxes 4.0 m x 1.6 m (offset example's CONTACT 4.0 1.6 1.3). Side by side at
    x = 0 and 3 m, lateral offset 0.4 m: the boxes overlap by 4.0 - 3.0 = 1.0 m along x and
    1.6 - 0.4 = 1.2 m across, so the separating-axis depth is the smaller, 1.0 m. Turned by
    90 deg at x = 2.9 m, y = 0: vehicle 2 spans x in 2.9 -+ 0.8 = [2.1, 3.7], vehicle 1 ends
    at 2.0: apart by 0.1 m, no overlap. The example as printed (x2 = 6 m) is 2 m apart."""
    s = read_medusa_folder(EXAMPLES / "offset")
    assert s.models[0].contact_dims[:2] == (4.0, 1.6)
    found = initial_overlaps(_offset(3.0))
    assert len(found) == 1 and "vehicles 1 and 2" in found[0] and "by 1 m" in found[0], found
    assert initial_overlaps(_offset(2.9, 0.0, 90.0)) == []
    assert initial_overlaps(_offset(2.7, 0.0, 90.0))[0].endswith("overlap by 0.1 m at t = 0")  # 2.0 - (2.7 - 0.8)
    assert initial_overlaps(s) == []
    wall = BarrierSpec(kind="plane", position=(1.5, 0.0, 0.0), normal=(-1.0, 0.0, 0.0))  # nose at x = 2.0
    found = initial_overlaps(replace(_offset(-30.0), barriers=[wall]))  # vehicle 2 far on the free side
    assert found == ["vehicle 1 and barrier 1 (plane) overlap by 0.5 m at t = 0"], found


def test_run_refuses_overlap_unless_intended(tmp_path, no_simulation):
    scen = tmp_path / "overlap.toml"
    body = f'[medusa]\nfolder = "{EXAMPLES / "offset"}"\n[overrides.vehicles.2]\nx = 3.0\n'
    scen.write_text(body)
    res, out = _invoke("run", scen, "-t", "0.1", "--out", tmp_path / "o")
    assert res.exit_code == 2 and "vehicles 1 and 2 overlap by 1 m" in out and "intended_overlap" in out, out
    scen.write_text("intended_overlap = true\n" + body)
    res, out = _invoke("run", scen, "-t", "0.1", "--out", tmp_path / "o")
    assert isinstance(res.exception, Simulated), out  # accepted: the run would be built now


def test_end_time_shorter_than_one_step(tmp_path, no_simulation):
    res, out = _invoke("run", EXAMPLES / "straight", "-t", "1e-5", "--out", tmp_path)
    assert res.exit_code == 2 and "end_time 1e-05 s is shorter than one step (dt = 5e-05 s)" in out, out
    study = ROOT / "studies" / f".short-{tmp_path.name}.toml"  # beside offset.toml: its relative paths hold
    text = (ROOT / "studies" / "offset.toml").read_text()
    assert "end_time = 3.0" in text
    study.write_text(text.replace("end_time = 3.0", "end_time = 1e-5", 1))
    try:
        res, out = _invoke("sweep", study, "--out", tmp_path / "s")
    finally:
        study.unlink()
    assert res.exit_code == 2 and "shorter than one step" in out and str(study) in out, out
    assert not (tmp_path / "s").exists()  # refused before the output folder was touched


def test_binary_file_and_wrong_kinds_of_file_are_named(tmp_path):
    binary = tmp_path / "picture.toml"
    binary.write_bytes(bytes(range(256)) * 4)
    for cmd in ("run", "sweep", "fit"):
        res, out = _invoke(cmd, binary, "--out", tmp_path / "o")
        assert res.exit_code == 2 and str(binary) in out and "not a text file" in out, (cmd, out)
    res, out = _invoke("run", ROOT / "studies" / "offset.toml", "--out", tmp_path / "o")
    assert res.exit_code == 2 and "this is a study file" in out and "jaxmedusa sweep" in out, out
    assert "unknown key" not in out
    res, out = _invoke("sensitivity", ROOT / "studies" / "fit_offset.toml", "--out", tmp_path / "o")
    assert res.exit_code == 2 and "this is a fit file" in out and "jaxmedusa fit" in out, out


def test_show_on_a_run_table(tmp_path):
    meta = {"jaxmedusa.scenario": "offset", "jaxmedusa.vehicles": '[{"number": 1}, {"number": 2}]',
            "jaxmedusa.settings": '{"end_time": 0.02}', "jaxmedusa.status": "ok"}
    t = pa.table({"time": [0.0, 0.0, 0.01, 0.01, 0.02, 0.02], "vehicle": [1, 2] * 3}).replace_schema_metadata(meta)
    import pyarrow.parquet as pq

    (tmp_path / "run").mkdir()
    pq.write_table(t, tmp_path / "run" / "trajectory.parquet")
    for target in (tmp_path / "run" / "trajectory.parquet", tmp_path / "run"):
        res, out = _invoke("show", target)
        assert res.exit_code == 0, out
        assert "offset: a run of 2 vehicle(s), 6 rows" in out and "t = 0 .. 0.02 s" in out and "?" not in out, out


def test_ray_help_names_the_extra():
    res, out = _invoke("sweep", "--help")
    assert "jaxmedusa[ray]" in out, out


def test_sweep_bar_rate_is_scenarios_over_elapsed_time():
    """The bar's rate is the summary's: 3 scenarios in 10 s is 0.30 scen/s, whatever the
    last updates' pace (rich's own speed read 5.0 where the run did 0.3)."""
    from jaxmedusa.study.runner import progress_bar

    bar = progress_bar(False, 10)
    rate = bar.columns[3]
    assert str(rate.render(SimpleNamespace(completed=3, elapsed=10.0))) == "0.30 scen/s"
    assert str(rate.render(SimpleNamespace(completed=0, elapsed=None))) == "-- scen/s"


def test_sensitivity_warns_when_intervals_exceed_values():
    from jaxmedusa_cli.sensitivity_commands import uncertain_indices

    rows = pa.table({"output": ["a"] * 3, "parameter": ["x", "y", "z"], "index": ["ST"] * 3,
                     "value": [0.02, 0.5, -0.01], "conf": [1.0, 0.1, 0.5]})  # 50x, 0.2x, 50x
    assert uncertain_indices(rows, "ST") == (2, 3)
    assert uncertain_indices(rows.slice(1, 1), "ST") is None


def test_sweep_map_names_the_sampler():
    from jaxmedusa.plot.sweep_maps import SweepData

    d = SweepData(name="s", table=None, parameters=["a", "b"], grid=False, sampler="sobol")
    assert d.design == "sobol design"
    assert replace(d, sampler=None).design == "scattered design"


def test_compile_notice_gives_an_estimate(tmp_path, monkeypatch):
    from jaxmedusa.core import executable_cache
    from jaxmedusa.core.params import Settings
    from jaxmedusa_cli.compile_notice import FIRST_COMPILE_SECONDS, CompileNotice

    monkeypatch.setitem(executable_cache._state, "folder", tmp_path / "executables")
    n = CompileNotice("the offset scenario's loop", Settings(contact_geometry="medusa_search"), "run 2")
    line = n.line()
    assert line.startswith("compiling the offset scenario's loop, first time on this machine: about "
                           f"{FIRST_COMPILE_SECONDS['medusa_search']:.0f} s"), line
    n.done(93.4)
    again = CompileNotice("the offset scenario's loop", Settings(contact_geometry="medusa_search"), "run 2")
    assert again.line().startswith("loading") and "93 s" in again.line()
    assert math.isclose(again.seen, 93.4)


def test_xla_log_lines_are_hidden_by_the_command():
    """XLA's "Very slow compile?" alarm is a C++ LOG(ERROR) line; TF_CPP_MIN_LOG_LEVEL=3,
    which importing jaxmedusa_cli sets unless the user did, hides every such line. Shown
    with XLA's verbose INFO lines (TF_CPP_MAX_VLOG_LEVEL=1), which appear at level 0 (the
    control: the test could fail) and not after importing jaxmedusa_cli."""
    import os
    import subprocess
    import sys

    code = "import {} jax; jax.jit(lambda x: x + 1)(1.0)"
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env.update(TF_CPP_MAX_VLOG_LEVEL="1", JAX_PLATFORMS="cpu")
    shown = subprocess.run([sys.executable, "-c", code.format("")], env={**env, "TF_CPP_MIN_LOG_LEVEL": "0"},
                           capture_output=True, text=True, timeout=120)
    hidden = subprocess.run([sys.executable, "-c", code.format("jaxmedusa_cli,")], env=env, capture_output=True,
                            text=True, timeout=120)
    assert shown.returncode == 0 and hidden.returncode == 0, (shown.stderr[-2000:], hidden.stderr[-2000:])
    assert "I0000" in shown.stderr or ".cc:" in shown.stderr, shown.stderr[-2000:]
    assert ".cc:" not in hidden.stderr, hidden.stderr[-2000:]
