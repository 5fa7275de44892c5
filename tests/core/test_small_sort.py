"""core/small_sort.py against numpy's stable argsort (an independent implementation)."""
from __future__ import annotations

import jax
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxmedusa.core.small_sort import argsort_small

_argsort = jax.jit(argsort_small)
# few distinct values, so ties are common; NaN and infinities included
values = st.sampled_from([-np.inf, -2.5, -1.0, 0.0, 0.0, 1e-300, 1.0, 3.0, np.inf, np.nan])


@settings(max_examples=200, deadline=None)
@given(st.lists(values, min_size=1, max_size=6))
def test_the_order_is_numpys_stable_argsort(xs):
    x = np.array(xs)
    np.testing.assert_array_equal(np.asarray(_argsort(x)), np.argsort(x, kind="stable"))


def test_random_values_of_a_search_sized_array():
    x = np.random.default_rng(0).normal(size=(50, 5))
    for row in x:
        np.testing.assert_array_equal(np.asarray(_argsort(row)), np.argsort(row, kind="stable"))
