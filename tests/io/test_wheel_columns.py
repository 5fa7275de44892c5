"""The trajectory table's wheel columns (io/tables.py, analysis/skids.py) from hand-made samples."""
import numpy as np

from jaxmedusa.io.tables import trajectory_table
from jaxmedusa.solver.simulate import Samples


def test_wheel_columns_follow_the_rows_and_padding_wheels_are_nan():
    b, s, v, w = 1, 2, 2, 6  # a car (4 wheels) beside a three-axle truck (6)
    point = np.arange(b * s * v * w * 3, dtype=float).reshape(b, s, v, w, 3)
    skid = np.zeros((b, s, v, w), bool)
    skid[0, 1, 1, 4] = True  # the truck's wheel 5 slides at the second sample
    z = np.zeros((b, s, v, 3))
    samples = Samples(saved=np.ones((b, s), bool), t=np.array([[0.0, 0.01]]), r=z, F=np.tile(np.eye(3), (b, s, v, 1, 1)),
                      v=z, W=np.zeros((b, s, v, 3, 3)), energy=np.zeros((b, s, v)), energy_medusa=np.zeros((b, s, v)),
                      wheel_point=point, wheel_skid=skid)
    wheels = np.ones((b, v, w), bool)
    wheels[0, 0, 4:] = False  # the car's padding wheels
    t = trajectory_table(samples, np.ones((b, v), bool), wheels=wheels).to_pandas()
    # rows: (sample 0, car), (sample 0, truck), (sample 1, car), (sample 1, truck)
    assert list(t["vehicle"]) == [1, 2, 1, 2]
    assert t["wheel3_x"][3] == point[0, 1, 1, 2, 0] and t["wheel3_y"][2] == point[0, 1, 0, 2, 1]
    assert np.isnan(t["wheel5_x"][0]) and np.isnan(t["wheel6_y"][2]) and t["wheel5_x"][1] == point[0, 0, 1, 4, 0]
    assert list(t["wheel5_skid"]) == [False, False, False, True]
