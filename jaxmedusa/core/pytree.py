"""A decorator that turns a frozen dataclass into a JAX pytree (all fields are leaves)."""
from __future__ import annotations

import dataclasses

import jax


def pytree_dataclass(cls):
    """Frozen dataclass whose fields are all pytree children (arrays or sub-pytrees)."""
    cls = dataclasses.dataclass(frozen=True)(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    return jax.tree_util.register_dataclass(cls, data_fields=names, meta_fields=[])


def replace(obj, **changes):
    """`dataclasses.replace` re-exported so callers need one import."""
    return dataclasses.replace(obj, **changes)
