"""Parquet tables (pyarrow): per-run trajectories, study scenario rows, provenance metadata.

Trajectory table (`trajectory_table`, `write_trajectory`): long format, one row per saved
sample and vehicle, columns
    [sample_id | scenario]  int64   (study rows: sample_id; multi-scenario runs: scenario, 0-based)
    time [s], vehicle (1-based int32), x, y, z [m], heading, pitch, roll [deg]
    (core.safe_math.orientation_angles), speed [m/s] (sqrt(vx^2 + vy^2), as main.c),
    d11..d33 (dij = component j of director i = F[j-1, i-1]), vx, vy, vz [m/s],
    w11..w33 [1/s] (wij = component j of director velocity i = W[j-1, i-1]),
    energy [J] (eq 1.33 in full), energy_medusa [J] (vehicle.c energy()),
    then per wheel k = 1..W (front-left, front-right, rear-left, rear-right, further axles
    left, right): wheel{k}_x, wheel{k}_y [m] the tire's road contact point, wheel{k}_skid
    (bool) EDC's skid flag, the tire slides (analysis/skids.py: skid marks); NaN points
    for the padding wheels of a vehicle with fewer axles than the batch's most.
Rows that were not saved (Samples.saved False) and padding vehicles (batch.valid False)
are left out. Units are in each field's metadata (b"unit").

Study scenario table (`scenarios_table`): one row per scenario, columns
    sample_id, <each perturbed parameter, named by its study key>, status (int32),
    status_name, end_time [s], steps (accepted), rejected_steps, contact_steps, contact_runs,
    episodes (analysis/step_counts.py), then per vehicle n = 1..V the metrics of
    analysis.outcomes.VEHICLE_METRICS as `v{n}_{metric}` (vectors: `_x/_y/_z` in the world frame,
    `_fwd/_left/_up` in the vehicle frame). Missing values are nulls: contact times of a
    vehicle that never touched, the PDOF of a vehicle with zero delta-V, the rest position,
    heading and time of a vehicle that still moves at the end (analysis/rest.py).

Crash pulse (`write_pulse`, analysis/crash_pulse.py): one row per vehicle and 10 kHz tick
from the first contact: vehicle, time, t_rel [s], in_contact, ax, ay, az, a_long, a_lat
[m/s^2], raw and with the suffix _cfc60.

Schema metadata (`provenance`): jaxmedusa.version, jaxmedusa.git_commit, jaxmedusa.git_dirty,
jaxmedusa.backend, jaxmedusa.devices (count), jaxmedusa.device_kind (e.g. "cpu", "NVIDIA H100 80GB HBM3"),
jaxmedusa.precision, jax.version, plus whatever the
caller adds (a study adds jaxmedusa.study, the study TOML text, and more; see study/store.py).
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import tempfile
from pathlib import Path

import jax
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from jaxmedusa import __version__
from jaxmedusa.contact.articulation import trajectory_columns
from jaxmedusa.core.safe_math import orientation_angles
from jaxmedusa.core.status import status_label
from jaxmedusa.io.cdc import cdc_string

__all__ = ["write_trajectory", "trajectory_table", "scenarios_table", "write_table", "write_columns", "columns_table",
           "arrow_array", "write_text", "umask", "read_table", "provenance", "git_commit", "metric_columns",
           "write_pulse", "write_damage", "COUNT_COLUMNS"]

# Per-scenario step and contact counts after `steps` (analysis.step_counts, outcomes.SCENARIO_METRICS).
COUNT_COLUMNS = ("rejected_steps", "contact_steps", "contact_runs", "episodes")
_DIRECTOR_COLS = [f"d{i}{j}" for i in range(1, 4) for j in range(1, 4)]
_DIRVEL_COLS = [f"w{i}{j}" for i in range(1, 4) for j in range(1, 4)]
_UNITS = {"time": "s", "x": "m", "y": "m", "z": "m", "heading": "deg", "pitch": "deg", "roll": "deg",
          "speed": "m/s", "vx": "m/s", "vy": "m/s", "vz": "m/s", "energy": "J", "energy_medusa": "J",
          "articulation_deg": "deg", "hitch_force": "N", "hitch_fx": "N", "hitch_fy": "N", "hitch_fz": "N",
          "hitch_x": "m", "hitch_y": "m", "hitch_z": "m",
          **{c: "1/s" for c in _DIRVEL_COLS}, **{c: "-" for c in _DIRECTOR_COLS}}

# Per-vehicle metric units (outcomes.VEHICLE_METRICS) and vector component suffixes.
METRIC_UNITS = {
    "first_contact_time": "s", "last_contact_time": "s", "contact_duration": "s", "contact_episodes": "-",
    "peak_contact_force": "N", "max_penetration": "m", "delta_v": "m/s", "delta_v_vec": "m/s",
    "delta_v_body": "m/s", "pdof_deg": "deg", "pdof_clock": "h", "final_x": "m", "final_y": "m", "final_z": "m",
    "final_vx": "m/s", "final_vy": "m/s", "final_vz": "m/s", "final_speed": "m/s", "final_heading": "deg",
    "final_yaw_rate": "deg/s", "max_heading_change": "deg", "spin_out": "-", "max_lateral_excursion": "m",
    "lane_departure": "-", "energy_start": "J", "energy_end": "J",
    "max_crush": "m", "residual_crush": "m", "pulse_duration": "s", "mean_decel_g": "g", "peak_decel_g": "g",
    "restitution": "-", "absorbed_energy": "J", "ees": "m/s",
    **{f"c{i}": "m" for i in range(1, 7)}, "damage_width": "m", "damage_offset": "m", "crash3_energy": "J",
    "collision_delta_v": "m/s", "collision_pdof_clock": "h", "cdc": "",
    "max_articulation": "deg", "jackknife": "-", "sway_decay": "1/s", "sway_peaks": "-",
    "rest_x": "m", "rest_y": "m", "rest_heading": "deg", "rest_time": "s", "distance": "m", "skid_length": "m",
}
# Rest metrics that are null where the vehicle still moves at the end (analysis.rest.AT_REST_ONLY).
_AT_REST_ONLY = ("rest_x", "rest_y", "rest_heading", "rest_time")
# Crash-pulse columns (analysis/crash_pulse.py; the filtered ones carry a _cfc<N> suffix).
PULSE_UNITS = {"time": "s", "t_rel": "s", **{c: "m/s^2" for c in ("ax", "ay", "az", "a_long", "a_lat")}}
VECTOR_SUFFIXES = {"delta_v_vec": ("x", "y", "z"), "delta_v_body": ("fwd", "left", "up")}
_VECTOR_NAMES = {"delta_v_vec": "delta_v"}  # column stem of a vector metric


# ----------------------------------------------------------------------------- provenance


@functools.lru_cache(maxsize=1)
def git_commit() -> tuple[str | None, bool | None]:
    """(commit hash, dirty) of the git checkout holding this package, or (None, None)."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None, None
        status = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10)
        return head.stdout.strip(), bool(status.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return None, None


def provenance(extra: dict | None = None) -> dict[str, str]:
    """Provenance strings for schema metadata: package version, git commit, JAX backend,
    device count, precision (float64 when jax_enable_x64), plus `extra` (values
    JSON-encoded unless they are strings)."""
    commit, dirty = git_commit()
    meta = {
        "jaxmedusa.version": __version__,
        "jaxmedusa.git_commit": commit or "unknown",
        "jaxmedusa.git_dirty": "unknown" if dirty is None else str(dirty).lower(),
        "jaxmedusa.backend": jax.default_backend(),
        "jaxmedusa.devices": str(jax.device_count()),
        "jaxmedusa.device_kind": jax.devices()[0].device_kind,
        "jaxmedusa.precision": "float64" if jax.config.jax_enable_x64 else "float32",
        "jax.version": jax.__version__,
    }
    for k, v in (extra or {}).items():
        meta[k] = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    return meta


def _with_metadata(table: pa.Table, metadata: dict[str, str] | None) -> pa.Table:
    if not metadata:
        return table
    old = table.schema.metadata or {}
    new = {**old, **{k.encode(): v.encode() for k, v in metadata.items()}}
    return table.replace_schema_metadata(new)


def umask() -> int:
    """The process's file-creation mask (os.umask can only be read by setting it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _temporary(path: Path) -> str:
    """A hidden temporary file beside `path` with the mode a plain open() would give it
    (mkstemp makes 0600; output files get 0666 & ~umask like every other output)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~umask())
    return tmp


