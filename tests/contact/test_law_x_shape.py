"""What every contact law must do with every contact shape (LAWS x SHAPES): repel two
overlapping vehicles along the contact normal, act equally and oppositely on equal masses,
keep padding vehicles out, and do nothing to bodies that are apart."""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.contact.laws import LAWS
from jaxmedusa.contact.shapes import SHAPES
from jaxmedusa.contact.stage import contact_stage, shape_name
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.core.scenario import Scenario, VehicleSpec


def head_on(model, gap_x):
    """Two equal cars facing each other on the x axis, centres gap_x apart, closing at 2 m/s."""
    a = VehicleSpec(model=0, x=0.0, y=0.0, orientation=0.0, speed=1.0)
    b = VehicleSpec(model=0, x=gap_x, y=0.0, orientation=180.0, speed=1.0)
    return Scenario("head-on", [model], [a, b])


# A shape with its own search (medusa_search) compiles MEDUSA's whole contact search, 3-5
# minutes per law on CPU: those combinations run with the slow tests.
SHAPE_PARAMS = [pytest.param(n, marks=pytest.mark.slow) if SHAPES.resolve(n).geometry is not None else n
                for n in SHAPES.names()]


def stage(batch, state, settings):
    item = jax.tree.map(lambda x: x[0], (batch, state))
    b, s = item
    vs = s.vehicles
    return jax.jit(contact_stage, static_argnums=(6,))(b, vs.r, vs.F, vs.v, vs.W, s.pairs, settings)


@pytest.mark.parametrize("shape", SHAPE_PARAMS)
@pytest.mark.parametrize("law", LAWS.names())
def test_overlap_repels_equally_and_oppositely(models, law, shape):
    model = models[0]
    length = model.contact_dims[0]
    settings = Settings(contact_law=law, contact_geometry=shape)
    # overlap by 5 cm along x: every shape's surfaces cross there (the box's contact
    # ellipsoid is 1.24 times larger, so it overlaps more)
    batch, state = build_batch([head_on(model, length - 0.05)], dt=5e-5)
    touching, pairs, terms, info, failed = stage(batch, state, settings)
    assert bool(touching) and not bool(failed)
    assert float(info.phi1[0]) < 0.0 and float(info.force[0]) > 0.0
    dv = np.asarray(terms.dv)  # (2, 3) contact accelerations (MEDUSA law: velocity-rate kick)
    kick = np.asarray(terms.dr) if law == "medusa" else dv  # MEDUSA's position part is the main push
    assert kick[0, 0] < 0.0 < kick[1, 0]  # car 1 (behind, at x=0) pushed back, car 2 forward
    # equal masses: equal and opposite, momentum conserved (to round-off of the sum)
    np.testing.assert_allclose(dv[0] + dv[1], 0.0, atol=1e-9 * np.abs(dv).max())
    # the pushes act along x (the normal of a head-on contact), not sideways: to round-off for
    # the narrow-phase solver; MEDUSA's own search stops anywhere near the flat faces'
    # intersection, and the original program's normals on the flat-face contacts of the
    # offset example lean sideways by up to 0.027 (tests/data/offset_contact_trace.txt)
    lateral = 5e-2 if SHAPES.resolve(shape).geometry is not None else 1e-6
    assert abs(kick[0, 1]) < lateral * abs(kick[0, 0])


@pytest.mark.parametrize("shape", SHAPE_PARAMS)
@pytest.mark.parametrize("law", LAWS.names())
def test_apart_or_padding_means_no_contact(models, law, shape):
    model = models[0]
    settings = Settings(contact_law=law, contact_geometry=shape)
    batch, state = build_batch([head_on(model, 3 * model.contact_dims[0])], dt=5e-5)
    touching, _, terms, info, _ = stage(batch, state, settings)
    assert not bool(touching) and float(info.force[0]) == 0.0
    assert all(float(jnp.abs(x).max()) == 0.0 for x in terms)
    # overlapping, but car 2 is a padding vehicle (valid False): no contact either
    batch, state = build_batch([head_on(model, model.contact_dims[0] - 0.05)], dt=5e-5)
    batch = replace(batch, valid=batch.valid.at[0, 1].set(False))
    touching, _, terms, _, _ = stage(batch, state, settings)
    assert not bool(touching) and float(jnp.abs(terms.dv).max()) == 0.0


def test_unknown_names_fail_when_the_stage_is_built(models):
    batch, state = build_batch([head_on(models[0], 4.0)], dt=5e-5)
    with pytest.raises(ValueError, match="unknown contact law 'soft'; valid: medusa, physical, crush"):
        stage(batch, state, Settings(contact_law="soft"))
    with pytest.raises(ValueError, match="unknown contact shape 'sphere'; valid: superellipsoid, ellipsoid, box"):
        stage(batch, state, dataclasses.replace(Settings(), contact_geometry="sphere"))


def test_each_law_has_a_registered_default_shape():
    """No shape named: the MEDUSA law runs contact.c's own search (what reproduces the
    original program), the other laws the analytic superellipsoid; a named shape wins."""
    assert shape_name(Settings()) == "medusa_search"
    assert shape_name(Settings(contact_law="physical")) == "superellipsoid"
    assert shape_name(Settings(contact_law="crush")) == "superellipsoid"
    assert shape_name(Settings(contact_geometry="box")) == "box"
    for law in LAWS.names():
        assert LAWS.resolve(law).default_shape in SHAPES
