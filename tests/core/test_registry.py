"""Registries (core/registry.py) and the Status enumeration (core/status.py)."""
from __future__ import annotations

import pytest

from jaxmedusa.contact.laws import LAWS
from jaxmedusa.contact.shapes import SHAPES
from jaxmedusa.core.registry import Registry, UnknownNameError
from jaxmedusa.core.status import Status, status_label
from jaxmedusa.physics.tire import TIRES
from jaxmedusa.solver.step_control import STEP_CONTROLS
from jaxmedusa.study.design import SAMPLERS


def test_resolve_returns_the_registered_object_and_unknown_names_list_the_valid_ones():
    r = Registry("widget")
    a, b = object(), object()
    r.register("a", a)
    r.register("b", b)
    assert r.resolve("a") is a and r.resolve("b") is b and r.names() == ("a", "b") and "a" in r and len(r) == 2
    with pytest.raises(UnknownNameError, match=r"^f.toml: sim.widget: unknown widget 'c'; valid: a, b$"):
        r.resolve("c", where="f.toml: sim.widget")
    with pytest.raises(ValueError, match="already registered"):
        r.register("a", b)
    with pytest.raises(UnknownNameError):  # an unhashable name is unknown too, not a TypeError
        r.resolve(["a"])


def test_the_project_registries_hold_the_documented_names():
    assert LAWS.names() == ("medusa", "physical", "crush")
    assert SHAPES.names() == ("superellipsoid", "ellipsoid", "box", "medusa_search")
    assert STEP_CONTROLS.names() == ("medusa", "constant")
    assert SAMPLERS.names() == ("grid", "random", "lhs", "sobol")
    assert "calspan" in TIRES
    # each entry knows its own name, so messages and fingerprints can use it
    for reg in (LAWS, SHAPES, STEP_CONTROLS, SAMPLERS, TIRES):
        for name in reg:
            assert reg.resolve(name).name == name


def test_status_values_labels_and_messages():
    # the integers are stored in result tables: they must not move
    assert [int(s) for s in Status][:4] == [0, 1, 2, 3]
    assert [s.label for s in Status][:4] == ["ok", "nan", "off_road", "contact_not_converged"]
    assert int(Status.ENERGY_GAIN) == 10 and Status(10).label == "energy_gain"  # set after a run (jaxmedusa/run.py)
    assert len({int(s) for s in Status}) == len(Status)  # statuses added later take values of their own
    assert int(Status.NOT_AT_REST) == 4 and Status(4).label == "not_at_rest"  # end_condition "rest"
    # a run that met end_time before its rest (end_condition = "rest") is not a failure
    assert not Status.OK.failed and not Status.NOT_AT_REST.failed and Status.NAN.failed
    assert all(s.message for s in Status)
    assert status_label(2) == "off_road" and status_label(9) == "code9"
