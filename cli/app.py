"""The `jaxmedusa` command: a thin Typer layer over the library's functions.

One module per command group: run_commands.py (run, equilibrium) and study_commands.py
(sweep, show, merge); common.py holds the console and the exit-code-2 error path.
"""
from __future__ import annotations

import sys

import typer

from jaxmedusa_cli.run_commands import register as register_run_commands
from jaxmedusa_cli.run_commands import run
from jaxmedusa_cli.study_commands import register as register_study_commands  # a failing import is an error

app = typer.Typer(add_completion=False, no_args_is_help=False,
                  help="MEDUSA platoon driving and collision dynamics in JAX: runs, sweeps, studies.")


@app.callback(invoke_without_command=True)
def main(ctx: typer.Context) -> None:
    """With no command, run the default example (`jaxmedusa run`)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(run, path=None)


register_run_commands(app)
register_study_commands(app)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
