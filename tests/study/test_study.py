"""Studies: spec validation, samplers, the fast batch builder, chunked sweeps (resume, shards,
devices, failing scenarios) and the shipped studies in small versions.

The sweep machinery does not depend on the physics, so these sweeps run without vehicle
contact (its narrow phase takes most of the compile time); tests/test_outcomes.py runs a
collision study with contact through the same machinery. The offset sweeps share settings
and chunk size, so their chunk function compiles once.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
import warnings
from pathlib import Path

import jax
import numpy as np
import pyarrow.parquet as pq
import pytest

from jaxmedusa import study as study_mod
from jaxmedusa.build import build_batch
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.core.status import Status
from jaxmedusa.study import (design, load_study, merge_results, run_chunk, run_study, scenario_for,
                             study_from_dict, unit_design)
from jaxmedusa.study import runner as runner_mod

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ROOT / "studies"
CHUNK = 4
END_TIME = 0.05  # [s]

warnings.filterwarnings("ignore", message=".*runs backwards.*")  # the report's road.dat (RoadWarning)


def _small(name: str, n: int = 8, end_time: float = END_TIME, **changes) -> dict:
    """The shipped study `name`, shrunk: n samples, end_time, no contact."""
    data = tomllib.loads((STUDIES / f"{name}.toml").read_text())
    data["sampler"]["n"] = n
    data.setdefault("simulation", {})["end_time"] = end_time
    data["simulation"]["contact"] = False
    data["simulation"]["dt"] = 5e-5  # MEDUSA's step (as before the crush law's 4e-4 s default): the tests count on it
    data.setdefault("run", {})["batch"] = CHUNK
    data.update(changes)
    return data


def _study(data: dict, name="test"):
    return study_from_dict(data, base_dir=STUDIES, source=f"<{name}>", default_name=name, text=json.dumps(data))


def _table(folder: Path):
    return pq.read_table(folder / "scenarios.parquet")


# ----------------------------------------------------------------------------- spec and sampling


def test_sampler_reproducible():
    for kind in ("random", "lhs", "sobol"):
        a = unit_design(kind, 16, 3, seed=7)
        assert np.array_equal(a, unit_design(kind, 16, 3, seed=7)), kind
        assert not np.array_equal(a, unit_design(kind, 16, 3, seed=8)), kind
        assert a.shape == (16, 3) and np.all((a >= 0) & (a < 1))
    lhs = unit_design("lhs", 10, 2, seed=1)
    for j in range(2):  # one point per stratum in every dimension
        assert sorted(np.floor(lhs[:, j] * 10).astype(int)) == list(range(10))
    st = _study(_small("offset", n=16))
    ids, cols = design(st)
    ids2, cols2 = design(_study(_small("offset", n=16)))
    assert list(ids) == list(range(16)) and all(np.array_equal(cols[k], cols2[k]) for k in cols)
    assert cols["lateral_offset"].min() >= -1.6 and cols["lateral_offset"].max() <= 1.6


def test_grid_fixed_lists_and_paths():
    data = _small("offset")
    data["sampler"] = {"kind": "grid"}
    data["parameters"] = {
        "lateral_offset": {"uniform": [-1.0, 1.0], "levels": 3, "path": "vehicles.2.y"},
        "vehicles": {"1": {"speed": {"values": [20.0, 24.0]}}},  # TOML dotted key vehicles.1.speed
        "models.1.mass": {"normal": [1500.0, 10.0], "levels": 2, "mode": "offset"},
    }
    st = _study(data)
    ids, cols = design(st)
    assert len(ids) == 12 and list(cols) == ["lateral_offset", "vehicles.1.speed", "models.1.mass"]
    assert list(cols["lateral_offset"][::4]) == [-1.0, 0.0, 1.0]  # first parameter varies slowest
    sc, tire, contact = scenario_for(st, {k: v[5] for k, v in cols.items()})
    assert sc.vehicles[1].y == cols["lateral_offset"][5] and sc.vehicles[0].speed == cols["vehicles.1.speed"][5]
    assert sc.models[0].mass == pytest.approx(st.base.models[0].mass + cols["models.1.mass"][5])
    assert st.base.models[0].mass == 1573.0  # the base is never mutated
    # fixed lists are crossed with a random design
    data["sampler"] = {"kind": "random", "n": 5, "seed": 1}
    data["parameters"] = {"vehicles.2.y": {"uniform": [-1, 1]}, "vehicles.1.speed": {"values": [20.0, 24.0]}}
    ids, cols = design(_study(data))
    assert len(ids) == 10 and np.array_equal(cols["vehicles.2.y"][:5], cols["vehicles.2.y"][5:])
    assert list(cols["vehicles.1.speed"]) == [20.0] * 5 + [24.0] * 5


def test_shipped_study_paths():
    wave = _study(_small("wave", n=4))
    ids, cols = design(wave)
    sc, _, _ = scenario_for(wave, {k: v[1] for k, v in cols.items()})
    g, v, drop = (cols[k][1] for k in ("gap", "speed", "speed_drop"))
    assert [x.x for x in sc.vehicles] == pytest.approx([0.0, g, 2 * g, 3 * g])
    assert [x.speed for x in sc.vehicles] == pytest.approx([v, v, v, v - drop])
    merge = _study(_small("merge", n=4))
    ids, cols = design(merge)
    sc, _, _ = scenario_for(merge, {k: v[2] for k, v in cols.items()})
    assert sc.vehicles[4].steering.values == (cols["rogue_steering_deg"][2],)
    offset = _study(_small("offset", n=4))
    ids, cols = design(offset)
    sc, _, _ = scenario_for(offset, {k: v[3] for k, v in cols.items()})
    assert sc.vehicles[1].speed == pytest.approx(22.0 - cols["speed_difference"][3])
    assert load_study(STUDIES / "offset.toml").sampler.n == 4096


def test_shipped_medusa_spread_study_moves_vehicle_2_by_nanometres_under_the_search():
    """studies/medusa_spread.toml: the MEDUSA law with its default shape and step rule, and
    24 scenarios whose only difference is vehicle 2's y = 0.4 m + k nm, k = +-1..+-12."""
    spread = load_study(STUDIES / "medusa_spread.toml")
    s = spread.settings
    assert (s.contact_law, s.contact_geometry, s.step_control, s.dt) == ("medusa", "medusa_search", "medusa", 5e-5)
    ids, cols = design(spread)
    ks = [k for k in range(-12, 13) if k]
    assert list(cols["dy"]) == [float(f"{k}e-9") for k in ks]
    for i in (0, 11, 12, 23):
        sc, _, _ = scenario_for(spread, {k: v[i] for k, v in cols.items()})
        assert sc.vehicles[1].y == 0.4 + float(f"{ks[i]}e-9") and sc.vehicles[0].y == 0.0
        assert (sc.vehicles[1].x, sc.vehicles[1].speed) == (6.0, 20.0)