def write_text(text: str, path: str | Path) -> Path:
    """Write a text file atomically (temporary file in the same folder, then os.replace)."""
    path = Path(path)
    tmp = _temporary(path)
    try:
        Path(tmp).write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_table(table: pa.Table, path: str | Path, metadata: dict[str, str] | None = None) -> Path:
    """Write `table` as Parquet atomically (temporary file in the same folder, then
    os.replace: a reader never sees half a file, a killed writer leaves a hidden .tmp)."""
    path = Path(path)
    table = _with_metadata(table, metadata)
    tmp = _temporary(path)
    try:
        if path.suffix.lower() == ".csv":
            import pyarrow.csv as pacsv

            pacsv.write_csv(table, tmp)
        else:
            pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def arrow_array(x, mask=None, type=None) -> pa.Array:
    """A 1-D numpy array (float, int or bool) or a sequence of str as an Arrow array, built
    from its buffers; `mask` (1-D bool, True: null) and `type` (numbers are converted to it
    first) as pa.array's. Why not pa.array: its first call imports pandas (0.36-0.5 s, to
    look for pandas types), and `jaxmedusa run` and `jaxmedusa sweep` write their tables
    without pandas. Equal to pa.array(x, mask=mask, type=type) (tests/io/test_tables_values.py)."""
    x = np.asarray(x) if type is None or type == pa.string() else np.asarray(x, type.to_pandas_dtype())
    if type == pa.string() or x.dtype.kind in "US":
        data = [str(v).encode() for v in x]
        offsets = np.zeros(len(data) + 1, np.int32)
        offsets[1:] = np.cumsum([len(b) for b in data])
        kind, n, buffers = pa.string(), len(data), [pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    else:
        if x.ndim != 1:
            raise ValueError(f"arrow_array: 1-D array expected, got shape {x.shape}")
        values = np.packbits(x, bitorder="little") if x.dtype == np.bool_ else np.ascontiguousarray(x)
        kind, n, buffers = pa.from_numpy_dtype(x.dtype), len(x), [pa.py_buffer(values)]
    valid = None
    if mask is not None and np.any(mask):
        valid = pa.py_buffer(np.packbits(~np.asarray(mask, bool), bitorder="little"))
    return pa.Array.from_buffers(kind, n, [valid, *buffers])


def columns_table(columns: dict) -> pa.Table:
    """An Arrow table from {name: 1-D numpy array} (arrow_array: no pandas import)."""
    return pa.Table.from_arrays([arrow_array(c) for c in columns.values()], names=list(columns))


def write_columns(columns: dict, path: str | Path, metadata: dict[str, str] | None = None) -> Path:
    """Write a table given as {name: 1-D array} (e.g. analysis.events.episode_columns)."""
    return write_table(columns_table(columns), path, metadata)


DAMAGE_UNITS = {**{f"c{i}": "m" for i in range(1, 7)}, "damage_width": "m", "damage_offset": "m",
                "crash3_energy": "J", "max_residual_crush": "m", "delta_v": "m/s", "pdof_clock": "h"}


def write_damage(rows: list[dict], path: str | Path, metadata: dict[str, str] | None = None) -> Path:
    """Write damage.parquet: one row per vehicle (1-based) and collision (analysis.damage.
    damage_rows): vehicle, collision, c1..c6, damage_width, damage_offset, area, crash3_energy,
    max_residual_crush, delta_v, pdof_clock, cdc; units in the field metadata (b"unit")."""
    names = ["vehicle", "collision", *[f"c{i}" for i in range(1, 7)], "damage_width", "damage_offset", "area",
             "crash3_energy", "max_residual_crush", "delta_v", "pdof_clock", "cdc"]
    ints, strings = {"vehicle", "collision", "pdof_clock"}, {"area", "cdc"}
    arrays = [arrow_array([r[n] for r in rows], type=pa.int32() if n in ints else pa.string() if n in strings
                          else pa.float64()) for n in names]
    fields = [pa.field(n, a.type, metadata={b"unit": DAMAGE_UNITS[n].encode()} if n in DAMAGE_UNITS else None)
              for n, a in zip(names, arrays)]
    return write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), path, metadata)


