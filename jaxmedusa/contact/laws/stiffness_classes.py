"""Crush stiffness by vehicle class: published Campbell coefficients A, B per face that a model
can name instead of giving its own (`crush_class = "..."` in a [[models]] table).

    fields = crush_class_fields("crash3_category_4", where="scenario.toml: models[1].crush_class")
    # -> {"crush_a_front": 62345.4, "crush_b_front": 234421.7, "crush_a_side": ..., ...}

The crush law (contact/laws/crush.py) takes CRASH3's coefficients as they are: A [N/m] and
B [N/m^2] per unit damage width, the loading line F/w = A + B C in the residual crush C
(Campbell 1974; CRASH3 User's Guide and Technical Manual, section 9, eqs. (2)-(4)). So the
conversion is only one of units: A [lb/in] x 4.448222 N/lb / 0.0254 m/in, B [lb/in^2] x
4.448222 / 0.0254^2 (= 6894.76 N/m^2 per lb/in^2). CRASH3 prints G = A^2 / 2B [lb] beside A and
B; the law needs no G (it follows from A and B: the energy below the damage threshold).

Only values read from a source are registered; a class gives the faces its source gives, and
the faces it lacks keep the model's own coefficients (given or the defaults of
core.scenario.ModelSpec). docs/crash-law.md ("Stiffness by vehicle class") lists the sources
and the classes that are missing. Units: SI; the source values in their printed units.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxmedusa.core.registry import Registry

__all__ = ["CrushClass", "CRUSH_CLASSES", "crush_class_fields", "LBF", "INCH", "A_PER_LB_IN", "B_PER_LB_IN2"]

LBF = 4.4482216152605  # [N] per pound-force (exact by definition of the avoirdupois pound and g_n)
INCH = 0.0254  # [m] per inch (exact)
A_PER_LB_IN = LBF / INCH  # [N/m] per lb/in
B_PER_LB_IN2 = LBF / INCH**2  # [N/m^2] per lb/in^2



@dataclass(frozen=True)
class CrushClass:
    """One class: per face (front, rear, side) the source's A [lb/in], B [lb/in^2] and G [lb]
    as printed (None: the source gives no value for that face), and the source."""

    description: str
    source: str
    printed: dict  # face -> (A lb/in, B lb/in^2, G lb)

    def fields(self) -> dict[str, float]:
        """{ModelSpec crush field: value [SI]} of the faces the source gives."""
        out = {}
        for face, (a, b, _g) in self.printed.items():
            out[f"crush_a_{face}"] = a * A_PER_LB_IN
            out[f"crush_b_{face}"] = b * B_PER_LB_IN2
        return out


CRUSH_CLASSES: Registry[CrushClass] = Registry("crush stiffness class")

_CRASH3 = ("NHTSA, CRASH3 User's Guide and Technical Manual, DOT HS 805 732 (NTIS PB83-112201), Table 8-2 "
           "(stiffness coefficients by size category), as printed in the manual's section 5 sample run "
           "(damage summary): vehicle 1 front, vehicle 2 side, both category 4")

CRUSH_CLASSES.register("crash3_category_4", CrushClass(
    description="CRASH3 size category 4 (the manual's car size categories; front and sides; rear not read)",
    source=_CRASH3,
    printed={"front": (356.0, 34.0, 1874.0), "side": (143.0, 50.0, 203.0)},
))


def crush_class_fields(name, where: str | None = None) -> dict[str, float]:
    """The ModelSpec crush fields [SI] of class `name`; an unknown name raises
    core.registry.UnknownNameError listing the valid names (`where` prefixes the message)."""
    return CRUSH_CLASSES.resolve(name, where=where).fields()