@pytest.mark.parametrize("change, key", [
    ({"parameters": {"vehicles.3.y": {"uniform": [0, 1]}}}, "parameters.vehicles.3.y"),
    ({"parameters": {"vehicles.1.wheels": {"uniform": [0, 1]}}}, "parameters.vehicles.1.wheels"),
    ({"parameters": {"settings.dt": {"uniform": [0, 1]}}}, "parameters.settings.dt"),
    ({"parameters": {"vehicles.2.y": {"uniform": [1, -1]}}}, "parameters.vehicles.2.y.uniform"),
    ({"parameters": {"vehicles.2.y": {"normal": [0, 0]}}}, "parameters.vehicles.2.y.normal"),
    ({"parameters": {"vehicles.2.y": {"uniform": [0, 1], "beta": 2}}}, "parameters.vehicles.2.y.beta"),
    ({"parameters": {"vehicles.2.y": {"uniform": [0, 1], "mode": "add"}}}, "parameters.vehicles.2.y.mode"),
    ({"parameters": {"models.1.mass": {"uniform": [-100.0, 1000.0]}}}, "parameters.models.1.mass"),
    ({"parameters": {"models.1.nu": {"uniform": [0.3, 0.6]}}}, "parameters.models.1.nu"),
    ({"parameters": {"models.*.tire_lag": {"choice": [0.0016, 0.0]}}}, "parameters.models.*.tire_lag"),
    ({"parameters": {"contact.eps1": {"uniform": [0.5, 3.0]}}}, "parameters.contact.eps1"),
    ({"parameters": {"vehicles.2.y": {"uniform": [0, 1]}, "y2": {"uniform": [0, 1], "path": "vehicles.2.y"}}},
     "parameters.y2"),
    ({"sampler": {"kind": "halton", "n": 4}}, "sampler.kind"),
    ({"sampler": {"kind": "sobol", "n": 0}}, "sampler.n"),
    ({"sampler": {"kind": "grid"}}, "levels"),
    ({"simulation": {"dt": -1.0}}, "simulation.dt"),
    ({"simulation": {"contact_law": "elastic"}}, "simulation.contact_law"),
    ({"outputs": {"metrics": ["delta_vee"]}}, "outputs.metrics"),
    ({"contact": {"stiffness": -1.0}}, "contact.stiffness"),
    ({"bogus": 1}, "bogus"),
])
def test_validation_names_the_key(change, key):
    data = _small("offset")
    data.update(change)
    with pytest.raises(MedusaInputError) as e:
        _study(data)
    assert key in str(e.value), str(e.value)


