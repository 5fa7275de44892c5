"""Registries: the one way a name in a file or on the command line becomes an object.

    LAWS = Registry("contact law")
    LAWS.register("medusa", medusa_law_object)
    law = LAWS.resolve("medusa", where="study.toml: simulation.contact_law")

An unknown name raises `UnknownNameError` (a ValueError) that lists the valid names; the
CLI turns it into exit code 2. Resolve names once, outside traced code: the physics
receives functions and static configuration, never strings to compare.
"""
from __future__ import annotations

from typing import Generic, Iterator, TypeVar

__all__ = ["Registry", "UnknownNameError"]

T = TypeVar("T")


class UnknownNameError(ValueError):
    """A name that is not in a registry; the message names the place and the valid names."""


class Registry(Generic[T]):
    """An ordered mapping name -> object for one kind of choice (`kind`, e.g. "tire model")."""

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str, obj: T) -> T:
        """Add `obj` under `name` (a name may be registered once) and return `obj`."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} name must be a non-empty string, got {name!r}")
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj
        return obj

    def resolve(self, name, where: str | None = None) -> T:
        """The object registered as `name`; `where` (e.g. "file.toml: simulation.contact_law")
        prefixes the error message of an unknown name."""
        try:
            return self._items[name]
        except (KeyError, TypeError):
            prefix = f"{where}: " if where else ""
            raise UnknownNameError(f"{prefix}unknown {self.kind} {name!r}; valid: {', '.join(self._items)}") from None

    def names(self) -> tuple[str, ...]:
        return tuple(self._items)

    def __contains__(self, name) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._items)})"
