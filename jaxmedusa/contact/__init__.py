"""Contact between vehicles: types, shapes (where they touch), laws (what force) and the stage.

types.py holds what the stage returns and what shapes and laws share; shapes/ finds the
contact geometry of a pair (SHAPES registry); laws/ turns it into generalized forces (LAWS
registry); stage.py runs every pair of a scenario for one integration step.
"""
from jaxmedusa.contact.laws import LAWS
from jaxmedusa.contact.shapes import SHAPES, pair_geometry
from jaxmedusa.contact.stage import batch_geometry, contact_stage, no_contact, uses_contact
from jaxmedusa.contact.types import ContactLaw, ContactTerms, Motion, PairGeometry, PairInfo, Shape

__all__ = ["LAWS", "SHAPES", "pair_geometry", "batch_geometry", "contact_stage", "no_contact", "uses_contact",
           "ContactLaw", "ContactTerms", "Motion", "PairGeometry", "PairInfo", "Shape"]
