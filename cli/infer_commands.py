"""Infer command of the `jaxmedusa` CLI: infer (posteriors by NUTS). `register(app)` adds it."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from jaxmedusa.infer import choose_gradient, load_infer, run_inference
from jaxmedusa.infer.run import predictive_table
from jaxmedusa.infer.tables import write_infer
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa_cli.common import console, fail


def infer(
    infer_file: Path = typer.Argument(..., help="Inference file (TOML): a fit file whose unknowns carry priors, "
                                      "e.g. studies/infer_offset_brake.toml."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default: results/<name>)."),
    chains: Optional[int] = typer.Option(None, "--chains", help="NUTS chains, one vmapped batch (default [infer] chains, 8)."),
    draws: Optional[int] = typer.Option(None, "--draws", help="Kept draws per chain (default [infer] draws, 500)."),
    warmup: Optional[int] = typer.Option(None, "--warmup", help="Adaptation steps per chain (default [infer] warmup, 500)."),
    start_from: Optional[Path] = typer.Option(None, "--start-from", help="A `jaxmedusa fit` results folder: chains "
                                              "start at its fit.parquet estimate."),
    predictive: int = typer.Option(64, "--predictive", help="Posterior draws simulated for predictive.parquet "
                                   "(positions at the observation times; 0: none)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Sample the posterior of the unknowns (and nuisance parameters) given the observations:
    NUTS (BlackJAX) through the simulator; writes OUT/posterior.parquet, OUT/summary.parquet and
    OUT/predictive.parquet (positions simulated for posterior draws)."""
    if not infer_file.is_file():
        fail(f"{infer_file}: no such file")
    overrides = {k: v for k, v in (("chains", chains), ("draws", draws), ("warmup", warmup)) if v is not None}
    for k, v in overrides.items():
        if v < (0 if k == "warmup" else 1):
            fail(f"--{k}: {v} must be >= {0 if k == 'warmup' else 1}")
    estimate = None
    try:  # everything is validated before anything runs
        spec = load_infer(infer_file, overrides)
        if start_from is not None:
            fit_path = start_from / "fit.parquet"
            if not fit_path.is_file():
                fail(f"{start_from}: no fit.parquet (a `jaxmedusa fit` results folder expected)")
            table = pd.read_parquet(fit_path).set_index("parameter")
            names = [u.name for u in spec.fit.unknowns]
            missing = [n for n in names if n not in table.index]
            if missing:
                fail(f"{fit_path}: no estimate of {', '.join(missing)}")
            estimate = table.loc[names, "estimate"].to_numpy(float)
        mode = choose_gradient(spec)
    except (MedusaInputError, ValueError) as exc:
        fail(str(exc))
    o = spec.options
    out = out or Path("results") / spec.name
    console.print(f"[bold]{spec.name}[/]: {len(spec.priors)} parameter(s) ({', '.join(spec.names)}), "
                  f"{spec.fit.n_residuals} observed quantities; {o.chains} chains x ({o.warmup} warmup + {o.draws} "
                  f"draws), {mode}-mode gradients, {'dense' if spec.dense_mass else 'diagonal'} mass matrix, "
                  f"{o.likelihood} likelihood; law {spec.fit.settings.contact_law}, "
                  f"t = {spec.fit.settings.end_time:g} s")
    with Progress(TextColumn("[bold]{task.fields[phase]}[/]"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True, disable=no_progress) as bar:
        task = bar.add_task("", total=None, phase="compiling")

        def progress(phase, done, total):
            label = {"fit": "least-squares start", "warmup": "warmup (compiling, adapting)", "draws": "sampling"}[phase]
            bar.update(task, completed=done, total=total, phase=label)

        try:
            result = run_inference(spec, progress=progress, fit_estimate=estimate)
        except ValueError as exc:
            fail(str(exc))
        paths = write_infer(out, result.posterior, result.summary,
                            {"infer.file": str(infer_file), "infer.gradient": result.gradient})
        if predictive > 0:
            bar.update(task, completed=0, total=None, phase="posterior predictive")
            paths["predictive"] = out / "predictive.parquet"
            predictive_table(spec, result.theta, predictive, o.seed).to_parquet(paths["predictive"], index=False)

    table = Table("parameter", "prior", "mean", "sd", "q05", "q50", "q95", "r_hat", "ess_bulk")
    for _, r in result.summary.iterrows():
        table.add_row(r["parameter"], r["prior"], *(f"{r[c]:.4g}" for c in ("mean", "sd", "q05", "q50", "q95")),
                      f"{r['r_hat']:.3f}", f"{r['ess_bulk']:.0f}")
    console.print(table)
    n_div = int(result.divergent.sum())
    n_draws = result.divergent.size
    console.print(f"divergences: {n_div} of {n_draws} draws; leapfrog steps per draw: mean "
                  f"{np.mean(result.leapfrog):.1f}; step sizes {np.min(result.step_size):.3g}-"
                  f"{np.max(result.step_size):.3g}; warmup {result.wall_warmup:.1f} s, draws {result.wall_draws:.1f} s "
                  "(compilation included)")
    worst = float(np.nanmax(result.summary["r_hat"])) if o.chains > 1 else float("nan")
    if o.chains > 1 and (worst > 1.01 or n_div):
        console.print(f"[yellow]warning:[/] max R-hat {worst:.3f} (want < 1.01) or divergences: the draws may not "
                      "represent the posterior; run longer (--warmup, --draws) or reparameterise")
    console.print(f"written: {', '.join(str(p) for p in paths.values())}")


def register(app: typer.Typer) -> None:
    """Add the infer command to the main app."""
    app.command(name="infer")(infer)
