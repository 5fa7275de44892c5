"""Contact laws: how a pair's contact geometry becomes forces (generalized terms).

LAWS maps the names used in files (`[simulation] contact_law`) to `contact.types.ContactLaw`
objects. Adding a law: one new file here defining `LAW = ContactLaw(name, pair_terms, ...)`,
plus one `LAWS.register` line below.
"""
from jaxmedusa.contact.laws import crush, medusa, spring_damper
from jaxmedusa.contact.laws.medusa import medusa_law
from jaxmedusa.contact.laws.spring_damper import normal_force, physical_law
from jaxmedusa.core.registry import Registry
from jaxmedusa.contact.types import ContactLaw

LAWS: Registry[ContactLaw] = Registry("contact law")
LAWS.register("medusa", medusa.LAW)  # MEDUSA's accumulated penalty multipliers (the default)
LAWS.register("physical", spring_damper.LAW)  # spring-damper normal force through the mass matrix
LAWS.register("crush", crush.LAW)  # calibrated crush, friction, barriers (docs/crash-law.md)

__all__ = ["LAWS", "medusa_law", "physical_law", "normal_force"]
