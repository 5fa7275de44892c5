"""A study's chunks side by side on the CPU's cores, one thread per chunk.

Why: XLA's CPU backend compiles a chunk's time loop whole into one function that runs on
one thread (core/xla_flags.py), so one chunk keeps one core busy and the others idle. The
compiled program does not mind which thread calls it, and JAX releases the GIL while it
runs, so W Python threads, each advancing its own chunk through the same jitted call, keep
W cores busy with one compilation. A chunk computes exactly what it computes alone: the same
program on the same inputs, so its rows are those of a serial run with the same chunk size,
to the bit (tests/study/test_workers.py). Splitting the batch over devices instead (GSPMD,
`JAXMEDUSA_CPU_DEVICES`, core/xla_flags.py) partitions the loop and changes its rounding.

The first chunk runs alone until its first slice has returned (that call compiles the loop;
a second thread would compile it again beside it); then up to W chunks run at once, in
order. Ctrl-C raises KeyboardInterrupt in the main thread, which sets a stop flag that every
worker reads after each slice of its chunk (runner.SLICES per chunk): all threads are done
within one slice, every finished chunk is on disk and reported.

`JAXMEDUSA_WORKERS=N` sets W (1: one chunk at a time, as before). Default: the cores this
process may run on, on a CPU with one device; 1 on an accelerator (it runs a batch in
parallel by itself) or when the chunk is already split over several devices.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable, Iterable

import jax

__all__ = ["default_workers", "run_side_by_side", "Stopped", "WORKERS_VARIABLE"]

WORKERS_VARIABLE = "JAXMEDUSA_WORKERS"
POLL_SECONDS = 0.1  # [s] how often the main thread looks up from waiting (Ctrl-C lands between)


class Stopped(Exception):
    """Raised inside a worker's chunk, between two slices, once the run is interrupted."""


def default_workers(backend: str | None = None, n_devices: int = 1, environ=os.environ) -> int:
    """Chunks run at once (module docstring). A malformed JAXMEDUSA_WORKERS is a ValueError
    naming the variable."""
    text = environ.get(WORKERS_VARIABLE, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{WORKERS_VARIABLE}: a whole number of chunks >= 1 expected, got {text!r}")
        return int(text)
    if (backend or jax.default_backend()) != "cpu" or n_devices > 1:
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this OS
        return max(1, os.cpu_count() or 1)


def run_side_by_side(keys: Iterable, job: Callable, workers: int, on_finished: Callable) -> None:
    """Run `job(k, check)` for every key on up to `workers` threads, the first alone until it
    has called `check` once. `check()` is what the job calls after each slice: it raises
    Stopped once the run is interrupted. `on_finished(k, result)` runs in this (the main)
    thread as each job returns, also for jobs that return while the others are being
    stopped. A job's exception stops the others and is raised here; so is KeyboardInterrupt."""
    queue, workers = list(keys), max(1, workers)
    if not queue:
        return
    stop, warm = threading.Event(), threading.Event()
    # the JAX settings in force here (float32 studies: study/precision.py) are per thread
    x64 = bool(jax.config.jax_enable_x64)

    def check():
        warm.set()
        if stop.is_set():
            raise Stopped

    def run(k):
        with jax.enable_x64(x64):
            return job(k, check)

    running: dict[Future, object] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="jaxmedusa-chunk") as pool:
        try:
            while queue or running:
                room = workers if warm.is_set() else 1
                while queue and len(running) < room:
                    k = queue.pop(0)
                    running[pool.submit(run, k)] = k
                done, _ = wait(list(running), timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                for f in done:
                    warm.set()  # (a job that never calls check, e.g. a chunk of gradients)
                    k = running.pop(f)
                    on_finished(k, f.result())  # a job's error is raised here
        except BaseException:
            stop.set()  # every running job stops after its current slice
            wait(list(running))
            for f, k in running.items():
                if not f.cancelled() and f.exception() is None:
                    on_finished(k, f.result())  # finished while the others stopped
            raise
