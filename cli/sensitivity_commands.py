"""The `jaxmedusa sensitivity` command: SALib designs run as a sweep, analysed into a table.
`register(app)` adds it."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import pyarrow.parquet as pq
import typer
from rich.table import Table

from jaxmedusa.analysis.sensitivity import METHODS, analyse, sensitivity_study
from jaxmedusa.io import tables
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.study import load_study, parse_shard, run_study
from jaxmedusa_cli.common import console, fail


def sensitivity(
    study: Path = typer.Argument(..., help="Study file (TOML); its parameters and ranges define the inputs."),
    method: str = typer.Option("sobol", "--method", "-m", help=f"One of {', '.join(METHODS)}."),
    n: int = typer.Option(64, "--n", min=1, help="Base sample size: sobol N (a power of 2; N*(2D+2) runs), "
                          "morris trajectories (N*(D+1) runs), dgsm points (N runs, with D tangents each)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the design."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default results/<study>-<method>)."),
    batch: Optional[int] = typer.Option(None, "--batch", "-b", min=1, help="Scenarios per chunk."),
    shard: Optional[str] = typer.Option(None, "--shard", help="Run shard i of N (join with `jaxmedusa merge`, "
                                        "then rerun with --resume to analyse)."),
    resume: bool = typer.Option(False, "--resume", help="Keep chunks already written by this design."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Sobol', Morris or DGSM indices of the study's outputs: OUT/sensitivity.parquet, one row per
    (output, parameter, index) with its 95 % confidence half-width."""
    if not study.is_file():
        fail(f"{study}: no such file")
    if method not in METHODS:
        fail(f"--method: one of {', '.join(METHODS)} expected, got {method!r}")
    try:
        spec = sensitivity_study(load_study(study, sampler_replaced=True), method, n, seed)
        s = run_study(spec, out=out, batch=batch, shard=parse_shard(shard), resume=resume, progress=not no_progress)
        console.print(f"[bold]{spec.name}[/]: {s.n_samples} scenarios, {s.wall_time:.1f} s wall")
        if not s.complete:
            console.print(f"chunks written to {s.out / 'chunks'}/; when every shard is done, merge them and "
                          "rerun with --resume to analyse")
            return
        result = analyse(spec, method, pq.read_table(s.out / "scenarios.parquet"), seed=seed)
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
    path = tables.write_table(result, s.out / "sensitivity.parquet",
                              tables.provenance({"jaxmedusa.sensitivity_method": method,
                                                 "jaxmedusa.sensitivity_n": str(n), "jaxmedusa.study": spec.text}))
    counts = ", ".join(f"{k} {v}" for k, v in s.status_counts.items())
    console.print(f"status: {counts}")
    main = {"sobol": "ST", "morris": "mu_star", "dgsm": "dgsm"}[method]
    t = Table("output", "parameter", main, "+-")
    for row in result.filter(result.column("index").to_numpy(zero_copy_only=False) == main).to_pylist()[:40]:
        t.add_row(row["output"], row["parameter"], f"{row['value']:.4g}", f"{row['conf']:.2g}")
    console.print(t)
    console.print(f"written: {path}")


def register(app: typer.Typer) -> None:
    """Add the sensitivity command to the main app."""
    app.command(name="sensitivity")(sensitivity)
