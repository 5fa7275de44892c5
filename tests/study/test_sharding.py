"""Sharding that always merges (issue 17): shards split scenarios, an empty shard writes a
valid empty output, merge checks study, chunking and coverage and names what is missing;
a failed merge leaves nothing behind; output files get the user's normal permissions."""
from __future__ import annotations

import os
import stat

import pyarrow.parquet as pq
import pytest

from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.study import merge_results, run_study
from jaxmedusa.study.runner import plan_sweep
from jaxmedusa.study.store import MANIFEST, read_manifest

from sweep_helpers import CHUNK, rows_equal, small_offset, study, table


@pytest.fixture(scope="module")
def four():
    return study(small_offset(n=4))


@pytest.fixture(scope="module")
def plain(four, tmp_path_factory):
    """The unsharded run of the 4-scenario study, chunks of 2."""
    out = tmp_path_factory.mktemp("plain")
    s = run_study(four, out=out, progress=False)
    assert s.complete and s.n_chunks == 2
    return out


def test_plan_gives_every_shard_work():
    # n // N caps the chunk size, so n >= N gives at least N chunks, dealt round-robin
    for n, n_shards, batch in [(4, 2, 256), (5, 4, 256), (7, 3, 2), (4096, 8, 256), (3, 3, 1)]:
        st = study(small_offset(n=n, batch=batch))
        counts = []
        for i in range(n_shards):
            p = plan_sweep(st, shard=(i, n_shards))
            counts.append(sum(p.rows(k).stop - p.rows(k).start for k in p.mine))
        assert sum(counts) == n and min(counts) >= 1, (n, n_shards, counts)
    st = study(small_offset(n=4, batch=256))
    assert [plan_sweep(st, shard=(i, 2)).mine for i in range(2)] == [[0], [1]]  # 2 + 2, the case
    assert plan_sweep(st, shard=(0, 2)).size == 2 and plan_sweep(st).size == 4  # unsharded: one chunk


def test_two_shards_of_four_merge_to_the_plain_run(four, plain, tmp_path):
    outs = [tmp_path / f"s{i}" for i in range(2)]
    for i, o in enumerate(outs):
        s = run_study(four, out=o, shard=(i, 2), progress=False)
        assert s.scenarios_run == 2 and s.chunks_run == [i]  # the 4 over 2: 2 + 2
        assert read_manifest(o)["shard"] == [i, 2]
    merged = merge_results(outs, tmp_path / "merged")
    assert rows_equal(merged, table(plain))
    assert merged.column("sample_id").to_pylist() == [0, 1, 2, 3]
    # out may be one of the shard folders
    merge_results(outs, outs[0])
    assert rows_equal(table(outs[0]), table(plain))
    # a missing shard is named, with its samples; nothing is left behind
    with pytest.raises(MedusaInputError, match=r"chunks \[0\] \(samples 0-1\).*shard\(s\) \['0/2'\]"):
        merge_results([outs[1]], tmp_path / "partial")
    assert not (tmp_path / "partial").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folders


def test_empty_shard_is_a_valid_output(tmp_path):
    one = study(small_offset(n=1))
    outs = [tmp_path / f"s{i}" for i in range(2)]
    s0 = run_study(one, out=outs[0], shard=(0, 2), progress=False)
    s1 = run_study(one, out=outs[1], shard=(1, 2), progress=False)
    assert s0.scenarios_run == 1 and s1.scenarios_run == 0 and s1.chunks_run == []
    assert (outs[1] / "chunks").is_dir() and (outs[1] / MANIFEST).is_file()
    merged = merge_results(outs, tmp_path / "m")
    assert merged.num_rows == 1


def test_merge_refuses_another_study_naming_the_change(four, plain, tmp_path):
    other = study(small_offset(n=4, end_time=0.03))
    run_study(other, out=tmp_path / "other", shard=(1, 2), progress=False)
    run_study(four, out=tmp_path / "mine", shard=(0, 2), progress=False)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(MedusaInputError, match=r"not the same study and chunking.*settings\.end_time: 0\.02 -> 0\.03"):
        merge_results([tmp_path / "mine", tmp_path / "other"], tmp_path / "merged")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # a failed merge leaves nothing
    # the same chunk from two folders is refused (each sample exactly once)
    with pytest.raises(MedusaInputError, match="chunk 0 is in both"):
        merge_results([plain, tmp_path / "mine"], tmp_path / "merged")
    with pytest.raises(MedusaInputError, match="not a sweep output folder"):
        merge_results([tmp_path / "nothing-here"], tmp_path / "merged")


