"""core/vector_math.py: atan2 and sincos against NumPy's (the C library's), their special
values, their derivatives, and the compiled step without the C library's scalar calls.

Tolerance: 2 units in the last place (ulp, np.spacing of the reference). The vector atan2
rounds its quotient, its shifted series' sum and its offsets (pi/2, pi) by half an ulp
each at most; sincos its reduction, its series and its quadrant-free result; the series'
truncation is below 1e-19 relative (module docstring). The C library's result is within
about half an ulp of the exact value. Observed: 2 ulp at most for atan2, 1 for sincos."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np

from helpers import compiled_rates_hlo
from jaxmedusa.core.vector_math import atan2, sincos

ULP = 2.0


def _ulps(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    return np.max(np.abs(got - ref) / np.spacing(np.maximum(np.abs(ref), np.finfo(float).tiny)))


def test_atan2_matches_the_c_library_in_every_quadrant_and_magnitude():
    rng = np.random.default_rng(11)
    atan2_jit = jax.jit(atan2)
    for y_scale in (1e-9, 1e-3, 1.0, 30.0, 1e4):
        y = rng.normal(size=100_000) * y_scale
        x = rng.normal(size=100_000) * rng.choice([1e-6, 1.0, 1e6], 100_000)
        assert _ulps(atan2_jit(y, x), np.arctan2(y, x)) <= ULP, y_scale
    # near the shifts' switch points t = tan(pi/16), tan(3 pi/16) and the diagonal t = 1
    t = np.concatenate([np.tan(k * np.pi / 16) * (1.0 + np.linspace(-1e-6, 1e-6, 2001)) for k in (1, 3, 4)])
    for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
        assert _ulps(atan2_jit(sy * t, sx * np.ones_like(t)), np.arctan2(sy * t, sx * np.ones_like(t))) <= ULP


def test_atan2_special_values_are_c_s():
    y = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.0, 0.0, 5.0, -5.0])
    x = np.array([1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 0.0, -0.0, 5.0, -5.0])
    got = np.asarray(jax.jit(atan2)(y, x))
    ref = np.arctan2(y, x)  # 0, -0, pi, -pi, pi/2, -pi/2, 0, pi, pi/4, -3pi/4
    np.testing.assert_array_equal(got, ref)  # exact: each is a stored constant or its negative
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))
    assert np.isnan(np.asarray(atan2(jnp.nan, 1.0)))


def test_sincos_matches_the_c_library_over_vehicle_angles_and_beyond():
    rng = np.random.default_rng(12)
    for limit in (1e-7, 0.8, 3.5, 100.0):
        x = rng.uniform(-limit, limit, 200_000)
        s, c = jax.jit(sincos)(x)
        assert _ulps(s, np.sin(x)) <= ULP and _ulps(c, np.cos(x)) <= ULP, limit
    # multiples of pi/2 as doubles: the exact reduction gives sin(pi) = 1.2246e-16, the
    # distance of the double pi from pi, to the ulp (a two-part pi/2 would miss it)
    k = np.arange(-40, 41)
    x = k * (np.pi / 2)
    s, c = jax.jit(sincos)(x)
    assert _ulps(s, np.sin(x)) <= ULP and _ulps(c, np.cos(x)) <= ULP


def test_derivatives_are_the_closed_forms():
    rng = np.random.default_rng(13)
    y, x = rng.normal(size=64), rng.normal(size=64)
    dy, dx = jax.vmap(jax.grad(atan2, argnums=(0, 1)))(y, x)
    r2 = x * x + y * y
    np.testing.assert_allclose(np.asarray(dy), x / r2, rtol=4 * np.finfo(float).eps)
    np.testing.assert_allclose(np.asarray(dx), -y / r2, rtol=4 * np.finfo(float).eps)
    a = rng.uniform(-4.0, 4.0, 64)
    ds = jax.vmap(jax.grad(lambda a: sincos(a)[0]))(a)
    dc = jax.vmap(jax.grad(lambda a: sincos(a)[1]))(a)
    np.testing.assert_allclose(np.asarray(ds), np.cos(a), rtol=2e-15, atol=1e-300)
    np.testing.assert_allclose(np.asarray(dc), -np.sin(a), rtol=2e-15, atol=1e-300)
    # second derivative: d2 sin = -sin, through the custom rule's own sincos
    d2s = jax.vmap(jax.grad(jax.grad(lambda a: sincos(a)[0])))(a)
    np.testing.assert_allclose(np.asarray(d2s), -np.sin(a), rtol=2e-15, atol=1e-300)


def test_a_batched_step_calls_no_scalar_trigonometry(model1_at_equilibrium):
    # The property the module exists for, on XLA's compiled rates of B vehicles: no atan2,
    # sine, cosine or tan op is left (each would be a C library call per element).
    steer = jnp.linspace(-0.05, 0.05, 8)  # an array, so that its sine and cosine are compiled
    hlo = compiled_rates_hlo(model1_at_equilibrium, 8, steer)
    for op in ("atan2", "sine", "cosine", "tan"):
        assert not re.search(rf" {op}\(", hlo), op
