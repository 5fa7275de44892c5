"""The chunk store of a sweep: chunk files with provenance, resume checks, finalize, merge.

Layout of an output folder (a local path or a folder shared by several machines):

    <out>/sweep.json                     the run's manifest: study, chunking, this shard's chunks
    <out>/chunks/chunk-NNNNN.parquet     one file per chunk k (samples k*size .. (k+1)*size - 1)
    <out>/trajectories/chunk=NNNNN/...   with [outputs] trajectories = true
    <out>/scenarios.parquet              all chunks joined, once every chunk is there

Nothing is ever half-written under its final name: every file is written to a hidden
temporary name in the same folder and renamed (io.tables.write_table, os.replace), so a
sweep killed at any moment leaves only whole chunks (and hidden temporaries, which every
reader ignores and `finalize` removes). A chunk file carries the study's fingerprint and
its resolved spec in the Parquet metadata, so a resumed run can say what changed.
`merge_results` builds the joined folder in a temporary folder and renames it into place
at the end: a failed merge leaves nothing behind.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from jaxmedusa.io import tables
from jaxmedusa.study.spec import Study, StudyError

__all__ = ["chunk_path", "chunk_meta", "study_meta", "read_chunks", "finalize", "merge_results", "status_counts",
           "spec_changes", "write_manifest", "read_manifest", "MANIFEST"]

MANIFEST = "sweep.json"


def chunk_path(out: Path, k: int) -> Path:
    return Path(out) / "chunks" / f"chunk-{k:05d}.parquet"


def chunk_meta(path: Path) -> dict:
    """The string metadata of a chunk file (raises OSError/ArrowInvalid when unreadable)."""
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


def _flatten(d, prefix: str = "") -> dict:
    if isinstance(d, dict):
        out = {}
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: d}


def spec_changes(old_meta: dict, new_meta: dict, limit: int = 6) -> list[str]:
    """What differs between two study_meta dicts, as 'key: old -> new' (spec keys flattened,
    e.g. 'settings.end_time: 0.05 -> 0.1', 'chunk size: 4 -> 8')."""
    changes = []
    for key, label in (("jaxmedusa.chunk_size", "chunk size"), ("jaxmedusa.n_samples", "samples")):
        if old_meta.get(key) != new_meta.get(key):
            changes.append(f"{label}: {old_meta.get(key)} -> {new_meta.get(key)}")
    try:
        a = _flatten(json.loads(old_meta.get("jaxmedusa.study_spec", "{}")))
        b = _flatten(json.loads(new_meta.get("jaxmedusa.study_spec", "{}")))
    except json.JSONDecodeError:
        return changes + ["the study spec (unreadable in the old chunk)"]
    for k in sorted(set(a) | set(b)):
        if a.get(k, "<absent>") != b.get(k, "<absent>"):
            changes.append(f"{k}: {json.dumps(a.get(k, '<absent>'))} -> {json.dumps(b.get(k, '<absent>'))}")
    if len(changes) > limit:
        changes = changes[:limit] + [f"... and {len(changes) - limit} more"]
    return changes or ["the study fingerprint (same spec: written by another jaxmedusa format?)"]


def write_manifest(out: Path, meta: dict, chunks: list[int], shard: tuple[int, int] | None) -> Path:
    """<out>/sweep.json: the study (fingerprint, sizes, spec) and the chunks this run owns.
    Also what makes an empty shard a valid output folder."""
    data = {"format": 1, "study_name": meta["jaxmedusa.study_name"], "fingerprint": meta["jaxmedusa.fingerprint"],
            "n_samples": int(meta["jaxmedusa.n_samples"]), "chunk_size": int(meta["jaxmedusa.chunk_size"]),
            "shard": list(shard) if shard else None, "chunks": list(chunks), "meta": meta}
    out = Path(out)
    (out / "chunks").mkdir(parents=True, exist_ok=True)
    return tables.write_text(json.dumps(data, indent=1, sort_keys=True), out / MANIFEST)


def read_manifest(folder: Path) -> dict | None:
    p = Path(folder) / MANIFEST
    if not p.is_file():
        return None
    try:
        return json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise StudyError(f"{p}: unreadable sweep manifest ({e})") from None


def read_chunks(folder: Path) -> dict[int, Path]:
    """{chunk number: path} of the chunk files of a folder (hidden temporaries ignored)."""
    return {int(p.stem.split("-")[1]): p for p in sorted((Path(folder) / "chunks").glob("chunk-*.parquet"))}


def _remove_temporaries(out: Path):
    """Hidden .*.tmp files left by a killed writer (only called when nothing writes)."""
    for p in list(out.glob(".*.tmp")) + list((out / "chunks").glob(".*.tmp")) + \
            list((out / "trajectories").glob("*/.*.tmp")):
        p.unlink(missing_ok=True)


def _ranges(ids) -> str:
    """'0-3, 7, 9-10' for sorted ints."""
    ids = sorted(ids)
    parts, start = [], None
    for i, x in enumerate(ids):
        if start is None:
            start = x
        if i + 1 == len(ids) or ids[i + 1] != x + 1:
            parts.append(f"{start}" if start == x else f"{start}-{x}")
            start = None
    return ", ".join(parts)


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
        raise StudyError(f"{out}: chunks {bad} belong to a different study or chunk size than chunk {min(metas)}: "
                         + "; ".join(spec_changes(first, metas[bad[0]])))
    n, size = int(first["jaxmedusa.n_samples"]), int(first["jaxmedusa.chunk_size"])
    missing = [k for k in range(math.ceil(n / size)) if k not in chunks]
    if missing:
        raise StudyError(f"{out}: chunks {missing} are missing (run the remaining shards, or --resume)")
    # (ParquetFile, not pq.read_table: that imports pyarrow.dataset and pandas, 0.5 s)
    table = pa.concat_tables([pq.ParquetFile(chunks[k]).read() for k in sorted(chunks)])
    table = table.sort_by("sample_id")
    ids = table.column("sample_id").to_pylist()
    if ids != list(range(n)):  # every sample exactly once
        seen, counts = set(ids), Counter(ids)
        raise StudyError(f"{out}: the chunks do not hold samples 0..{n - 1} exactly once "
                         f"(missing: {_ranges(set(range(n)) - seen) or 'none'}; "
                         f"repeated: {_ranges({i for i, c in counts.items() if c > 1}) or 'none'})")
    keep = {k: v for k, v in first.items() if k != "jaxmedusa.chunk"}
    table = table.replace_schema_metadata(None)
    tables.write_table(table, out / "scenarios.parquet", keep)
    _remove_temporaries(out)
    return table


def _folder_info(f: Path) -> tuple[dict | None, dict[int, Path], dict[int, dict]]:
    man = read_manifest(f)
    chunks = read_chunks(f) if (f / "chunks").is_dir() else {}
    if man is None and not chunks:
        raise StudyError(f"{f}: not a sweep output folder (no {MANIFEST} and no chunks/chunk-*.parquet)")
    metas = {}
    for k, p in chunks.items():
        try:
            metas[k] = chunk_meta(p)
        except (OSError, pa.ArrowException) as e:
            raise StudyError(f"{p}: unreadable chunk file ({e}); rerun that shard with --resume") from None
    return man, chunks, metas


def merge_results(folders: list[str | Path], out: str | Path) -> pa.Table:
    """Join the chunk files of several shard output folders into `out` and write
    out/scenarios.parquet. Checks that every folder holds the same study and chunking
    (naming what differs) and that the shards cover every sample exactly once (naming the
    missing or repeated chunks and samples). `out` may be one of `folders`. The result is
    built in a temporary folder beside `out` and moved in at the end: on any error,
    nothing is left behind and `out` is as it was."""
    out = Path(out)
    folders = [Path(f) for f in folders]
    infos = [(f, *_folder_info(f)) for f in folders]
    ref = None  # (folder, meta) of the first study seen
    owner: dict[int, Path] = {}
    for f, man, chunks, metas in infos:
        for meta in ([man["meta"]] if man else []) + list(metas.values()):
            if ref is None:
                ref = (f, meta)
            elif meta.get("jaxmedusa.fingerprint") != ref[1].get("jaxmedusa.fingerprint"):
                raise StudyError(f"{f}: not the same study and chunking as {ref[0]}: "
                                 + "; ".join(spec_changes(ref[1], meta)))
        for k in chunks:
            if k in owner and owner[k].resolve() != f.resolve():
                raise StudyError(f"chunk {k} is in both {owner[k]} and {f}: each sample must come from one shard "
                                 "(remove one copy)")
            owner[k] = f
    meta = ref[1]
    n, size = int(meta["jaxmedusa.n_samples"]), int(meta["jaxmedusa.chunk_size"])
    n_chunks = math.ceil(n / size)
    missing = [k for k in range(n_chunks) if k not in owner]
    if missing:
        shards = {tuple(m["shard"]) for _, m, _, _ in infos if m and m.get("shard")}
        hint = ""
        if shards:
            n_sh = next(iter(shards))[1]
            hint = f"; they belong to shard(s) {sorted({f'{k % n_sh}/{n_sh}' for k in missing})}"
        samples = [i for k in missing for i in range(k * size, min(n, (k + 1) * size))]
        raise StudyError(f"chunks {missing} (samples {_ranges(samples)}) are missing from {', '.join(map(str, folders))}"
                         f"{hint}: run them, then merge again")

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.merge-", dir=out.parent))
    try:
        (tmp / "chunks").mkdir()
        for k, f in sorted(owner.items()):
            shutil.copyfile(chunk_path(f, k), chunk_path(tmp, k))
            tdir = f / "trajectories" / f"chunk={k:05d}"
            if tdir.is_dir():
                shutil.copytree(tdir, tmp / "trajectories" / tdir.name)
        write_manifest(tmp, {k: v for k, v in meta.items() if k.startswith("jaxmedusa.")}, list(range(n_chunks)), None)
        table = finalize(tmp)
        _move_into(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return table


def _move_into(tmp: Path, out: Path):
    """Replace out's chunks/, trajectories/, scenarios.parquet and manifest by tmp's (each a
    rename in the same file system); other files in `out` are left alone."""
    out.mkdir(parents=True, exist_ok=True)
    for name in ("chunks", "trajectories", "scenarios.parquet", MANIFEST):
        src, dst = tmp / name, out / name
        if dst.exists():
            os.replace(dst, tmp / f".old-{name}")
        if src.exists():
            os.replace(src, dst)


def status_counts(table: pa.Table) -> dict:
    """{status label: number of scenarios} of a scenarios table."""
    names = table.column("status_name").to_pylist()
    return {s: names.count(s) for s in sorted(set(names))}
