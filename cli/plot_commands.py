"""`jaxmedusa plot` and `jaxmedusa animate` (registered by app.py)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from jaxmedusa.plot import plot_results
from jaxmedusa.plot.animate import AnimationError, animate_run
from jaxmedusa.plot.run_data import load_run
from jaxmedusa.io.output_folder import check_writable
from jaxmedusa_cli.common import console, fail, fail_write

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
    if not results.is_dir():
        fail(f"{results}: no such folder")
    try:  # before anything is drawn: --out a file, a folder that cannot be written
        check_writable(out if out is not None else results / "plots")
    except ValueError as exc:
        fail(str(exc))
    try:
        paths = plot_results(results, out=out, fmt=fmt, x=x, y=y, metrics=metric or None)
    except (FileNotFoundError, ValueError, KeyError) as exc:
        fail(str(exc).strip("'\""))
    except OSError as exc:
        fail_write(exc, out or results / "plots")
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
    try:
        run = load_run(results)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    out = out or results / f"{run.name}.gif"
    if out.is_dir():
        fail(f"{out}: --out names a folder; a file name ending in .gif or .mp4 expected")
    try:
        check_writable(out.parent, "the folder of --out")
    except ValueError as exc:
        fail(str(exc))
    with Progress(TextColumn("[bold]rendering[/]"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("frames", total=None)
        try:
            path = animate_run(run, out, speed=speed, fps=fps, moving=moving,
                               progress=lambda done, total: bar.update(task, completed=done, total=total))
        except AnimationError as exc:
            fail(str(exc))
        except OSError as exc:
            fail_write(exc, out)
    console.print(f"wrote {path}")


def register(app: typer.Typer) -> None:
    app.command()(plot)
    app.command()(animate)
