"""`jaxmedusa animate`, `jaxmedusa plot` and `run --asc` on the small contact run."""
import importlib.util

import imageio.v3 as iio
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from jaxmedusa.plot.animate import AnimationError, animate_run, frame_times
from jaxmedusa.plot.run_data import load_run
from jaxmedusa_cli.app import app

from conftest import EXAMPLES
from plot_fixtures import END_TIME, small_run  # noqa: F401


def test_frame_times():
    # speed 0.5 at 20 fps: 0.025 s of simulated time per frame, then the end time
    t = frame_times(0.15, speed=0.5, fps=20)
    np.testing.assert_allclose(t, np.arange(7) * 0.025, atol=1e-12)
    assert frame_times(0.16, 1.0, 20)[-1] == 0.16 and len(frame_times(0.16, 1.0, 20)) == 5
    with pytest.raises(AnimationError):
        frame_times(1.0, speed=0.0, fps=20)


def test_gif_has_one_frame_per_time(small_run, tmp_path):
    run = load_run(small_run)
    calls = []
    path = animate_run(run, tmp_path / "a.gif", speed=1.0, fps=20, progress=lambda d, n: calls.append((d, n)), dpi=40)
    frames = iio.imread(path, index=None)
    n = len(frame_times(END_TIME, 1.0, 20))  # 0, 0.05, 0.1, 0.15
    assert frames.shape[0] == n == 4 and calls[-1] == (n, n)
    assert frames[0].std() > 0 and not np.array_equal(frames[0], frames[-1])  # the cars move


def test_mp4_without_ffmpeg_is_a_clear_error(small_run, tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "imageio_ffmpeg" else real(name, *a))
    with pytest.raises(AnimationError, match="imageio-ffmpeg"):
        animate_run(load_run(small_run), tmp_path / "a.mp4")
    result = CliRunner().invoke(app, ["animate", str(small_run), "--out", str(tmp_path / "a.avi")])
    assert result.exit_code == 2 and ".gif or .mp4" in result.output


def test_plot_command_on_a_run(small_run, tmp_path):
    result = CliRunner().invoke(app, ["plot", str(small_run), "--out", str(tmp_path), "--format", "pdf"])
    assert result.exit_code == 0, result.output
    for name in ("plan_view.pdf", "histories.pdf"):
        assert (tmp_path / name).read_bytes()[:5] == b"%PDF-"
    bad = CliRunner().invoke(app, ["plot", str(tmp_path / "nothing")])
    assert bad.exit_code == 2 and "nothing" in bad.output
    empty = CliRunner().invoke(app, ["plot", str(tmp_path)])  # a folder without tables
    assert empty.exit_code == 2 and "trajectory.parquet" in empty.output


def test_run_asc_matches_the_trajectory_table(tmp_path):
    # the analytic shape compiles in seconds (medusa_search, the MEDUSA law's default, ~40 s)
    result = CliRunner().invoke(app, ["run", str(EXAMPLES / "offset"), "-t", "0.05", "-s", "0.01", "--out",
                                      str(tmp_path), "--asc", "--contact-geometry", "superellipsoid"])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "offset"
    table = pd.read_parquet(folder / "trajectory.parquet")
    director = np.loadtxt(folder / "director.asc")
    assert director.shape == (6, 25)  # t = 0 .. 0.05, 2 vehicles x 12 columns
    np.testing.assert_allclose(director[:, 0], np.arange(6) * 0.01, atol=1e-12)
    v2 = table[table["vehicle"] == 2].sort_values("time")
    # vehicle 2's block: columns 13..24; %e keeps 7 significant digits (5e-7 relative)
    np.testing.assert_allclose(director[:, 13], v2["x"], rtol=5e-7)
    np.testing.assert_allclose(director[:, 14], v2["y"], rtol=5e-7)
    energy = np.loadtxt(folder / "energy.asc")
    np.testing.assert_allclose(energy[:, 2], v2["energy_medusa"], rtol=5e-7)
    path = np.loadtxt(folder / "path.asc", usecols=range(12))
    np.testing.assert_allclose(path[1::2, 11], v2["speed"], rtol=5e-7)
    np.testing.assert_allclose(np.degrees(path[1::2, 7]), v2["heading"], rtol=5e-6, atol=1e-9)
