"""Validation of input tables (TOML scenarios and studies): errors that name file and key.

`InputErrors(source)` raises MedusaInputError("<source>: <key>: <message>"), which the CLI
turns into exit code 2. `simulation_settings` checks a [simulation] table against
core.params.Settings and the registries of the named choices.
"""
from __future__ import annotations

import dataclasses
import math
import tomllib
from pathlib import Path

from jaxmedusa.contact.laws import LAWS
from jaxmedusa.contact.shapes import SHAPES
from jaxmedusa.core.params import Settings
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.solver.end_condition import END_CONDITIONS
from jaxmedusa.solver.step_control import STEP_CONTROLS

__all__ = ["InputErrors", "is_number", "read_toml", "simulation_settings", "NAMED_SETTINGS"]

# Settings fields whose string values name an entry of a registry.
NAMED_SETTINGS = {"contact_law": LAWS, "contact_geometry": SHAPES, "step_control": STEP_CONTROLS,
                  "end_condition": END_CONDITIONS}


def is_number(value) -> bool:
    """A TOML number (int or float, not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class InputErrors:
    """Validation helpers that raise MedusaInputError naming the file (source) and the key."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, message: str):
        raise MedusaInputError(f"{self.source}: {key}: {message}")

    def keys(self, table: dict, allowed, where: str):
        for key in table:
            if key not in allowed:
                self.fail(f"{where}.{key}" if where != "top level" else key,
                          f"unknown key '{key}' in {where}; expected one of {', '.join(allowed)}")

    def table(self, value, key: str) -> dict:
        if not isinstance(value, dict):
            self.fail(key, f"a table expected, got {value!r}")
        return value

    def array(self, value, key: str) -> list:
        if not isinstance(value, list):
            self.fail(key, f"an array expected, got {value!r}")
        return value

    def string(self, value, key: str) -> str:
        if not isinstance(value, str):
            self.fail(key, f"a string expected, got {value!r}")
        return value

    def number(self, value, key: str) -> float:
        if not is_number(value):
            self.fail(key, f"a number expected, got {value!r}")
        if not math.isfinite(value):
            self.fail(key, f"a finite number expected, got {value!r}")
        return float(value)


def simulation_settings(t, err: InputErrors) -> dict:
    """The [simulation] table, checked against the fields of core.params.Settings; names of
    laws, shapes and step controls are checked against their registries (an unknown name
    fails here, naming the key and the valid names, before anything runs)."""
    t = err.table(t, "simulation")
    defaults = {f.name: f.default for f in dataclasses.fields(Settings)}
    err.keys(t, tuple(defaults), "simulation")
    out = {}
    for key, value in t.items():
        where = f"simulation.{key}"
        default = defaults[key]
        if isinstance(default, bool):
            if not isinstance(value, bool):
                err.fail(where, f"true or false expected, got {value!r}")
        elif isinstance(default, int):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                err.fail(where, f"a whole number >= 0 expected, got {value!r}")
        elif isinstance(default, float):
            value = err.number(value, where)
            if value <= 0:
                err.fail(where, f"a number > 0 expected, got {value:g}")
        elif isinstance(default, str) or key in NAMED_SETTINGS:
            value = err.string(value, where)
            registry = NAMED_SETTINGS.get(key)
            if registry is not None and value not in registry:
                err.fail(where, f"unknown {registry.kind} {value!r}; valid: {', '.join(registry.names())}")
        out[key] = value
    return out


def read_toml(path: Path, error: type[Exception]) -> tuple[dict, str]:
    """(table, text) of a TOML file; raises `error` naming the file when it cannot be opened
    or is not valid TOML (study and fit files share this)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise error(f"{path}: cannot open file ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise error(f"{path}: not a text file (byte {e.start} is not UTF-8): a TOML file expected") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not valid TOML: {e}") from None
