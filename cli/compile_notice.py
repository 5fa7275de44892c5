"""Say before a compile that one is coming, and about how long it takes.

The first run of a scenario or study compiles its time loop: seconds for the analytic
contact shapes, minutes for the MEDUSA law's own search (medusa_search). A new user saw
nothing but XLA's "Very slow compile?" alarms for 150-250 s. So a command prints, before
its first jitted call, what it compiles and an estimate, and keeps a spinner with the
elapsed time running until the first results arrive.

The estimate: this machine's own figure when the same program (command, scenario or study
name, settings, batch size, jaxmedusa source) was compiled here before (kept in
TIMES_FILE in the compile-cache folder; then the compiled program is normally on disk and
only loaded), else FIRST_COMPILE_SECONDS for the contact shape, measured on a 2-core CPU
(Intel Xeon, 2 cores, float64, jaxlib 0.10, quiet machine) from the start of the command
to its first progress report. XLA's own slow-compile alarms are hidden by the CLI
(TF_CPP_MIN_LOG_LEVEL, jaxmedusa_cli/__init__.py): a slow compile is expected here.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

import jaxmedusa
from jaxmedusa.contact.stage import shape_name
from jaxmedusa.core import executable_cache

__all__ = ["CompileNotice", "FIRST_COMPILE_SECONDS"]

# [s] first compile of a run's loop on a 2-core CPU, by contact shape (no-contact runs: "none").
# Measured 2026-11-26: `jaxmedusa run studies/medusa/evade -t 0.5` (medusa_search) 128 s to the
# end of a 0.5 s run, almost all compiling; `jaxmedusa run` (the offset example on
# superellipsoid) 9 s to the end of 3 s simulated.
FIRST_COMPILE_SECONDS = {"medusa_search": 110.0, "none": 6.0}
DEFAULT_FIRST_COMPILE_SECONDS = 10.0
# A fit compiles the loop with its forward-mode Jacobian, vmapped over the starts: 150-250 s
# for studies/fit_offset.toml on a 2-core CPU (issue 33's report of a fresh clone).
FIT_FIRST_COMPILE_SECONDS = 200.0
TIMES_FILE = "compile-times.json"


@cache
def _package_stamp() -> str:
    """Names and modification times of the package's modules: an edit compiles again."""
    root = Path(jaxmedusa.__file__).parent
    return hashlib.sha256("".join(f"{p}{p.stat().st_mtime_ns}" for p in sorted(root.rglob("*.py"))).encode()).hexdigest()


def _times_path() -> Path | None:
    folder = executable_cache.folder()
    return None if folder is None else folder.parent / TIMES_FILE


def _read() -> dict:
    p = _times_path()
    try:
        data = json.loads(p.read_text()) if p is not None else {}
    except (OSError, ValueError):
        data = {}
    return data if isinstance(data, dict) else {}


class CompileNotice:
    """One program a command is about to compile: `line()` before the first call,
    `done(seconds)` when the first results arrived (records this machine's figure)."""

    def __init__(self, what: str, settings, program_key: str, contact: bool = True, estimate: float | None = None):
        """`contact`: whether anything can touch (two vehicles, or a barrier); `estimate` [s]
        replaces the table's figure (a fit's bigger program)."""
        self.what = what
        self.shape = shape_name(settings) if settings.contact and contact else "none"
        self.key = hashlib.sha256(f"{_package_stamp()}\n{program_key}\n{settings!r}".encode()).hexdigest()[:24]
        self.seen = _read().get(self.key)
        self.estimate = estimate

    def line(self) -> str:
        if self.seen is not None:
            return f"loading {self.what} (compiled on this machine before; first results took {self.seen:.0f} s)"
        n = self.estimate or FIRST_COMPILE_SECONDS.get(self.shape, DEFAULT_FIRST_COMPILE_SECONDS)
        shape = "no contact" if self.shape == "none" else f"contact shape {self.shape}"
        return (f"compiling {self.what}, first time on this machine: about {n:.0f} s on a 2-core CPU "
                f"({shape}); later runs load it from the compile cache")

    def done(self, seconds: float) -> None:
        p = _times_path()
        if p is None or self.seen is not None:
            return
        data = _read()
        data[self.key] = round(float(seconds), 1)
        try:
            tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data, indent=0))
            os.replace(tmp, p)
        except OSError:  # a read-only cache folder: the estimate stays the table's
            pass
