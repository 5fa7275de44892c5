"""The `jaxmedusa` command: a thin Typer layer over the library's functions.

One module per command group: run_commands.py (run, equilibrium), study_commands.py
(sweep, show, merge), sensitivity_commands.py (sensitivity), fit_commands.py (fit),
plot_commands.py (plot, animate); common.py holds the console and the exit-code-2 error path.

A group's module is imported when one of its commands is called (or `--help` lists them):
`jaxmedusa run` then does not import matplotlib, scipy.stats, optimistix, SALib or Ray,
which took 1.5-2 s of every run (Click's lazy-loading pattern for subcommands).
"""
from __future__ import annotations

import importlib
import sys
from functools import cache

import typer
from typer.core import TyperCommand, TyperGroup

from jaxmedusa.core.compile_cache import enable as enable_compile_cache
from jaxmedusa_cli.interrupt import install as install_signal_handlers

# command name -> the module (in jaxmedusa_cli) whose `register(app)` defines it; order as in --help
COMMAND_MODULES = {
    "run": "run_commands", "equilibrium": "run_commands",
    "sweep": "study_commands", "show": "study_commands", "merge": "study_commands",
    "sensitivity": "sensitivity_commands",
    "fit": "fit_commands",
    "plot": "plot_commands", "animate": "plot_commands",
}


@cache
def _group(module: str) -> TyperGroup:
    """The commands a module registers, as a Click group (imported on first use; an import
    error propagates: a broken module is an error, never a silently missing command)."""
    sub = typer.Typer()
    importlib.import_module(f"jaxmedusa_cli.{module}").register(sub)
    return typer.main.get_group(sub)


class LazyCommands(TyperGroup):
    """The main group: lists COMMAND_MODULES' names and builds a command when it is called."""

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return list(COMMAND_MODULES) + [n for n in super().list_commands(ctx) if n not in COMMAND_MODULES]

    def main(self, *args, **kwargs):
        """Ctrl-C / SIGTERM: out within a second, exit 130 / 143, from before a command's
        module is imported to its last write (interrupt.py)."""
        restore = install_signal_handlers()
        try:
            return super().main(*args, **kwargs)
        finally:
            if restore is not None:
                restore()

    def get_command(self, ctx: typer.Context, name: str) -> TyperCommand | None:
        if name in COMMAND_MODULES:
            return _group(COMMAND_MODULES[name]).commands[name]
        return super().get_command(ctx, name)


app = typer.Typer(cls=LazyCommands, add_completion=False, no_args_is_help=False,
                  help="MEDUSA platoon driving and collision dynamics in JAX: runs, sweeps, studies.")


@app.callback(invoke_without_command=True)
def main(ctx: typer.Context,
         compile_cache: bool = typer.Option(True, "--compile-cache/--no-compile-cache",
                                            help="keep compiled programs in ~/.cache/jaxmedusa/jax (env "
                                                 "JAXMEDUSA_COMPILE_CACHE=0 turns it off, or names the folder)")
         ) -> None:
    """With no command, run the default example (`jaxmedusa run`)."""
    if compile_cache:
        enable_compile_cache()
    if ctx.invoked_subcommand is None:
        run = _group("run_commands").commands["run"]
        with run.make_context("run", [], parent=ctx) as sub:  # `run` with no arguments: its defaults
            run.invoke(sub)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
