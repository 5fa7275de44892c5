"""Plan view and time histories of a small contact run: what the figures must show."""
import numpy as np
import pandas as pd
import pytest

from jaxmedusa.plot.histories import histories_figure
from jaxmedusa.plot.plan_view import outline_times, outlines, plan_view_figure, road_lines
from jaxmedusa.plot.run_data import load_run, yaw_rate

from plot_fixtures import END_TIME, small_run  # noqa: F401


def _gids(ax, gid):
    return [a for a in ax.get_children() if a.get_gid() == gid]


def test_metadata_carries_the_contact_semi_axes(small_run):
    run = load_run(small_run)
    assert run.name == "close" and run.numbers == [1, 2]
    # model.dat (Appendix C model 1): CONTACT A1 4.0 A2 1.6 A3 1.3 -> semi-axes 2.0, 0.8, 0.65 m
    assert run.vehicles[0]["contact_semi_axes"] == pytest.approx([2.0, 0.8, 0.65])
    assert run.shape == {"kind": "superellipsoid", "eps1": 0.4, "eps2": 0.4}
    assert run.road is None and not run.notes


def test_plan_view_shows_outlines_paths_and_contacts(small_run):
    run = load_run(small_run)
    fig = plan_view_figure(run)
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    # outlines at 0, 0.1 s and the end (0.15 s) for each vehicle
    for n in (1, 2):
        assert len(_gids(ax, f"outline-{n}")) == 3
        assert len(_gids(ax, f"path-{n}")) == 1
    alphas = [p.get_alpha() for p in _gids(ax, "outline-1")]
    assert alphas == sorted(alphas) and alphas[0] < alphas[-1]  # fading: early outlines lighter
    events = pd.read_parquet(small_run / "contact_events.parquet")
    assert len(events) >= 1
    (marks,) = _gids(ax, "contact")
    assert len(marks.get_xdata()) == len(events)
    assert len(_gids(ax, "normal")) == 1 and len(_gids(ax, "contact-outline")) == 2
    assert ax.get_aspect() == 1.0  # equal scales: outlines keep their shape


def test_moving_frame_subtracts_the_mean_initial_velocity(small_run):
    # vehicles start at 22 and 20 m/s along E1: the frame moves at 21 m/s, so a path's
    # x data is x - 21 t (vehicle 1 starts at x = 0 and gains 1 m/s relative before contact)
    run = load_run(small_run)
    ax = plan_view_figure(run, moving=True).axes[0]
    (path,) = _gids(ax, "path-1")
    rows = run.vehicle(1)
    np.testing.assert_allclose(path.get_xdata(), rows["x"] - 21.0 * rows["time"], atol=1e-9)
    assert "21" in ax.get_xlabel() and len(_gids(ax, "outline-2")) == 3


def test_contact_points_and_normals_are_between_the_cars(small_run):
    # Vehicle 2 is ahead (+x) at y = 0.4: the contact lies between the front of vehicle 1
    # and the rear of vehicle 2, and vehicle 1's outward normal points forward (+x).
    ev = pd.read_parquet(small_run / "contact_events.parquet")
    run = load_run(small_run)
    assert len(ev) >= 1
    for _, e in ev.iterrows():
        # the vehicles' centres at the contact's step (recorded in the run): between samples
        xa, xb = (np.interp(e["geometry_time"], run.vehicle(n)["time"], run.vehicle(n)["x"]) for n in (1, 2))
        assert xa < e["point_x"] < xb
        assert 0.0 < e["point_y"] < 0.4
        assert e["normal_x"] > 0.99
        assert e["geometry_time"] == e["start"]  # the geometry of the episode's first step
        assert np.linalg.norm(e[["normal_x", "normal_y", "normal_z"]].to_numpy(float)) == pytest.approx(1.0)


def test_outline_extent_matches_the_directors():
    # Section y3 = 0 of the superellipsoid: x = r + a1 y1 d1 + a2 y2 d2, so with d1 = (c, 0, s),
    # d2 = (0, 1, 0) the outline spans 2 a1 c in x and 2 a2 in y (hand calculation).
    c, s = np.cos(0.075), np.sin(0.075)
    F = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])  # columns d1, d2, d3
    poly = outlines(np.array([[10.0, 1.0, 0.5]]), F[None], (2.0, 0.9, 0.7),
                    {"kind": "superellipsoid", "eps2": 0.4})[0]
    assert np.ptp(poly[:, 0]) == pytest.approx(4.0 * c, rel=1e-12)
    assert np.ptp(poly[:, 1]) == pytest.approx(1.8, rel=1e-12)
    # symmetric about the centre; 1e-6 m: cos(pi/2) = 6e-17, not 0, raised to the power 0.4
    assert poly.mean(axis=0) == pytest.approx([10.0, 1.0], abs=1e-6)
    # a superellipse with exponent 0.4 fills more of its box than an ellipse (pi/4 of it)
    x, y = poly[:, 0], poly[:, 1]
    area = 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    assert area > 0.9 * (4.0 * c * 1.8) and area < 4.0 * c * 1.8


