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
from jaxmedusa.io.output_folder import prepare_output
from jaxmedusa_cli.common import console, fail, fail_write
from jaxmedusa_cli.input_checks import check_settings_and_start
from jaxmedusa_cli.compile_notice import FIT_FIRST_COMPILE_SECONDS, CompileNotice
from jaxmedusa_cli.file_kinds import wrong_kind_message
from jaxmedusa_cli.interrupt import on_interrupt


def fit(
    fit_file: Path = typer.Argument(..., help="Fit file (TOML), e.g. studies/fit_offset.toml."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: results/<fit name>)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace what OUT holds when it is another kind of "
                                   "results or another fit's."),
) -> None:
    """Fit unknown scenario values to observations: weighted least squares, Levenberg-Marquardt
    from many starts at once; writes OUT/fit.parquet, starts.parquet, residuals.parquet and
    trajectory.parquet."""
    if not fit_file.is_file():
        fail(f"{fit_file}: no such file")
    wrong = wrong_kind_message(fit_file, "fit", "jaxmedusa fit")
    if wrong:
        fail(wrong)
    try:  # everything is validated before anything runs
        spec = load_fit(fit_file)
        problem = FitProblem(spec)
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
    check_settings_and_start(spec.settings, spec.base, fit_file)
    out = out or Path("results") / spec.name
    try:  # the output folder, before anything is compiled
        prepare_output(out, "fit", spec.name, overwrite=overwrite)
    except ValueError as exc:
        fail(str(exc))
    opt = spec.options
    console.print(f"[bold]{spec.name}[/]: {len(spec.unknowns)} unknown(s), {spec.n_residuals} observed "
                  f"quantities, {opt.starts} start(s), at most {opt.max_iterations} steps each; "
                  f"law {spec.settings.contact_law}, t = {spec.settings.end_time:g} s"
                  + (" (the limit: runs end at rest)" if spec.settings.end_condition == "rest" else ""))
    total = opt.starts * opt.max_iterations  # one evaluation per start and step (the vmapped loop runs them together)
    with Progress(TextColumn("[bold]fitting[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=console, transient=True, disable=no_progress) as bar:
        task = bar.add_task("compiling", total=total)
        best, evals = [np.inf], [0]
        console.print(CompileNotice(f"the {spec.name} fit's solver ({opt.starts} starts, Levenberg-Marquardt "
                                    "through the simulation and its Jacobian)", spec.settings,
                                    f"fit {spec.name} {opt.starts}", contact=len(spec.base.vehicles) > 1
                                    or bool(spec.base.barriers), estimate=FIT_FIRST_COMPILE_SECONDS).line(),
                      soft_wrap=True)

        def on_eval(cost):
            best[0] = min(best[0], float(cost))
            evals[0] += 1
            bar.update(task, advance=1, description=f"best chi2 {best[0]:.4g}")

        def say_best():  # Ctrl-C / SIGTERM (interrupt.py): all starts run in one vmapped call, none is finished
            so_far = f"the best chi2 so far was {best[0]:.6g} after {evals[0]} evaluations" if evals[0] else \
                "no evaluation had finished (still compiling)"
            console.print(f"[yellow]interrupted[/]: {so_far}; the starts run together in one compiled call, so no "
                          f"start had finished and nothing was written to {out}", soft_wrap=True)

        try:
            with on_interrupt(say_best):
                result = solve_fit(problem, on_eval=on_eval)
            bar.update(task, completed=total, description="writing the fitted run")
            paths = write_fit(problem, result, out)
        except OSError as exc:
            fail_write(exc, out)

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
