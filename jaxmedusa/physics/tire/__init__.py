"""Tire models: the force of one tire from its load, slip angle and longitudinal slip.

calspan.py is MEDUSA's CALSPAN/STI model (eqs 1.19-1.26).
"""
from jaxmedusa.physics.tire.calspan import cornering_stiffness, peak_friction, tire_forces

__all__ = ["tire_forces", "cornering_stiffness", "peak_friction"]
