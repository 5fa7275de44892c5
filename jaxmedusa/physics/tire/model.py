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
    unknown keys raise ValueError). defaults: {parameter name: default value}.
    sliding(fz, alpha, s, params) -> bool (optional): the tire's contact patch slides as a whole (EDC's
    skid flag), in the model's own terms (each model's docstring says how).
    forces_and_sliding(fz, alpha, s, params) -> (fx, fy, sliding) (optional): both from one
    evaluation of the model's slip terms, for a caller that needs both (physics.vehicle). Called
    apart, XLA's CPU fusion evaluates the slip terms once more inside the flag's own kernel
    (benchmarks/RESULTS.md, "The skid flag from the tire's own terms"); None: `forces`, then
    `sliding`."""

    name: str
    forces: Callable
    params: Callable
    defaults: dict
    sliding: Callable | None = None  # None: the model never reports sliding
    forces_and_sliding: Callable | None = None  # None: `forces`, then `sliding`
    friction: Callable | None = None  # None: no driver brake/throttle or friction zones with this model
