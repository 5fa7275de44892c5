"""MEDUSA's plain-text output files (main.c `write_to_file()`), from a trajectory table.

`write_asc(table, folder)` writes the four files the original program fills, with its
columns, order and printf formats (report section 2.4; main.c lines "Output"):

  director.asc  per sample: "%e\\t" time, then per vehicle 12 x "%e\\t": r.E1, r.E2, r.E3,
                d1.E1, d1.E2, d1.E3, d2.E1, ..., d3.E3 (state z[1..12]); then "\\n".
  velocity.asc  the same with v.E1..v.E3, w1.E1, ..., w3.E3 (state z[13..24]).
  energy.asc    "%e\\t" time, then per vehicle "%e\\t" energy (vehicle.c energy(): the
                table's `energy_medusa` column); then "\\n".
  path.asc      SmartPATH animator format, one line per sample and vehicle:
                "%e\\t" time, "%d\\t0\\t0\\t" vehicle (1-based), "%e\\t" x y z,
                "%e\\t" heading, pitch, roll [rad], "0\\t" segment id, "%e\\t" speed
                sqrt(vx^2 + vy^2) [m/s], then "0 0 0 0 0 0 0 \\n".

Deviations from the original program (docs/asc-files.md):
  * velocity.asc's last column per vehicle (w3.E3) is the true value: save_data_point()
    copies z[1..23] only, so main.c prints an uninitialised buffer entry there.
  * path.asc's heading, pitch, roll and speed are each row's own: main.c computes them from
    the buffer's last row (`[count]` instead of `[cnt]`), so up to 100 consecutive rows
    share the angles and speed of the last one.
  * sample times are jaxmedusa's (the exact save grid plus end_time; main.c's drift off
    the grid once contact shrinks the step); oop.asc (empty) and init.c's `co` are not written.
Python's "%e" is C's "%e" (6 digits after the point, two-digit exponent at least).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is pivoted: `jaxmedusa run` loads this module without it
    import pandas as pd

__all__ = ["ASC_FILES", "write_asc", "path_angles"]

ASC_FILES = ("director.asc", "velocity.asc", "energy.asc", "path.asc")
_DIRECTOR = ["x", "y", "z"] + [f"d{i}{j}" for i in range(1, 4) for j in range(1, 4)]  # z[1..12]
_VELOCITY = ["vx", "vy", "vz"] + [f"w{i}{j}" for i in range(1, 4) for j in range(1, 4)]  # z[13..24]
_PATH_FMT = "%e\t%d\t0\t0\t%e\t%e\t%e\t%e\t%e\t%e\t0\t%e"
_PATH_END = "\t0 0 0 0 0 0 0 \n"  # fprintf(smart_path_file, "0 0 0 0 0 0 0 \n") after the speed's "\t"


def path_angles(d11, d12, d31, d32, d33):
    """Heading, pitch, roll [rad] as main.c write_to_file() computes them (arrays)."""
    h = np.sqrt(d11 * d11 + d12 * d12)
    heading = np.arctan2(d12, d11)
    pitch = np.arctan2((d31 * d11 + d12 * d32) / h, d33)
    roll = np.arctan2((d12 * d31 - d11 * d32) / h, d33)
    return heading, pitch, roll


def _wide(table: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(times (S,), values (S, V * len(columns))) with each vehicle's columns together."""
    import pandas as pd  # (see the imports)

    wide = table.pivot(index="time", columns="vehicle", values=columns)
    vehicles = sorted(table["vehicle"].unique())
    wide = wide.reindex(columns=pd.MultiIndex.from_product([columns, vehicles]))
    values = wide.to_numpy().reshape(len(wide), len(columns), len(vehicles)).transpose(0, 2, 1)
    return wide.index.to_numpy(), values.reshape(len(wide), -1)


def write_asc(table: pd.DataFrame, folder: str | Path) -> list[Path]:
    """Write director.asc, velocity.asc, energy.asc and path.asc of one run into `folder`
    from its trajectory table (io.trajectory_table columns; one scenario). Returns the paths."""
    if "scenario" in table.columns and table["scenario"].nunique() > 1:
        raise ValueError("the .asc files hold one scenario; the table has several (column 'scenario')")
    missing = [c for c in ["time", "vehicle", "energy_medusa", *_DIRECTOR, *_VELOCITY] if c not in table.columns]
    if missing:
        raise ValueError(f"trajectory table lacks column(s) {', '.join(missing)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    table = table.sort_values(["time", "vehicle"], kind="stable")
    out = []
    for name, cols in (("director.asc", _DIRECTOR), ("velocity.asc", _VELOCITY), ("energy.asc", ["energy_medusa"])):
        t, values = _wide(table, cols)
        path = folder / name
        # every field is "%e\t", the line ends "\t\n" (fprintf "%e\t" per value, then "\n")
        np.savetxt(path, np.column_stack([t, values]), fmt="%e", delimiter="\t", newline="\t\n")
        out.append(path)
    d = {c: table[c].to_numpy() for c in ("d11", "d12", "d31", "d32", "d33", "vx", "vy")}
    heading, pitch, roll = path_angles(d["d11"], d["d12"], d["d31"], d["d32"], d["d33"])
    speed = np.sqrt(d["vx"] * d["vx"] + d["vy"] * d["vy"])
    rows = np.column_stack([table["time"], table["vehicle"], table["x"], table["y"], table["z"],
                            heading, pitch, roll, speed])
    path = folder / "path.asc"
    np.savetxt(path, rows, fmt=_PATH_FMT, delimiter="", newline=_PATH_END)
    out.append(path)
    return out