def test_fast_builder_equals_build_batch():
    st = _study(_small("offset", n=3))
    ids, cols = design(st)
    items = study_mod.scenarios_for(st, cols, ids)
    items[1] = (items[1][0], {}, dict(items[1][2]))
    b1, s1 = build_batch([it[0] for it in items], dt=st.settings.dt)
    b2, s2 = build_batch([it[0] for it in items], st.settings.dt, tire=[it[1] for it in items],
                         contact=[it[2] for it in items])
    l1, t1 = jax.tree.flatten((b1, s1))
    l2, t2 = jax.tree.flatten((b2, s2))
    assert t1 == t2
    for a, b in zip(l1, l2):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(np.asarray(a), np.asarray(b))


# ----------------------------------------------------------------------------- sweeps


@pytest.fixture(scope="module")
def offset_small():
    return _study(_small("offset", n=10), name="offset-small")  # 3 chunks of 4, the last padded


@pytest.fixture(scope="module")
def full_run(offset_small, tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    summary = run_study(offset_small, out=out, progress=False)
    assert summary.complete and summary.n_chunks == 3 and summary.chunk_size == CHUNK
    return out


def test_full_run_table(full_run, offset_small):
    t = _table(full_run)
    df = t.to_pandas()
    assert list(df.sample_id) == list(range(10))
    ids, cols = design(offset_small)
    assert np.array_equal(df.lateral_offset, cols["lateral_offset"])
    assert (df.status == Status.OK).all() and (df.status_name == "ok").all()
    for c in ("v1_delta_v", "v2_delta_v_x", "v1_delta_v_body_fwd", "v2_pdof_clock", "v1_final_yaw_rate",
              "v2_max_lateral_excursion", "v1_lane_departure", "v2_energy_end", "v1_first_contact_time"):
        assert c in df.columns, c
    assert np.all(np.isfinite(df.v2_final_x)) and np.allclose(df.end_time, END_TIME, atol=1e-4)
    meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
    assert meta["jaxmedusa.precision"] == "float64" and meta["jaxmedusa.backend"] == jax.default_backend()
    assert meta["jaxmedusa.study"] == offset_small.text and '"sampler"' in offset_small.text  # the study as run
    assert json.loads(meta["jaxmedusa.study_spec"])["sampler"]["n"] == 10
    assert meta["jaxmedusa.version"] and "jaxmedusa.git_commit" in meta


def test_resume_after_interruption_equals_full_run(full_run, offset_small, tmp_path, monkeypatch):
    out = tmp_path / "resumed"
    calls = []
    real = runner_mod.run_chunk

    def interrupted(*args, **kw):
        if len(calls) == 2:
            raise KeyboardInterrupt  # killed while running the third chunk
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(runner_mod, "run_chunk", interrupted)
    # one chunk at a time: with two side by side the second would still be running when the
    # third is interrupted, and be stopped with it (tests/study/test_workers.py)
    monkeypatch.setenv("JAXMEDUSA_WORKERS", "1")
    with pytest.raises(KeyboardInterrupt):
        run_study(offset_small, out=out, progress=False)
    assert sorted(p.name for p in (out / "chunks").iterdir()) == ["chunk-00000.parquet", "chunk-00001.parquet"]
    assert not (out / "scenarios.parquet").exists()
    monkeypatch.setattr(runner_mod, "run_chunk", real)
    monkeypatch.delenv("JAXMEDUSA_WORKERS")
    stamp = (out / "chunks" / "chunk-00000.parquet").stat().st_mtime_ns
    s = run_study(offset_small, out=out, resume=True, progress=False)
    assert s.chunks_skipped == [0, 1] and s.chunks_run == [2] and s.complete
    assert (out / "chunks" / "chunk-00000.parquet").stat().st_mtime_ns == stamp
    assert _table(out).equals(_table(full_run), check_metadata=True)
    # a different chunk size cannot resume these chunks
    with pytest.raises(MedusaInputError, match="different study or chunk size"):
        run_study(offset_small, out=out, batch=2, resume=True, progress=False)


def test_shards_merge_to_the_full_run(full_run, offset_small, tmp_path):
    outs = []
    for i in range(2):
        s = run_study(offset_small, out=tmp_path / f"shard{i}", shard=f"{i}/2", progress=False)
        assert not s.complete and s.chunks_run == [k for k in range(3) if k % 2 == i]
        outs.append(tmp_path / f"shard{i}")
    merged = merge_results(outs, tmp_path / "merged")
    assert merged.equals(_table(full_run).replace_schema_metadata(None))
    assert _table(tmp_path / "merged").equals(_table(full_run))
    with pytest.raises(MedusaInputError, match="missing"):
        merge_results(outs[:1], tmp_path / "partial")


def test_failing_scenario_is_flagged_and_isolated(offset_small):
    data = _small("offset", n=1)
    data["sampler"] = {"kind": "grid"}
    # a tire lag of 1e-12 s passes validation (> 0) but makes the explicit slip-angle lag
    # (1.27) blow up within a few steps: samples 1 and 3 fail, 0 and 2 are fine
    data["parameters"] = {"vehicles.2.y": {"values": [0.3, 0.5]},
                          "models.1.tire_lag": {"values": [0.0016, 1e-12]}}
    st = _study(data, name="broken")
    ids, cols = design(st)
    items = study_mod.scenarios_for(st, cols, ids)
    metrics, _, _ = run_chunk(st, items, CHUNK)
    status = metrics["status"]
    assert status[0] == status[2] == Status.OK and status[1] != Status.OK and status[3] != Status.OK
    assert metrics["end_time"][1] < END_TIME and metrics["end_time"][0] > END_TIME
    for k, v in metrics.items():
        assert np.all(np.isfinite(np.asarray(v, float))), k  # a failed row keeps its last good state
    for i in (0, 2):  # each good neighbour run on its own (padded to the same chunk shape)
        alone, _, _ = run_chunk(st, [items[i]], CHUNK)
        for k in metrics:
            assert np.array_equal(metrics[k][i], alone[k][0]), (i, k)


def test_four_host_devices_give_the_same_table(full_run, offset_small, tmp_path):
    out = tmp_path / "dev4"
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(_small("offset", n=10)))
    code = textwrap.dedent(f"""
        import json, warnings
        warnings.simplefilter("ignore")
        import jax
        from jaxmedusa.study import study_from_dict, run_study
        assert jax.device_count() == 4, jax.devices()
        data = json.loads(open({str(spec)!r}).read())
        st = study_from_dict(data, base_dir={str(STUDIES)!r}, source="<offset-small>", default_name="offset-small",
                             text=json.dumps(data))
        s = run_study(st, out={str(out)!r}, progress=False)
        print("chunk", s.chunk_size)
    """)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    a, b = _table(out), _table(full_run)
    assert a.column_names == b.column_names and a.schema.types == b.schema.types
    meta = {k.decode(): v.decode() for k, v in a.schema.metadata.items()}
    assert meta["jaxmedusa.devices"] == "4" and meta["jaxmedusa.chunk_size"] == str(CHUNK)
    # XLA compiles the per-device batch of 1 differently from a batch of 4 (vectorisation,
    # fused multiply-adds): floats agree to rounding, everything else exactly.
    for name in a.column_names:
        x, y = a.column(name).to_numpy(zero_copy_only=False), b.column(name).to_numpy(zero_copy_only=False)
        if x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12, err_msg=name)
        else:
            assert list(x) == list(y), name


