"""Tire models: the force of one tire from its load, slip angle and longitudinal slip.

TIRES maps model names (ModelSpec.tire_model, `tire_model = "..."` in a scenario's
[[models]]) to `TireModel`s: calspan.py is MEDUSA's CALSPAN/STI model (eqs 1.19-1.26),
fiala.py the Fiala brush tire of the EDC programs (docs/tire-fiala.md).
Each vehicle carries a core.params.TireSet: the static tuple of the models present in its
batch, its own model's index and every model's parameters; `tire_forces` dispatches on it
(a direct call when the batch has one model, `lax.switch` otherwise).

Adding a tire model: one file here defining `MODEL = TireModel(name, forces, params,
defaults, sliding)` and one `TIRES.register` line below. docs/architecture.md has the checklist.
"""
from __future__ import annotations

from dataclasses import replace
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.params import TireSet
from jaxmedusa.core.registry import Registry
from jaxmedusa.physics.tire import calspan, fiala
from jaxmedusa.physics.tire.model import TireModel

__all__ = ["TIRES", "TireModel", "tire_forces", "tire_set", "tire_sliding"]

TIRES: Registry[TireModel] = Registry("tire model")
TIRES.register("calspan", calspan.MODEL)  # MEDUSA's CALSPAN/STI tire (the default)
TIRES.register("fiala", fiala.MODEL)  # the Fiala brush tire of the EDC programs (docs/tire-fiala.md)


def tire_set(model: str, values: dict | None = None, models: tuple[str, ...] | None = None) -> TireSet:
    """The TireSet of a vehicle whose tire model is `model` with parameter overrides
    `values`, in a batch whose models are `models` (default: just `model`)."""
    models = tuple(models or (model,))
    if model not in models:
        raise ValueError(f"tire model {model!r} is not among the batch's models {models}")
    params = tuple(TIRES.resolve(m, where="tire model").params(values if m == model else None) for m in models)
    return TireSet(models=models, index=np.asarray(models.index(model), np.int32), params=params)


def _call(forces, params, fz, alpha, s):
    return forces(fz, alpha, s, params)


def tire_forces(tires: TireSet, fz, alpha, s):
    """(fx, fy) [N] of the four tires of one vehicle with the model its TireSet selects."""
    models = [TIRES.resolve(n, where="TireSet.models") for n in tires.models]
    if len(models) == 1:  # the usual case: no dispatch at all
        return models[0].forces(fz, alpha, s, tires.params[0])
    branches = [partial(_call, m.forces, p) for m, p in zip(models, tires.params)]
    return jax.lax.switch(tires.index, branches, fz, alpha, s)


def _never(fz, alpha, s, params):
    return jnp.zeros(jnp.shape(fz), bool)


def _call_sliding(sliding, params, fz, alpha, s):
    return sliding(fz, alpha, s, params)


def tire_sliding(tires: TireSet, fz, alpha, s):
    """EDC's skid flag of each tire (bool, shape of fz): its model's sliding regime
    (TireModel.sliding), dispatched as `tire_forces` is."""
    models = [TIRES.resolve(n, where="TireSet.models") for n in tires.models]
    if any(m.sliding is None for m in models):  # a model without a sliding regime: never sliding
        models = [m if m.sliding is not None else replace(m, sliding=_never) for m in models]
    if len(models) == 1:
        return models[0].sliding(fz, alpha, s, tires.params[0])
    branches = [partial(_call_sliding, m.sliding, p) for m, p in zip(models, tires.params)]
    return jax.lax.switch(tires.index, branches, fz, alpha, s)
