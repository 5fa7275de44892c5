"""Single-precision studies (issue 32, item 3; jaxmedusa/study/precision.py).

A float32 study is checked against float64 on its base scenario before it runs: accepted
with its figures in the table's metadata where every metric is within the derived
tolerance, refused with exit 2 where not. The float32 program holds no 64-bit value and a
float64 run after a float32 one gives the same bits as before it.
"""
from __future__ import annotations

import json
import tomllib

import jax
import numpy as np
import pytest
from typer.testing import CliRunner

from jaxmedusa.build import build_batch
from jaxmedusa.study import study_from_dict
from jaxmedusa.study.design import design
from jaxmedusa.study.precision import UNIT_ROUNDOFF, computing_in, to_precision
from jaxmedusa.study.runner import run_batch

from sweep_helpers import STUDIES, offset_text, small_offset, study, table

U = UNIT_ROUNDOFF


def _float32_study(tmp_path, end_time: float, name: str = "f32", extra: str = ""):
    text = offset_text(n=2, end_time=end_time, batch=2, name=name)  # free driving (no contact), dt 5e-5
    text = text.replace("[sampler]", f'precision = "float32"\n{extra}\n[sampler]', 1)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def _sweep(path, out):
    from jaxmedusa_cli.app import app
    return CliRunner().invoke(app, ["sweep", str(path), "--out", str(out), "--no-progress"])


@pytest.mark.parametrize("key, value, says", [("precision", '"float16"', "'float64', 'float32' expected"),
                                              ("precision_margin", "0.0", "a factor > 0")])
def test_a_bad_precision_is_refused_naming_file_and_key(tmp_path, key, value, says):
    path = tmp_path / "bad.toml"
    path.write_text(offset_text(name="bad").replace("[sampler]", f"{key} = {value}\n\n[sampler]", 1))
    res = _sweep(path, tmp_path / "o")
    assert res.exit_code == 2, res.output
    assert str(path) in res.output and f"simulation.{key}" in res.output and says in res.output


def test_float64_spec_and_fingerprint_do_not_name_precision():
    """A float64 study's fingerprint is the one it had before the option existed (resume
    keeps working); a float32 study's differs."""
    data = small_offset()
    s64 = study(data)
    assert "precision" not in s64.spec()
    data32 = {**data, "simulation": {**data["simulation"], "precision": "float32"}}
    assert study(data32).fingerprint(2) != s64.fingerprint(2)


def test_float32_sweep_is_checked_and_writes_its_figures(tmp_path):
    """0.4 s of free driving at 5e-5 s (8000 steps): accepted. Every metric's figure is in
    the table's metadata and within its tolerance; the position tolerance is the derived
    one, min(N u max|x|, 5 mm), recomputed here from the table; float32 did change the
    positions (the check measured something: more than 1000 u x)."""
    path = _float32_study(tmp_path, 0.4)
    res = _sweep(path, tmp_path / "o")
    assert res.exit_code == 0, res.output
    t = table(tmp_path / "o")
    meta = t.schema.metadata
    assert meta[b"jaxmedusa.precision"] == b"float32"
    check = json.loads(meta[b"jaxmedusa.precision_check"],  # strict JSON: no Infinity or NaN
                       parse_constant=lambda c: pytest.fail(f"{c} in the metadata"))
    figures = check["metrics"]
    assert check["steps"] == 8000  # 0.4 s / 5e-5 s, constant steps
    assert {"final_x", "final_y", "delta_v", "energy_end", "steps", "status"} <= set(figures)
    for name, f in figures.items():
        assert f["max_abs"] <= f["tolerance"], (name, f)
    x = figures["final_x"]
    xmax = max(abs(v) for c in ("v1_final_x", "v2_final_x") for v in t.column(c).to_pylist())
    # the base's largest x is that of vehicle 2 at 22 m/s: the samples' columns bound it from above
    assert x["tolerance"] == pytest.approx(min(8000 * U * abs(x["float64"]), 5e-3), rel=0.5)
    assert x["tolerance"] <= min(8000 * U * xmax, 5e-3) * (1 + 1e-12)
    assert x["max_abs"] > 1000 * U * abs(x["float64"])
    assert t.schema.field("v1_final_x").type == "double"  # the tables' schema does not change


