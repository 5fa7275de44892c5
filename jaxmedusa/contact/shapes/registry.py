"""SHAPES: the contact shapes by the names files use (`[simulation] contact_geometry`).

Adding a shape: one new file in contact/shapes/ defining a `contact.types.Shape` (its gauge
function, and optionally a normal rule), plus one `SHAPES.register` line here.
"""
from jaxmedusa.contact.shapes.box import BOX
from jaxmedusa.contact.shapes.medusa_search import MEDUSA_SEARCH
from jaxmedusa.contact.shapes.superellipsoid import ELLIPSOID, SUPERELLIPSOID
from jaxmedusa.contact.types import Shape
from jaxmedusa.core.registry import Registry

__all__ = ["SHAPES"]

SHAPES: Registry[Shape] = Registry("contact shape")
SHAPES.register("superellipsoid", SUPERELLIPSOID)  # report V (default; eps1 = eps2 = 0.4)
SHAPES.register("ellipsoid", ELLIPSOID)  # report II
SHAPES.register("box", BOX)  # report IV: equal-volume ellipsoid, rounded-box normals, rule (1)
SHAPES.register("medusa_search", MEDUSA_SEARCH)  # contact.c detect_contact()'s own search (report V)
