"""Sweep maps and sensitivity bars from small hand-made tables."""
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from matplotlib.collections import PathCollection, QuadMesh

from jaxmedusa.plot import folder_kind, plot_results
from jaxmedusa.plot.sensitivity_bars import sensitivity_figures
from jaxmedusa.plot.sweep_maps import load_sweep, sweep_figures


def _write(table: pd.DataFrame, path, meta=None):
    t = pa.Table.from_pandas(table, preserve_index=False)
    if meta:
        t = t.replace_schema_metadata({**(t.schema.metadata or {}), **{k.encode(): v.encode() for k, v in meta.items()}})
    pq.write_table(t, path)


def _grid_table():
    """3 x 4 grid over (a, b), 2 vehicles; scenario 5 failed; vehicle 2 never touched in scenario 0."""
    a, b = np.meshgrid([0.0, 1.0, 2.0], [10.0, 20.0, 30.0, 40.0], indexing="ij")
    n = a.size
    t = pd.DataFrame({"sample_id": np.arange(n), "a": a.ravel(), "b": b.ravel()})
    t["status"] = np.where(np.arange(n) == 5, 2, 0)
    t["status_name"] = np.where(t["status"] == 0, "ok", "nan")
    t["end_time"], t["steps"] = 1.0, 100
    for v in (1, 2):
        t[f"v{v}_delta_v"] = t["a"] + 0.1 * t["b"] * v
        t[f"v{v}_final_y"] = -t["a"]
        t[f"v{v}_contact_duration"] = 0.01 * t["a"]
    t.loc[0, "v2_contact_duration"] = np.nan
    return t


def test_grid_sweep_heat_map_colour_bar_histogram_and_failed_marks(tmp_path):
    _write(_grid_table(), tmp_path / "scenarios.parquet", {"jaxmedusa.parameters": json.dumps(["a", "b"]),
                                                           "jaxmedusa.study_spec": json.dumps({"sampler": {"kind": "grid"}})})
    sweep = load_sweep(tmp_path)
    assert sweep.grid and sweep.parameters == ["a", "b"]
    figs = sweep_figures(sweep)
    assert list(figs) == ["delta_v", "final_y", "contact_duration"]
    fig = figs["delta_v"]
    maps = [ax for ax in fig.axes if ax.get_label() != "<colorbar>" and any(isinstance(c, QuadMesh) for c in ax.collections)]
    assert len(maps) == 2  # one heat map per vehicle
    colorbars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(colorbars) == 2
    assert len(fig.axes) == 2 * 2 + 2  # (map, histogram) per vehicle + colour bars
    mesh = next(c for c in maps[0].collections if isinstance(c, QuadMesh))
    cells = mesh.get_array().reshape(4, 3)  # rows: b, columns: a
    expected = _grid_table().pivot(index="b", columns="a", values="v1_delta_v").to_numpy().copy()
    expected[1, 1] = np.nan  # scenario 5 (a = 1, b = 20) failed: its cell is empty
    np.testing.assert_allclose(np.ma.filled(cells, np.nan), expected)
    failed = [l for l in maps[0].get_lines() if l.get_gid() == "failed"]
    assert len(failed) == 1 and list(failed[0].get_xdata()) == [1.0] and list(failed[0].get_ydata()) == [20.0]
    hist = fig.axes[1]
    assert sum(p.get_height() for p in hist.patches) == 11  # 12 scenarios, 1 failed left out
    # contact time: the null value of vehicle 2 (no contact) is drawn as a grey ring
    ct = figs["contact_duration"]
    rings = [c for ax in ct.axes for c in ax.collections if c.get_gid() == "null"]
    assert len(rings) == 1 and len(rings[0].get_offsets()) == 1