def test_float32_is_refused_where_its_clock_drifts(tmp_path):
    """3 s at MEDUSA's 5e-5 s: 60,000 steps of t += dt in float32 (u t = 1.8e-7 s a step at
    t ~ 3 s) drift by several steps, so the run takes a different number of steps: refused,
    exit 2, naming the file, the key and the metric."""
    path = _float32_study(tmp_path, 3.0, name="long")
    res = _sweep(path, tmp_path / "o")
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert str(path) in out and "simulation.precision" in out and "steps differs by" in out
    assert not (tmp_path / "o" / "scenarios.parquet").exists()


def test_the_float32_program_holds_no_64_bit_value_and_float64_keeps_its_bits():
    """The compiled outputs of a float32 run are float32 (floats) and int32 or narrower
    (integers), its jaxpr names no f64 or i64; a float64 program traced after it gives the
    same bits as the float64 run before it (computing_in clears JAX's tracing caches on
    every switch)."""
    data = small_offset(n=1, end_time=0.01, batch=1)
    st = study(data)
    items = [(st.base, dict(st.tire), dict(st.contact))]
    batch, state = build_batch([it[0] for it in items], st.settings.dt, n_vehicles=2, tire=[items[0][1]],
                               contact=[items[0][2]])

    def run(b, s):
        return jax.device_get(run_batch(b, s, st.settings, st.tracker, False)[0])

    before = run(batch, state)
    with computing_in("float32"):
        b32, s32 = to_precision((batch, state), "float32")
        text = str(jax.make_jaxpr(lambda b, s: run_batch(b, s, st.settings, st.tracker, False))(b32, s32))
        got = run(b32, s32)
    # traced afresh (a new outer function: not served from JAX's executable cache), so the
    # stale constants a float32 trace could leave in JAX's tracing caches would show here
    after = jax.device_get(jax.jit(lambda b, s: run_batch(b, s, st.settings, st.tracker, False)[0])(batch, state))
    assert "f64" not in text and "i64" not in text
    for k, v in got.items():
        v = np.asarray(v)
        assert v.dtype.kind in "biu" and v.dtype.itemsize <= 4 or v.dtype == np.float32, (k, v.dtype)
        assert np.asarray(before[k]).dtype.itemsize >= v.dtype.itemsize
    assert np.asarray(before["final_x"]).dtype == np.float64
    for k in before:
        assert np.array_equal(np.asarray(before[k]), np.asarray(after[k]), equal_nan=True), k


@pytest.mark.slow
def test_float32_is_refused_on_a_grazing_collision(tmp_path):
    """The offset study's base moved onto its hardest early sample (vehicle 2 at 7.5 m/s
    less, 1.1 m to the side; 3 s at the crush law's 4e-4 s): float32 ends the glancing
    contact tens of steps away from float64 (measured: 186 contact steps and 74 ms of pulse
    at sample 3 of the design), so the counts and times differ: refused."""
    text = (STUDIES / "offset.toml").read_text()
    _, cols = design(study_from_dict(tomllib.loads(text), base_dir=STUDIES))
    speed, y = 22.0 - float(cols["speed_difference"][3]), float(cols["lateral_offset"][3])
    path = tmp_path / "hit.toml"
    path.write_text(text.replace('folder = "medusa/offset"', f'folder = "{(STUDIES / "medusa" / "offset").as_posix()}"')
                    .replace("speed = 22.0 ", f"speed = {speed!r}\ny = {y!r} ").replace("n = 4096", "n = 2")
                    .replace("[sampler]", 'precision = "float32"\n\n[sampler]', 1) + "\n[run]\nbatch = 1\n")
    res = _sweep(path, tmp_path / "o")
    assert res.exit_code == 2, res.output
    assert "simulation.precision" in res.output