def test_failed_merge_leaves_an_existing_out_as_it_was(plain, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    s0 = tmp_path / "s0"
    (s0 / "chunks").mkdir(parents=True)
    (s0 / "chunks" / "chunk-00001.parquet").write_bytes(b"not parquet")  # damaged copy
    with pytest.raises(MedusaInputError, match="unreadable chunk file"):
        merge_results([plain, s0], out)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("mask", [0o022, 0o002])
def test_outputs_have_the_users_permissions(four, plain, tmp_path, mask):
    """mkstemp makes 0600 files; outputs must get 0666 & ~umask like any other file."""
    old = os.umask(mask)
    try:
        merge_results([plain], tmp_path / "m")
    finally:
        os.umask(old)
    want = 0o666 & ~mask
    files = [tmp_path / "m" / "scenarios.parquet", tmp_path / "m" / MANIFEST,
             *sorted((tmp_path / "m" / "chunks").iterdir())]
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == want, (f, oct(f.stat().st_mode))
    assert pq.read_table(files[0]).num_rows == 4 and CHUNK == 2


def test_show_prints_the_provenance(four, plain):
    """Issue 17 item 8: study spec, jaxmedusa version and commit, JAX version, device kind
    and count, precision, in the table's metadata and printed by `jaxmedusa show`."""
    import jax
    from typer.testing import CliRunner

    from jaxmedusa import __version__
    from jaxmedusa_cli.app import app

    meta = {k.decode(): v.decode() for k, v in table(plain).schema.metadata.items()}
    assert meta["jaxmedusa.device_kind"] == jax.devices()[0].device_kind
    assert meta["jax.version"] == jax.__version__ and meta["jaxmedusa.version"] == __version__
    assert meta["jaxmedusa.devices"] == str(jax.device_count()) and meta["jaxmedusa.precision"] == "float64"
    res = CliRunner().invoke(app, ["show", str(plain), "--spec"])
    assert res.exit_code == 0, res.output
    out = res.output
    for want in (f"jaxmedusa {__version__}", f"JAX {jax.__version__}", jax.devices()[0].device_kind, "float64",
                 "sampler: sobol n=4 seed=2026", "parameter lateral_offset: uniform [-1.6, 1.6]",
                 "end_time 0.02 s", "git "):
        assert want in out, (want, out)
    # --spec: the study as run, its stored text whole (this study's text is its JSON, with
    # `"uniform": [-1.6, 1.6]`); the console wraps long lines, so compared without whitespace
    assert '"uniform": [-1.6, 1.6]' in four.text
    assert "".join(four.text.split()) in "".join(out.split())


def test_progress_moves_inside_a_chunk(four):
    """The chunk runs as SLICES jitted advances; after each the simulated fraction is
    reported: it rises in steps of about 1/SLICES and ends at 1 (every scenario done)."""
    from jaxmedusa.study import design, run_chunk, scenarios_for
    from jaxmedusa.study.runner import SLICES

    ids, cols = design(four)
    seen = []
    run_chunk(four, scenarios_for(four, cols, ids)[:2], CHUNK, on_progress=seen.append)
    # a slice ends at the first step past its 1/SLICES of the end time: with 0.02 s of
    # 5e-5 s steps that is 7 steps instead of 6.25, so ~57 calls rather than 64
    assert len(seen) >= SLICES * 6.25 / 7 - 2 and seen[-1] == 1.0
    assert all(b >= a for a, b in zip(seen, seen[1:]))
    steps = [b - a for a, b in zip(seen, seen[1:]) if b > a]
    assert max(steps) < 2.5 / SLICES  # no jump of more than a couple of slices: the bar moves smoothly
