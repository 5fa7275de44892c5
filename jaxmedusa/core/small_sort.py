"""A stable argsort of a few values from comparisons only, for code inside the time loop.

`jnp.argsort` lowers to an XLA sort op, and XLA's CPU backend never compiles a while loop
holding a sort op into one function (core/xla_flags.py): the whole time loop would then run
operation by operation. For the few values a contact search sorts (3 box axes, a handful of
trial points) ranks from pairwise comparisons cost n^2 compares and give the same order.
"""
from __future__ import annotations

import jax.numpy as jnp

__all__ = ["argsort_small"]


def argsort_small(x):
    """jnp.argsort(x, stable=True) for a short 1-D x (n values, static n): the rank of x[i]
    is the number of values below it plus the equal ones before it; the order is the
    inverse permutation of the ranks. NaN sorts last, as in jnp.argsort. Returns int32 (n,)."""
    n = x.shape[0]
    nan = jnp.isnan(x)
    key = jnp.where(nan, 0.0, x)
    i = jnp.arange(n)
    # [i, j]: x[j] sorts before x[i], by (is NaN, value, index)
    first = (nan[None, :] < nan[:, None]) | ((nan[None, :] == nan[:, None]) & (
        (key[None, :] < key[:, None]) | ((key[None, :] == key[:, None]) & (i[None, :] < i[:, None]))))
    rank = jnp.sum(first, axis=1)  # [n] a permutation of 0..n-1
    return jnp.sum(jnp.where(rank[None, :] == i[:, None], i[None, :], 0), axis=1).astype(jnp.int32)
