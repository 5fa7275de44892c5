"""The examples, reduced: examples/avoid_by_steering.py (two design steps) and
examples/sensitivity_figures.py's "fd" figure (one offset of the six); the same file's
"sobol" bars run in tests/cli/test_sensitivity_methods.py on the Sobol' run's table."""
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


def test_sensitivity_fd_figure_at_one_offset(tmp_path):
    """The "fd" figure of docs/sensitivity.md at one of its six offsets (y = 0.4 m: both cars in
    contact by 0.1 s, 0.2 s of pushing), all three panels, drawn into tmp_path. What the
    docs claim of it, against central differences at h = 1e-3, 1e-4, 1e-5 m:
      * physical law with fixed steps (with and without dashpot): forward mode equals the
        differences at h = 1e-4 and 1e-5 m to 4 digits (measured: 3e-6 and 3e-5 relative;
        the differences carry O(h^2) truncation and the run's rounding over 2h);
      * MEDUSA's law and step control: the differences are no derivative (jumps): they
        disagree with each other by more than 100 times the forward-mode slope (measured at
        y = 0.4: forward +1.01, differences +1424, +25118, -371 (m/s)/m)."""
    from PIL import Image

    ex = _example("sensitivity_figures")
    png, panels = ex.fd_figure(ys=(0.4,), folder=tmp_path)
    assert png == tmp_path / "derivatives_fd.png"
    with Image.open(png) as im:
        assert im.size == (800, 232)  # 10 x 2.9 inches at 80 dpi
    (t0, a0, f0), (t1, a1, f1), (t2, a2, f2) = panels
    assert "dashpot 1e4" in t0 and "without dashpot" in t1 and "MEDUSA" in t2
    for a, f in ((a0, f0), (a1, f1)):
        assert f.shape == (1, 3) and abs(a[0]) > 0.05  # a slope of ~-0.18 (m/s)/m, not zero
        np.testing.assert_allclose(f[0, 1:], a[0], rtol=1e-4)  # h = 1e-4, 1e-5 m: 4 digits
        # h = 1e-3 m: the O(h^2) term of a derivative that varies on a scale of ~0.1 m
        np.testing.assert_allclose(f[0, 0], a[0], rtol=1e-2)
    assert np.isfinite(a2[0]) and abs(a2[0]) < 20  # forward mode: one smooth piece's slope
    assert np.ptp(f2[0]) > 100 * abs(a2[0]), (a2, f2)
