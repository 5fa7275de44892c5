"""The chunk store of a sweep: chunk files with provenance, resume checks, finalize, merge.

Each chunk is written atomically to <out>/chunks/chunk-NNNNN.parquet with the study's
fingerprint in its schema metadata; `finalize` joins a complete set into
<out>/scenarios.parquet; `merge_results` joins the chunks of several shard folders.
"""
from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jaxmedusa.io import tables
from jaxmedusa.study.spec import Study, StudyError

__all__ = ["chunk_path", "chunk_meta", "study_meta", "read_chunks", "finalize", "merge_results", "status_counts"]


def chunk_path(out: Path, k: int) -> Path:
    return out / "chunks" / f"chunk-{k:05d}.parquet"


def chunk_meta(path: Path) -> dict:
    meta = pq.read_schema(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items()}


def study_meta(study: Study, chunk_size: int, n: int) -> dict:
    return {
        "jaxmedusa.study": study.text,
        "jaxmedusa.study_spec": json.dumps(study.spec(), sort_keys=True, default=str),
        "jaxmedusa.study_name": study.name,
        "jaxmedusa.fingerprint": study.fingerprint(chunk_size),
        "jaxmedusa.chunk_size": str(chunk_size),
        "jaxmedusa.n_samples": str(n),
        "jaxmedusa.n_vehicles": str(study.n_vehicles),
        "jaxmedusa.parameters": json.dumps([p.name for p in study.parameters]),
    }


def read_chunks(folder: Path) -> dict[int, Path]:
    return {int(p.stem.split("-")[1]): p for p in sorted((folder / "chunks").glob("chunk-*.parquet"))}


def finalize(out: str | Path) -> pa.Table:
    """Join <out>/chunks/*.parquet (all chunks of one study) into <out>/scenarios.parquet."""
    out = Path(out)
    chunks = read_chunks(out)
    if not chunks:
        raise StudyError(f"{out}: no chunk files in {out / 'chunks'}")
    metas = {k: chunk_meta(p) for k, p in chunks.items()}
    first = metas[min(metas)]
    fp = first["jaxmedusa.fingerprint"]
    bad = [k for k, m in metas.items() if m.get("jaxmedusa.fingerprint") != fp]
    if bad:
        raise StudyError(f"{out}: chunks {bad} belong to a different study or chunk size than chunk {min(metas)}")
    n, size = int(first["jaxmedusa.n_samples"]), int(first["jaxmedusa.chunk_size"])
    missing = [k for k in range(math.ceil(n / size)) if k not in chunks]
    if missing:
        raise StudyError(f"{out}: chunks {missing} are missing (run the remaining shards, or --resume)")
    table = pa.concat_tables([pq.read_table(chunks[k]) for k in sorted(chunks)])
    table = table.sort_by("sample_id")
    keep = {k: v for k, v in first.items() if k != "jaxmedusa.chunk"}
    table = table.replace_schema_metadata(None)
    tables.write_table(table, out / "scenarios.parquet", keep)
    return table


def merge_results(folders: list[str | Path], out: str | Path) -> pa.Table:
    """Join the chunk files of several shard output folders into `out` (chunks copied, plus
    trajectories partitions) and write out/scenarios.parquet. All must come from one study
    and chunk size; every chunk must be present in some folder."""
    out = Path(out)
    (out / "chunks").mkdir(parents=True, exist_ok=True)
    for f in folders:
        f = Path(f)
        if not (f / "chunks").is_dir():
            raise StudyError(f"{f}: not a sweep output folder (no chunks/)")
        if f.resolve() == out.resolve():
            continue
        for k, p in read_chunks(f).items():
            dst = chunk_path(out, k)
            tdir = f / "trajectories" / f"chunk={k:05d}"
            if tdir.is_dir():
                tdst = out / "trajectories" / tdir.name
                shutil.rmtree(tdst, ignore_errors=True)
                shutil.copytree(tdir, tdst)
            tmp = dst.with_name(f".{dst.name}.tmp")
            shutil.copyfile(p, tmp)
            os.replace(tmp, dst)
    return finalize(out)


def status_counts(table: pa.Table) -> dict:
    """{status label: number of scenarios} of a scenarios table."""
    names = table.column("status_name").to_pylist()
    return {s: names.count(s) for s in sorted(set(names))}
