"""The plan view draws a towed vehicle's drawbar and hitch from the trajectory's hitch columns."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from jaxmedusa.plot.plan_view import draw_plan  # noqa: E402
from jaxmedusa.plot.run_data import DEFAULT_SHAPE, RunData  # noqa: E402


def rows(vehicle, x0, hitch):
    t = np.linspace(0.0, 1.0, 11)
    d = {"time": t, "vehicle": vehicle, "x": x0 + 10.0 * t, "y": 0.0 * t, "z": 0.5 + 0.0 * t}
    for i in range(3):
        for j in range(3):
            d[f"d{i + 1}{j + 1}"] = float(i == j) + 0.0 * t
    d["hitch_x"] = d["x"] + hitch if hitch is not None else np.nan * t
    d["hitch_y"] = 0.0 * t if hitch is not None else np.nan * t
    return pd.DataFrame(d)


def test_plan_view_draws_the_hitch_of_the_towed_vehicle_only():
    traj = pd.concat([rows(1, 0.0, None), rows(2, -6.0, 3.5)])
    run = RunData(name="combo", trajectory=traj, shape=DEFAULT_SHAPE, road=None,
                  vehicles=[{"number": n, "name": f"v{n}", "contact_semi_axes": [2.0, 0.8, 0.6]} for n in (1, 2)])
    fig, ax = plt.subplots()
    counts = draw_plan(ax, run)
    hitch = [ln for ln in ax.lines if ln.get_gid() == "hitch"]
    dots = [ln for ln in hitch if ln.get_linestyle() == "None"]
    assert counts["hitches"] > 0 and len(dots) == 1  # vehicle 2 only
    # each drawbar runs from the trailer's centre 3.5 m forward to the hitch point
    bars = [ln for ln in hitch if ln.get_linestyle() != "None"]
    for ln in bars:
        x, y = ln.get_data()
        assert np.isclose(x[1] - x[0], 3.5) and np.allclose(y, 0.0)
    plt.close(fig)
