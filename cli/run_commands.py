"""Run commands of the `jaxmedusa` CLI: run (one scenario) and equilibrium. `register(app)` adds them."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from jaxmedusa.analysis.equilibrium import pitch_deg, solve_equilibrium, with_equilibrium
from jaxmedusa.contact.stage import shape_name
from jaxmedusa.core.status import Status
from jaxmedusa.io.asc import write_asc
from jaxmedusa.io.medusa_files import MedusaInputError, read_models, write_model_block
from jaxmedusa.run import run_scenario, summary_rows
from jaxmedusa_cli.common import console, fail

DEFAULT_EXAMPLE = Path(__file__).resolve().parent.parent / "studies" / "medusa" / "default.toml"


def run(
    path: Optional[Path] = typer.Argument(None, help="Folder of MEDUSA files or a TOML scenario "
                                          "(default: studies/medusa/default.toml, the offset collision)."),
    end_time: Optional[float] = typer.Option(None, "--end-time", "-t", help="Simulated time [s] (MEDUSA -t)."),
    dt: Optional[float] = typer.Option(None, "--dt", "-d", help="Integration step [s] (MEDUSA -d, default 5e-5)."),
    save_every: Optional[float] = typer.Option(None, "--save-every", "-s", help="Save interval [s] (MEDUSA -s, default 0.01)."),
    out: Path = typer.Option(Path("results"), "--out", "-o", help="Results root; tables go to OUT/<name>/."),
    asc: bool = typer.Option(False, "--asc", help="Also write MEDUSA's director/velocity/energy/path.asc to OUT/<name>/."),
    contact_law: Optional[str] = typer.Option(None, "--contact-law", help="medusa | physical | crush "
                                              "(default: the scenario's, else medusa; docs/crash-law.md)."),
    contact_geometry: Optional[str] = typer.Option(None, "--contact-geometry", help="medusa_search | superellipsoid | "
                                                   "ellipsoid | box (default: the scenario's, else the law's: "
                                                   "medusa_search for medusa, superellipsoid for the others)."),
    end_condition: Optional[str] = typer.Option(None, "--end-condition", help="time | rest: stop at the end time, "
                                                "or once every vehicle is at rest with the end time as the limit "
                                                "(default: the scenario's [simulation], else time)."),
) -> None:
    """Simulate one scenario and write OUT/<name>/trajectory.parquet."""
    path = path or DEFAULT_EXAMPLE
    if not path.exists():
        fail(f"{path}: no such file or folder")
    with Progress(TextColumn("[bold]simulating[/]"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"),
                  TimeRemainingColumn(), console=console, transient=True) as bar:
        task = bar.add_task("run", total=1.0)
        try:
            result = run_scenario(path, end_time=end_time, dt=dt, save_every=save_every, out_root=out,
                                  progress=lambda f: bar.update(task, completed=min(f, 1.0)),
                                  contact_law=contact_law, contact_geometry=contact_geometry,
                                  end_condition=end_condition)
        except (MedusaInputError, ValueError) as exc:
            fail(str(exc))
    s = result.settings
    clock = result.result.final.clock
    status = Status(int(clock.status[0]))
    console.print(f"[bold]{result.scenario.name}[/]: {len(result.scenario.vehicles)} vehicle(s), "
                  f"t = {s.end_time:g} s{' (the limit: the run ends at rest)' if s.end_condition == 'rest' else ''}, "
                  f"dt = {s.dt:g} s, save every {s.save_every:g} s, "
                  f"contact law {s.contact_law} on shape {shape_name(s)}; "
                  f"{int(clock.steps[0])} steps in {result.wall_time:.2f} s wall; status [bold]{status.label}[/]"
                  + ("" if status == Status.OK else f" ({status.message})"))
    if s.end_condition == "rest":  # solver/end_condition.py
        console.print(f"the run ended at t = {float(clock.t[0]):.4f} s"
                      + (" with every vehicle at rest" if status == Status.OK else ""))
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

            paths = write_asc(pd.read_parquet(result.out_dir / "trajectory.parquet"), result.out_dir)
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