def test_wave_small(tmp_path):
    st = _study(_small("wave", n=2, end_time=0.02), name="wave")
    s = run_study(st, out=tmp_path, batch=2, progress=False)
    df = _table(tmp_path).to_pandas()
    assert s.complete and len(df) == 2 and (df.status == Status.OK).all()
    assert "v4_final_speed" in df and "v5_final_speed" not in df
    assert df.v4_final_speed.to_numpy() == pytest.approx(df.speed - df.speed_drop, abs=0.05)


def test_merge_small_with_trajectories_and_show(tmp_path):
    data = _small("merge", n=3, end_time=0.02)
    data["outputs"] = {"trajectories": True, "metrics": ["delta_v", "final", "handling"]}
    st = _study(data, name="merge")
    s = run_study(st, out=tmp_path, batch=2, progress=False)  # 2 chunks, the last padded
    assert s.complete and s.n_chunks == 2
    rows = _table(tmp_path).to_pandas()
    assert len(rows) == 3 and (rows.status == Status.OK).all()
    assert "v5_final_x" in rows and "v6_final_x" not in rows and "v1_contact_duration" not in rows
    traj = pq.read_table(tmp_path / "trajectories").to_pandas()
    assert set(traj.sample_id) == {0, 1, 2} and set(traj.vehicle) == {1, 2, 3, 4, 5}
    assert {"time", "x", "heading", "pitch", "roll", "speed", "d11", "vx", "w33", "energy", "energy_medusa"} <= set(traj)
    last = traj[(traj.sample_id == 1) & (traj.vehicle == 5)].sort_values("time").iloc[-1]
    gap = rows.end_time[1] - last.time  # the run ends one step after end_time, after the last sample
    assert 0 <= gap <= st.settings.save_every + 1e-3
    assert rows.v5_final_x[1] == pytest.approx(last.x + last.vx * gap, abs=1e-3)
    assert rows.v5_max_heading_change[1] > 0.0  # the rogue steers

    from typer.testing import CliRunner

    from jaxmedusa_cli.app import app  # the real app, with its study commands

    res = CliRunner().invoke(app, ["show", str(tmp_path)])
    assert res.exit_code == 0 and "merge: 3 of 3" in res.output and "ok 3" in res.output, res.output


