"""`jaxmedusa plot` and `jaxmedusa animate` (registered by app.py), and `run --asc`'s writer."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

console = Console()


def _fail(message: str) -> None:
    console.print(f"[bold red]error:[/] {message}", soft_wrap=True)
    raise typer.Exit(code=2)


def write_run_asc(folder: Path) -> None:
    """MEDUSA's .asc files of the run in `folder` (from its trajectory.parquet)."""
    import pandas as pd

    from jaxmedusa.asc import write_asc

    paths = write_asc(pd.read_parquet(folder / "trajectory.parquet"), folder)
    console.print(f"MEDUSA files written: {', '.join(p.name for p in paths)} (see docs/asc-files.md)")


def plot(
    results: Path = typer.Argument(..., help="A results folder: a run (trajectory.parquet), a sweep "
                                   "(scenarios.parquet) or a sensitivity table (sensitivity.parquet)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for the pictures (default RESULTS/plots)."),
    fmt: str = typer.Option("png", "--format", "-f", help="png, svg or pdf."),
    x: Optional[str] = typer.Option(None, "--x", help="Sweep: parameter on the horizontal axis (default: the first)."),
    y: Optional[str] = typer.Option(None, "--y", help="Sweep: parameter on the vertical axis (default: the second)."),
    metric: Optional[List[str]] = typer.Option(None, "--metric", "-m", help="Sweep: metric stem, repeatable "
                                               "(default: delta_v, final_y, contact_duration)."),
) -> None:
    """Draw the pictures a results folder allows: plan view and time histories of a run, maps
    and histograms of a sweep, bar charts of a sensitivity table."""
    from jaxmedusa.plot import plot_results

    if not results.is_dir():
        _fail(f"{results}: no such folder")
    try:
        paths = plot_results(results, out=out, fmt=fmt, x=x, y=y, metrics=metric or None)
    except (FileNotFoundError, ValueError, KeyError) as exc:
        _fail(str(exc).strip("'\""))
    for p in paths:
        console.print(f"wrote {p}")


def animate(
    results: Path = typer.Argument(..., help="A run's results folder (trajectory.parquet)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="FILE.gif or FILE.mp4 (default RESULTS/<name>.gif); "
                                       ".mp4 needs imageio-ffmpeg."),
    speed: float = typer.Option(1.0, "--speed", help="Playback speed: 1 = real time, 0.25 = four times slower."),
    fps: float = typer.Option(20.0, "--fps", help="Frames per second of the file."),
    moving: bool = typer.Option(False, "--moving", help="In the frame moving at the vehicles' mean initial velocity."),
) -> None:
    """Animate a run's plan view."""
    from jaxmedusa.plot.animate import AnimationError, animate_run
    from jaxmedusa.plot.run_data import load_run

    try:
        run = load_run(results)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    out = out or results / f"{run.name}.gif"
    with Progress(TextColumn("[bold]rendering[/]"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("frames", total=None)
        try:
            path = animate_run(run, out, speed=speed, fps=fps, moving=moving,
                               progress=lambda done, total: bar.update(task, completed=done, total=total))
        except AnimationError as exc:
            _fail(str(exc))
    console.print(f"wrote {path}")


def register(app: typer.Typer) -> None:
    app.command()(plot)
    app.command()(animate)
