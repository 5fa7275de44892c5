"""Trailer parameters as study paths (`vehicles.N.hitch.x`, `vehicles.N.kingpin.x`,
`models.M.extra_axles.K.l`) and the articulation and hitch columns of a study's saved
trajectories (docs/trailers.md, "Studies").

The sweep: the car and caravan of studies/caravan.toml rolling straight, the ball at 2.2 or 2.8 m behind
the car's centre of mass (hitch x = -2.2, -2.8) crossed with the caravan's coupling head 3.0 or
4.5 m ahead of its centre of mass (kingpin x), rolling at 2 m/s, 3 s to settle. Hand statics:
- nose load (moments about the caravan's axle, 0.24 m behind its centre of mass; its front
  axle has no spring): P = m g 0.24 / (0.24 + kingpin x) = 872 N at 3.0 m, 596 N at 4.5 m,
  whatever the hitch x (the caravan's own balance);
- the car (wheelbase L = 2.525 m, springs c = 40 kN/m per wheel): moving the ball back by
  0.6 m moves P 0.6 / L of its load from the front axle to the rear, each axle's two springs
  deflecting by that over 2c, so the car pitches nose-up by 2 (P 0.6 / L) / (2c) / L
  = 2.05e-3 rad at P = 872 N.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from jaxmedusa.core.params import GRAVITY
from jaxmedusa.io.medusa_files import MedusaInputError
from jaxmedusa.study import run_study, scenario_for, study_from_dict

STUDIES = Path(__file__).resolve().parents[2] / "studies"
HITCH_X = (-2.2, -2.8)
KINGPIN_X = (3.0, 4.5)
MASS, B2 = 1200.0, 0.24  # the caravan's mass [kg] and its axle behind its centre of mass [m]
L, C = 1.034 + 1.491, 40000.0  # the car's wheelbase [m] and spring per wheel [N/m]
# Rolling slowly straight ahead rather than at rest: tires at zero speed chatter (the slip of
# a wheel standing still is undefined), which the stiff hitch passes on as a +-6 kN horizontal
# force; at 2 m/s with no rolling resistance the hitch carries the nose load alone.
SPEED = 2.0


def _study(parameters: dict, **simulation):
    data = {"name": "trailer_paths", "scenario": {"path": "caravan.toml"},
            "simulation": {"end_time": 3.0, "dt": 4e-4, "step_control": "constant", "save_every": 0.05,
                           "contact": False, **simulation},
            "sampler": {"kind": "grid"}, "parameters": parameters,
            "outputs": {"metrics": ["articulation"], "trajectories": True}}
    return study_from_dict(data, base_dir=STUDIES, source="<trailer_paths>")


def test_bad_trailer_paths_name_the_parameter():
    for path, words in (("vehicles.1.hitch.x", "not towed"), ("vehicles.2.hitch.w", "coordinate of hitch"),
                        ("models.2.extra_axles.1.l", "no extra_axles")):
        with pytest.raises(MedusaInputError, match=words):
            _study({path: {"values": [1.0]}})


def test_hitch_kingpin_and_axle_paths_set_the_scenario():
    semi = study_from_dict({"name": "semi", "scenario": {"path": "semitrailer.toml"}, "sampler": {"kind": "grid"},
                            "parameters": {"vehicles.2.kingpin.z": {"values": [-0.5]},
                                           "vehicles.2.hitch.1": {"values": [-1.8]},
                                           "models.2.extra_axles.2.l": {"values": [0.1], "mode": "offset"}}},
                           base_dir=STUDIES, source="<semi>")
    sc, _, _ = scenario_for(semi, {"vehicles.2.kingpin.z": -0.5, "vehicles.2.hitch.1": -1.8,
                                   "models.2.extra_axles.2.l": 0.1})
    assert sc.vehicles[1].kingpin == (4.3344, 0.0, -0.5) and sc.vehicles[1].hitch == (-1.8, 0.0, -0.25)
    assert sc.models[1].extra_axles[1].l == pytest.approx(4.6656 + 0.1)
    assert semi.base.vehicles[1].hitch == (-2.0353, 0.0, -0.25)  # copy on write
    with pytest.raises(MedusaInputError, match="extra_axles"):  # the third axle moved in front of the second
        study_from_dict({"name": "semi", "scenario": {"path": "semitrailer.toml"}, "sampler": {"kind": "grid"},
                         "parameters": {"models.2.extra_axles.2.l": {"values": [3.0]}}}, base_dir=STUDIES)


def test_hitch_sweep_moves_the_loads_as_hand_statics_says(tmp_path):
    study = _study({"vehicles.1.speed": {"values": [SPEED]}, "vehicles.1.tire_speed": {"values": [SPEED]},
                    "vehicles.1.steering_deg": {"values": [0.0]}, "vehicles.2.hitch.x": {"values": list(HITCH_X)},
                    "vehicles.2.kingpin.x": {"values": list(KINGPIN_X)}})
    s = run_study(study, out=tmp_path, progress=False)
    assert s.complete
    rows = pq.read_table(tmp_path / "scenarios.parquet").to_pandas().set_index("sample_id")
    traj = pq.read_table(tmp_path / "trajectories").to_pandas()
    for col in ("articulation_deg", "hitch_force", "hitch_fz"):  # the names, in the study's table
        assert col in traj.columns
    assert (traj.loc[traj.vehicle == 1, "articulation_deg"] == 0.0).all()
    late = traj[traj.time >= 2.0].groupby(["sample_id", "vehicle"]).mean(numeric_only=True)
    nose, pitch = {}, {}
    for i, row in rows.iterrows():
        key = (row["vehicles.2.hitch.x"], row["vehicles.2.kingpin.x"])
        nose[key] = late.loc[(i, 2), "hitch_fz"]  # the car pushes the caravan's nose up [N]
        pitch[key] = late.loc[(i, 1), "d13"]  # the car's d1 upward: sin(nose-up pitch)
        assert late.loc[(i, 2), "hitch_force"] == pytest.approx(abs(nose[key]), rel=1e-3)  # vertical
        assert abs(row["v2_max_articulation"]) < 0.1
        # straight running, no sway: under three peaks, so the decay rate is null (io/tables.py)
        assert row["v2_sway_peaks"] < 3 and np.isnan(row["v2_sway_decay"]) and np.isnan(row["v1_sway_decay"])
    for hx in HITCH_X:
        for kx in KINGPIN_X:
            # 1 % (measured 0.1 %: 872.7 and 596.9 N): the mean over the last second (the caravan's
            # pitch mode still swings +-15 N) and its
            # suspension geometry, which moves its wheel contact by millimetres under its pitch
            assert nose[hx, kx] == pytest.approx(MASS * GRAVITY * B2 / (B2 + kx), rel=0.01), (hx, kx, nose)
    for kx in KINGPIN_X:
        assert nose[HITCH_X[0], kx] == pytest.approx(nose[HITCH_X[1], kx], rel=0.005)  # the caravan's own balance
    p = MASS * GRAVITY * B2 / (B2 + KINGPIN_X[0])
    d = HITCH_X[0] - HITCH_X[1]
    expected = 2.0 * (p * d / L) / (2.0 * C) / L  # nose-up pitch of the ball moved back [rad]
    got = pitch[HITCH_X[1], KINGPIN_X[0]] - pitch[HITCH_X[0], KINGPIN_X[0]]
    # 3 % (measured 0.7 %: 2.067e-3 against 2.052e-3 rad): the rigid-tire, point-spring statics
    # against the Cosserat chassis and its suspension geometry
    assert got == pytest.approx(expected, rel=0.03), (got, expected)
