"""Squareness exponents compiled in (core.params.ContactParams: Python floats) or traced.

`build_batch` stores the exponents as floats where every scenario shares them; the narrow
phase then uses integer powers (|y|^5 for the report's 0.4) instead of exp(q log |y|). Both
are the same surface, so they must give the same contact to rounding; a fit that replaces a
float by an array must get a traced, differentiable exponent back.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.contact.shapes.narrow_phase import ROUNDOFF, cold_warm, pair_geometry
from jaxmedusa.contact.stage import batch_geometry
from jaxmedusa.core import Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.io import load_scenario
from jaxmedusa.study import load_study

from helpers import EXAMPLES, ROOT

AXES = jnp.array([2.3, 0.9, 0.7])


def _yawed(yaw):
    c, s = jnp.cos(yaw), jnp.sin(yaw)
    return jnp.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def test_build_batch_compiles_in_shared_exponents_only():
    sc, _ = load_scenario(EXAMPLES / "offset")
    shared, _ = build_batch([sc, sc], contact={"eps1": 0.4, "eps2": 0.5})
    assert (shared.contact.eps1, shared.contact.eps2) == (0.4, 0.5)
    assert isinstance(shared.contact.eps1, float)
    assert len(jax.tree.leaves(shared.contact)) == 11  # 13 fields, the two exponents in the structure
    mixed, _ = build_batch([sc, sc], contact=[{"eps1": 0.4}, {"eps1": 0.6}])
    assert np.asarray(mixed.contact.eps1).shape == (2,) and isinstance(mixed.contact.eps2, float)
    kept, _ = build_batch([sc, sc], static_exponents=False)
    assert np.asarray(kept.contact.eps1).shape == (2,) and np.asarray(kept.contact.eps2).shape == (2,)
    # the structure holds the values: another exponent is another compiled program
    other, _ = build_batch([sc, sc], contact={"eps1": 0.5, "eps2": 0.5})
    assert jax.tree.structure(other) != jax.tree.structure(shared)


def test_static_and_traced_exponents_give_the_same_contact():
    """200 overlapping pairs of the report's car (random offsets, yaw, height). The depth phi1
    and the normal are well determined (the search resolves 1e-13 in unit coordinates:
    1e-10 m, 1e-8 rad). The points are not, along nearly parallel flat faces: there h varies
    as s^5 across the face (s in unit coordinates, exponent 2 / 0.4), so points whose h differ
    by less than its round-off (narrow_phase.ROUNDOFF, 1.8e-15 relative) are equally good
    minima: |s| up to ROUNDOFF^(1/5) = 1.1e-3, i.e. 2.6e-3 m on the 2.3-m semi-axis. Every
    point must lie within that, and 97 % of them within 1e-6 m (measured: 2 of 169 beyond
    1e-6 m, the worst 1.5e-5 m under XLA's optimisation level 3 and 3.4e-4 m under level 1,
    core/xla_flags.py: which point moves, and how far, is the code generation's draw)."""
    rng = np.random.default_rng(3)
    n = 200
    d = jnp.asarray(np.stack([rng.uniform(3.0, 4.5, n), rng.uniform(-1.6, 1.6, n), rng.uniform(-0.1, 0.1, n)], 1))
    yaw = jnp.asarray(rng.uniform(-0.6, 0.6, n))

    def geom(r2, y, e):
        return pair_geometry("superellipsoid", jnp.zeros(3), jnp.eye(3), AXES, r2, _yawed(y), AXES, cold_warm(), *e)

    static = jax.jit(jax.vmap(lambda r2, y: geom(r2, y, (0.4, 0.4))))(d, yaw)
    traced = jax.jit(jax.vmap(geom))(d, yaw, (jnp.full(n, 0.4), jnp.full(n, 0.4)))
    touching = np.asarray(static.touching)
    assert touching.sum() > 100
    np.testing.assert_array_equal(np.asarray(traced.touching), touching)
    for name, tol in (("phi1", 1e-10), ("n1", 1e-8)):
        a, b = np.asarray(getattr(static, name))[touching], np.asarray(getattr(traced, name))[touching]
        np.testing.assert_allclose(a, b, rtol=0, atol=tol, err_msg=name)
    flat_face = float(np.max(AXES)) * ROUNDOFF ** (1.0 / 5.0)  # [m] 2.6e-3
    for name in ("T1", "T2"):
        a, b = np.asarray(getattr(static, name))[touching], np.asarray(getattr(traced, name))[touching]
        moved = np.max(np.abs(a - b), axis=1)
        assert np.all(moved < flat_face), (name, moved.max())
        assert np.mean(moved < 1e-6) >= 0.97, (name, np.sort(moved)[-6:])


def test_a_replaced_exponent_is_traced_and_differentiable():
    """A fit's unknown replaces the float by an array (fit/problem.py): the batch's narrow
    phase must then see it traced. d phi1 / d eps1 of an overlapping pair against central
    differences (h = 1e-4: their truncation measured 3e-9 against h = 1e-5, 4e-7 of the
    derivative; round-off 1e-13 m / h = 1e-9): 1e-5 relative."""
    sc, _ = load_scenario(EXAMPLES / "offset")
    batch, state = build_batch([sc])
    assert isinstance(batch.contact.eps1, float)
    settings = Settings(contact_law="crush")
    r = state.vehicles.r.at[0, 1].set(state.vehicles.r[0, 0] + jnp.array([3.8, 0.8, 0.0]))

    def phi1(e1):
        b = replace(batch, contact=replace(batch.contact, eps1=jnp.reshape(e1, (1,))))
        return batch_geometry(b, r, state.vehicles.F, state.pairs.warm, settings).phi1[0, 0]

    e = 0.4
    assert float(phi1(e)) < 0.0  # the cars overlap
    h = 1e-4
    fd = (float(phi1(e + h)) - float(phi1(e - h))) / (2 * h)
    grad = float(jax.grad(phi1)(jnp.asarray(e)))
    assert abs(fd) > 1e-3  # the depth depends on the squareness
    assert grad == pytest.approx(fd, rel=1e-5)


def test_a_study_that_perturbs_an_exponent_keeps_them_traced(tmp_path):
    base = load_study(ROOT / "studies" / "offset.toml")
    assert base.static_exponents
    text = (ROOT / "studies" / "offset.toml").read_text()
    text = text.replace('folder = "medusa/offset"', f'folder = "{EXAMPLES / "offset"}"')
    path = tmp_path / "eps.toml"
    path.write_text(text.replace("[parameters]", '[parameters]\nsquareness = { uniform = [0.35, 0.45], '
                                                 'path = "contact.eps1" }', 1))
    assert not load_study(path).static_exponents
