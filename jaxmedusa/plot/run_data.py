"""A run's results folder, read for pictures: trajectory, metadata, contact events, crash pulse.

    run = load_run("results/offset")   # trajectory.parquet [+ contact_events.parquet, crash_pulse.parquet]

Outlines need the vehicles' contact semi-axes, recorded by `jaxmedusa run` in the trajectory
table's metadata (run.run_metadata); tables written before that get MEDUSA's Appendix C
model 1 CONTACT 4.0 1.6 1.3 (semi-axes 2.0, 0.8, 0.65 m) and a warning in `notes`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

DEFAULT_SEMI_AXES = (2.0, 0.8, 0.65)  # [m], half of Appendix C model 1 CONTACT 4.0 1.6 1.3
DEFAULT_SHAPE = {"kind": "superellipsoid", "eps1": 0.4, "eps2": 0.4}


@dataclass
class RunData:
    """One run, vehicles numbered from 1 as in the tables."""

    name: str
    trajectory: pd.DataFrame  # io.trajectory_table columns
    vehicles: list[dict]  # number, name, contact_semi_axes [m]
    shape: dict  # kind, eps1, eps2
    road: np.ndarray | None  # (n, 4) road.dat points x, y, z [m], bank [deg]; None = flat plane
    events: pd.DataFrame | None = None  # contact_events.parquet
    crash_pulse: pd.DataFrame | None = None  # crash_pulse.parquet
    damage: pd.DataFrame | None = None  # damage.parquet (analysis/damage.py)
    notes: list[str] = field(default_factory=list)

    @property
    def numbers(self) -> list[int]:
        return [v["number"] for v in self.vehicles]

    def vehicle(self, number: int) -> pd.DataFrame:
        """The trajectory rows of one vehicle, by time."""
        t = self.trajectory
        return t[t["vehicle"] == number].sort_values("time")


def _meta(path: Path) -> dict[str, str]:
    raw = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in raw.items()}


def load_run(folder: str | Path) -> RunData:
    """Read a run folder (module docstring). Raises FileNotFoundError without trajectory.parquet."""
    folder = Path(folder)
    path = folder / "trajectory.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    table = pd.read_parquet(path)
    if "scenario" in table.columns and table["scenario"].nunique() > 1:
        raise ValueError(f"{path}: holds {table['scenario'].nunique()} scenarios; pictures take one run")
    meta = _meta(path)
    notes = []
    numbers = sorted(int(v) for v in table["vehicle"].unique())
    if "jaxmedusa.vehicles" in meta:
        vehicles = json.loads(meta["jaxmedusa.vehicles"])
    else:
        notes.append(f"{path}: no vehicle metadata; outlines use semi-axes {DEFAULT_SEMI_AXES} m")
        vehicles = [dict(number=n, name=f"vehicle {n}", contact_semi_axes=list(DEFAULT_SEMI_AXES)) for n in numbers]
    shape = json.loads(meta["jaxmedusa.contact_shape"]) if "jaxmedusa.contact_shape" in meta else dict(DEFAULT_SHAPE)
    road = json.loads(meta.get("jaxmedusa.road", "null"))
    events = pd.read_parquet(folder / "contact_events.parquet") if (folder / "contact_events.parquet").exists() else None
    pulse = pd.read_parquet(folder / "crash_pulse.parquet") if (folder / "crash_pulse.parquet").exists() else None
    damage = pd.read_parquet(folder / "damage.parquet") if (folder / "damage.parquet").exists() else None
    return RunData(name=meta.get("jaxmedusa.scenario", folder.name), trajectory=table, vehicles=vehicles,
                   shape=shape, road=None if road is None else np.asarray(road, float), events=events,
                   crash_pulse=pulse, damage=damage, notes=notes)


def directors(rows: pd.DataFrame) -> np.ndarray:
    """F (N, 3, 3), directors as columns (F[:, j, i] = d(i+1)(j+1)), from trajectory rows."""
    F = np.empty((len(rows), 3, 3))
    for i in range(3):
        for j in range(3):
            F[:, j, i] = rows[f"d{i + 1}{j + 1}"].to_numpy()
    return F


def yaw_rate(rows: pd.DataFrame) -> np.ndarray:
    """Yaw rate [rad/s] of the heading atan2(d12, d11): (d11 w12 - d12 w11) / (d11^2 + d12^2)."""
    d11, d12, w11, w12 = (rows[c].to_numpy() for c in ("d11", "d12", "w11", "w12"))
    return (d11 * w12 - d12 * w11) / (d11 * d11 + d12 * d12)
