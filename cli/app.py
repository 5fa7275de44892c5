"""The `jaxmedusa` command: a thin Typer layer over the library's functions.

One module per command group: run_commands.py (run, equilibrium), study_commands.py
(sweep, show, merge), sensitivity_commands.py (sensitivity), fit_commands.py (fit),
plot_commands.py (plot, animate); common.py holds the console and the exit-code-2 error path.
"""
from __future__ import annotations

import sys

import typer

from jaxmedusa.core.compile_cache import enable as enable_compile_cache
from jaxmedusa_cli import fit_commands, plot_commands, run_commands, sensitivity_commands, study_commands

app = typer.Typer(add_completion=False, no_args_is_help=False,
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
        ctx.invoke(run_commands.run, path=None)


run_commands.register(app)
study_commands.register(app)
sensitivity_commands.register(app)
fit_commands.register(app)
plot_commands.register(app)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
