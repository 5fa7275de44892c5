"""The crash pulse (analysis/crash_pulse.py): the SAE J211 CFC filter against the standard's
formulas, the pulse table of a hand-made velocity history, and `jaxmedusa run` writing
crash_pulse.parquet (io/tables.py write_pulse). The pulse of a real crash is checked in
test_crash_calibration.py (it integrates to delta-V)."""
from __future__ import annotations

import math
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy.signal import butter, filtfilt, freqz

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.analysis.crash_pulse import PulseState, cfc_coefficients, cfc_filter, pulse_table
from jaxmedusa.run import run_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_cfc_filter_coefficients_follow_sae_j211():
    """scipy's 2-pole Butterworth at 2.0775 CFC equals J211-1 Appendix C's formulas (to
    round-off, 1e-12); run forward and backward its gain is -3 dB at 1.667 CFC (100 Hz for
    CFC 60; bilinear warping keeps it within 0.05 dB) and 1 at low frequency."""
    fs, cfc = 10_000.0, 60.0
    T = 1 / fs
    wd = 2 * math.pi * cfc * 2.0775
    wa = math.sin(wd * T / 2) / math.cos(wd * T / 2)
    den = 1 + math.sqrt(2) * wa + wa**2
    a0 = wa**2 / den
    b1 = -2 * (wa**2 - 1) / den
    b2 = (-1 + math.sqrt(2) * wa - wa**2) / den
    b, a = cfc_coefficients(cfc, fs)
    np.testing.assert_allclose(b, [a0, 2 * a0, a0], rtol=1e-12)
    np.testing.assert_allclose(a, [1.0, -b1, -b2], rtol=1e-12)  # J211 adds b1 Y[t-1] + b2 Y[t-2]
    _, h = freqz(b, a, worN=[1.0, 100.0], fs=fs)
    gain_db = 20 * np.log10(np.abs(h) ** 2)  # two passes
    assert abs(gain_db[0]) < 1e-3
    assert gain_db[1] == pytest.approx(-3.0, abs=0.05)
    t = np.arange(4000) / fs
    x = np.sin(2 * math.pi * 5 * t)  # 5 Hz passes, 1 kHz is removed (2e-3: the 5 Hz gain 1 - 1e-6, edges cut)
    np.testing.assert_allclose(cfc_filter(x + np.sin(2 * math.pi * 1000 * t))[500:-500], x[500:-500], atol=2e-3)


def test_cfc_filter_is_scipys_butterworth_run_by_filtfilt():
    """The written-out section and passes equal scipy's independent implementation:
    butter(2, 2.0775 CFC, fs) for the coefficients, filtfilt for the filter (odd padding,
    steady-state starts), along either axis of 2-D data, to round-off (1e-12 of the signal)."""
    for cfc, fs in ((60.0, 10_000.0), (180.0, 20_000.0), (1000.0, 10_000.0)):
        b_ref, a_ref = butter(2, 2.0775 * cfc, btype="low", fs=fs)
        b, a = cfc_coefficients(cfc, fs)
        np.testing.assert_allclose(b, b_ref, rtol=1e-12)
        np.testing.assert_allclose(a, a_ref, rtol=1e-12)
    rng = np.random.default_rng(3)
    x = np.cumsum(rng.normal(size=(700, 6)), axis=0) + 50.0  # a random walk with an offset
    ref = filtfilt(*butter(2, 2.0775 * 60.0, btype="low", fs=10_000.0), x, axis=0)
    np.testing.assert_allclose(cfc_filter(x), ref, rtol=0, atol=1e-12 * np.abs(x).max())
    np.testing.assert_allclose(cfc_filter(x.T, axis=1), ref.T, rtol=0, atol=1e-12 * np.abs(x).max())
    short = x[:9, 0]  # filtfilt needs more than 3 max(len(a), len(b)) = 9 samples: returned as is
    np.testing.assert_array_equal(cfc_filter(short), short)
    np.testing.assert_allclose(cfc_filter(x[:10, 0]), filtfilt(*butter(2, 2.0775 * 60.0, fs=10_000.0), x[:10, 0]),
                               rtol=0, atol=1e-10)