def test_random_sweep_is_a_scatter_and_bad_parameter_is_refused(tmp_path):
    rng = np.random.default_rng(3)
    t = pd.DataFrame({"sample_id": np.arange(30), "p": rng.uniform(size=30), "q": rng.uniform(size=30),
                      "r": rng.uniform(size=30), "status": 0, "status_name": "ok", "end_time": 1.0, "steps": 10})
    t["v1_delta_v"] = t["p"] * 3
    _write(t, tmp_path / "scenarios.parquet")  # no metadata: parameters from the column order
    sweep = load_sweep(tmp_path)
    assert not sweep.grid and sweep.parameters == ["p", "q", "r"]
    fig = sweep_figures(sweep, metrics=["delta_v"], x="r", y="p")["delta_v"]
    sc = [c for c in fig.axes[0].collections if isinstance(c, PathCollection) and c.get_gid() == "scatter"]
    assert len(sc) == 1 and len(sc[0].get_offsets()) == 30
    np.testing.assert_allclose(sc[0].get_offsets()[:, 0], t["r"])  # --x r on the horizontal axis
    assert fig.axes[0].get_xlabel() == "r" and fig.axes[0].get_ylabel() == "p"
    with pytest.raises(ValueError, match="--x nope"):
        sweep_figures(sweep, metrics=["delta_v"], x="nope")
    with pytest.raises(ValueError, match="metric 'spin'"):
        sweep_figures(sweep, metrics=["spin"])


def _sensitivity():
    rows = []
    for out in ("v1_delta_v", "v2_final_y"):
        for k, par in enumerate(("offset", "speed", "mass")):
            rows += [dict(output=out, parameter=par, method="sobol", index="S1", value=0.1 * k, conf=0.02),
                     dict(output=out, parameter=par, method="sobol", index="ST", value=0.1 * k + 0.05, conf=0.03)]
            rows.append(dict(output=out, parameter=par, method="morris", index="mu_star", value=k + 1.0, conf=0.5))
            rows.append(dict(output=out, parameter=par, method="morris", index="sigma", value=0.5 * k, conf=np.nan))
    return pd.DataFrame(rows)


def test_sensitivity_bars_with_confidence_intervals():
    figs = sensitivity_figures(_sensitivity())
    assert sorted(figs) == ["morris", "sobol"]
    fig = figs["sobol"]
    assert len(fig.axes) == 2  # one per output
    ax = fig.axes[0]
    s1 = [p for p in ax.patches if p.get_gid() == "bar-S1"]
    st = [p for p in ax.patches if p.get_gid() == "bar-ST"]
    assert [round(p.get_height(), 12) for p in s1] == [0.0, 0.1, 0.2]
    assert [round(p.get_height(), 12) for p in st] == [0.05, 0.15, 0.25]
    # error bars: each vertical segment spans value +- conf
    segs = [c for c in ax.containers if hasattr(c, "has_yerr") and c.has_yerr]
    spans = sorted(round(float(np.ptp(seg[:, 1])), 12) for c in segs for seg in c.lines[2][0].get_segments())
    assert spans == [0.04] * 3 + [0.06] * 3
    assert [t.get_text() for t in ax.get_xticklabels()] == ["offset", "speed", "mass"]
    morris = figs["morris"].axes[0]
    assert {p.get_gid() for p in morris.patches} == {"bar-mu_star", "bar-sigma"}
    # sigma has no interval (conf NaN): no error bar for it, only the mu_star bars' (+- 0.5)
    segs = [c for c in morris.containers if getattr(c, "has_yerr", False)]
    assert [round(float(np.ptp(s[:, 1])), 12) for c in segs for s in c.lines[2][0].get_segments()] == [1.0] * 3


def test_plot_results_dispatches_on_the_folder(tmp_path):
    _write(_grid_table(), tmp_path / "scenarios.parquet")
    _sensitivity().to_parquet(tmp_path / "sensitivity.parquet")
    assert folder_kind(tmp_path) == ["sweep", "sensitivity"]
    paths = plot_results(tmp_path, fmt="svg", metrics=["delta_v"])
    assert sorted(p.name for p in paths) == ["sensitivity_morris.svg", "sensitivity_sobol.svg", "sweep_delta_v.svg"]
    assert all(p.stat().st_size > 1000 and p.read_text().lstrip().startswith("<?xml") for p in paths)
    with pytest.raises(ValueError, match="format"):
        plot_results(tmp_path, fmt="bmp")