def test_outline_times_every_tenth_and_the_end():
    t = np.round(np.arange(0, 0.36, 0.01), 12)
    assert outline_times(t).tolist() == [0, 10, 20, 30, 35]


def test_road_lines_of_a_straight_road():
    # A straight road along E1 (y = 0): centreline y = 0, lanes of 3 m -> lines at +-1.5 m,
    # and with vehicles 4 m off the centre also +-4.5 m.
    # (evenly spaced points: the spline is the straight line itself, x increasing)
    road = np.array([[0.0, 0.0, 0.0, 0.0], [100.0, 0.0, 0.0, 0.0], [200.0, 0.0, 0.0, 0.0], [300.0, 0.0, 0.0, 0.0]])
    centre, lanes = road_lines(road, 4.0)
    assert np.allclose(centre[:, 1], 0.0) and centre[0, 0] == pytest.approx(0.0) and centre[-1, 0] == pytest.approx(300.0)
    assert np.all(np.diff(centre[:, 0]) >= 0)
    assert sorted(round(float(np.mean(l[:, 1])), 9) for l in lanes) == [-4.5, -1.5, 1.5, 4.5]


def test_histories_two_axes_then_three_with_a_crash_pulse(small_run, tmp_path):
    run = load_run(small_run)
    # the run touches (vehicle 2 starts 0.1 m clear), so run_scenario wrote its crash pulse:
    # without it two axes
    assert run.crash_pulse is not None and len(run.crash_pulse) > 0
    run.crash_pulse = None
    fig = histories_figure(run)
    assert len(fig.axes) == 2
    assert [len(ax.get_lines()) for ax in fig.axes] == [2, 2]  # one curve per vehicle
    speed = fig.axes[0].get_lines()[0].get_ydata()
    assert speed[0] == pytest.approx(22.0)  # platoon.dat SPEED of vehicle 1
    # a hand-made crash pulse table (raw and filtered columns) adds the third axes
    t = np.arange(0, 0.15, 0.001)
    pulse = pd.DataFrame({"time": np.tile(t, 2), "vehicle": np.repeat([1, 2], len(t)),
                          "accel_raw": np.sin(60 * np.tile(t, 2)), "accel_filtered": np.zeros(2 * len(t))})
    run.crash_pulse = pulse
    fig = histories_figure(run)
    assert len(fig.axes) == 3 and len(fig.axes[2].get_lines()) == 4  # 2 vehicles x raw/filtered


def test_histories_draw_the_crush_law_pulse_on_its_own_time_axis(small_run):
    # The table analysis/crash_pulse.py writes (crush law): t_rel and in_contact are not
    # accelerations, and of the accelerations the longitudinal pulse is drawn, raw and CFC 60:
    # 2 curves per vehicle. The pulse lasts 30 ms of the 0.15 s run: its axes span the pulse.
    run = load_run(small_run)
    t_rel = np.arange(0.0, 0.03, 1e-4)
    rows = []
    for v in (1, 2):
        a = (-1) ** v * 200.0 * np.sin(np.pi * t_rel / 0.03)
        d = {"vehicle": np.full(len(t_rel), v), "time": 0.05 + t_rel, "t_rel": t_rel,
             "in_contact": np.ones(len(t_rel), bool)}
        for suffix in ("", "_cfc60"):
            for c in ("ax", "ay", "az", "a_lat"):
                d[c + suffix] = np.zeros(len(t_rel))
            d["a_long" + suffix] = a
        rows.append(pd.DataFrame(d))
    run.crash_pulse = pd.concat(rows, ignore_index=True)
    fig = histories_figure(run)
    assert len(fig.axes) == 3
    lines = fig.axes[2].get_lines()
    assert [ln.get_label() for ln in lines] == ["vehicle 1: a_long", "vehicle 1: a_long_cfc60",
                                                "vehicle 2: a_long", "vehicle 2: a_long_cfc60"]
    lo, hi = fig.axes[2].get_xlim()
    assert 0.045 < lo and hi < 0.085  # the pulse's span (matplotlib adds 5 % margins)
    assert fig.axes[0].get_xlim()[1] > 0.14  # the run's axes keep the run's span
    # a run whose pulse table is empty (no contact: pulse_table gives the columns only)
    run.crash_pulse = run.crash_pulse.iloc[:0]
    assert len(histories_figure(run).axes) == 2


def test_yaw_rate_formula():
    # heading psi(t) = 0.3 t^2 written into d1 = (cos psi, sin psi, 0) and its rate
    # w1 = psi' (-sin psi, cos psi, 0): the yaw rate must be psi' = 0.6 t (hand calculation)
    t = np.linspace(0.0, 2.0, 21)
    psi, dpsi = 0.3 * t * t, 0.6 * t
    rows = pd.DataFrame({"d11": np.cos(psi), "d12": np.sin(psi), "w11": -np.sin(psi) * dpsi,
                         "w12": np.cos(psi) * dpsi})
    np.testing.assert_allclose(yaw_rate(rows), dpsi, atol=1e-14)
