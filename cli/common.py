"""What the command modules share: the console and the bad-input exit (code 2)."""
from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

console = Console()


def fail(message: str) -> None:
    """Print `message` as an error and exit with code 2 (bad input)."""
    # escaped: messages hold file text, keys and paths with [brackets] (e.g. jaxmedusa[ray])
    console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)  # no wrapping: paths stay whole
    raise typer.Exit(code=2)
