"""Running a study: chunks of scenarios built, sharded over the local devices, simulated
with the outcome tracker, and written to the chunk store (store.py).

The samples are split into chunks of `batch` scenarios (the last one padded by repeating
its last scenario, padding rows dropped), so the run compiles once. On a CPU, up to one
chunk per core runs at once, each on its own thread (study/workers.py); with several local
devices a chunk runs over all of them (the batch axis sharded over a 1-D mesh). A chunk is
a loop of short jitted advances (`SLICES` per chunk), so Ctrl-C is acted on within seconds
and the progress bar moves with the simulated time. `resume` skips chunks already written by the same study
and chunk size and names what changed otherwise; `shard=(i, N)` runs chunks k with
k % N == i, the chunk size capped at n // N so that every shard has work when n >= N.
`ray_backend.py` runs the same chunks as Ray tasks.
"""
from __future__ import annotations

import dataclasses
import math
import re
import shutil
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.text import Text

from jaxmedusa.analysis.outcomes import Outcomes, outcome_arrays, summarize_batch
from jaxmedusa.build import build_batch
from jaxmedusa.contact.stage import own_search
from jaxmedusa.core import executable_cache
from jaxmedusa.core.params import Settings
from jaxmedusa.core.status import Status
from jaxmedusa.io import tables
from jaxmedusa.solver.save_grid import prev_of
from jaxmedusa.solver.simulate import Samples, cached_advance, cached_init_metrics, simulate
from jaxmedusa.solver.step_control import STEP_CONTROLS
from jaxmedusa.solver.trackers import CombinedTracker, EnergyBalanceTracker, with_energy_gain
from jaxmedusa.study.design import design
from jaxmedusa.study.gradients import chunk_gradients, gradient_units
from jaxmedusa.study.loop_choice import time_loop_for
from jaxmedusa.study.perturb import scenarios_for
from jaxmedusa.study.precision import check_base, computing_in, to_precision
from jaxmedusa.study.spec import Study, StudyError
from jaxmedusa.study.store import (chunk_meta, chunk_path, finalize, spec_changes, status_counts, study_meta,
                                   write_manifest)
from jaxmedusa.study.workers import default_workers, run_side_by_side

__all__ = ["run_study", "run_chunk", "run_batch", "device_sharding", "auto_batch_size", "parse_shard", "SweepSummary",
           "SweepInterrupted", "progress_bar", "summarize_out", "plan_sweep", "prepare_out", "write_chunk", "SweepPlan",
           "CHUNK_SECONDS"]

# A chunk runs as SLICES jitted advances: each takes ~1/SLICES of the chunk's time, which
# bounds how long Ctrl-C waits (about a second for the default one-minute chunk).
SLICES = 64
CHUNK_SECONDS = 60.0  # [s], what auto_batch_size aims a chunk at

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


def _slice_settings(settings: Settings, record: bool) -> tuple[Settings, int]:
    """(settings of the advance calls, save slots per call). With trajectories the study's
    own save slots are kept (SLICES calls of several slots); without, the run is cut into
    SLICES slots of end_time / SLICES. Cutting the loop does not change a single step:
    a step depends on the state only; t_saved and the state before the last accepted step
    (save_grid.Prev) are carried from call to call for the save grid."""
    if record:
        return settings, max(1, math.ceil(settings.n_samples / SLICES))
    if settings.end_time <= 0.0:
        return settings, 1
    return dataclasses.replace(settings, save_every=settings.end_time / SLICES), 1


def _done_fraction(state, settings: Settings) -> float:
    """Mean over the batch of the simulated fraction (a stopped, failed scenario counts as done)."""
    t = np.asarray(state.clock.t)  # blocks until the call is done: where Ctrl-C is acted on
    status = np.asarray(state.clock.status)
    if settings.end_time <= 0.0:
        return 1.0
    return float(np.mean(np.where(status != Status.OK, 1.0, np.clip(t / settings.end_time, 0.0, 1.0))))


@partial(jax.jit, static_argnames=("settings",))
def _any_running_jit(state, settings: Settings):
    """Is any scenario healthy with steps left (the test of the solver's own loop)?"""
    control = STEP_CONTROLS.resolve(settings.step_control, where="Settings.step_control")
    return jnp.any(control.running(state.clock, settings) & (state.clock.status == Status.OK))


# the loop's test and the outcome summaries, served from disk like `advance` (core/executable_cache.py)
_any_running = executable_cache.cached(_any_running_jit, ("settings",))
_summaries = executable_cache.cached(outcome_arrays, ("tracker",))


