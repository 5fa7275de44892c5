"""Nothing lost, nothing corrupt (issue 17): a sweep stopped by SIGINT (Ctrl-C) or killed
(SIGKILL) in a subprocess keeps every finished chunk and resumes with --resume to a table
identical to an uninterrupted run; Ctrl-C is acted on within seconds and says how to
resume; damaged or half-written files are never taken for results; a resumed run refuses
a study file that changed, naming the change.

The subprocesses share a persistent JAX compilation cache, so the chunk function compiles
once for the whole module.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sweep_helpers import table, write_study

END = 2.0  # [s] simulated: a chunk of 2 scenarios runs for seconds, so a signal lands mid-chunk
N = 6  # 3 chunks of 2


def _cli(args, cache: Path, **popen):
    env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=str(cache), JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
               JAX_PLATFORMS="cpu", PYTHONWARNINGS="ignore")
    cmd = [sys.executable, "-c", "from jaxmedusa_cli.app import app; app()", *map(str, args)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


def _run(args, cache, timeout=300):
    p = _cli(args, cache)
    out, _ = p.communicate(timeout=timeout)
    return p.returncode, out


def _wait_for(path: Path, proc, timeout=300.0):
    t0 = time.monotonic()
    while not path.exists():
        assert proc.poll() is None, f"the sweep ended before {path.name} appeared: {proc.communicate()[0][-2000:]}"
        assert time.monotonic() - t0 < timeout, f"{path} did not appear in {timeout} s"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """(study file, compilation cache, the uninterrupted run's folder)."""
    d = tmp_path_factory.mktemp("interrupt")
    study = write_study(d, n=N, end_time=END)
    cache = d / "jax-cache"
    rc, out = _run(["sweep", study, "--out", d / "full", "--no-progress"], cache)
    assert rc == 0, out[-3000:]
    return study, cache, d / "full"


def test_ctrl_c_then_sigkill_then_resume(setup, tmp_path):
    """Ctrl-C in chunk 1, --resume, SIGKILL in the resumed run, --resume again: the final
    table is the uninterrupted one, bit for bit."""
    study, cache, full = setup
    out = tmp_path / "out"
    chunks = out / "chunks"
    p = _cli(["sweep", study, "--out", out, "--no-progress"], cache)
    _wait_for(chunks / "chunk-00000.parquet", p)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)  # during chunk 1 (each chunk runs for seconds)
    text, _ = p.communicate(timeout=120)
    latency = time.monotonic() - t0
    assert p.returncode == 130, text[-3000:]
    # a chunk runs as 64 jitted slices: the signal waits for one slice (~1/64 of a chunk),
    # then the interpreter shuts JAX down; 15 s leaves room for a loaded 2-core machine
    assert latency < 15.0, latency
    assert "interrupted" in text and "--resume" in text and "Traceback" not in text, text
    kept = sorted(c.name for c in chunks.glob("chunk-*.parquet"))
    assert "chunk-00000.parquet" in kept and len(kept) < 3 and not (out / "scenarios.parquet").exists()

    # resume, and kill that run (SIGKILL: no handler, no cleanup) once it wrote a chunk
    p = _cli(["sweep", study, "--out", out, "--resume", "--no-progress"], cache)
    _wait_for(chunks / "chunk-00001.parquet", p)
    p.kill()
    p.communicate(timeout=60)
    assert p.returncode == -signal.SIGKILL
    # what a kill in the middle of a write leaves: a hidden temporary; and a damaged chunk
    # file (disk trouble) under a final name. Neither may be taken for results.
    (chunks / ".chunk-00002.parquet.x1y2.tmp").write_bytes(b"PAR1 half a file")
    good = (chunks / "chunk-00000.parquet").read_bytes()
    (chunks / "chunk-00000.parquet").write_bytes(good[: len(good) // 2])
    rc, text = _run(["sweep", study, "--out", out, "--resume", "--no-progress"], cache)
    assert rc == 0, text[-3000:]
    assert table(out).equals(table(full))  # bit-identical rows, same columns and metadata keys
    assert not list(chunks.glob(".*.tmp"))  # temporaries cleaned once the sweep is complete


def test_resume_refuses_a_changed_study_naming_the_change(setup, tmp_path):
    """In-process CLI: the refusal comes before anything is compiled or run."""
    from typer.testing import CliRunner

    from jaxmedusa_cli.app import app

    study, cache, full = setup
    out = tmp_path / "out"
    (out / "chunks").mkdir(parents=True)
    for f in (full / "chunks").iterdir():  # the chunks of the uninterrupted run
        (out / "chunks" / f.name).write_bytes(f.read_bytes())
    changed = tmp_path / "changed.toml"
    changed.write_text(study.read_text().replace("uniform = [-1.6, 1.6]", "uniform = [-1.5, 1.6]"))
    res = CliRunner().invoke(app, ["sweep", str(changed), "--out", str(out), "--resume", "--no-progress"])
    assert res.exit_code == 2 and res.exception is None or isinstance(res.exception, SystemExit), res.output
    text = res.output
    assert "changed since" in text and "parameters.lateral_offset.uniform" in text, text
    assert "-1.6" in text and "-1.5" in text, text
    assert sorted(f.name for f in (out / "chunks").iterdir()) == sorted(f.name for f in (full / "chunks").iterdir())
