"""A decorator that turns a frozen dataclass into a JAX pytree (fields are leaves, except
the static `meta` fields, which are part of the tree structure)."""
from __future__ import annotations

import dataclasses

import jax


def pytree_dataclass(cls=None, *, meta: tuple[str, ...] = ()):
    """Frozen dataclass whose fields are pytree children (arrays or sub-pytrees), except the
    fields named in `meta`: static, hashable values (a change of them recompiles).
    Use as `@pytree_dataclass` or `@pytree_dataclass(meta=("name",))`."""
    if cls is None:
        return lambda c: pytree_dataclass(c, meta=meta)
    cls = dataclasses.dataclass(frozen=True)(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.name not in meta]
    return jax.tree_util.register_dataclass(cls, data_fields=names, meta_fields=list(meta))


def replace(obj, **changes):
    """`dataclasses.replace` re-exported so callers need one import."""
    return dataclasses.replace(obj, **changes)
