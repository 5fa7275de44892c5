"""Trackers that are off cost nothing and change nothing (issue 27's speed check).

A study that asks for neither the damage nor the rest metrics runs Outcomes(damage=False,
rest=False): no crush-profile stations, no distance or skid marks, and the loop stops keeping
the rest clock (ScenarioClock.still_since) under end_condition "time". The damage tracker of
the study metrics keeps the first collision only (DamageTracker.first_only). Checks, on seven
crush-law impacts of 0.25 s (tests/crush_batches.py's two-car batch: rear-end impacts at 5 to
40 km/h closing, two of them with vehicle 2 0.3 m to the side, and a side impact):

- every metric and every leaf of the final state of the run without those layers equals the
  run with them bit for bit (the layers only read the state), the rest clock excepted (its
  value -1, "never still", is what the run without a reader keeps);
- with episode_gap = 0 every step in contact starts a new collision, so the three collision
  slots hold the first step, the second, and the rest: the one-slot tracker's slot equals
  slot 0 of the three-slot one bit for bit, and slot 2 differs from it (several collisions
  did happen, so the comparison is not empty);
- a study's tracker turns the groups on exactly when one of their metrics (or a gradient
  column of one) is asked for.

Two loop compilations, one of them (every layer on) shared with
tests/analysis/test_crash3_consistency.py's two-car impacts.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import numpy as np
import pytest

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa import study as S
from jaxmedusa.analysis.damage import SLOTS, DamageTracker
from jaxmedusa.solver.trackers import CombinedTracker, EnergyBalanceTracker, reads_rest_clock

from crush_batches import CRUSH_GROUP, two_car_bare_run, two_car_runs

ROOT = Path(__file__).resolve().parents[2]
# under `pytest -n`, on the worker of the other files that share the two-car batch
pytestmark = pytest.mark.xdist_group(CRUSH_GROUP)


def runs():
    """(full, bare, m_full, m_bare): the runs with every layer on (FULL and PER_STEP) and with
    the damage and rest groups off, and their outcome arrays (tests/crush_batches.py)."""
    full, m_full = two_car_runs()
    bare, m_bare = two_car_bare_run()
    return full, bare, m_full, m_bare


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f"
                                              else a == b))


def test_layers_off_change_nothing_else():
    full, bare, m_full, m_bare = runs()
    assert np.all(m_full["contact_duration"] > 0.0)  # both impacts happened within the run
    missing = {"c1", "cdc", "damage_width", "rest_x", "rest_time", "distance", "skid_length"}
    assert not missing & set(m_bare)  # the groups that are off give no metrics
    assert set(m_bare) < set(m_full)
    differ = [k for k in m_bare if not _same(m_bare[k], m_full[k])]
    assert differ == []
    final_full = jax.tree.map(np.asarray, dataclasses.replace(full.final.clock, still_since=None))
    final_bare = jax.tree.map(np.asarray, dataclasses.replace(bare.final.clock, still_since=None))
    assert jax.tree.all(jax.tree.map(_same, final_full, final_bare))
    for part in ("vehicles", "pairs", "barriers"):
        assert jax.tree.all(jax.tree.map(_same, getattr(full.final, part), getattr(bare.final, part)))
    assert np.all(bare.final.clock.still_since == -1.0)  # nobody read it: never updated


def test_first_collision_slot_is_bit_for_bit():
    full, _, _, _ = runs()
    three, one = full.metrics[1], full.metrics[2]
    assert three.bins.shape[2] == SLOTS and one.bins.shape[2] == 1
    assert np.all(three.collisions >= 3)  # every step in contact was a collision of its own
    for name in ("bins", "normal", "dv_world", "dv_body"):
        assert _same(getattr(one, name)[:, :, 0], getattr(three, name)[:, :, 0]), name
    assert not _same(three.bins[:, :, 2], three.bins[:, :, 0])  # the later slots hold other steps
    assert _same(one.collisions, three.collisions) and _same(one.last_contact, three.last_contact)


def test_study_tracker_groups():
    study = S.load_study(ROOT / "studies" / "offset.toml")
    assert (study.tracker.damage, study.tracker.rest) == (True, True)  # metrics = ["all"]
    study.outputs = dataclasses.replace(study.outputs, metrics=("delta_v", "final_x"))
    assert (study.tracker.damage, study.tracker.rest) == (False, False)
    assert not reads_rest_clock(CombinedTracker((study.tracker, EnergyBalanceTracker())))
    study.outputs = dataclasses.replace(study.outputs, metrics=("delta_v",), gradients_of=("v2_c3", "v1_distance"))
    assert (study.tracker.damage, study.tracker.rest) == (True, True)
    assert reads_rest_clock(study.tracker) and reads_rest_clock(None) and reads_rest_clock(DamageTracker())
