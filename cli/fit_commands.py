"""Fit command of the `jaxmedusa` CLI: fit (reconstruction by least squares). `register(app)` adds it."""
from __future__ import annotations

import json
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


class BestSoFar:
    """The best evaluation of a running fit (all starts run in one compiled call, so no start
    finishes before the others): kept from the solver's host callback, written on Ctrl-C."""

    FILE = "best_so_far.json"

    def __init__(self, problem: FitProblem):
        self.problem, self.cost, self.z, self.evaluations = problem, np.inf, None, 0

    def update(self, cost, z) -> None:
        self.evaluations += 1
        if float(cost) < self.cost:
            self.cost, self.z = float(cost), np.array(z, float)

    def write(self, out: Path) -> Path | None:
        """OUT/best_so_far.json (chi2, evaluations, each unknown by name), or None before any."""
        if self.z is None:
            return None
        x = self.problem.to_x_host(self.z)
        data = {"chi2": self.cost, "evaluations": self.evaluations,
                "unknowns": {u.name: float(v) for u, v in zip(self.problem.spec.unknowns, x)}}
        path = out / self.FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(path)  # atomic: a reader sees all of it or nothing
        return path


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
        best = BestSoFar(problem)
        console.print(CompileNotice(f"the {spec.name} fit's solver ({opt.starts} starts, Levenberg-Marquardt "
                                    "through the simulation and its Jacobian)", spec.settings,
                                    f"fit {spec.name} {opt.starts}", contact=len(spec.base.vehicles) > 1
                                    or bool(spec.base.barriers), estimate=FIT_FIRST_COMPILE_SECONDS).line(),
                      soft_wrap=True)

        def on_eval(cost, z):
            best.update(cost, z)
            bar.update(task, advance=1, description=f"best chi2 {best.cost:.4g}")

        def say_best():  # Ctrl-C / SIGTERM (interrupt.py): all starts run in one vmapped call, none is finished
            if best.z is None:
                console.print("[yellow]interrupted[/]: no evaluation had finished (still compiling); nothing was "
                              f"written to {out}", soft_wrap=True)
                return
            path = best.write(out)
            console.print(f"[yellow]interrupted[/]: the best chi2 so far was {best.cost:.6g} after "
                          f"{best.evaluations} evaluations; its unknowns are in {path} (the starts run together "
                          "in one compiled call, so none had finished)", soft_wrap=True)

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
