"""Fit command of the `jaxmedusa` CLI: fit (reconstruction by least squares). `register(app)` adds it."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from jaxmedusa.fit import FitProblem, load_fit, solve_fit
from jaxmedusa.fit.tables import agreeing_starts, write_fit
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa_cli.common import console, fail


def fit(
    fit_file: Path = typer.Argument(..., help="Fit file (TOML), e.g. studies/fit_offset.toml."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: results/<fit name>)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Fit unknown scenario values to observations: weighted least squares, Levenberg-Marquardt
    from many starts at once; writes OUT/fit.parquet, starts.parquet, residuals.parquet and
    trajectory.parquet."""
    if not fit_file.is_file():
        fail(f"{fit_file}: no such file")
    try:  # everything is validated before anything runs
        spec = load_fit(fit_file)
        problem = FitProblem(spec)
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
    out = out or Path("results") / spec.name
    opt = spec.options
    console.print(f"[bold]{spec.name}[/]: {len(spec.unknowns)} unknown(s), {spec.n_residuals} observed "
                  f"quantities, {opt.starts} start(s), at most {opt.max_iterations} steps each; "
                  f"law {spec.settings.contact_law}, t = {spec.settings.end_time:g} s"
                  + (" (the limit: runs end at rest)" if spec.settings.end_condition == "rest" else ""))
    total = opt.starts * opt.max_iterations  # one evaluation per start and step (the vmapped loop runs them together)
    with Progress(TextColumn("[bold]fitting[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=console, transient=True, disable=no_progress) as bar:
        task = bar.add_task("compiling", total=total)
        best = [np.inf]

        def on_eval(cost):
            best[0] = min(best[0], float(cost))
            bar.update(task, advance=1, description=f"best chi2 {best[0]:.4g}")

        result = solve_fit(problem, on_eval=on_eval)
        bar.update(task, completed=total, description="writing the fitted run")
        paths = write_fit(problem, result, out)

    table = Table("parameter", "path", "estimate", "std error", "initial", "bounds")
    for u, x, s in zip(spec.unknowns, result.estimate, result.std_error):
        bounds = f"[{u.lower:g}, {u.upper:g}]" if u.bounds else "-"
        table.add_row(u.name, u.path, f"{x:.6g}", f"{s:.3g}", f"{u.initial:g}", bounds)
    console.print(table)
    m, n = spec.n_residuals, len(spec.unknowns)
    agree = int(agreeing_starts(result).sum())
    console.print(f"chi2 = {result.cost[result.best]:.4g} for {m} residuals and {n} unknowns (expected about "
                  f"{max(m - n, 0)}); largest |residual| / sigma = {np.max(np.abs(result.residuals)):.3g}")
    console.print(f"starts: {int(result.converged.sum())} of {len(result.cost)} converged; {agree} agree with the "
                  f"best (chi2 within 1, every unknown within one std error); {result.wall_time:.1f} s wall")
    console.print(f"written: {', '.join(str(p) for p in paths.values())}")


def register(app: typer.Typer) -> None:
    """Add the fit command to the main app."""
    app.command(name="fit")(fit)
