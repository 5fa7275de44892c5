"""examples/avoid_by_steering.py, reduced (examples/sensitivity_figures.py runs in
tests/cli/test_sensitivity_methods.py on the Sobol' run's table)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_avoid_by_steering_descends_towards_clearance():
    """Two of the design's 20 gradient steps (runs of 2 s, as the example), from A = -0.5 deg:
    there the contact-free runs of the two cars overlap (docs/fit.md: least gap -0.69 m), so
    the penalty dominates L and its slope must point to a larger |A| (steering right, away
    from vehicle 2 at +0.4 m); the step along it widens the gap and lowers L. A wrong sign or
    a zero derivative through the adaptive loop fails here."""
    ex = _example("avoid_by_steering")
    a, hist = ex.design(steps=2)
    (a0, gap0, loss0, slope0), (a1, gap1, loss1, _) = hist
    assert a0 == -0.5 and gap0 < 0.0  # the start is a collision course
    # L as the docstring defines it, from the recorded gap (softplus(x) = log(1 + e^x); exact
    # to rounding)
    assert loss0 == pytest.approx(a0**2 + ex.WEIGHT * np.logaddexp(0.0, (ex.MARGIN - gap0) / ex.SOFT), rel=1e-12)
    assert slope0 > 0.0  # dL/dA > 0: decrease A (more steering to the right)
    assert a1 == pytest.approx(a0 - 0.15, rel=1e-9)  # adam's first step: the learning rate against the sign
    assert gap1 > gap0 and loss1 < loss0, hist
    assert np.isfinite(a) and a < a1  # the second step goes on the same way