def simulate_sliced(batch, state, settings: Settings, tracker: Outcomes, record: bool, on_progress=None):
    """`run_batch` as a loop of short jitted `advance` calls (module docstring), until no
    scenario is running: (outcome metrics {name: [B, ...]}, Samples [B, S, ...] or None).
    The energy balance runs beside the outcome tracker (solver/trackers.py): a scenario that ends healthy
    having created energy gets status energy_gain. The last call, after the sample at end_time, takes the
    steps `finish` would (a slot with no save time left steps to the end of the run), so the step body
    compiles once. `on_progress(fraction)` is called after each call with the simulated fraction done."""
    sliced, per_call = _slice_settings(settings, record)
    both = CombinedTracker((tracker, EnergyBalanceTracker()))  # and the energy balance: status energy_gain
    metrics = cached_init_metrics(batch, state, both)
    # traced and compiled on threads while XLA compiles `advance` (cold: the summaries' tracing ~1.5 s;
    # the final state has the initial one's shapes)
    _summaries.prepare(batch, state, metrics[0], tracker, defer=True)
    _any_running.prepare(state, sliced, defer=True)
    prev = prev_of(state) if record else None  # the state before the last accepted step, between calls
    parts = []
    while True:
        (state, metrics, prev), samples = cached_advance(batch, state, metrics, sliced, per_call, both, record,
                                                         prev=prev)
        if record:
            parts.append(jax.device_get(samples))
        frac = _done_fraction(state, settings)
        if on_progress is not None:
            on_progress(frac)
        if not bool(_any_running(state, sliced)):
            break
    own, balance = metrics
    out = _summaries(batch, state, own, tracker)
    out["status"] = with_energy_gain(out["status"], balance)  # ran to the end, creating energy
    samples = None
    if record:
        samples = Samples(*[np.concatenate([getattr(c, f) for c in parts], axis=1)[:, : settings.n_samples]
                            for f in Samples._fields])
    return out, samples


def run_chunk(study: Study, items: list[tuple], chunk_size: int | None = None, sharding=None, on_progress=None,
              columns=None, precision: str | None = None, time_loop: str | None = None):
    """Simulate [(Scenario, tire, contact)] padded to `chunk_size` (repeating the last item,
    and further to a multiple of the devices of `sharding`):
    ({metric: numpy [n, ...]}, Samples as numpy [n, S, ...] or None, valid [n, V]) for the
    n = len(items) real rows (with trajectories and hitches the metrics hold "joints": the
    rows' contact.joints.JointParams, for the trajectory table). `on_progress(fraction)` as
    in `simulate_sliced`. A study with
    gradient columns (study/gradients.py) needs the rows' design values `columns`
    {parameter: (n,)}; the metrics then hold "gradients": {column: (n,)}. `precision`
    (default study.precision): "float32" runs the chunk in float32 (study/precision.py); its
    metrics and samples come back widened to float64, so the tables' schema is the same.
    `time_loop` (default study.settings.time_loop): "whole" or "dispatched" (solver/time_loop.py)."""
    if time_loop is not None:
        study = dataclasses.replace(study, settings=dataclasses.replace(study.settings, time_loop=time_loop))
    n = len(items)
    size = chunk_size or n
    if study.outputs.gradients_of:
        if columns is None:
            raise ValueError("a study with gradient columns needs the design values of the chunk (columns=...)")
        metrics, valid, grads = chunk_gradients(study, items, columns, size, sharding)
        return {**metrics, "gradients": grads}, None, valid
    n_dev = 1 if sharding is None else len(sharding.mesh.devices.flat)
    size = math.ceil(size / n_dev) * n_dev
    padded = list(items) + [items[-1]] * (size - n)
    batch, state = build_batch([it[0] for it in padded], study.settings.dt, n_vehicles=study.n_vehicles,
                               tire=[it[1] for it in padded], contact=[it[2] for it in padded],
                               static_exponents=study.static_exponents)
    precision = precision or study.precision
    batch, state = to_precision((batch, state), precision)
    if sharding is not None:
        batch, state = jax.device_put((batch, state), sharding)
    record = study.outputs.trajectories
    with computing_in(precision):  # (a no-op inside run_study's, which spans every chunk)
        metrics, samples = simulate_sliced(batch, state, study.settings, study.tracker, record, on_progress)
        metrics = jax.device_get(metrics)

    def rows(x):  # the n real rows; float32 widened (exactly) to the tables' float64
        x = np.asarray(x)[:n]
        return x.astype(np.float64) if precision == "float32" and x.dtype == np.float32 else x
    metrics = {k: rows(v) for k, v in metrics.items()}
    if record:
        samples = jax.tree.map(rows, samples)
        if batch.joints is not None:  # the trajectory table's articulation and hitch columns (write_chunk)
            metrics["joints"] = jax.tree.map(lambda x: np.asarray(x)[:n], jax.device_get(batch.joints))
    return metrics, samples, np.asarray(batch.valid)[:n]


