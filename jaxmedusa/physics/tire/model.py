"""What a tire model is: a force law and its parameters (an entry of physics.tire.TIRES)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["TireModel"]


@dataclass(frozen=True)
class TireModel:
    """forces(fz, alpha, s, params) -> (fx, fy) [N]: longitudinal and lateral force of one
    tire from its normal load fz [N] (> 0; the caller zeroes lifted wheels), slip angle
    alpha [rad] and longitudinal slip s [-] (elementwise over the four wheels).
    params(values: dict | None) -> the model's parameter pytree (defaults for missing keys;
    unknown keys raise ValueError). defaults: {parameter name: default value}."""

    name: str
    forces: Callable
    params: Callable
    defaults: dict