def read_table(path: str | Path) -> pa.Table:
    return pq.read_table(path)


def write_pulse(columns: dict, path: str | Path, metadata: dict[str, str] | None = None) -> Path:
    """Write a crash pulse (analysis.crash_pulse.pulse_columns, {name: 1-D array}) as Parquet,
    units in the field metadata (b"unit")."""
    t = columns_table(columns)
    fields = []
    for f in t.schema:
        unit = PULSE_UNITS.get(f.name.split("_cfc")[0], "")
        fields.append(f.with_metadata({b"unit": unit.encode()}) if unit else f.with_metadata(None))
    return write_table(pa.Table.from_arrays(t.columns, schema=pa.schema(fields)), path, metadata)


# ----------------------------------------------------------------------------- trajectories


def _field(name: str, type_: pa.DataType) -> pa.Field:
    unit = _UNITS.get(name, "m" if name.startswith("wheel") and name[-2:] in ("_x", "_y") else None)
    return pa.field(name, type_, metadata={b"unit": unit.encode()} if unit else None)


def trajectory_table(samples, valid, ids=None, id_name: str = "sample_id", joints=None, wheels=None) -> pa.Table:
    """Long-format trajectory table (module docstring) from Samples with leaves [B, S, ...]
    (numpy or JAX) and valid [B, V]. `ids` (B,) labels the scenarios in column `id_name`;
    None leaves that column out. `wheels` [B, V, W] bool: the vehicle has that wheel (a car
    in a batch with trucks has padding wheels: NaN points there); None: every wheel."""
    saved = np.asarray(samples.saved, bool)  # [B, S]
    valid = np.asarray(valid, bool)  # [B, V]
    r = np.asarray(samples.r)  # [B, S, V, 3]
    b, s, n_v = r.shape[:3]
    mask = saved[:, :, None] & valid[:, None, :]  # [B, S, V]
    bi, si, vi = np.nonzero(mask)

    def take(x):
        return np.asarray(x)[bi, si, vi]

    F = take(samples.F)  # (N, 3, 3), columns are directors
    W = take(samples.W)
    v = take(samples.v)
    rr = take(samples.r)
    heading, pitch, roll = (np.degrees(a) for a in orientation_angles(F, xp=np))  # main.c's formulas
    cols: dict[str, np.ndarray] = {}
    if ids is not None:
        cols[id_name] = np.asarray(ids, np.int64)[bi]
    cols["time"] = np.asarray(samples.t)[bi, si]
    cols["vehicle"] = (vi + 1).astype(np.int32)
    cols.update(x=rr[:, 0], y=rr[:, 1], z=rr[:, 2], heading=heading, pitch=pitch, roll=roll,
                speed=np.hypot(v[:, 0], v[:, 1]))
    for i in range(3):
        for j in range(3):
            cols[f"d{i + 1}{j + 1}"] = F[:, j, i]
    cols.update(vx=v[:, 0], vy=v[:, 1], vz=v[:, 2])
    for i in range(3):
        for j in range(3):
            cols[f"w{i + 1}{j + 1}"] = W[:, j, i]
    cols["energy"] = take(samples.energy)
    cols["energy_medusa"] = take(samples.energy_medusa)
    if joints is not None:  # articulated vehicles (contact/articulation.py, docs/trailers.md)
        cols.update({k: x[bi, si, vi] for k, x in trajectory_columns(samples, joints).items()})
    if getattr(samples, "wheel_point", None) is not None:  # analysis/skids.py
        point, skid = take(samples.wheel_point), take(samples.wheel_skid)  # (N, W, 3), (N, W)
        if wheels is not None:
            point = np.where(np.asarray(wheels, bool)[bi, vi][:, :, None], point, np.nan)
        for k in range(point.shape[1]):
            cols[f"wheel{k + 1}_x"], cols[f"wheel{k + 1}_y"] = point[:, k, 0], point[:, k, 1]
            cols[f"wheel{k + 1}_skid"] = np.asarray(skid[:, k], bool)
    arrays = [arrow_array(c) for c in cols.values()]
    schema = pa.schema([_field(k, a.type) for k, a in zip(cols, arrays)])
    return pa.Table.from_arrays(arrays, schema=schema)