def test_default_chunk_size_follows_the_cpu_cost_model():
    """auto_batch_size by hand: two vehicles, 3 s at MEDUSA's dt 5e-5 s = 60,000 steps of
    2 x 2e-6 s + 1 pair x 4e-5 s = 2.64 s a scenario, so 60 s // 2.64 s = 22 a chunk; without
    contact 60 s // 0.24 s = 250; MEDUSA's own search one a chunk; GPU 4096 whatever the law.
    The samples are then spread evenly over that many chunks: 1000 in ceil(1000 / 22) = 46
    chunks of 22; 10,000 on a GPU in 3 chunks of 3334 (not 4096, 4096 and 1808 padded to 4096)."""
    from jaxmedusa.core.params import Settings

    analytic = Settings(end_time=3.0, contact_geometry="superellipsoid")
    assert runner_mod.auto_batch_size(1000, backend="cpu", settings=analytic) == 22
    assert runner_mod.auto_batch_size(10, backend="cpu", settings=analytic) == 10  # never more than the study
    assert runner_mod.auto_batch_size(1000, backend="cpu", settings=Settings(end_time=3.0, contact=False)) == 250
    assert runner_mod.auto_batch_size(1000, backend="cpu", settings=Settings(end_time=3.0)) == 1  # medusa_search
    assert runner_mod.auto_batch_size(1000, n_devices=2, backend="cpu", settings=Settings(end_time=3.0)) == 2
    assert runner_mod.auto_batch_size(10_000, backend="gpu", settings=Settings(end_time=3.0)) == 3334
    assert runner_mod.auto_batch_size(256, backend="cpu", settings=Settings(end_time=3.0, dt=4e-4, contact_law="crush")) == 128