def test_pulse_table_of_a_constant_deceleration():
    """A velocity history falling 10 m/s^2 along a car turned 90 deg (d1 = E2): the raw
    acceleration is exactly -10 along the car (a_long) and along E2 (central differences of a
    line; 1e-9 of round-off), 0 across it; the filtered one too away from the ends (the
    filter's unit DC gain; 1e-6)."""
    n, h = 200, 1e-4
    t = np.arange(n) * h
    v = np.zeros((n, 1, 3))
    v[:, 0, 1] = 15.0 - 10.0 * t
    m = PulseState(t0=jnp.asarray(0.5), v_prev=jnp.zeros((1, 3)), v=jnp.asarray(v), filled=jnp.ones(n, bool),
                   fwd=jnp.array([[0.0, 1.0, 0.0]]), left=jnp.array([[-1.0, 0.0, 0.0]]), contact=jnp.ones(n, bool))
    tab = pulse_table(m)
    assert len(tab) == n and set(tab["vehicle"]) == {1}
    np.testing.assert_allclose(tab["time"], 0.5 + t)
    np.testing.assert_allclose(tab["a_long"], -10.0, atol=1e-9)
    np.testing.assert_allclose(tab["ay"], -10.0, atol=1e-9)
    np.testing.assert_allclose(tab["a_lat"], 0.0, atol=1e-9)
    np.testing.assert_allclose(tab["a_long_cfc60"][20:-20], -10.0, atol=1e-6)
    empty = pulse_table(PulseState(t0=jnp.asarray(-1.0), v_prev=jnp.zeros((1, 3)), v=jnp.zeros((5, 1, 3)),
                                   filled=jnp.zeros(5, bool), fwd=jnp.zeros((1, 3)), left=jnp.zeros((1, 3)),
                                   contact=jnp.zeros(5, bool)))
    assert len(empty) == 0 and "a_long_cfc60" in empty.columns


@pytest.mark.parametrize("dt", [None, 4e-4])
def test_run_writes_crash_pulse_parquet(tmp_path, dt):
    """`jaxmedusa run` of the barrier example, shortened (the car starts 1 cm from the wall,
    20 ms): crash_pulse.parquet with units, one vehicle, ticks 0.1 ms apart from the first
    contact, none missing; the car decelerates (a_long < 0 once the wall carries force). At
    the file's 5e-5 s and at the crush law's study default 4e-4 s (4 ticks per step)."""
    text = (ROOT / "studies" / "medusa" / "barrier" / "scenario.toml").read_text()
    text = text.replace("x = 0.0", "x = 0.29", 1).replace("end_time = 0.4", "end_time = 0.02")
    (tmp_path / "barrier").mkdir()
    (tmp_path / "barrier" / "scenario.toml").write_text(text)
    out = run_scenario(tmp_path / "barrier", out_root=tmp_path / "results", dt=dt)
    t = pq.read_table(out.out_dir / "crash_pulse.parquet")
    assert {"vehicle", "time", "t_rel", "in_contact", "a_long", "a_long_cfc60", "ax_cfc60"} <= set(t.column_names)
    assert t.schema.field("a_long_cfc60").metadata[b"unit"] == b"m/s^2"
    assert t.schema.field("t_rel").metadata[b"unit"] == b"s"
    df = t.to_pandas()
    assert set(df["vehicle"]) == {1} and len(df) > 150  # ~19 ms of 0.1 ms ticks
    np.testing.assert_allclose(np.diff(df["t_rel"]), 1e-4, atol=1e-12)
    assert df["a_long"].iloc[50:].max() < 0.0
    # no tick skipped: one left at v = 0 would read ~15 m/s / 2e-4 s = 7.5e4 m/s^2 (the crash peaks ~36 g)
    assert df["a_long"].abs().max() < 50 * 9.81
    assert len(out.pulse) == len(df)
