"""What the command modules share: the console and the bad-input exit (code 2)."""
from __future__ import annotations

import typer
from rich.console import Console

console = Console()


def fail(message: str) -> None:
    """Print `message` as an error and exit with code 2 (bad input)."""
    console.print(f"[bold red]error:[/] {message}", soft_wrap=True)  # no wrapping: paths stay whole
    raise typer.Exit(code=2)
