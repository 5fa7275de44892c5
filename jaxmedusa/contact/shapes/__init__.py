"""Contact shapes and the narrow phase: where two vehicles touch, one pair at a time.

SHAPES maps the names files use to `contact.types.Shape` objects (superellipsoid,
ellipsoid, box); `pair_geometry` finds the points of deepest mutual penetration for any of
them with one warm-started solver (narrow_phase.py). Adding a shape: shapes/registry.py.
"""
from jaxmedusa.contact.shapes.box import BOX_ELLIPSOID_SCALE
from jaxmedusa.contact.shapes.frames import det3, inv3, principal_frame
from jaxmedusa.contact.shapes.narrow_phase import WARM_SIZE, cold_warm, pair_geometry
from jaxmedusa.contact.shapes.registry import SHAPES
from jaxmedusa.contact.shapes.superellipsoid import gauge

__all__ = ["SHAPES", "pair_geometry", "cold_warm", "WARM_SIZE", "gauge", "det3", "inv3", "principal_frame",
           "BOX_ELLIPSOID_SCALE"]