def write_trajectory(result_samples, batch, path, metadata: dict[str, str] | None = None) -> Path:
    """Write the trajectories of a run to `path` (Parquet; CSV if the name ends in .csv).

    result_samples: solver.Samples with leaves [B, S, ...]; batch: the core.params.Batch (for
    its valid mask [B, V]). One scenario (B = 1): no id column; several: a `scenario`
    column (0-based batch index). Columns: module docstring. Atomic; returns the path."""
    b = np.asarray(result_samples.saved).shape[0]
    ids = None if b == 1 else np.arange(b)
    # padding wheels (physics: C = D = 0, never loaded) of a smaller vehicle in the batch
    springs = getattr(getattr(batch, "vehicle", None), "C", None)  # a Batch; hand-made ones may lack it
    table = trajectory_table(result_samples, batch.valid, ids=ids, id_name="scenario",
                             joints=getattr(batch, "joints", None),
                             wheels=None if springs is None else np.asarray(springs) > 0.0)
    return write_table(table, path, provenance(metadata))


# ----------------------------------------------------------------------------- scenario rows


def metric_columns(name: str, n_vehicles: int) -> list[str]:
    """Column names of one per-vehicle metric for vehicles 1..n_vehicles."""
    stem = _VECTOR_NAMES.get(name, name)
    if name in VECTOR_SUFFIXES:
        return [f"v{k}_{stem}_{c}" for k in range(1, n_vehicles + 1) for c in VECTOR_SUFFIXES[name]]
    return [f"v{k}_{stem}" for k in range(1, n_vehicles + 1)]


