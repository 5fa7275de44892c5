"""What kind of input file a TOML file is (scenario, study or fit), from its top-level tables,
so that a study given to `run` (or a fit file to `sensitivity`) is told so by name instead of
"unknown key 'description'"."""
from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = ["file_kind", "wrong_kind_message"]

# top-level tables that only one kind of file has (io/scenario_toml.py, study/parse.py, fit/spec.py)
_SIGNS = {"study": ("sampler", "parameters", "outputs"), "fit": ("unknowns", "observations", "fit"),
          "scenario": ("medusa", "models", "vehicles", "overrides")}
_COMMANDS = {"scenario": "jaxmedusa run", "study": "jaxmedusa sweep or jaxmedusa sensitivity",
             "fit": "jaxmedusa fit"}


def file_kind(path: Path) -> str | None:
    return _kind_and_signs(path)[0]


def _kind_and_signs(path: Path) -> tuple[str | None, list[str]]:
    """"scenario", "study" or "fit" for a readable TOML file whose top level says so; None
    otherwise (a folder, unreadable or unclear: the command's own checks then speak)."""
    path = Path(path)
    if not path.is_file() or path.suffix.lower() != ".toml":
        return None, []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None, []
    for kind, keys in _SIGNS.items():
        found = [k for k in keys if k in data]
        if found:
            return kind, found
    return None, []


def wrong_kind_message(path: Path, expected: str, command: str) -> str | None:
    """The error message when `path` is a known kind other than `expected`, else None."""
    kind, found = _kind_and_signs(path)
    if kind is None or kind == expected:
        return None
    signs = ", ".join(f"[{k}]" for k in found)
    return (f"{path}: this is a {kind} file (it has {signs}), not a {expected} file: "
            f"`{command}` takes a {expected} file; run it with {_COMMANDS[kind]}")
