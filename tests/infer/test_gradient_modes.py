"""The log posterior's gradient is the same by forward mode (jax.jacfwd through the while
loop, wrapped as a custom VJP) and by reverse mode (jax.grad through the checkpointed scan),
and both equal central finite differences of the log density.

One vehicle of the straight example, 0.1 s at constant 1 ms steps, steered: speed, steering
and lateral position unknown (three tangents), x, y and heading observed.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from helpers import EXAMPLES
from jaxmedusa.infer import LogPosterior, choose_gradient, infer_from_dict

TABLE = {"scenario": {"path": str(EXAMPLES / "straight")},
         "simulation": {"end_time": 0.1, "dt": 1e-3, "step_control": "constant"},
         "unknowns": {"v1_speed": {"path": "vehicles.1.speed", "prior": {"normal": [21.0, 1.0]}},
                      "v1_steer": {"path": "vehicles.1.steering_deg", "initial": 1.5,
                                   "prior": {"truncated_normal": [1.0, 2.0, -5.0, 5.0]}},
                      "v1_y": {"path": "vehicles.1.y", "prior": {"normal": [0.0, 0.5]}}},
         "observations": [{"vehicle": 1, "time": "end", "x": 2.1, "y": 0.02, "heading_deg": 0.3,
                           "sigma": {"x": 0.05, "y": 0.02, "heading_deg": 0.1}}]}


def test_forward_and_reverse_gradients_agree():
    spec = infer_from_dict(TABLE)
    assert choose_gradient(spec) == "forward"  # 3 unknowns: the rule's forward side
    fwd = LogPosterior(spec, gradient="forward")
    rev = LogPosterior(spec, gradient="reverse")
    u = jnp.asarray(fwd.to_u([21.3, 1.2, 0.05]))
    v1, g1 = jax.jit(jax.value_and_grad(fwd.log_density))(u)
    v2, g2 = jax.jit(jax.value_and_grad(rev.log_density))(u)
    # the same steps either way (solver/simulate.py): values and gradients to round-off
    assert abs(float(v1 - v2)) < 1e-9 * max(1.0, abs(float(v1)))
    np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-7, atol=1e-7)
    # central differences, h = 1e-5 in u: truncation ~ h^2 f''' and round-off ~ 1e-16 |f| / h
    # are both below 1e-4 of gradients of order 1-100
    f = jax.jit(fwd._log_density)
    h = 1e-5
    fd = np.array([(f(u + h * e) - f(u - h * e)) / (2 * h) for e in jnp.eye(3)])
    np.testing.assert_allclose(np.asarray(g1), fd, rtol=1e-4, atol=1e-4)
