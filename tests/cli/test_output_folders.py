"""Output folders (issue 33, items 3 and 4): every output problem is an exit-2 message naming
the path, found before anything is built or compiled; one kind of results per folder (a
marker file), refused unless --overwrite; pictures of replaced results removed; atomic
writes keep earlier files whole when a write fails; runs and studies have distinct default
folders."""
from __future__ import annotations

import errno
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from jaxmedusa.io import tables
from jaxmedusa.io.output_folder import MARKER, OutputFolderError, check_writable, prepare_output, read_marker
from jaxmedusa_cli import run_commands, study_commands
from jaxmedusa_cli.app import app

from helpers import EXAMPLES, ROOT


class Simulated(Exception):
    """Raised where the run would start building and compiling: the checks came first."""


@pytest.fixture
def no_simulation(monkeypatch):
    def refuse(*a, **k):
        raise Simulated

    monkeypatch.setattr("jaxmedusa.run.build_batch", refuse)
    monkeypatch.setattr(study_commands, "run_study", refuse)


def _invoke(*args):
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res, " ".join(res.output.split())


def test_out_that_is_a_file_or_under_a_file(tmp_path, no_simulation):
    f = tmp_path / "a-file"
    f.write_text("not a folder")
    study = ROOT / "studies" / "offset.toml"
    for args in (["run", EXAMPLES / "straight", "--out", f], ["sweep", study, "--out", f],
                 ["plot", tmp_path, "--out", f], ["sweep", study, "--out", f / "below"]):
        res, out = _invoke(*args)
        assert res.exit_code == 2, (args, res.output)
        assert str(f) in out and "Traceback" not in out, out
    assert f.read_text() == "not a folder"


def test_run_out_whose_scenario_folder_is_a_file_fails_before_building(tmp_path, no_simulation):
    (tmp_path / "straight").write_text("x")  # OUT/<name> is a file
    res, out = _invoke("run", EXAMPLES / "straight", "-t", "0.01", "--out", tmp_path)
    assert res.exit_code == 2 and f"{tmp_path / 'straight'}: --out names a file" in out, out


def test_unwritable_folder_is_named(tmp_path, monkeypatch):
    """A folder that cannot be written (the probe file fails as on a read-only mount; a chmod
    would not stop root, who runs the tests in containers)."""
    def read_only(*a, **k):
        raise PermissionError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr("jaxmedusa.io.output_folder.tempfile.mkstemp", read_only)
    with pytest.raises(OutputFolderError, match=rf"{tmp_path}: cannot write to this folder \(Read-only file system\)"):
        check_writable(tmp_path)
    if os.geteuid() != 0:  # a real read-only folder where permissions apply
        monkeypatch.undo()
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(OutputFolderError, match="cannot write"):
            check_writable(ro)


def test_kinds_do_not_mix_and_overwrite_replaces_with_its_pictures(tmp_path, no_simulation):
    out = tmp_path / "out"
    prepare_output(out, "run", "offset")
    (out / "trajectory.parquet").write_bytes(b"run")
    (out / "plots").mkdir()
    (out / "plots" / "plan.png").write_bytes(b"png")
    (out / "offset.gif").write_bytes(b"gif")
    res, text = _invoke("sweep", ROOT / "studies" / "offset.toml", "--out", out)
    assert res.exit_code == 2 and "holds a run named 'offset'" in text and "--overwrite" in text, text
    assert (out / "trajectory.parquet").exists() and (out / "plots" / "plan.png").exists()

    res, text = _invoke("sweep", ROOT / "studies" / "offset.toml", "--out", out, "--overwrite")
    assert isinstance(res.exception, Simulated), res.output  # checks passed: the run would start
    assert not (out / "trajectory.parquet").exists() and not (out / "plots").exists()
    assert not (out / "offset.gif").exists()
    assert read_marker(out) == {"kind": "study", "name": "offset"}

    # another study into this study's folder: refused too
    with pytest.raises(OutputFolderError, match="holds a study named 'offset'"):
        prepare_output(out, "study", "wave")


def test_same_results_replaced_lose_their_stale_pictures_but_resume_keeps_them(tmp_path):
    out = tmp_path / "s"
    prepare_output(out, "study", "offset")
    (out / "plots").mkdir()
    prepare_output(out, "study", "offset", resume=True)
    assert (out / "plots").exists()
    prepare_output(out, "study", "offset")  # a fresh sweep replaces the results
    assert not (out / "plots").exists()


def test_folder_without_marker_is_refused_unless_resumed_of_its_kind(tmp_path):
    out = tmp_path / "old"
    (out / "chunks").mkdir(parents=True)  # an older jaxmedusa's sweep
    with pytest.raises(OutputFolderError, match="results without a"):
        prepare_output(out, "run", "x")
    prepare_output(out, "study", "offset", resume=True)  # the runner's own fingerprint checks decide
    assert json.loads((out / MARKER).read_text())["kind"] == "study"


def test_default_folders_of_runs_and_studies_do_not_collide():
    """The default run (default.toml), the folder example and the offset study."""
    from jaxmedusa.io.scenario_toml import load_scenario
    from jaxmedusa.study import load_study

    default = run_commands.RUNS_ROOT / load_scenario(run_commands.DEFAULT_EXAMPLE)[0].name
    folder = run_commands.RUNS_ROOT / load_scenario(ROOT / "studies" / "medusa" / "offset")[0].name
    study = ROOT / "results" / load_study(ROOT / "studies" / "offset.toml").name
    assert len({str(default), str(folder), str(study.relative_to(ROOT))}) == 3, (default, folder, study)


def test_failed_write_keeps_the_earlier_file_whole(tmp_path, monkeypatch):
    """A full disk in the middle of a write (ENOSPC from the Parquet writer): the earlier
    file is byte for byte as it was, no temporary is left, and the error names the path."""
    path = tmp_path / "t.parquet"
    tables.write_table(pa.table({"a": [1.0, 2.0]}), path)
    before = path.read_bytes()

    def disk_full(table, where, **kw):
        with open(where, "wb") as f:
            f.write(b"PAR1 half")
        raise OSError(errno.ENOSPC, "No space left on device", str(where))

    monkeypatch.setattr(tables.pq, "write_table", disk_full)
    with pytest.raises(OSError) as exc:
        tables.write_table(pa.table({"a": [3.0]}), path)
    assert exc.value.errno == errno.ENOSPC
    assert path.read_bytes() == before and pq.read_table(path).column("a").to_pylist() == [1.0, 2.0]
    assert [p.name for p in tmp_path.iterdir()] == ["t.parquet"]


def test_full_disk_during_a_run_is_exit_2_naming_the_path(tmp_path, monkeypatch):
    def disk_full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "straight" / "trajectory.parquet"))

    monkeypatch.setattr("jaxmedusa.run.write_trajectory", disk_full)
    res, out = _invoke("run", EXAMPLES / "straight", "-t", "0.01", "--out", tmp_path)
    assert res.exit_code == 2, res.output
    assert f"{tmp_path / 'straight' / 'trajectory.parquet'}: cannot write (No space left on device)" in out
    assert "Traceback" not in out
