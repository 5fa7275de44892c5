"""Skid marks (analysis/skids.py): the tracker's lengths, the trajectory's wheel columns, the plan view.

The car's front wheels are driven at a tire speed of 0.11 m/s from 3 m/s: a longitudinal slip
of 1 - 0.11 / 3 = 0.96, where the CALSPAN tire slides (WheelInfo.sliding), until the car has
slowed enough for the slip to fall below the sliding point; the rear wheels roll freely and
never slide. Driving straight, every point of the car moves alike, so a front wheel's mark is
the distance the centre of mass travels while that wheel slides.
"""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402

from jaxmedusa.plot.plan_view import plan_view_figure  # noqa: E402
from jaxmedusa.plot.run_data import load_run  # noqa: E402
from jaxmedusa.run import run_scenario  # noqa: E402

from helpers import EXAMPLES  # noqa: E402

SAVE = 0.01  # [s]


@pytest.fixture(scope="module")
def braked_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("skid")
    scen = tmp / "skid.toml"
    scen.write_text(f'[medusa]\nfolder = "{(EXAMPLES / "straight").as_posix()}"\n'
                    "[road]\nflat = true\n[overrides.vehicles.1]\nspeed = 3.0\ntire_speed = 0.11\n"
                    '[simulation]\nend_time = 1.5\nstep_control = "constant"\ndt = 2e-4\n'
                    'end_condition = "rest"\nrest_speed = 0.2\n')
    out = run_scenario(scen, out_root=tmp)
    return out, pq.read_table(out.out_dir / "trajectory.parquet").to_pandas()


def test_front_wheel_marks_are_the_distance_travelled_while_sliding(braked_run):
    out, table = braked_run
    skid = table[["wheel1_skid", "wheel2_skid", "wheel3_skid", "wheel4_skid"]].to_numpy()
    assert skid[:, :2].any() and not skid[:, 2:].any()  # driven front wheels slide, free rear wheels do not
    rows = np.nonzero(skid[:, 0])[0]
    assert np.all(np.diff(rows) == 1)  # one mark: sliding from the start until the car has slowed
    x, speed = table["x"].to_numpy(), table["speed"].to_numpy()
    by_samples = x[rows[-1]] - x[rows[0]]
    # the tracker follows every step; the samples know the mark's ends to one sample
    # interval's travel at each end (speed x 0.01 s)
    slack = SAVE * (speed[rows[0]] + speed[min(rows[-1] + 1, len(x) - 1)])
    assert out.rest["skid_length"][0] == pytest.approx(by_samples, abs=slack)
    assert 0.5 < out.rest["skid_length"][0] < out.rest["distance"][0]


def test_mark_table_lists_each_mark_with_its_ends(braked_run):
    out, table = braked_run
    marks = pq.read_table(out.out_dir / "skid_marks.parquet").to_pandas()
    assert list(marks["wheel"]) == [1, 2] and list(marks["vehicle"]) == [1, 1]  # one mark per front wheel
    rows = table[table["wheel1_skid"]]
    first, last = rows.iloc[0], rows.iloc[-1]
    assert marks["t_start"][0] == first["time"] and marks["t_end"][0] == last["time"]
    assert (marks["x_start"][0], marks["x_end"][0]) == (first["wheel1_x"], last["wheel1_x"])
    # along a straight mark the sampled polyline is its chord, to the few micrometres the wheel
    # moves sideways as the body pitches
    assert marks["length"][0] == pytest.approx(last["wheel1_x"] - first["wheel1_x"], abs=1e-4)


def test_wheel_points_are_the_assembly_points_on_the_plane(braked_run):
    out, table = braked_run
    # eq (1.2): r_q = r + F X_q; on the flat plane z = 0 the contact point has its x and y
    l1, track, h1 = out.scenario.models[0].l1, out.scenario.models[0].track, out.scenario.models[0].h1
    d1 = table[["d11", "d12", "d13"]].to_numpy()
    d2 = table[["d21", "d22", "d23"]].to_numpy()
    d3 = table[["d31", "d32", "d33"]].to_numpy()
    rq = table[["x", "y", "z"]].to_numpy() + l1 * d1 + 0.5 * track * d2 - h1 * d3  # front-left, eq (1.11)
    # the same sums in another order: round-off of positions of a few metres
    np.testing.assert_allclose(table["wheel1_x"], rq[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(table["wheel1_y"], rq[:, 1], rtol=0, atol=1e-12)
    assert pq.read_schema(out.out_dir / "trajectory.parquet").field("wheel1_x").metadata[b"unit"] == b"m"


def test_plan_view_draws_the_skid_marks(braked_run):
    out, _ = braked_run
    fig = plan_view_figure(load_run(out.out_dir))
    marks = [a for ax in fig.axes for a in ax.get_lines() if (a.get_gid() or "").startswith("skid-")]
    assert len(marks) == 2  # one mark for each front wheel
    for line in marks:
        assert np.ptp(line.get_xdata()) > 0.5