def scenarios_table(sample_ids, parameters: dict[str, np.ndarray], metrics: dict[str, np.ndarray],
                    n_vehicles: int, metric_names, extra: dict | None = None) -> pa.Table:
    """One row per scenario (module docstring).

    sample_ids (N,); parameters {column: (N,)}; metrics: outcome arrays with leading axis N
    ([N] for status/end_time/steps, [N, V, ...] per vehicle) already without padding rows;
    metric_names: the per-vehicle metrics to include, in order; extra: {column: ((N,), unit)}
    appended last (e.g. the gradient columns d_<output>_d_<parameter>)."""
    cols: dict[str, pa.Array] = {"sample_id": arrow_array(np.asarray(sample_ids, np.int64))}
    for k, v in parameters.items():
        cols[k] = arrow_array(np.asarray(v))
    status = np.asarray(metrics["status"], np.int32)
    cols["status"] = arrow_array(status)
    cols["status_name"] = arrow_array([status_label(c) for c in status], type=pa.string())
    cols["end_time"] = arrow_array(np.asarray(metrics["end_time"], np.float64))
    cols["steps"] = arrow_array(np.asarray(metrics["steps"], np.int64))
    for name in COUNT_COLUMNS:  # analysis/step_counts.py (absent from hand-made metric dicts)
        if name in metrics:
            cols[name] = arrow_array(np.asarray(metrics[name], np.int64))
    units = {"end_time": "s"}
    for name in metric_names:
        a = np.asarray(metrics[name])[:, :n_vehicles]
        null = None
        if name in ("first_contact_time", "last_contact_time"):
            null = a < 0.0
        elif name in ("pdof_deg", "pdof_clock"):
            null = np.asarray(metrics["pdof_clock"])[:, :n_vehicles] == 0
        elif name in _AT_REST_ONLY:  # analysis/rest.py: not at rest at the end of the run
            null = np.asarray(metrics["rest_time"])[:, :n_vehicles] < 0.0
        elif name == "sway_decay" and "sway_peaks" in metrics:  # analysis/sway.py: under three peaks
            null = np.asarray(metrics["sway_peaks"])[:, :n_vehicles] < 3
        if name == "cdc":  # SAE J224 codes (N, V, 5) -> one string column per vehicle
            for k, col in enumerate(metric_columns(name, n_vehicles)):
                cols[col] = arrow_array([cdc_string(c) for c in a[:, k]], type=pa.string())
            continue
        if a.ndim == 3:  # vectors: (N, V, 3) -> V*3 columns
            a = a.reshape(a.shape[0], -1)
        names = metric_columns(name, n_vehicles)
        for j, col in enumerate(names):
            x = a[:, j]
            cols[col] = arrow_array(x, mask=None if null is None else null[:, j])
            units[col] = METRIC_UNITS.get(name, "")
    for col, (x, unit) in (extra or {}).items():
        cols[col] = arrow_array(np.asarray(x, np.float64))
        units[col] = unit
    fields = [pa.field(k, a.type, metadata={b"unit": units[k].encode()} if units.get(k) else None)
              for k, a in cols.items()]
    return pa.Table.from_arrays(list(cols.values()), schema=pa.schema(fields))
