"""Running a study: chunks of scenarios built, sharded over the local devices, simulated
with the outcome tracker, and written to the chunk store (store.py).

The samples are split into chunks of `batch` scenarios (the last one padded by repeating
its last scenario, padding rows dropped), so the run compiles once. Each chunk is one jitted
call over all local devices (the batch axis sharded over a 1-D mesh). `resume` skips chunks
already written by the same study and chunk size; `shard=(i, n)` runs chunks k with
k % n == i.
"""
from __future__ import annotations

import math
import re
import shutil
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import jax
import numpy as np
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.text import Text

from jaxmedusa.analysis.outcomes import Outcomes, summarize_batch
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.io import tables
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.study.design import design
from jaxmedusa.study.gradients import chunk_gradients, gradient_units
from jaxmedusa.study.perturb import scenarios_for
from jaxmedusa.study.spec import Study, StudyError
from jaxmedusa.study.store import chunk_meta, chunk_path, finalize, status_counts, study_meta

__all__ = ["run_study", "run_chunk", "run_batch", "device_sharding", "auto_batch_size", "parse_shard",
           "SweepSummary"]


@partial(jax.jit, static_argnames=("settings", "tracker", "record"))
def run_batch(batch, state, settings: Settings, tracker: Outcomes, record: bool):
    """Simulate a built chunk: (outcome metrics {name: [B, ...]}, Samples or None)."""
    res = simulate(batch, state, settings, tracker=tracker, record=record)
    return summarize_batch(batch, res.final, res.metrics, tracker), (res.samples if record else None)


def device_sharding(n_devices: int | None = None):
    """NamedSharding of the batch axis over a 1-D mesh of the local devices (None for one)."""
    devs = jax.local_devices()[: n_devices or None]
    if len(devs) <= 1:
        return None, 1
    mesh = jax.sharding.Mesh(np.array(devs), ("batch",))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch")), len(devs)


def run_chunk(study: Study, items: list[tuple], chunk_size: int | None = None, sharding=None, columns=None):
    """Simulate [(Scenario, tire, contact)] padded to `chunk_size` (repeating the last item):
    ({metric: numpy [n, ...]}, Samples as numpy [n, S, ...] or None, valid [n, V]) for the
    n = len(items) real rows. A study with gradient columns (study/gradients.py) needs the
    rows' design values `columns` {parameter: (n,)}; the metrics then hold "gradients":
    {column: (n,)}."""
    n = len(items)
    size = chunk_size or n
    if study.outputs.gradients_of:
        if columns is None:
            raise ValueError("a study with gradient columns needs the design values of the chunk (columns=...)")
        metrics, valid, grads = chunk_gradients(study, items, columns, size, sharding)
        return {**metrics, "gradients": grads}, None, valid
    padded = list(items) + [items[-1]] * (size - n)
    batch, state = build_batch([it[0] for it in padded], study.settings.dt, n_vehicles=study.n_vehicles,
                               tire=[it[1] for it in padded], contact=[it[2] for it in padded])
    if sharding is not None:
        batch, state = jax.device_put((batch, state), sharding)
    record = study.outputs.trajectories
    metrics, samples = run_batch(batch, state, study.settings, study.tracker, record)
    metrics = {k: np.asarray(v)[:n] for k, v in jax.device_get(metrics).items()}
    if record:
        samples = jax.tree.map(lambda x: np.asarray(x)[:n], jax.device_get(samples))
    return metrics, samples, np.asarray(batch.valid)[:n]


