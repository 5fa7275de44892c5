"""Sweeps on Ray: the chunks of a study as Ray tasks, on a local Ray instance or a cluster.

    from jaxmedusa.study import load_study
    from jaxmedusa.study.ray_backend import run_study_ray
    run_study_ray(load_study("studies/offset.toml"), out="/shared/offset")             # local Ray
    run_study_ray(load_study("studies/offset.toml"), out="/shared/offset", address="auto")  # cluster

The driver plans the chunks exactly as a local run does (runner.plan_sweep, prepare_out:
same chunking, same resume checks) and submits one task per chunk to run. Each task
asks for one GPU when the cluster has GPUs (else one CPU), runs the chunk with
runner.write_chunk on its worker and writes the chunk file itself into `out`, which must
therefore be a folder every node sees (NFS or another shared file system). Chunk files are
written atomically, so `--resume`, `jaxmedusa show` and the final table are those of a
local run: the driver finalizes once every task is done. A failed task fails the sweep
after the others finish; finished chunks stay, so `--resume` reruns only what is missing.
Ctrl-C cancels the tasks still pending and keeps the finished chunks.

Ray is an optional extra (`pip install jaxmedusa[ray]`); without it `RayUnavailable` says so.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import jax

from jaxmedusa.study.precision import check_base
from jaxmedusa.study.runner import (SweepInterrupted, SweepSummary, plan_sweep, prepare_out, progress_bar, run_chunk,
                                    summarize_out, write_chunk)
from jaxmedusa.study.spec import Study

__all__ = ["run_study_ray", "RayUnavailable"]


class RayUnavailable(RuntimeError):
    """Ray is not installed, or no cluster answers at the address."""


def _import_ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs Ray, an optional extra: pip install 'jaxmedusa[ray]' "
                             "(or pip install 'ray>=2.9')") from None
    return ray


def _chunk_task(study: Study, out: str, plan, k: int) -> tuple[int, int, float]:
    """Body of one Ray task: run and write chunk k; (k, scenarios, wall seconds). (Importing
    this module on the worker imports jaxmedusa, which turns on float64.)"""
    t0 = time.perf_counter()
    rows = write_chunk(study, Path(out), plan, k)
    return k, rows, time.perf_counter() - t0


def run_study_ray(study: Study, out: str | Path | None = None, batch: int | None = None, resume: bool = False,
                  progress: bool = True, address: str | None = None, init_kwargs: dict | None = None,
                  keep_ray: bool = False) -> SweepSummary:
    """Run a study's chunks as Ray tasks (module docstring). address: None starts a local
    Ray instance (or joins the one this process already has), else ray.init(address=...),
    e.g. "auto" or "10.0.0.1:6379". init_kwargs go to ray.init (e.g. num_cpus=2).
    keep_ray: leave Ray running afterwards (when this call started it)."""
    ray = _import_ray()
    out = Path(out) if out is not None else Path("results") / study.name
    out = out.resolve()  # workers may start in other folders
    started = False
    if not ray.is_initialized():
        kwargs = dict(include_dashboard=False, log_to_driver=False, **(init_kwargs or {}))
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, ValueError, RuntimeError) as e:
            raise RayUnavailable(f"--ray {address or 'local'}: cannot start or reach Ray ({e})") from None
        started = True
    try:
        has_gpu = ray.cluster_resources().get("GPU", 0) >= 1
        # the chunk size is planned for the devices a task gets: one GPU, or one CPU device
        plan = plan_sweep(study, batch, None, 1, "gpu" if has_gpu else "cpu")
        plan.meta.update(check_base(study, run_chunk, plan.size) or {})  # float32: checked here first (study/precision.py)
        todo, kept = prepare_out(out, plan, resume)
        task = ray.remote(num_gpus=1 if has_gpu else 0, num_cpus=1, max_retries=2)(_chunk_task)
        env = {"JAX_ENABLE_X64": "1"}
        cache = jax.config.jax_compilation_cache_dir
        if cache:  # the driver's persistent compilation cache (a shared folder on a cluster): compile once
            env["JAX_COMPILATION_CACHE_DIR"] = str(cache)
            env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
        if not has_gpu:
            env["JAX_PLATFORMS"] = "cpu"
        task = task.options(runtime_env={"env_vars": env})
        study_ref, plan_ref = ray.put(study), ray.put(plan)
        start = time.perf_counter()
        pending = [task.remote(study_ref, str(out), plan_ref, k) for k in todo]
        done, done_rows, errors = [], 0, []
        try:
            with progress_bar(progress, len(todo)) as bar:
                bar_task = bar.add_task(f"{study.name} (ray)", total=sum(plan.rows(k).stop - plan.rows(k).start
                                                                         for k in todo))
                while pending:
                    ready, pending = ray.wait(pending, num_returns=1, timeout=1.0)
                    for ref in ready:
                        try:
                            k, rows, _ = ray.get(ref)
                        except Exception as e:  # noqa: BLE001  (a task failed: the others go on)
                            errors.append(e)
                            continue
                        done.append(k)
                        done_rows += rows
                        bar.update(bar_task, completed=done_rows)
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref, force=True)
            summary = SweepSummary(out=out, n_samples=plan.n, chunk_size=plan.size, n_chunks=plan.n_chunks,
                                   chunks_run=sorted(done), chunks_skipped=kept, complete=False,
                                   wall_time=time.perf_counter() - start, scenarios_run=done_rows)
            raise SweepInterrupted(summary) from None
        if errors:
            raise RuntimeError(f"{len(errors)} Ray task(s) failed; finished chunks are kept in {out / 'chunks'} "
                               f"(rerun with --resume). First error: {errors[0]}")
        return summarize_out(out, plan, sorted(done), kept, time.perf_counter() - start, done_rows)
    finally:
        if started and not keep_ray and os.environ.get("JAXMEDUSA_KEEP_RAY") != "1":
            ray.shutdown()
