"""Chunks side by side on the CPU's cores (jaxmedusa/study/workers.py): the rows are those of
one chunk at a time, to the bit; the threads really overlap; Ctrl-C and a failing chunk stop
the others after their current slice with every finished chunk reported."""
from __future__ import annotations

import _thread
import signal
import threading
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

from jaxmedusa.study.runner import auto_batch_size, run_study
from jaxmedusa.study.workers import WORKERS_VARIABLE, Stopped, default_workers, run_side_by_side
from sweep_helpers import small_offset, study


def test_rows_are_those_of_one_chunk_at_a_time(tmp_path, monkeypatch):
    """The same program on the same inputs, from two threads: bit for bit (no tolerance: the
    workers run each chunk's compiled loop exactly as a serial run does)."""
    s = study(small_offset(n=6))  # 3 chunks of 2
    tables = {}
    for workers in (1, 2):
        monkeypatch.setenv(WORKERS_VARIABLE, str(workers))
        summary = run_study(s, out=tmp_path / f"w{workers}", progress=False)
        assert summary.complete and summary.n_chunks == 3 and sorted(summary.chunks_run) == [0, 1, 2]
        tables[workers] = pq.read_table(summary.out / "scenarios.parquet").to_pandas()
    one, two = tables[1], tables[2]
    assert list(one.columns) == list(two.columns) and len(one) == 6
    for col in one.columns:
        a, b = one[col].to_numpy(), two[col].to_numpy()
        if a.dtype.kind == "f":
            assert np.array_equal(a, b, equal_nan=True), col
        else:
            assert (a == b).all(), col


def _sleeper(log, seconds=0.05, slices=4, fail_on=None):
    def job(k, check):
        log.append(("start", k, time.monotonic()))
        for _ in range(slices):
            time.sleep(seconds)
            if k == fail_on:
                raise RuntimeError(f"chunk {k} failed")
            check()
        log.append(("end", k, time.monotonic()))
        return k * 10
    return job


def test_jobs_overlap_after_the_first_slice_and_finish_in_order():
    log, got = [], []
    run_side_by_side(range(4), _sleeper(log), 2, lambda k, r: got.append((k, r)))
    assert sorted(got) == [(0, 0), (1, 10), (2, 20), (3, 30)]
    start = {k: t for e, k, t in log if e == "start"}
    end = {k: t for e, k, t in log if e == "end"}
    # chunk 1 waits for chunk 0's first slice (0.05 s) and starts well before chunk 0 ends
    # (0.2 s): 0.05 s of margin either way for a loaded machine's thread scheduling
    assert start[0] + 0.04 <= start[1] < end[0] - 0.05
    assert [k for e, k, _ in log if e == "start"] == [0, 1, 2, 3]  # in order


def test_a_failing_chunk_stops_the_others_and_is_raised():
    log, got = [], []
    with pytest.raises(RuntimeError, match="chunk 1 failed"):
        run_side_by_side(range(4), _sleeper(log, slices=6, fail_on=1), 2, lambda k, r: got.append(k))
    # chunk 1 fails at 0.1 s; chunk 0 (6 slices, 0.3 s) is stopped at its next slice and
    # chunk 2 never starts
    assert [k for e, k, _ in log if e == "start"] == [0, 1]
    assert got == [] and not [k for e, k, _ in log if e == "end"]


def test_ctrl_c_stops_every_worker_within_a_slice_and_keeps_what_finished():
    log, got = [], []

    def interrupt_later():
        time.sleep(0.3)  # chunk 0 (0.2 s) has finished, chunk 1 is mid-way
        _thread.interrupt_main()
    # Python's own SIGINT handler, as in a command: interrupt_main does nothing where SIGINT is
    # ignored or left to the default action (an xdist worker, or after a test that set one)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt_later).start()
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            run_side_by_side(range(6), _sleeper(log), 2, lambda k, r: got.append(k))
        stopped = time.monotonic() - t0
    finally:
        signal.signal(signal.SIGINT, previous)
    assert 0 in got and 5 not in got
    # stopped at the next slice (0.05 s) after 0.3 s; 0.25 s for scheduling on a loaded machine
    assert stopped < 0.3 + 0.05 + 0.25
    ended = {k for e, k, _ in log if e == "end"}
    assert set(got) == ended  # every chunk that finished is reported, none that did not


def test_stopped_is_the_signal_a_job_sees():
    seen = []

    def job(k, check):
        if k == 0:  # job 1 starts after this first check; 0.15 s later, as if Ctrl-C landed here
            time.sleep(0.05)
            check()
            time.sleep(0.15)
            raise KeyboardInterrupt
        try:
            for _ in range(40):
                time.sleep(0.01)
                check()
        except Stopped:
            seen.append(k)
            raise
    with pytest.raises(KeyboardInterrupt):
        run_side_by_side(range(3), job, 2, lambda k, r: None)
    assert seen == [1]


def test_default_workers_and_the_chunk_size_they_give(monkeypatch):
    monkeypatch.delenv(WORKERS_VARIABLE, raising=False)
    assert default_workers("gpu") == 1 and default_workers("cpu", n_devices=2) == 1
    assert default_workers("cpu") >= 1
    monkeypatch.setenv(WORKERS_VARIABLE, "3")
    assert default_workers("cpu") == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(WORKERS_VARIABLE, bad)
        with pytest.raises(ValueError, match=WORKERS_VARIABLE):
            default_workers("cpu")
    # the offset study's 256 scenarios on two cores: two chunks of 128; 4096 stay at 256 a chunk
    assert auto_batch_size(256, backend="cpu", workers=2) == 128
    assert auto_batch_size(4096, backend="cpu", workers=2) == 256
    assert auto_batch_size(5, backend="cpu", workers=2) == 3


def test_workers_compute_in_the_precision_of_the_caller():
    """JAX's x64 switch is per thread: a float32 study's chunks (study/precision.py) must run
    in float32 on the worker threads too, and a float64 one in float64."""
    import jax.numpy as jnp

    from jaxmedusa.study.precision import computing_in

    for precision, dtype in (("float32", jnp.float32), ("float64", jnp.float64)):
        got = []
        with computing_in(precision):
            run_side_by_side(range(2), lambda k, check: jnp.zeros(1).dtype, 2, lambda k, r: got.append(r))
        assert got == [dtype, dtype], precision
