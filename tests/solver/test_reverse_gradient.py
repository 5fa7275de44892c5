"""examples/reverse_mode_gradient.py: jax.grad through the checkpointed loop of a batch of
collisions w.r.t. all 12 initial-state components per vehicle, against central differences."""
import importlib.util
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _example():
    spec = importlib.util.spec_from_file_location("reverse_mode_gradient", ROOT / "examples" / "reverse_mode_gradient.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reverse_mode_gradient_of_a_collision_batch_matches_central_differences():
    ex = _example()
    # contact from t ~ 0.017 s (0.05 m gap closed at 3 m/s) to the end at 0.06 s: 300 steps of 2e-4 s
    batch, state, p0, settings = ex.setup(offsets=(0.3, 0.7), gap=0.05, end_time=0.06, dt=2e-4)
    # one compiled program for the gradient and the differences' values (value_and_grad: the
    # loss is its forward pass; a separate jit of the loss alone compiled the loop once more)
    value_and_grad = jax.jit(jax.value_and_grad(lambda p: ex.loss(p, batch, state, settings)))
    grad = np.asarray(value_and_grad(p0)[1])

    def f(p):
        return value_and_grad(p)[0]

    assert grad.shape == (2, 2, 12) and np.all(np.isfinite(grad))
    h = 1e-6  # central differences: truncation ~h^2 * f''' and round-off ~1e-16 * f / h ~ 1e-10
    for b, k, i in [(0, 1, 1), (1, 0, 0), (1, 1, 3), (0, 0, 8), (1, 1, 11)]:  # y2, x1, vx2, theta_z1, omega_z2
        e = np.zeros(p0.shape)
        e[b, k, i] = h
        fd = (float(f(p0 + e)) - float(f(p0 - e))) / (2 * h)
        # the fixed-step run is one smooth map once contact has begun in the same step for
        # both sides of the difference; 1e-4 relative leaves room for the rounding above
        assert abs(grad[b, k, i] - fd) <= 1e-4 * abs(fd) + 1e-7, (b, k, i, grad[b, k, i], fd)
    assert np.abs(grad).max() > 1e-3  # the collision really depends on the initial state
