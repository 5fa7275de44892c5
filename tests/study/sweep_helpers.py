"""Small studies shared by the sweep robustness tests (store, sharding, interrupts, Ray).

One settings/chunk-size combination is used throughout (2 vehicles, no contact, 0.02 s,
chunks of 2 scenarios), so the chunk function compiles once per test process.
"""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pyarrow.parquet as pq

from jaxmedusa.study import study_from_dict

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ROOT / "studies"
END_TIME = 0.02  # [s]: a few hundred steps, enough for every column to be filled
CHUNK = 2


def small_offset(n: int = 4, end_time: float = END_TIME, batch: int | None = CHUNK) -> dict:
    """studies/offset.toml shrunk: n samples, end_time, no contact, chunks of `batch`."""
    data = tomllib.loads((STUDIES / "offset.toml").read_text())
    data["sampler"]["n"] = n
    data.setdefault("simulation", {})["end_time"] = end_time
    data["simulation"]["contact"] = False
    data["simulation"]["dt"] = 5e-5  # MEDUSA's step, not the crush law's study default: the tests count steps
    if batch is not None:
        data.setdefault("run", {})["batch"] = batch
    else:
        data.pop("run", None)
    return data


def study(data: dict, name: str = "offset-small"):
    return study_from_dict(data, base_dir=STUDIES, source=f"<{name}>", default_name=name, text=json.dumps(data))


def offset_text(n: int = 4, end_time: float = END_TIME, batch: int | None = CHUNK, name: str = "offset-small") -> str:
    """studies/offset.toml as text, shrunk like small_offset (for files the CLI reads)."""
    text = (STUDIES / "offset.toml").read_text()
    subs = [('name = "offset"', f'name = "{name}"'),
            ('folder = "medusa/offset"', f'folder = "{(STUDIES / "medusa" / "offset").as_posix()}"'),
            ("n = 4096", f"n = {n}"),
            ("end_time = 3.0 ", f"end_time = {end_time!r}\ncontact = false\ndt = 5e-5 ")]  # (as small_offset)
    for old, new in subs:
        assert old in text, old
        text = text.replace(old, new, 1)
    if batch is not None:
        text += f"\n[run]\nbatch = {batch}\n"
    return text


def write_study(folder: Path, name: str = "offset-small", **kw) -> Path:
    """offset_text(...) written to folder/<name>.toml."""
    path = Path(folder) / f"{name}.toml"
    path.write_text(offset_text(name=name, **kw))
    return path


def table(folder: Path):
    return pq.read_table(Path(folder) / "scenarios.parquet")


def rows_equal(a, b) -> bool:
    """Same columns and bit-identical values (metadata aside: provenance differs per run)."""
    return a.replace_schema_metadata(None).equals(b.replace_schema_metadata(None))