# Seconds per scenario-step on one CPU device (this 2-core machine, float64): about 2 us
# per vehicle without contact (benchmarks/RESULTS.md, Studies: 1.4-4.5 us per vehicle-step)
# and about 40 us per vehicle pair with contact (the offset study, 3 s of 2 vehicles: 256
# scenarios took 668 s, 4.3e-5 s per scenario-step). A CPU runs a batch one scenario
# after the other, so a chunk's time grows linearly with its size.
CPU_SECONDS_PER_VEHICLE_STEP = 2e-6
CPU_SECONDS_PER_PAIR_STEP = 4e-5
# A shape with its own search (medusa_search) runs this many scenarios per chunk on a CPU
# (per device). Batched, each of its bounded loops runs until the batch's slowest pair is
# done, and its vmapped updates become scatters that keep XLA from compiling the time loop
# whole (docs/architecture.md, "One loop, compiled whole"). Measured (offset example to
# 1.1 s, vehicle 2 at y = 0.38, 0.39, 0.41, 0.42 m, MEDUSA law, this 2-core CPU): chunks of 4
# took 193 s cold / 169 s warm (`jaxmedusa sweep`, whole process), chunks of 1 85 s cold
# (one ~60 s compile) / 27 s warm, with the same rows as a chunk-of-1 run by hand.
OWN_SEARCH_CHUNK_ON_CPU = 1


def auto_batch_size(n_samples: int, n_devices: int = 1, backend: str | None = None, settings: Settings | None = None,
                    n_vehicles: int = 2, workers: int = 1) -> int:
    """Default chunk size, aimed at CHUNK_SECONDS of run per chunk. CPU: the cost model
    above with end_time / dt steps per scenario (dt is MEDUSA's largest step), between 1
    and 256 scenarios per device (throughput stops growing there: RESULTS.md). GPU/TPU:
    4096 per device (a batch runs in parallel, so the chunk's time grows little with its
    size: 8.6 s for 64 and 13.3 s for 10,240 offset scenarios on an H200 on 2026-11-26). A
    shape with its own search (medusa_search, the MEDUSA law's default) runs one scenario
    per chunk on a CPU (OWN_SEARCH_CHUNK_ON_CPU). At most
    ceil(n_samples / workers), so that each of the `workers` chunks run side by side
    (study/workers.py) gets one; the samples are then spread evenly over the chunks, their
    number rounded up to a multiple of `workers`, and the size rounded up to a multiple of
    the devices."""
    backend = backend or jax.default_backend()
    if backend == "cpu" and settings is not None and own_search(settings):
        per_device = OWN_SEARCH_CHUNK_ON_CPU
    elif backend == "cpu":
        per_device = 256
        if settings is not None:
            steps = max(1.0, settings.end_time / settings.dt)
            pairs = n_vehicles * (n_vehicles - 1) // 2 if settings.contact else 0
            cost = steps * (CPU_SECONDS_PER_VEHICLE_STEP * n_vehicles + CPU_SECONDS_PER_PAIR_STEP * pairs)
            per_device = int(min(256, max(1, CHUNK_SECONDS // cost)))
    else:
        per_device = 4096
    workers = max(1, workers)
    b = min(n_samples, per_device * n_devices, math.ceil(n_samples / workers))
    # chunks of equal size, as many for each worker: the last chunk's padding is computed for
    # nothing (256 scenarios in chunks of 181 ran 362), and a last chunk alone leaves cores idle
    chunks = math.ceil(math.ceil(n_samples / b) / workers) * workers
    b = math.ceil(n_samples / chunks)
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


def progress_bar(enabled: bool, total: int):
    class Rate(ProgressColumn):
        """Scenarios per second since the start (compile included), the figure the summary
        prints: rich's own `speed` averages the last 30 s of updates only, which within a
        chunk read 5.0 scen/s where the whole run did 0.3."""

        def render(self, task):
            s = task.completed / task.elapsed if task.elapsed and task.completed else None
            return Text("-- scen/s" if s is None else f"{s:,.2f} scen/s")

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), Rate(),
                    TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), disable=not enabled)



