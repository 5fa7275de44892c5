"""SAE J224 Collision Deformation Classification codes as the seven characters people read.

analysis/damage.py classifies each vehicle's damage into five integer codes (clock, area,
horizontal location, distribution, extent: `analysis.damage.cdc_codes`); tables and
summaries print them as e.g. '12FDEW2'. The vertical location is always 'E' (everything
below the greenhouse): the model has no vertical structure (docs/crash-law.md, "Damage").
"""
from __future__ import annotations

__all__ = ["cdc_string", "FRONT", "BACK", "LEFT", "RIGHT", "AREAS"]

FRONT, BACK, LEFT, RIGHT = 0, 1, 2, 3  # face indices (vehicle frame: +d1, -d1, +d2, -d2)
AREAS = "FBLR"  # J224 deformation area of each face
HORIZONTAL = {0: "LCRYZD", 1: "FPBYZD"}  # by face kind (0: front/back, 1: sides): codes 0..5


def cdc_string(codes) -> str:
    """The seven-character CDC of (5,) codes (analysis.damage.cdc_codes), e.g. '12FDEW2';
    '' without permanent crush."""
    clock, face, loc, dist, extent = (int(x) for x in codes)
    if extent == 0:  # nothing stays: no damage to classify
        return ""
    kind = 1 if face >= LEFT else 0
    return f"{clock:02d}{AREAS[face]}{HORIZONTAL[kind][loc]}E{'WN'[dist]}{extent}"
