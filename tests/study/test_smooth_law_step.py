"""The smooth contact laws' study default (solver.step_control.SMOOTH_LAW_STEP): a constant
dt of 4e-4 s instead of MEDUSA's small step, for the physical and the crush law, and the
accuracy claim behind it (the crush law's: tests/analysis/test_crash_calibration.py)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxmedusa import study as S
from jaxmedusa.analysis.outcomes import Outcomes, summarize_batch
from jaxmedusa.build import build_batch
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.run import make_settings
from jaxmedusa.solver import simulate
from jaxmedusa.solver.step_control import SMOOTH_LAW_STEP

ROOT = Path(__file__).resolve().parents[2]
BASE = (ROOT / "studies" / "offset.toml").read_text()


def _study(tmp_path, simulation: str):
    """offset.toml with its [simulation] table replaced."""
    head, tail = BASE.split("[simulation]", 1)
    tail = tail.split("[sampler]", 1)[1]
    text = head.replace('folder = "medusa/offset"', f'folder = "{ROOT / "studies" / "medusa" / "offset"}"')
    p = tmp_path / "s.toml"
    p.write_text(f"{text}[simulation]\n{simulation}\n[sampler]{tail}")
    return S.load_study(p).settings


def test_physical_law_defaults_to_constant_step(tmp_path):
    s = _study(tmp_path, 'end_time = 3.0\ncontact_law = "physical"')
    assert (s.step_control, s.dt) == ("constant", 4e-4)


def test_explicit_settings_win(tmp_path):
    s = _study(tmp_path, 'end_time = 3.0\ncontact_law = "physical"\ndt = 5e-5')
    assert (s.step_control, s.dt) == ("constant", 5e-5)
    s = _study(tmp_path, 'end_time = 3.0\ncontact_law = "physical"\nstep_control = "medusa"')
    assert (s.step_control, s.dt) == ("medusa", 4e-4)


def test_crush_law_defaults_to_constant_step(tmp_path):
    """A crush-law study without dt gets the documented 4e-4 s (docs/numerics.md); one with dt
    keeps it."""
    s = _study(tmp_path, 'end_time = 3.0\ncontact_law = "crush"')
    assert (s.step_control, s.dt) == ("constant", 4e-4)
    s = _study(tmp_path, 'end_time = 3.0\ncontact_law = "crush"\ndt = 5e-5')
    assert (s.step_control, s.dt) == ("constant", 5e-5)


@pytest.mark.parametrize("name", ["offset", "wave", "merge", "barrier_56kmh", "barrier_8kmh"])
def test_shipped_crush_studies_take_the_default(name):
    """The shipped crush-law studies name no dt: they step at 4e-4 s, even where their base
    scenario gives its own (the barrier scenario's 5e-5 s serves `jaxmedusa run`, which records
    the 10 kHz pulse; the study's [simulation] is what counts for a study)."""
    s = S.load_study(ROOT / "studies" / f"{name}.toml").settings
    assert (s.contact_law, s.step_control, s.dt) == ("crush", "constant", 4e-4)


def test_medusa_law_keeps_medusa_rule(tmp_path):
    s = _study(tmp_path, 'end_time = 3.0\ncontact_law = "medusa"')
    assert (s.step_control, s.dt) == ("medusa", 5e-5)


@pytest.mark.slow
def test_default_dt_keeps_offset_outcomes_within_half_a_percent():
    """The claim behind the default: the report's offset example (contact at ~1.0-1.09 s;
    1.5 s simulated) under the physical law, constant dt 4e-4 s against 5e-5 s."""
    rows = []
    for dt in (5e-5, SMOOTH_LAW_STEP["physical"]["dt"]):
        sc, cfg = load_scenario(ROOT / "studies" / "medusa" / "offset")
        s = dataclasses.replace(make_settings(cfg, end_time=1.5), dt=dt, contact_law="physical",
                                step_control="constant")
        batch, state = build_batch([sc], dt=dt)
        tracker = Outcomes(damage=False, rest=False)  # contact, delta-V and final metrics only
        res = simulate(batch, state, s, tracker=tracker, record=False)
        rows.append(jax.device_get(summarize_batch(batch, res.final, res.metrics, tracker)))
    ref, new = rows
    assert ref["peak_contact_force"].max() > 1e4  # a real collision
    for k in ("delta_v", "peak_contact_force", "max_penetration", "contact_duration", "final_speed"):
        # the documented accuracy of the default: 0.5 % of the dt = 5e-5 s outcome
        np.testing.assert_allclose(new[k], ref[k], rtol=5e-3, err_msg=k)