class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) during a sweep: every finished chunk is kept. `summary` says which."""

    def __init__(self, summary: "SweepSummary"):
        super().__init__("sweep interrupted")
        self.summary = summary


@dataclass
class SweepPlan:
    """Which samples make which chunk, and which chunks this run (shard) owns."""

    ids: np.ndarray  # (n,) sample ids
    cols: dict  # {parameter: (n,)} design columns
    size: int  # chunk size (scenarios per chunk)
    n_chunks: int
    mine: list[int]  # the chunks of this shard (all without sharding)
    shard: tuple[int, int] | None
    meta: dict  # study_meta: what every chunk file carries
    time_loop: str = "whole"  # the chunks' Settings.time_loop (study/loop_choice.py)

    @property
    def n(self) -> int:
        return len(self.ids)

    def rows(self, k: int) -> slice:
        return slice(k * self.size, min(self.n, (k + 1) * self.size))


def plan_sweep(study: Study, batch: int | None = None, shard: tuple[int, int] | str | None = None,
               n_devices: int = 1, backend: str | None = None, workers: int = 1) -> SweepPlan:
    """The chunking of a study (module docstring). batch: chunk size (default study.batch,
    else auto_batch_size). With shard=(i, N) the chunk size is capped at max(1, n // N),
    which gives at least N chunks whenever n >= N: every shard gets work. `workers`: chunks
    run side by side (auto_batch_size)."""
    shard = parse_shard(shard) if isinstance(shard, str) else shard
    ids, cols = design(study)
    n = len(ids)
    size = batch or study.batch or auto_batch_size(n, n_devices, backend, study.settings, study.n_vehicles,
                                                     workers)
    size = min(size, n)  # a chunk never pads more than the study has
    if shard is not None:
        size = min(size, max(1, n // shard[1]))
    n_chunks = math.ceil(n / size)
    mine = [k for k in range(n_chunks) if shard is None or k % shard[1] == shard[0]]
    loop = time_loop_for(study.time_loop, study.settings, n, study.n_vehicles, backend or jax.default_backend())
    return SweepPlan(ids=ids, cols=cols, size=size, n_chunks=n_chunks, mine=mine, shard=shard,
                     meta={**study_meta(study, size, n), "jaxmedusa.time_loop": loop}, time_loop=loop)


def prepare_out(out: Path, plan: SweepPlan, resume: bool) -> tuple[list[int], list[int]]:
    """Get `out` ready for this run's chunks: (to run, kept). Without resume, earlier
    results (all, or this shard's chunks) are removed; with resume, chunks of the same
    study and chunk size are kept, unreadable ones rerun, and chunks of another study
    refused with what changed. Writes the manifest (store.write_manifest)."""
    out = Path(out)
    if not resume:  # a fresh run: forget earlier results (all of them, or this shard's chunks)
        (out / "scenarios.parquet").unlink(missing_ok=True)
        if plan.shard is None:
            shutil.rmtree(out / "chunks", ignore_errors=True)
            shutil.rmtree(out / "trajectories", ignore_errors=True)
        for k in plan.mine:
            chunk_path(out, k).unlink(missing_ok=True)
            shutil.rmtree(out / "trajectories" / f"chunk={k:05d}", ignore_errors=True)
    fp = plan.meta["jaxmedusa.fingerprint"]
    todo, kept = [], []
    for k in plan.mine:
        p = chunk_path(out, k)
        if resume and p.exists():
            try:
                got = chunk_meta(p)
            except Exception:  # noqa: BLE001  (unreadable: damaged on disk; rerun it)
                p.unlink()
                todo.append(k)
                continue
            if got.get("jaxmedusa.fingerprint") != fp:
                raise StudyError(f"{p}: written by a different study or chunk size; changed since: "
                                 + "; ".join(spec_changes(got, plan.meta))
                                 + ". Rerun without --resume, or with the same study and --batch")
            kept.append(k)
        else:
            todo.append(k)
    write_manifest(out, plan.meta, plan.mine, plan.shard)
    return todo, kept


def write_chunk(study: Study, out: Path, plan: SweepPlan, k: int, sharding=None, on_progress=None) -> int:
    """Run chunk k of `plan` and write it (trajectories first, then the chunk file, whose
    presence marks the chunk done). Returns the number of scenarios."""
    sl = plan.rows(k)
    cols = {c: plan.cols[c][sl] for c in plan.cols}
    items = scenarios_for(study, cols, plan.ids[sl])
    metrics, samples, valid = run_chunk(study, items, plan.size, sharding, on_progress, cols, time_loop=plan.time_loop)
    meta = tables.provenance({**plan.meta, "jaxmedusa.chunk": str(k)})  # every table carries it
    if samples is not None:
        traj = tables.trajectory_table(samples, valid, ids=plan.ids[sl], joints=metrics.get("joints"))
        tables.write_table(traj, Path(out) / "trajectories" / f"chunk={k:05d}" / "part-0.parquet", meta)
    table = tables.scenarios_table(plan.ids[sl], cols, metrics, study.n_vehicles, study.outputs.metrics,
                                   extra=gradient_units(study, metrics.get("gradients")))
    tables.write_table(table, chunk_path(out, k), meta)
    return sl.stop - sl.start


def summarize_out(out: Path, plan: SweepPlan, todo, kept, wall: float, done_rows: int) -> SweepSummary:
    """Finalize `out` when every chunk is there; the SweepSummary of this call."""
    complete = all(chunk_path(out, k).exists() for k in range(plan.n_chunks))
    counts = status_counts(finalize(out)) if complete else {}
    return SweepSummary(out=Path(out), n_samples=plan.n, chunk_size=plan.size, n_chunks=plan.n_chunks,
                        chunks_run=list(todo), chunks_skipped=list(kept), complete=complete, wall_time=wall,
                        scenarios_run=done_rows, status_counts=counts)


def run_study(study: Study, out: str | Path | None = None, batch: int | None = None,
              shard: tuple[int, int] | str | None = None, resume: bool = False, progress: bool = True,
              n_devices: int | None = None) -> SweepSummary:
    """Run a study (module docstring). out: default results/<name>. batch: chunk size
    (default study.batch, else auto_batch_size). shard: (i, N) or 'i/N'. resume: keep
    chunks already written by the same study and chunk size (without it, old chunk files
    are removed first). Ctrl-C raises SweepInterrupted (a KeyboardInterrupt) once the
    current jitted slice returns, every finished chunk kept."""
    out = Path(out) if out is not None else Path("results") / study.name
    sharding, n_dev = device_sharding(n_devices)
    workers = default_workers(n_devices=n_dev)
    plan = plan_sweep(study, batch, shard, n_dev, workers=workers)
    # one precision switch for the check and every chunk (study/precision.py): a float32
    # study is checked against float64 on its base scenario before anything is written
    with computing_in(study.precision):
        plan.meta.update(check_base(study, run_chunk, plan.size, sharding) or {})
        return _sweep(study, out, plan, sharding, resume, progress, workers)


def _sweep(study: Study, out: Path, plan: SweepPlan, sharding, resume: bool, progress: bool,
           workers: int) -> SweepSummary:
    """run_study's chunks (prepare_out, the progress bar, Ctrl-C), after the plan and check:
    up to `workers` chunks side by side, one per core (study/workers.py)."""
    todo, kept = prepare_out(out, plan, resume)

    start = time.perf_counter()
    finished, running = [], {}  # running: {chunk: simulated fraction}
    size = {k: plan.rows(k).stop - plan.rows(k).start for k in todo}

    def done_rows():
        return sum(size[k] for k in finished)

    try:
        with progress_bar(progress, len(todo)) as bar:
            # "compiling" until the first slice returns (the first chunk compiles its loop)
            task = bar.add_task(f"{study.name}: compiling", total=sum(size.values()))

            def job(k, check):
                def moved(frac):  # after each slice, in the chunk's thread
                    check()  # Ctrl-C: stop here (workers.Stopped)
                    running[k] = frac
                    if progress:
                        bar.update(task, completed=done_rows() + sum(f * size[j] for j, f in list(running.items())),
                                   description=study.name)
                return write_chunk(study, out, plan, k, sharding, moved)

            def chunk_done(k, rows):
                running.pop(k, None)
                finished.append(k)
                bar.update(task, completed=done_rows())

            run_side_by_side(todo, job, workers, chunk_done)
    except KeyboardInterrupt:
        wall = time.perf_counter() - start
        summary = SweepSummary(out=out, n_samples=plan.n, chunk_size=plan.size, n_chunks=plan.n_chunks,
                               chunks_run=finished, chunks_skipped=kept, complete=False, wall_time=wall,
                               scenarios_run=done_rows())
        raise SweepInterrupted(summary) from None
    return summarize_out(out, plan, todo, kept, time.perf_counter() - start, done_rows())
