"""Output folders: one kind of result per folder, checked before anything is simulated.

Every command that writes results (`run`, `sweep`, `fit`, `sensitivity`, `infer`) calls
`prepare_output(folder, kind, name)` first. It

* refuses a path that is a file, or under a file, and a folder it cannot write to (it
  writes and removes a hidden probe file), naming the path: an `OutputFolderError`
  (a ValueError), which the CLI turns into exit code 2 before any compile or run;
* reads the folder's marker, MARKER = `jaxmedusa-folder.json` (`{"kind": ..., "name": ...}`),
  and refuses to write one kind of result (or another study, fit or scenario) into a folder
  that holds another, unless `overwrite`; a folder with results but no marker (written by an
  older jaxmedusa, or by hand) is treated the same way;
* when results of the same kind and name are replaced (or anything is replaced under
  `overwrite`), removes the files derived from them (`plots/`, animations): a picture
  never outlives the results it shows. `resume=True` (a resumed sweep) keeps them.
* writes the marker (atomically).

The results themselves are written atomically (a hidden temporary file in the same folder,
renamed into place: io/tables.py), so a full disk or a kill while writing leaves every
earlier file whole.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from jaxmedusa.io.tables import write_text

__all__ = ["MARKER", "KINDS", "OutputFolderError", "prepare_output", "check_writable", "read_marker",
           "RESULT_NAMES", "DERIVED_NAMES", "remove_derived"]

MARKER = "jaxmedusa-folder.json"
KINDS = ("run", "study", "fit", "sensitivity", "infer")
# Files and folders the commands write (what --overwrite replaces; other files are left alone)
RESULT_NAMES = ("trajectory.parquet", "contact_events.parquet", "crash_pulse.parquet", "damage.parquet",
                "skid_marks.parquet", "director.asc",
                "velocity.asc", "energy.asc", "path.asc", "scenarios.parquet", "sweep.json", "chunks", "trajectories",
                "fit.parquet", "starts.parquet", "residuals.parquet", "sensitivity.parquet")
# Derived from results: removed whenever the results they show are replaced
DERIVED_NAMES = ("plots",)
DERIVED_SUFFIXES = (".gif", ".mp4")


class OutputFolderError(ValueError):
    """An output folder that cannot or must not be written (the message names the path)."""


def read_marker(folder: str | Path) -> dict | None:
    """The folder's marker {"kind", "name", ...}, or None when it has none (or it is unreadable)."""
    p = Path(folder) / MARKER
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "kind" in data else None


def check_writable(folder: str | Path, what: str = "--out") -> Path:
    """Create `folder` (and its parents) and prove it writable with a probe file; raises
    OutputFolderError naming the path when it is a file, lies under a file, or cannot be
    created or written."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputFolderError(f"{folder}: {what} names a file, not a folder")
    above = folder
    while not above.exists() and above != above.parent:
        above = above.parent
    if above.exists() and not above.is_dir():
        raise OutputFolderError(f"{folder}: cannot create this folder: {above} is a file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=folder)
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise OutputFolderError(f"{folder}: cannot write to this folder ({exc.strerror or exc})") from None
    return folder


def _results_in(folder: Path) -> list[str]:
    return [n for n in RESULT_NAMES if (folder / n).exists()]


def remove_derived(folder: str | Path) -> list[Path]:
    """Remove the pictures derived from a folder's results (plots/, *.gif, *.mp4): the removed paths."""
    folder = Path(folder)
    gone = []
    for n in DERIVED_NAMES:
        if (folder / n).exists():
            shutil.rmtree(folder / n, ignore_errors=True)
            gone.append(folder / n)
    for p in folder.iterdir() if folder.is_dir() else ():
        if p.is_file() and p.suffix in DERIVED_SUFFIXES:
            p.unlink(missing_ok=True)
            gone.append(p)
    return gone


def _legacy_kind(found: list[str]) -> str | None:
    """The kind of a folder without a marker, from the files it holds (None: unclear)."""
    if "sensitivity.parquet" in found:
        return "sensitivity"
    if "fit.parquet" in found:
        return "fit"
    if {"chunks", "sweep.json", "scenarios.parquet"} & set(found):
        return "study"
    if "trajectory.parquet" in found:
        return "run"
    return None


def _describe(marker: dict | None, found: list[str]) -> str:
    if marker is None:
        return f"results without a {MARKER} marker ({', '.join(found)})"
    return f"a {marker['kind']} named {marker.get('name')!r}"


def prepare_output(folder: str | Path, kind: str, name: str, overwrite: bool = False,
                   resume: bool = False, option: str = "--out") -> Path:
    """Get `folder` ready for results of `kind` ("run", "study", ...) named `name` (module
    docstring). Returns the folder. `option` is how the user named it (for messages).
    `resume`: the command continues what the folder holds (a sweep's --resume): derived
    files are kept, and a folder of the same kind without a marker (an older jaxmedusa's)
    is accepted, its own checks (study fingerprints) deciding."""
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}; one of {', '.join(KINDS)}")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputFolderError(f"{folder}: {option} names a file, not a folder")
    marker = read_marker(folder) if folder.is_dir() else None
    found = _results_in(folder) if folder.is_dir() else []
    same = marker is not None and marker.get("kind") == kind and marker.get("name") == name
    if marker is None and resume and _legacy_kind(found) in (kind, "study" if kind == "sensitivity" else kind):
        same = True
    if (marker is not None or found) and not same:
        if not overwrite:
            raise OutputFolderError(
                f"{folder}: holds {_describe(marker, found)}; writing a {kind} named {name!r} there would mix or "
                f"replace them. Choose another {option}, or add --overwrite to replace them")
        check_writable(folder, option)
        for n in found:
            p = folder / n
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    check_writable(folder, option)
    if not resume:
        remove_derived(folder)
    write_text(json.dumps({"kind": kind, "name": name}, indent=1) + "\n", folder / MARKER)
    return folder
