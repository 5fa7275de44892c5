"""A finite-difference check of a derivative through contact, small enough for CI (the longer
checks in test_contact_dynamics.py and test_contact.py are marked slow).

Physical law (smooth in the initial conditions; MEDUSA's law is not: docs/medusa-notes.md),
rear-end pair 1 cm apart closing at 2 m/s, 12 ms: the contact lasts from ~5 ms to the end.
Output: vehicle 2's final forward speed; input: its initial position along the road. Without
contact the derivative would be exactly 0, so it is carried by the contact terms alone.
Forward mode through the fixed-step path (reverse mode compiles ~3x longer) (`simulate_fixed`): the adaptive path's step-size
control makes the output jump where the onset of contact crosses a step (measured with
h = 2e-5 m: AD -12.5 against differences -15.3 and -14.4), which no difference quotient
across the jump can match.
"""
from __future__ import annotations

import jax
import numpy as np

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.solver.simulate import simulate_fixed

from step_trace import rear_end


def test_derivative_through_contact_matches_central_differences(models):
    settings = Settings(end_time=0.012, save_every=0.012, contact_law="physical", tires=False)
    batch, state = build_batch([rear_end(models[0], gap=0.01)], dt=settings.dt)

    def final_speed(dx):
        r = state.vehicles.r.at[0, 1, 0].add(dx)
        s = replace(state, vehicles=replace(state.vehicles, r=r))
        return simulate_fixed(batch, s, settings).vehicles.v[0, 1, 0]

    ad = float(jax.jit(jax.jacfwd(final_speed))(0.0))
    f = jax.jit(final_speed)
    # h: the onset of contact moves by h / 2 m/s, 1/100 of a 5e-5 s step at h = 1e-6 m, so
    # the three differences below stay on one smooth piece (the output has kinks where the
    # onset crosses a step boundary)
    h = 1e-6  # [m]
    fd1 = (float(f(h)) - float(f(-h))) / (2 * h)
    fd2 = (float(f(2 * h)) - float(f(-2 * h))) / (4 * h)
    # Central differences: fd(h) = f' + c h^2 + O(h^4); rounding adds ~d / h with d the
    # rounding of the final speed (~1e-13 of 20 m/s after 240 steps: 2e-12 m/s), 2e-6 1/s
    # at h = 1e-6 m, 2e-7 of the ~10 1/s derivative. The two differences agree to that level
    # (c h^2 is far smaller), and the derivative must match them to 1e-6 relative.
    assert abs(ad) > 1.0  # the contact carries a real derivative (1/s): the check has content
    assert abs(fd2 - fd1) < 1e-6 * abs(fd1)
    assert abs(ad - fd1) < 1e-6 * abs(ad), (ad, fd1, fd2)
