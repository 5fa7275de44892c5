"""Core types shared by every layer, importing nothing else of the package.

pytree (frozen dataclasses as JAX pytrees), status (the Status enumeration), registry
(name -> object, for every choice a file can make), safe_math (NaN-safe helpers, the one
heading formula), scenario (plain-Python scenario descriptions), params (parameter
pytrees, Settings, Batch) and state (state pytrees).
"""
from jaxmedusa.core.params import (CONTACT_DEFAULTS, GRAVITY, Batch, ContactParams, DriverParams, Settings, TireSet,
                                   VehicleParams, contact_params)
from jaxmedusa.core.pytree import pytree_dataclass, replace
from jaxmedusa.core.registry import Registry, UnknownNameError
from jaxmedusa.core.scenario import DriverTable, ModelSpec, RoadSpec, Scenario, VehicleSpec
from jaxmedusa.core.state import PairState, ScenarioClock, SimState, VehicleState, pair_indices
from jaxmedusa.core.status import Status, status_label

__all__ = ["CONTACT_DEFAULTS", "GRAVITY", "Batch", "ContactParams", "DriverParams", "Settings", "TireSet",
           "VehicleParams", "contact_params", "pytree_dataclass", "replace", "Registry",
           "UnknownNameError", "DriverTable", "ModelSpec", "RoadSpec", "Scenario", "VehicleSpec", "PairState",
           "ScenarioClock", "SimState", "VehicleState", "pair_indices", "Status", "status_label"]
