"""What the command modules share: the console and the bad-input exit (code 2). Light on
purpose (rich only): interrupt.py imports it before JAX, when the command starts."""
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


def fail_write(exc: OSError, where) -> None:
    """Exit 2 for a write that failed (a full disk, a folder made read-only meanwhile),
    naming the path; files written earlier stay whole (atomic writes, io/tables.py)."""
    fail(f"{getattr(exc, 'filename', None) or where}: cannot write ({getattr(exc, 'strerror', None) or exc})")

