"""Road geometry: the road point and triad {e1, e2, e3} under a vehicle.

This is the one interface the vehicle model uses to reach the road. `road=None`
is MEDUSA's ideal flat plane z = 0 (triad = E1, E2, E3).
"""
from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp


class RoadFrame(NamedTuple):
    point: jnp.ndarray  # (3,) tracking point on the road [m] (road.c `tp`)
    e1: jnp.ndarray  # (3,) road tangent
    e2: jnp.ndarray  # (3,) e3 x e1
    e3: jnp.ndarray  # (3,) upward normal of the (banked) road plane


def road_frame(road, r, seg, s):
    """Road frame under the point r (3,) given the tracking state (seg, s).

    Returns (frame, seg_new, s_new, off_road) where off_road is a bool scalar.
    """
    if road is None:
        point = jnp.array([r[0], r[1], 0.0])
        eye = jnp.eye(3, dtype=r.dtype)
        return RoadFrame(point, eye[0], eye[1], eye[2]), seg, s, jnp.asarray(False)
    raise NotImplementedError("spline road: see issue 4")
