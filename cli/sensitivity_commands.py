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
from jaxmedusa.io.output_folder import prepare_output
from jaxmedusa_cli.common import console, fail, fail_write
from jaxmedusa_cli.input_checks import check_settings_and_start
from jaxmedusa_cli.compile_notice import CompileNotice
from jaxmedusa_cli.file_kinds import wrong_kind_message
from jaxmedusa_cli.interrupt import on_interrupt


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
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace what OUT holds when it is another kind of "
                                   "results or another study's."),
) -> None:
    """Sobol', Morris or DGSM indices of the study's outputs: OUT/sensitivity.parquet, one row per
    (output, parameter, index) with its 95 % confidence half-width."""
    if not study.is_file():
        fail(f"{study}: no such file")
    if method not in METHODS:
        fail(f"--method: one of {', '.join(METHODS)} expected, got {method!r}")
    wrong = wrong_kind_message(study, "study", "jaxmedusa sensitivity")
    if wrong:
        fail(wrong)
    try:
        spec = sensitivity_study(load_study(study), method, n, seed)
        shard_t = parse_shard(shard)
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
    check_settings_and_start(spec.settings, spec.base, study)
    out = out if out is not None else Path("results") / spec.name
    try:  # before anything is compiled
        prepare_output(out, "sensitivity", spec.name, overwrite=overwrite, resume=resume)
    except ValueError as exc:
        fail(str(exc))
    console.print(CompileNotice(f"the {spec.name} design's chunk loop", spec.settings, f"sensitivity {spec.name}",
                                contact=spec.n_vehicles > 1 or bool(spec.base.barriers)).line(), soft_wrap=True)

    def kept_chunks():  # Ctrl-C / SIGTERM (interrupt.py)
        k = len(list((out / "chunks").glob("chunk-*.parquet"))) if (out / "chunks").is_dir() else 0
        console.print(f"[yellow]interrupted[/]: {k} finished chunk(s) kept in {out / 'chunks'}/; resume with "
                      f"the same command and --resume", soft_wrap=True)

    try:
        with on_interrupt(kept_chunks):
            s = run_study(spec, out=out, batch=batch, shard=shard_t, resume=resume, progress=not no_progress)
        console.print(f"[bold]{spec.name}[/]: {s.n_samples} scenarios, {s.wall_time:.1f} s wall")
        if not s.complete:
            console.print(f"chunks written to {s.out / 'chunks'}/; when every shard is done, merge them and "
                          "rerun with --resume to analyse")
            return
        result = analyse(spec, method, pq.read_table(s.out / "scenarios.parquet"), seed=seed)
        path = tables.write_table(result, s.out / "sensitivity.parquet",
                                  tables.provenance({"jaxmedusa.sensitivity_method": method,
                                                     "jaxmedusa.sensitivity_n": str(n), "jaxmedusa.study": spec.text}))
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail_write(exc, out)
    counts = ", ".join(f"{k} {v}" for k, v in s.status_counts.items())
    console.print(f"status: {counts}")
    main = {"sobol": "ST", "morris": "mu_star", "dgsm": "dgsm"}[method]
    t = Table("output", "parameter", main, "+-")
    for row in result.filter(result.column("index").to_numpy(zero_copy_only=False) == main).to_pylist()[:40]:
        t.add_row(row["output"], row["parameter"], f"{row['value']:.4g}", f"{row['conf']:.2g}")
    console.print(t)
    vague = uncertain_indices(result, main)
    if vague:
        console.print(f"[yellow]warning[/]: {vague[0]} of {vague[1]} {main} indices have a 95 % half-width larger "
                      f"than their value: the design is too small to rank the inputs (--n {n}); a larger --n "
                      "narrows them (as 1/sqrt(n))", soft_wrap=True)
    console.print(f"written: {path}")


def uncertain_indices(result, index: str) -> tuple[int, int] | None:
    """(how many, of how many) rows of `index` whose confidence half-width exceeds |value|
    (the index is not distinguishable from zero or from its neighbours); None when none."""
    rows = [r for r in result.to_pylist() if r["index"] == index and r["value"] is not None]
    bad = sum(1 for r in rows if r["conf"] is not None and r["conf"] > abs(r["value"]))
    return (bad, len(rows)) if bad else None


def register(app: typer.Typer) -> None:
    """Add the sensitivity command to the main app."""
    app.command(name="sensitivity")(sensitivity)
