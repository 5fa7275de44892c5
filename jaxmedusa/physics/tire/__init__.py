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

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.core.params import TireSet
from jaxmedusa.core.registry import Registry
from jaxmedusa.physics.tire import calspan, fiala
from jaxmedusa.physics.tire.model import TireModel

__all__ = ["TIRES", "TireModel", "tire_forces", "tire_forces_and_sliding", "tire_friction", "tire_set",
           "tire_sliding"]

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


def _models(tires: TireSet):
    return [TIRES.resolve(n, where="TireSet.models") for n in tires.models]


def _dispatch(tires: TireSet, fns, *args):
    """fns[i](*args, params_i) with the vehicle's model: a direct call when the batch has one
    model (the usual case: no dispatch at all), `lax.switch` on TireSet.index otherwise."""
    if len(fns) == 1:
        return fns[0](*args, tires.params[0])
    branches = [partial(_call, f, p) for f, p in zip(fns, tires.params)]
    return jax.lax.switch(tires.index, branches, *args)


def _call(fn, params, *args):
    return fn(*args, params)


def _dispatch_slip(tires: TireSet, fns, fz, alpha, s, mu_road):
    """fns[i](fz, alpha, s, params_i[, mu_road]) with the vehicle's model (`_dispatch`); mu_road
    None (the tire's own friction) or (mu_peak, mu_slide) arrays of the road under each tire."""
    if mu_road is None:
        return _dispatch(tires, fns, fz, alpha, s)
    fns = [lambda fz, a, s, mu, p, f=f: f(fz, a, s, p, mu) for f in fns]
    return _dispatch(tires, fns, fz, alpha, s, mu_road)


def tire_forces(tires: TireSet, fz, alpha, s, mu_road=None):
    """(fx, fy) [N] of the tires of one vehicle with the model its TireSet selects. mu_road:
    None (the tire's own friction) or (mu_peak, mu_slide) arrays of the road under each tire."""
    return _dispatch_slip(tires, [m.forces for m in _models(tires)], fz, alpha, s, mu_road)


def _never(fz, alpha, s, params, mu_road=None):
    return jnp.zeros(jnp.shape(fz), bool)


def tire_sliding(tires: TireSet, fz, alpha, s, mu_road=None):
    """EDC's skid flag of each tire (bool, shape of fz): its model's sliding regime
    (TireModel.sliding; never, for a model without one), dispatched as `tire_forces` is."""
    return _dispatch_slip(tires, [m.sliding or _never for m in _models(tires)], fz, alpha, s, mu_road)


def _forces_and_sliding(model: TireModel):
    """The model's (fx, fy, sliding) function, or its forces and flag called one after the other."""
    if model.forces_and_sliding is not None:
        return model.forces_and_sliding
    flag = model.sliding or _never

    def both(fz, alpha, s, params, *mu_road):
        return (*model.forces(fz, alpha, s, params, *mu_road), flag(fz, alpha, s, params, *mu_road))

    return both


def tire_forces_and_sliding(tires: TireSet, fz, alpha, s, mu_road=None):
    """(fx, fy, sliding) of the tires of one vehicle: `tire_forces` and `tire_sliding` in one
    evaluation of each model's slip terms (TireModel.forces_and_sliding), dispatched as they are."""
    return _dispatch_slip(tires, [_forces_and_sliding(m) for m in _models(tires)], fz, alpha, s, mu_road)


def tire_friction(tires: TireSet, fz):
    """(mu_peak, mu_slide) of the tires of one vehicle on their own surface (TireModel.friction)."""
    models = _models(tires)
    missing = [m.name for m in models if m.friction is None]
    if missing:
        raise ValueError(f"tire model(s) {missing} define no friction(): no brakes, throttle or friction zones")
    return _dispatch(tires, [m.friction for m in models], fz)
