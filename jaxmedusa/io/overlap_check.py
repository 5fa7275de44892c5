"""Vehicles that overlap at t = 0: an input error, found before anything is compiled.

A vehicle that starts inside another (or inside a barrier) meets a contact law far outside
the range it was made for: under the MEDUSA law the penalty pushes the vehicles apart with
whatever energy the overlap stores, and a run of two vehicles overlapping at t = 0 went
from 0.38 MJ to 129 MJ and ended 3.2 m in the air with status ok. So `initial_overlaps`
lists every pair (and vehicle-barrier pair) whose contact bodies overlap at t = 0, and the
commands refuse such a scenario (exit code 2) unless it says the overlap is intended
(`intended_overlap = true` at the top level of a TOML scenario, or `--intended-overlap`).

The test is in plan view, on each vehicle's contact box: CONTACT A1 x A2 (length x width,
core.scenario.ModelSpec.contact_dims) centred on the vehicle's position (X, Y) and turned by
its ORIENTATION, the box that bounds every contact shape of contact/shapes (a superellipsoid
or ellipsoid lies inside it). Two rectangles overlap when no edge normal of either separates
them (the separating axis theorem); a penetration up to TOLERANCE is not counted, so
vehicles placed exactly side by side pass. A plane barrier is crossed when a corner lies
behind it; a box barrier is a rectangle (its length x width, turned by yaw_deg).
"""
from __future__ import annotations

import math

import numpy as np

from jaxmedusa.core.scenario import Scenario

__all__ = ["initial_overlaps", "TOLERANCE"]

TOLERANCE = 1e-3  # [m] penetration ignored (vehicles placed touching, rounding of input figures)


def _rectangle(cx: float, cy: float, length: float, width: float, yaw_rad: float) -> np.ndarray:
    """(4, 2) corners of a length x width rectangle centred at (cx, cy), turned by yaw."""
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    axes = np.array([[c, s], [-s, c]])  # rows: the long axis, the short axis
    half = np.array([[1, 1], [1, -1], [-1, -1], [-1, 1]]) * [0.5 * length, 0.5 * width]
    return np.array([cx, cy]) + half @ axes


def _penetration(a: np.ndarray, b: np.ndarray) -> float:
    """Smallest overlap of the projections of two convex polygons on their edge normals [m]
    (<= 0: separated)."""
    depth = math.inf
    for poly in (a, b):
        for i in range(len(poly)):
            edge = poly[(i + 1) % len(poly)] - poly[i]
            n = np.array([-edge[1], edge[0]]) / np.hypot(*edge)
            pa, pb = a @ n, b @ n
            depth = min(depth, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
    return depth


def _vehicle_box(scenario: Scenario, i: int) -> np.ndarray:
    v = scenario.vehicles[i]
    dims = scenario.models[v.model].contact_dims
    return _rectangle(v.x, v.y, dims[0], dims[1], math.radians(v.orientation))


def initial_overlaps(scenario: Scenario) -> list[str]:
    """Descriptions ("vehicles 1 and 2 overlap by 0.42 m", 1-based numbers) of every
    overlap at t = 0 (module docstring); empty when there is none."""
    boxes = [_vehicle_box(scenario, i) for i in range(len(scenario.vehicles))]
    found = []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            d = _penetration(boxes[i], boxes[j])
            if d > TOLERANCE:
                found.append(f"vehicles {i + 1} and {j + 1} overlap by {d:.3g} m at t = 0")
    for k, b in enumerate(scenario.barriers):
        for i, box in enumerate(boxes):
            if b.kind == "plane":
                n = np.asarray(b.normal[:2], dtype=float)
                if np.hypot(*n) < 1e-9:  # a horizontal plane (a floor): not a wall in plan view
                    continue
                n = n / np.hypot(*n)
                d = -float(np.min((box - np.asarray(b.position[:2])) @ n))
            else:
                d = _penetration(box, _rectangle(b.position[0], b.position[1], b.size[0], b.size[1],
                                                 math.radians(b.yaw_deg)))
            if d > TOLERANCE:
                found.append(f"vehicle {i + 1} and barrier {k + 1} ({b.kind}) overlap by {d:.3g} m at t = 0")
    return found
