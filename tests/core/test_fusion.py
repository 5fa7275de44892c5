"""core/fusion.py: a mask or a value computed once keeps its values and derivative, and XLA's
CPU compiler evaluates its chain once instead of inside each consumer."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.core.fusion import computed_once, stored_once


def _chain(a, b):
    """A per-scenario mask as the step's status builds it: a finiteness check and a compare."""
    return jnp.isfinite(a + b) & (b > 0.01)


def test_the_mask_keeps_its_values():
    rng = np.random.default_rng(3)
    for shape in [(), (7,), (256, 2), (3, 4, 5)]:
        m = jnp.asarray(rng.random(shape) < 0.5)
        np.testing.assert_array_equal(np.asarray(jax.jit(computed_once)(m)), np.asarray(m))
    ms = jnp.asarray(rng.random((5, 8)) < 0.5)
    np.testing.assert_array_equal(np.asarray(jax.vmap(computed_once)(ms)), np.asarray(ms))


def test_derivatives_through_a_select_on_it_are_those_without_it():
    # d/dx sum(where(x > 0, x^2, 0)) = 2x where x > 0, else 0: exact, and finite where the
    # mask's square root has an infinite derivative (at 0)
    x = jnp.array([-1.5, 0.0, 0.25, 2.0])

    def f(x):
        return jnp.sum(jnp.where(computed_once(x > 0.0), x * x, 0.0))

    np.testing.assert_array_equal(np.asarray(jax.grad(f)(x)), [0.0, 0.0, 0.5, 4.0])
    _, tangent = jax.jvp(f, (x,), (jnp.ones_like(x),))
    assert float(tangent) == 0.5 + 4.0


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the copying is XLA's CPU fusion's")
def test_the_chain_is_compiled_once_not_per_consumer():
    # three state leaves selected on one mask: without computed_once XLA's CPU fusion copies
    # the mask's finiteness check into each of the three selects (3 is-finite operations in
    # the optimised HLO); with it, one
    a, b = jnp.ones(256), jnp.ones(256)
    leaves = [jnp.full((256, 2, 3), float(i)) for i in range(3)]

    def step(a, b, leaves, once):
        m = _chain(a, b)
        m = computed_once(m) if once else m
        return [jnp.where(m[:, None, None], x + 1.0, x) for x in leaves]

    def is_finite_ops(once):
        return jax.jit(step, static_argnums=3).lower(a, b, leaves, once).compile().as_text().count("is-finite(")

    assert is_finite_ops(False) == 3  # the behaviour computed_once exists for (if XLA stops it, this says so)
    assert is_finite_ops(True) == 1


def test_a_stored_value_keeps_its_values_and_derivative():
    x = jnp.array([0.0, -0.0, 1.5, -3.25, 1e300, -jnp.inf, jnp.nan])
    got = np.asarray(jax.jit(stored_once)(x))
    np.testing.assert_array_equal(got, [0.0, 0.0, 1.5, -3.25, 1e300, -np.inf, np.nan])  # x + (-0.0) is x
    assert not np.signbit(got[1])  # the one change: -0.0 becomes +0.0 (the sum starts at +0.0)
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda x: jnp.sum(stored_once(x) ** 2))(x[2:4])), [3.0, -6.5])


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the copying is XLA's CPU fusion's")
def test_a_stored_value_is_compiled_once_not_per_consumer():
    # a cubic (cheap elementwise operations, like core/vector_math.py's series) read by three
    # consumers: XLA's CPU fusion copies it into each (its constant in 3 fusions); stored, into one
    a = jnp.linspace(0.0, 1.0, 2048).reshape(256, 8)

    def step(a, stored):
        u = ((a * 1.1234567 + 0.5) * a + 0.25) * a
        u = stored_once(u) if stored else u
        return a + u, a * u, jnp.sum(u * u, axis=1)

    def fusions_with_the_cubic(stored):
        return jax.jit(step, static_argnums=1).lower(a, stored).compile().as_text().count("constant(1.1234567)")

    assert fusions_with_the_cubic(False) == 3  # the behaviour stored_once exists for
    assert fusions_with_the_cubic(True) == 1