def auto_batch_size(n_samples: int, n_devices: int = 1, backend: str | None = None) -> int:
    """Default chunk size: up to 4096 scenarios per device on GPU/TPU, 256 on CPU (where
    throughput grows with the chunk up to a few hundred: benchmarks/RESULTS.md, Studies)."""
    backend = backend or jax.default_backend()
    per_device = 256 if backend == "cpu" else 4096
    b = min(n_samples, per_device * n_devices)
    return int(math.ceil(b / n_devices) * n_devices)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """'i/N' (0 <= i < N) -> (i, N)."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)):
        raise StudyError(f"--shard: 'i/N' with 0 <= i < N expected, got {text!r}")
    return int(m.group(1)), int(m.group(2))


@dataclass
class SweepSummary:
    out: Path
    n_samples: int
    chunk_size: int
    n_chunks: int
    chunks_run: list[int]
    chunks_skipped: list[int]
    complete: bool  # every chunk present: scenarios.parquet written
    wall_time: float  # [s] of this call
    scenarios_run: int
    status_counts: dict = field(default_factory=dict)

    @property
    def scenarios_per_s(self) -> float:
        return self.scenarios_run / self.wall_time if self.wall_time > 0 else float("nan")


def _progress(enabled: bool, total: int):
    class Rate(ProgressColumn):
        def render(self, task):
            s = task.finished_speed or task.speed
            return Text("-- scen/s" if s is None else f"{s:,.1f} scen/s")

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), Rate(),
                    TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), disable=not enabled)


def run_study(study: Study, out: str | Path | None = None, batch: int | None = None,
              shard: tuple[int, int] | str | None = None, resume: bool = False, progress: bool = True,
              n_devices: int | None = None) -> SweepSummary:
    """Run a study (module docstring). out: default results/<name>. batch: chunk size
    (default study.batch, else auto_batch_size), rounded up to a multiple of the devices
    used. shard: (i, N) or 'i/N'. resume: keep chunks already written by the same study
    and chunk size (without it, old chunk files are removed first)."""
    out = Path(out) if out is not None else Path("results") / study.name
    shard = parse_shard(shard) if isinstance(shard, str) else shard
    sharding, n_dev = device_sharding(n_devices)
    ids, cols = design(study)
    n = len(ids)
    size = batch or study.batch or auto_batch_size(n, n_dev)
    size = int(math.ceil(size / n_dev) * n_dev)
    n_chunks = math.ceil(n / size)
    mine = [k for k in range(n_chunks) if shard is None or k % shard[1] == shard[0]]
    meta = study_meta(study, size, n)
    fp = meta["jaxmedusa.fingerprint"]

    if not resume:  # a fresh run: forget earlier results (all of them, or this shard's chunks)
        (out / "scenarios.parquet").unlink(missing_ok=True)
        if shard is None:
            shutil.rmtree(out / "chunks", ignore_errors=True)
            shutil.rmtree(out / "trajectories", ignore_errors=True)
        for k in mine:
            chunk_path(out, k).unlink(missing_ok=True)
            shutil.rmtree(out / "trajectories" / f"chunk={k:05d}", ignore_errors=True)
    todo, skipped = [], []
    for k in mine:
        p = chunk_path(out, k)
        if resume and p.exists():
            got = chunk_meta(p).get("jaxmedusa.fingerprint")
            if got != fp:
                raise StudyError(f"{p}: written by a different study or chunk size (fingerprint {got}, "
                                 f"this run {fp}); rerun without --resume, or with the same study and --batch")
            skipped.append(k)
        else:
            todo.append(k)

    start = time.perf_counter()
    names = list(cols)
    done_rows = 0
    with _progress(progress, len(todo)) as bar:
        task = bar.add_task(study.name, total=sum(min(size, n - k * size) for k in todo))
        for k in todo:
            sl = slice(k * size, min(n, (k + 1) * size))
            items = scenarios_for(study, {c: cols[c][sl] for c in names}, ids[sl])
            metrics, samples, valid = run_chunk(study, items, size, sharding, {c: cols[c][sl] for c in names})
            if samples is not None:
                traj = tables.trajectory_table(samples, valid, ids=ids[sl])
                tables.write_table(traj, out / "trajectories" / f"chunk={k:05d}" / "part-0.parquet")
            table = tables.scenarios_table(ids[sl], {c: cols[c][sl] for c in names}, metrics,
                                           study.n_vehicles, study.outputs.metrics,
                                           extra=gradient_units(study, metrics.get("gradients")))
            tables.write_table(table, chunk_path(out, k), tables.provenance({**meta, "jaxmedusa.chunk": str(k)}))
            done_rows += sl.stop - sl.start
            bar.update(task, advance=sl.stop - sl.start)
    wall = time.perf_counter() - start

    complete = all(chunk_path(out, k).exists() for k in range(n_chunks))
    counts = {}
    if complete:
        table = finalize(out)
        counts = status_counts(table)
    return SweepSummary(out=out, n_samples=n, chunk_size=size, n_chunks=n_chunks, chunks_run=todo,
                        chunks_skipped=skipped, complete=complete, wall_time=wall, scenarios_run=done_rows,
                        status_counts=counts)


