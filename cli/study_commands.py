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
from jaxmedusa_cli.common import console, fail


def sweep(
    study: Path = typer.Argument(..., help="Study file (TOML), e.g. studies/offset.toml."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: results/<study name>)."),
    batch: Optional[int] = typer.Option(None, "--batch", "-b", min=1,
                                        help="Scenarios per chunk (default: the study's [run] batch, else automatic)."),
    shard: Optional[str] = typer.Option(None, "--shard", help="Run shard i of N (0 <= i < N), e.g. 0/4: chunks k "
                                        "with k % N == i. Join the shards with `jaxmedusa merge`."),
    resume: bool = typer.Option(False, "--resume", help="Keep chunks already written by this study and chunk size."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Run a study: every sample of its design, in chunks, into OUT/scenarios.parquet."""
    if not study.is_file():
        fail(f"{study}: no such file")
    try:
        spec = load_study(study)
        shard_t = parse_shard(shard)
        s = run_study(spec, out=out, batch=batch, shard=shard_t, resume=resume, progress=not no_progress)
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
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
    try:
        table = merge_results(folders, out)
    except (MedusaInputError, ValueError, OSError) as exc:
        fail(str(exc))
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


def show(
    results: Path = typer.Argument(..., help="A results folder (with scenarios.parquet or chunks/) or a .parquet file."),
    columns: Optional[str] = typer.Option(None, "--columns", "-c", help="Comma-separated column names to summarise "
                                          "(default: parameters and the main metrics)."),
) -> None:
    """Print a compact summary of a results folder: provenance, status counts, ranges."""
    path = results
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
                  f"backend {meta.get('jaxmedusa.backend', '?')} x{meta.get('jaxmedusa.devices', '?')}, "
                  f"{meta.get('jaxmedusa.precision', '?')}")
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
        cols = list(params) + [c for c in table.column_names
                               if c.startswith("v") and "_" in c and c.split("_", 1)[1] in main]
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


def register(app: typer.Typer) -> None:
    """Add the study commands (sweep, show, merge) to the main app."""
    app.command(name="sweep")(sweep)
    app.command(name="show")(show)
    app.command(name="merge")(merge)
