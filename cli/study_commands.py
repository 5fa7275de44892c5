"""Study commands of the `jaxmedusa` CLI: sweep, show, merge. `register(app)` adds them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import typer
from rich.table import Table

from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.study import load_study, merge_results, parse_shard, run_study
from jaxmedusa.study.ray_backend import RayUnavailable, run_study_ray
from jaxmedusa.study.runner import SweepInterrupted
from jaxmedusa.io.output_folder import check_writable, prepare_output, read_marker
from jaxmedusa.study.store import read_chunks
from jaxmedusa_cli.common import console, fail, fail_write
from jaxmedusa_cli.input_checks import check_settings_and_start
from jaxmedusa_cli.compile_notice import CompileNotice
from jaxmedusa_cli.file_kinds import wrong_kind_message
from jaxmedusa_cli.interrupt import on_interrupt


def sweep(
    study: Path = typer.Argument(..., help="Study file (TOML), e.g. studies/offset.toml."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: results/<study name>); "
                                       "with --ray on several machines, a folder every machine sees."),
    batch: Optional[int] = typer.Option(None, "--batch", "-b", min=1,
                                        help="Scenarios per chunk (default: the study's [run] batch, else about a "
                                        "minute of run per chunk on this device)."),
    shard: Optional[str] = typer.Option(None, "--shard", help="Run shard i of N (0 <= i < N), e.g. 0/4: chunks k "
                                        "with k % N == i. Join the shards with `jaxmedusa merge`."),
    resume: bool = typer.Option(False, "--resume", help="Keep chunks already written by this study and chunk size."),
    ray: bool = typer.Option(False, "--ray", help="Run the chunks as Ray tasks, on a local Ray instance, or on "
                             "the cluster at --address. Needs `pip install 'jaxmedusa\\[ray]'`."),
    address: Optional[str] = typer.Option(None, "--address", help="With --ray: the Ray cluster to join, e.g. auto "
                                          "(the cluster this machine belongs to) or 10.0.0.1:6379; implies --ray."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace what OUT holds when it is another kind of "
                                   "results (a run, a fit) or another study's."),
) -> None:
    """Run a study: every sample of its design, in chunks, into OUT/scenarios.parquet."""
    if not study.is_file():
        fail(f"{study}: no such file")
    wrong = wrong_kind_message(study, "study", "jaxmedusa sweep")
    if wrong:
        fail(wrong)
    ray = ray or address is not None
    if ray and shard is not None:
        fail("--ray and --shard: give one (Ray spreads the chunks over the cluster itself)")
    try:
        spec = load_study(study)
        shard_t = parse_shard(shard)
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
    check_settings_and_start(spec.settings, spec.base, study)
    out = out if out is not None else Path("results") / spec.name
    try:  # before anything is compiled: a file, an unwritable folder, another kind of results
        prepare_output(out, "study", spec.name, overwrite=overwrite, resume=resume)
    except ValueError as exc:
        fail(str(exc))
    console.print(CompileNotice(f"the {spec.name} study's chunk loop", spec.settings, f"sweep {spec.name} {batch}",
                                contact=spec.n_vehicles > 1 or bool(spec.base.barriers)).line(), soft_wrap=True)
    again = f"jaxmedusa sweep {study} --out {out} --resume" + (f" --shard {shard}" if shard else "") + \
        (f" --batch {batch}" if batch else "")

    def kept_chunks():  # Ctrl-C / SIGTERM (interrupt.py): finished chunks are whole files on disk
        n = len(read_chunks(out)) if (out / "chunks").is_dir() else 0
        console.print(f"[yellow]interrupted[/]: {n} finished chunk(s) kept in {out / 'chunks'}/; resume with:\n"
                      f"  {again}", soft_wrap=True)

    try:
        with on_interrupt(kept_chunks):
            if ray:
                try:
                    s = run_study_ray(spec, out=out, batch=batch, resume=resume, progress=not no_progress,
                                      address=address)
                except RayUnavailable as exc:
                    fail(str(exc))
            else:
                s = run_study(spec, out=out, batch=batch, shard=shard_t, resume=resume, progress=not no_progress)
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail_write(exc, out)
    except SweepInterrupted as exc:
        s = exc.summary
        again = f"jaxmedusa sweep {study} --out {s.out} --resume" + (f" --shard {shard}" if shard else "") + \
            (f" --batch {s.chunk_size}" if batch else "")
        console.print(f"[yellow]interrupted[/]: {len(s.chunks_run)} chunk(s) finished in this run and "
                      f"{len(s.chunks_skipped)} kept from before are in {s.out / 'chunks'}/; resume with:\n  {again}",
                      soft_wrap=True)
        raise typer.Exit(code=130)
    rate = f"{s.scenarios_per_s:,.1f} scenarios/s" if s.scenarios_run else "nothing to run"
    console.print(f"[bold]{spec.name}[/]: {s.n_samples} scenarios in {s.n_chunks} chunk(s) of {s.chunk_size}; "
                  f"ran {len(s.chunks_run)} chunk(s), skipped {len(s.chunks_skipped)}; "
                  f"{s.wall_time:.1f} s wall, {rate}")
    if s.complete:
        counts = ", ".join(f"{k} {v}" for k, v in s.status_counts.items())
        console.print(f"status: {counts}")
        console.print(f"written: {s.out / 'scenarios.parquet'}")
    else:
        console.print(f"chunks written to {s.out / 'chunks'}/; when every shard is done: "
                      f"jaxmedusa merge <shard folders> --out <folder>")


def merge(
    folders: List[Path] = typer.Argument(..., help="Output folders of the shards of one study."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the joined results (may be one of FOLDERS)."),
) -> None:
    """Join shard outputs into OUT/scenarios.parquet."""
    marker = next((m for m in map(read_marker, folders) if m is not None), None)
    try:  # before anything is read: OUT must be a writable folder not holding other results
        if marker is not None:
            prepare_output(out, "study", marker.get("name"))
        else:
            check_writable(out)
        table = merge_results(folders, out)
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail_write(exc, out)
    console.print(f"{table.num_rows} scenarios joined into {out / 'scenarios.parquet'}")


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, (int,)):
        return f"{x:d}"
    ax = abs(x)
    return f"{x:.4g}" if ax == 0 or 1e-3 <= ax < 1e5 else f"{x:.3e}"


def _spec_lines(text: str | None) -> list[str]:
    """Short provenance lines from the stored study spec (store.study_meta): settings,
    sampler, parameters."""
    try:
        sp = json.loads(text) if text else None
    except json.JSONDecodeError:
        sp = None
    if not isinstance(sp, dict):
        return []
    st, sa = sp.get("settings", {}), sp.get("sampler", {})
    lines = [f"settings: end_time {st.get('end_time')} s, dt {st.get('dt')} s, step control {st.get('step_control')}, "
             f"contact {st.get('contact')} ({st.get('contact_law')}, {st.get('contact_geometry')})",
             f"sampler: {sa.get('kind')} n={sa.get('n')} seed={sa.get('seed')}"]
    for name, p in (sp.get("parameters") or {}).items():
        dist = ", ".join(f"{k} {v}" for k, v in p.items() if k not in ("paths", "mode"))
        lines.append(f"parameter {name}: {dist}, mode {p.get('mode')}, paths {', '.join(p.get('paths', {}))}")
    return lines


def show(
    results: Path = typer.Argument(..., help="A results folder (with scenarios.parquet or chunks/) or a .parquet file."),
    columns: Optional[str] = typer.Option(None, "--columns", "-c", help="Comma-separated column names to summarise "
                                          "(default: parameters and the main metrics)."),
    spec: bool = typer.Option(False, "--spec", help="Also print the study file as it was run."),
) -> None:
    """Print a compact summary of a results folder: provenance, status counts, ranges."""
    path = results
    run_table = results / "trajectory.parquet" if results.is_dir() else results
    if run_table.is_file() and not (results.is_dir() and (results / "scenarios.parquet").exists()):
        meta = _parquet_meta(run_table)
        if "jaxmedusa.scenario" in meta:  # a run's trajectory table, not a sweep's scenarios
            return _show_run(run_table, meta)
    if results.is_dir():
        path = results / "scenarios.parquet"
        if not path.exists():
            chunks = sorted((results / "chunks").glob("chunk-*.parquet"))
            if not chunks:
                fail(f"{results}: no scenarios.parquet and no chunks/")
            table = pa.concat_tables([pq.read_table(c) for c in chunks])
            meta = pq.read_schema(chunks[0]).metadata or {}
            console.print(f"[yellow]incomplete sweep: {len(chunks)} chunk file(s), no scenarios.parquet yet[/]")
        else:
            table = pq.read_table(path)
            meta = table.schema.metadata or {}
    elif results.is_file():
        table = pq.read_table(path)
        meta = table.schema.metadata or {}
    else:
        fail(f"{results}: no such file or folder")
    meta = {k.decode(): v.decode() for k, v in meta.items()}

    name = meta.get("jaxmedusa.study_name", path.stem)
    n_total = meta.get("jaxmedusa.n_samples", "?")
    console.print(f"[bold]{name}[/]: {table.num_rows} of {n_total} scenarios, "
                  f"{meta.get('jaxmedusa.n_vehicles', '?')} vehicle(s), chunk size {meta.get('jaxmedusa.chunk_size', '?')}")
    console.print(f"jaxmedusa {meta.get('jaxmedusa.version', '?')} (git {meta.get('jaxmedusa.git_commit', '?')[:12]}"
                  f"{', dirty' if meta.get('jaxmedusa.git_dirty') == 'true' else ''}), "
                  f"JAX {meta.get('jax.version', '?')}, backend {meta.get('jaxmedusa.backend', '?')} "
                  f"x{meta.get('jaxmedusa.devices', '?')} ({meta.get('jaxmedusa.device_kind', '?')}), "
                  f"{meta.get('jaxmedusa.precision', '?')}", soft_wrap=True)
    for line in _spec_lines(meta.get("jaxmedusa.study_spec")):
        console.print(line, soft_wrap=True, highlight=False)
    if spec:
        console.print(meta.get("jaxmedusa.study", "(no study text stored)"), markup=False, highlight=False)
    if "status_name" in table.column_names:
        names = table.column("status_name").to_pylist()
        console.print("status: " + ", ".join(f"{s} {names.count(s)}" for s in sorted(set(names))))

    params = json.loads(meta.get("jaxmedusa.parameters", "[]"))
    if columns:
        cols = [c.strip() for c in columns.split(",") if c.strip()]
        unknown = [c for c in cols if c not in table.column_names]
        if unknown:
            fail(f"unknown column(s) {', '.join(unknown)}")
    else:
        main = ("delta_v", "pdof_clock", "peak_contact_force", "first_contact_time", "max_heading_change",
                "max_lateral_excursion", "spin_out", "lane_departure", "final_speed")
        counts = ("steps", "rejected_steps", "contact_steps", "contact_runs", "episodes")  # analysis/step_counts.py
        cols = list(params) + [c for c in counts if c in table.column_names] + [
            c for c in table.column_names if c.startswith("v") and "_" in c and c.split("_", 1)[1] in main]
    t = Table("column", "min", "mean", "max", "nulls")
    for c in cols:
        if c not in table.column_names:
            continue
        col = table.column(c)
        if pa.types.is_boolean(col.type):
            n_true = pc.sum(col).as_py() or 0
            t.add_row(c, "", f"{n_true} true", "", str(col.null_count))
            continue
        if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
            continue
        mm = pc.min_max(col).as_py()
        mean = pc.mean(col).as_py()
        t.add_row(c, _fmt(mm["min"]), _fmt(mean), _fmt(mm["max"]), str(col.null_count))
    console.print(t)


def _parquet_meta(path: Path) -> dict:
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as exc:
        fail(f"{path}: not a readable Parquet table ({exc})")
    return {k.decode(): v.decode() for k, v in meta.items()}


def _show_run(path: Path, meta: dict) -> None:
    """`show` for a run (its trajectory.parquet): scenario, settings, status, energy, counts."""
    table = pq.read_table(path, columns=["time", "vehicle"])
    load = lambda key, default=None: json.loads(meta[key]) if key in meta else default  # noqa: E731
    settings, vehicles = load("jaxmedusa.settings", {}), load("jaxmedusa.vehicles", [])
    t = table.column("time")
    console.print(f"[bold]{meta['jaxmedusa.scenario']}[/]: a run of {len(vehicles)} vehicle(s), {table.num_rows} rows "
                  f"(time x vehicle), t = {pc.min(t).as_py():g} .. {pc.max(t).as_py():g} s", soft_wrap=True)
    console.print("settings: " + ", ".join(f"{k} {v}" for k, v in settings.items()), soft_wrap=True, highlight=False)
    if "jaxmedusa.status" in meta:
        console.print(f"status: {meta['jaxmedusa.status']}")
    if "jaxmedusa.interrupted_at" in meta:
        console.print(f"[yellow]interrupted[/] at t = {float(meta['jaxmedusa.interrupted_at']):g} s: a partial run")
    energy = load("jaxmedusa.energy_balance")
    if energy:
        console.print(f"energy: {energy['initial'] / 1e6:.4g} MJ at t = 0, drivers' work {energy['drive_work'] / 1e6:.3g}"
                      f" MJ, largest excess {energy['max_gain'] / 1e6:.3g} MJ", highlight=False)
    counts = load("jaxmedusa.counts")
    if counts:
        console.print("counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()), highlight=False)


def register(app: typer.Typer) -> None:
    """Add the study commands (sweep, show, merge) to the main app."""
    app.command(name="sweep")(sweep)
    app.command(name="show")(show)
    app.command(name="merge")(merge)
