"""core.safe_math.tan_once: the tangent that XLA's CPU compiler computes once per step."""
import re

import jax
import jax.numpy as jnp
import numpy as np

from helpers import compiled_rates_hlo
from jaxmedusa.core.safe_math import tan_once

EPS = np.finfo(np.float64).eps


def test_tan_once_is_the_tangent_to_rounding_and_its_derivative_sec_squared():
    # sin/cos rounds three times (sin, cos, the quotient), each by at most about half an ulp
    # relative, and NumPy's tan once: together under 2 ulp, asserted as 4 eps relative, over
    # the slip angles a tire sees (|alpha| <= pi/2 after Remark 2).
    x = np.linspace(-1.57, 1.57, 20001)
    got = np.asarray(jax.jit(tan_once)(jnp.asarray(x)))
    np.testing.assert_allclose(got, np.tan(x), rtol=4 * EPS, atol=0.0)
    # d tan / dx = 1/cos^2 (closed form), to the same few roundings relative.
    g = np.asarray(jax.vmap(jax.grad(tan_once))(jnp.asarray(x)))
    np.testing.assert_allclose(g, 1.0 / np.cos(x) ** 2, rtol=8 * EPS, atol=0.0)


def test_a_batched_step_evaluates_the_tires_trigonometry_once(model1_at_equilibrium):
    # The performance property tan_once exists for, checked on XLA's compiled code: in the
    # rates of B vehicles the tire's sine and cosine (shape [B, 4]: one per wheel; the
    # vectorised series of core/vector_math.py, recognisable by its reduction constant 2/pi)
    # are computed by one fusion, and no tan op is left for XLA to copy into the readers of
    # the slip angle's tangent (forces, friction, skid flag: with jnp.tan it sat in 8-10 fusions).
    b = 8
    hlo = compiled_rates_hlo(model1_at_equilibrium, b)
    assert not re.search(r" tan\(", hlo)
    fusions = re.split(r"\n(?=%?[\w.\-]+ \(.*\) -> )", hlo)
    per_wheel = [f for f in fusions if "constant(0.63661977236758138)" in f and f"-> f64[{b},4]" in f.split("\n", 1)[0]]
    assert len(per_wheel) == 1, len(per_wheel)
