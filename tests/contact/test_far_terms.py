"""The crush law's far_terms: pair_terms of a pair whose narrow phase did not run, cheaply.

A batch evaluates the law's pair_terms only for the pairs whose narrow phase ran
(contact.stage.batch_law_terms) and far_terms for the others, so far_terms must return what
pair_terms returns for the far geometry (contact.stage._far_apart): the same numbers in every
field a run reads there (the force, the terms, the memory and the power to the bit, the crush
and residual that crash_info folds over all pairs to their rounding); the engaged width, the
force points and the body normals count only where the pair touches (crash_info selects them
by `touching`) and are not compared.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.contact.laws.crush import far_terms, pair_terms
from jaxmedusa.contact.shapes import WARM_SIZE
from jaxmedusa.contact.stage import _far_apart
from jaxmedusa.contact.types import Motion
from jaxmedusa.io import load_scenario

from helpers import EXAMPLES


def _rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.diag(r))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_far_terms_equal_pair_terms_of_the_far_geometry(seed):
    rng = np.random.default_rng(seed)
    sc, _ = load_scenario(EXAMPLES / "offset")
    batch, state = build_batch([sc])
    item = jax.tree.map(lambda x: x[0], batch)
    n = 64
    F = jnp.asarray(np.stack([[_rotation(rng) @ (np.eye(3) + 0.01 * rng.normal(size=(3, 3))) for _ in range(2)]
                              for _ in range(n)]))  # (n, 2, 3, 3): strained, rotated
    r = jnp.asarray(rng.normal(scale=5.0, size=(n, 2, 3)))
    v = jnp.asarray(rng.normal(scale=10.0, size=(n, 2, 3)))
    W = jnp.asarray(rng.normal(size=(n, 2, 3, 3)))
    # memory: zeros (no contact yet) for a quarter, else a past collision's largest overlap and
    # the last two steps' (0 after it, or still decaying)
    memory = np.abs(rng.normal(scale=0.2, size=(n, 3)))
    memory[: n // 4] = 0.0
    memory[n // 4: n // 2, 1:] = 0.0
    memory = jnp.asarray(memory)
    gamma = jnp.zeros((n, 2))
    p1, p2 = (jax.tree.map(lambda x: x[k], item.vehicle) for k in (0, 1))

    def both(r_, F_, v_, W_, mem, g):
        geom = jax.tree.map(lambda x: x[0], _far_apart(item, r_, jnp.zeros((1, WARM_SIZE))))
        m1, m2 = Motion(v_[0], W_[0], r_[0], F_[0]), Motion(v_[1], W_[1], r_[1], F_[1])
        return pair_terms(geom, g, mem, m1, m2, p1, p2, item.contact), far_terms(g, mem, m1, m2, p1, p2, item.contact)

    full, far = jax.jit(jax.vmap(both))(r, F, v, W, memory, gamma)
    (g_a, t1_a, t2_a, f_a, c_a), (g_b, t1_b, t2_b, f_b, c_b) = full, far
    same = np.testing.assert_array_equal  # -0.0 == 0.0: terms of a zero force may differ in the sign of zero
    same(np.asarray(g_b), np.asarray(g_a))
    for x, y in zip((*t1_b, *t2_b), (*t1_a, *t2_a)):
        same(np.asarray(x), np.asarray(y))
    same(np.asarray(f_b), np.asarray(f_a))
    assert not np.any(np.asarray(c_a.touching)) and not np.any(np.asarray(c_b.touching))
    for name in ("memory", "power"):
        same(np.asarray(getattr(c_b, name)), np.asarray(getattr(c_a, name)), err_msg=name)
    # crush and residual are the permanent crush x_p = s dmax - d0 (s the structure's share):
    # compiled with or without a fused multiply-add (XLA's choice per program) it differs by
    # the product's rounding, at most half an ulp of s dmax <= dmax, plus the result's own:
    # 2 eps dmax bounds both
    bound = 2.0 * np.finfo(float).eps * np.asarray(c_a.memory)[:, :1]
    for name in ("crush", "residual"):
        diff = np.abs(np.asarray(getattr(c_b, name)) - np.asarray(getattr(c_a, name)))
        assert np.all(diff <= bound), (name, float(np.max(diff - bound)))
    # the cases are not trivial: past collisions leave permanent crush on some pairs
    assert np.any(np.asarray(c_a.residual) > 0.0) and np.any(np.asarray(c_a.memory)[:, 0] > 0.0)
