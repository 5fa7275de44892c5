"""Run commands of the `jaxmedusa` CLI: run (one scenario) and equilibrium. `register(app)` adds them."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.progress import (BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from jaxmedusa.analysis.equilibrium import pitch_deg, solve_equilibrium, with_equilibrium
from jaxmedusa.contact.stage import shape_name
from jaxmedusa.core.status import Status
from jaxmedusa.io.asc import write_asc
from jaxmedusa.io.medusa_files import MedusaInputError, read_models, write_model_block
from jaxmedusa.io.output_folder import prepare_output
from jaxmedusa.run import ENERGY_GAIN_MARGIN, LiveRun, run_scenario, summary_rows
from jaxmedusa_cli.common import console, fail
from jaxmedusa_cli.compile_notice import CompileNotice
from jaxmedusa_cli.file_kinds import wrong_kind_message
from jaxmedusa_cli.interrupt import on_interrupt

RUNS_ROOT = Path("results") / "runs"
DEFAULT_EXAMPLE = Path(__file__).resolve().parent.parent / "studies" / "medusa" / "default.toml"


def run(
    path: Optional[Path] = typer.Argument(None, help="Folder of MEDUSA files or a TOML scenario "
                                          "(default: studies/medusa/default.toml, the offset collision)."),
    end_time: Optional[float] = typer.Option(None, "--end-time", "-t", help="Simulated time [s] (MEDUSA -t)."),
    dt: Optional[float] = typer.Option(None, "--dt", "-d", help="Integration step [s] (MEDUSA -d, default 5e-5)."),
    save_every: Optional[float] = typer.Option(None, "--save-every", "-s", help="Save interval [s] (MEDUSA -s, default 0.01)."),
    out: Path = typer.Option(RUNS_ROOT, "--out", "-o", help="Results root; tables go to OUT/<name>/ "
                             "(default results/runs: runs never share a folder with studies or fits)."),
    asc: bool = typer.Option(False, "--asc", help="Also write MEDUSA's director/velocity/energy/path.asc to OUT/<name>/."),
    contact_law: Optional[str] = typer.Option(None, "--contact-law", help="medusa | physical | crush "
                                              "(default: the scenario's, else medusa; docs/crash-law.md)."),
    contact_geometry: Optional[str] = typer.Option(None, "--contact-geometry", help="medusa_search | superellipsoid | "
                                                   "ellipsoid | box (default: the scenario's, else the law's: "
                                                   "medusa_search for medusa, superellipsoid for the others)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace whatever OUT/<name>/ holds (another kind of "
                                   "results, or a run of another scenario)."),
    intended_overlap: bool = typer.Option(False, "--intended-overlap", help="Vehicles overlapping at t = 0 are "
                                          "meant (otherwise an input error; TOML: intended_overlap = true)."),
    end_condition: Optional[str] = typer.Option(None, "--end-condition", help="time | rest: stop at the end time, "
                                                "or once every vehicle is at rest with the end time as the limit "
                                                "(default: the scenario's [simulation], else time)."),
) -> None:
    """Simulate one scenario and write OUT/<name>/trajectory.parquet."""
    path = path or DEFAULT_EXAMPLE
    if not path.exists():
        fail(f"{path}: no such file or folder")
    wrong = wrong_kind_message(path, "scenario", "jaxmedusa run")
    if wrong:
        fail(wrong)
    if out.exists() and not out.is_dir():
        fail(f"{out}: --out names a file, not a folder")
    live = LiveRun()
    notice: list[CompileNotice] = []

    def before_run(scenario, settings, out_dir):  # inputs checked; nothing compiled yet
        if out_dir is not None:
            prepare_output(out_dir, "run", scenario.name, overwrite=overwrite)
        notice.append(CompileNotice(f"the {scenario.name} scenario's loop", settings,
                                    f"run {len(scenario.vehicles)} vehicles",
                                    contact=len(scenario.vehicles) > 1 or bool(scenario.barriers)))
        console.print(notice[0].line(), soft_wrap=True)

    def keep_partial():  # Ctrl-C / SIGTERM (interrupt.py): the samples saved so far
        written = live.write_partial()
        if written is not None:
            console.print(f"kept the samples saved so far in {written} (metadata jaxmedusa.interrupted_at)")

    with on_interrupt(keep_partial), Progress(
            SpinnerColumn(), TextColumn("[bold]{task.description}[/]"), BarColumn(),
            TextColumn("{task.percentage:>5.1f}%"), TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
            console=console, transient=True) as bar:
        task = bar.add_task("compiling", total=1.0)
        start = time.perf_counter()

        def progress(fraction):
            if notice and bar.tasks[0].description == "compiling":
                notice[0].done(time.perf_counter() - start)
                bar.update(task, description="simulating")
            bar.update(task, completed=min(fraction, 1.0))

        try:
            result = run_scenario(path, end_time=end_time, dt=dt, save_every=save_every, out_root=out,
                                  progress=progress, contact_law=contact_law, contact_geometry=contact_geometry,
                                  before_run=before_run, live=live, intended_overlap=intended_overlap,
                                  end_condition=end_condition)
        except (MedusaInputError, ValueError) as exc:
            fail(str(exc))
        except OSError as exc:  # a full disk, a folder made read-only meanwhile: earlier files stay whole
            fail(f"{exc.filename or out}: cannot write ({exc.strerror or exc})")
    s = result.settings
    clock = result.result.final.clock
    status = result.status
    console.print(f"[bold]{result.scenario.name}[/]: {len(result.scenario.vehicles)} vehicle(s), "
                  f"t = {s.end_time:g} s{' (the limit: the run ends at rest)' if s.end_condition == 'rest' else ''}, "
                  f"dt = {s.dt:g} s, save every {s.save_every:g} s, "
                  f"contact law {s.contact_law} on shape {shape_name(s)}; "
                  f"{int(clock.steps[0])} steps in {result.wall_time:.2f} s wall; status [bold]{status.label}[/]"
                  + ("" if status == Status.OK else f" ({status.message})"))
    if s.end_condition == "rest":  # solver/end_condition.py
        console.print(f"the run ended at t = {float(clock.t[0]):.4f} s"
                      + (" with every vehicle at rest" if status == Status.OK else ""))
    e = result.energy
    gain = e["max_gain"] / max(e["initial"] + e["drive_work"], 1e-300)
    console.print(f"energy: {e['initial'] / 1e6:.4g} MJ at t = 0 + drivers' work {e['drive_work'] / 1e6:.3g} MJ; "
                  f"largest excess over both {e['max_gain'] / 1e6:.3g} MJ = {100 * gain:.3g} % (energy_gain above "
                  f"{100 * ENERGY_GAIN_MARGIN:g} %)", highlight=False)
    c = result.counts
    console.print(f"steps: {c['accepted_steps']} accepted, {c['rejected_steps']} rejected, "
                  f"{c['contact_steps']} accepted in contact; contact: {c['contact_runs']} runs of "
                  f"consecutive steps, {c['episodes']} episode(s) (gaps over 10 ms)")
    rows = summary_rows(result)
    table = Table("vehicle", "x [m]", "y [m]", "z [m]", "speed [m/s]", "heading [deg]", "E start [J]", "E end [J]")
    if rows:
        table.title = f"at t = {rows[0]['time']:g} s (the table's last row)"
    for row in rows:
        table.add_row(str(row["vehicle"]), f"{row['x']:.3f}", f"{row['y']:.4f}", f"{row['z']:.4f}",
                      f"{row['speed']:.3f}", f"{row['heading_deg']:.3f}", f"{row['energy_start']:.1f}",
                      f"{row['energy_end']:.1f}")
    console.print(table)
    if rows and "distance" in rows[0]:  # analysis/rest.py
        rest = Table("vehicle", "rest x [m]", "rest y [m]", "rest heading [deg]", "rest time [s]", "distance [m]",
                     "skid length [m]", title="rest (at the end of the run) and travel")
        for row in rows:
            still = row["rest_time"] >= 0.0
            cells = [f"{row['rest_x']:.3f}", f"{row['rest_y']:.3f}", f"{row['rest_heading']:.2f}",
                     f"{row['rest_time']:.3f}"] if still else ["moving"] * 4
            rest.add_row(str(row["vehicle"]), *cells, f"{row['distance']:.3f}", f"{row['skid_length']:.3f}")
        console.print(rest)
    if result.out_dir is not None:
        console.print(f"tables written to {result.out_dir}/")
        if asc:
            import pandas as pd  # here: only --asc needs it (0.6 s to import)

            try:
                paths = write_asc(pd.read_parquet(result.out_dir / "trajectory.parquet"), result.out_dir)
            except OSError as exc:
                fail(f"{exc.filename or result.out_dir}: cannot write ({exc.strerror or exc})")
            console.print(f"MEDUSA files written: {', '.join(p.name for p in paths)} (see docs/asc-files.md)")


def equilibrium(
    model_file: Path = typer.Argument(..., help="A MEDUSA model.dat file."),
    model: Optional[int] = typer.Option(None, "--model", "-m", help="Model number (1-based); default: all."),
) -> None:
    """Solve the static equilibrium (R3 and F) on a flat road and print it in model.dat syntax
    (the whole file, or one MODEL block with --model)."""
    try:
        models = read_models(model_file)
    except MedusaInputError as exc:
        fail(str(exc))
    numbers = [model] if model else list(range(1, len(models) + 1))
    if model is None:  # a complete model.dat
        print(f"NUMBER_OF_MODELS {len(models)}")
    for n in numbers:
        if not 1 <= n <= len(models):
            fail(f"{model_file}: model {n} does not exist (the file has {len(models)})")
        spec = models[n - 1]
        eq = solve_equilibrium(spec)
        print(f"% model {n}: static equilibrium on a flat road, residual {eq.residual:.2e} N after "
              f"{eq.iterations} Newton steps; pitch {pitch_deg(eq.F):.4f} deg (file: {pitch_deg(spec.eq_F):.4f} deg);"
              f" wheel loads {', '.join(f'{x:.1f}' for x in eq.wheel_loads)} N")
        print(write_model_block(with_equilibrium(spec, eq), n))


def register(app: typer.Typer) -> None:
    """Add the run commands (run, equilibrium) to the main app."""
    app.command(name="run")(run)
    app.command(name="equilibrium")(equilibrium)
