"""Derivatives of the narrow phase by the implicit function theorem (contact/shapes/narrow_phase.py).

The contact points solve an optimisation problem; their derivative is the derivative of its
optimality conditions, not of the fixed iterations. Checked against central differences of
a search run to convergence (many iterations), and forward against reverse mode."""
import jax
import jax.numpy as jnp
import numpy as np

from jaxmedusa.contact.shapes.narrow_phase import cold_warm, pair_geometry

AXES = jnp.array([2.0, 0.8, 0.65])  # [m], half of CONTACT 4.0 1.6 1.3


def _geometry(x, shape, iters, warm=None):
    """T1, T2, n1, phi1 of two overlapping vehicles: body 2 at (3.9, x0, x1), yawed by x2 [rad]."""
    r2 = jnp.array([3.9, x[0], x[1]])
    c, s = jnp.cos(x[2]), jnp.sin(x[2])
    F2 = jnp.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    w = cold_warm() if warm is None else warm
    g = pair_geometry(shape, jnp.zeros(3), jnp.eye(3), AXES, r2, F2, AXES, w, 0.4, 0.4, broad_phase="enclosing",
                      iters=iters)
    return jnp.concatenate([g.T1, g.T2, g.n1, g.phi1[None]]), g.warm


def test_contact_point_derivatives_match_differences_of_the_converged_solve():
    x = jnp.array([0.7, 0.02, 0.05])
    f8 = jax.jit(lambda x: _geometry(x, "ellipsoid", 8)[0])
    J = np.asarray(jax.jacfwd(f8)(x))
    Jr = np.asarray(jax.jacrev(f8)(x))
    f60 = jax.jit(lambda x: _geometry(x, "ellipsoid", 60)[0])
    h = 1e-6  # [m, rad]: central differences, truncation ~h^2, round-off ~1e-16/h ~ 1e-10
    fd = np.stack([(f60(x.at[i].add(h)) - f60(x.at[i].add(-h))) / (2 * h) for i in range(3)], 1)
    # ellipsoids: a strict minimum, the 60-iteration search is converged to round-off, so the
    # implicit derivative of the 8-iteration answer equals the differences to ~1e-7
    np.testing.assert_allclose(J, fd, atol=1e-6)
    np.testing.assert_allclose(Jr, J, atol=1e-12)  # the rule is linear: reverse = forward


def test_warm_started_converged_solve_has_the_implicit_derivative():
    """The failure the custom rule removes: a warm start at the answer makes every LM step
    a rejected no-op, so differentiating the iterations would return the warm start's
    (zero) tangent; the implicit rule still returns d(phi1)/dx."""
    x = jnp.array([0.7, 0.02, 0.05])
    _, warm = _geometry(x, "superellipsoid", 30)
    f = jax.jit(lambda x: _geometry(x, "superellipsoid", 8, warm)[0][-1])
    d = jax.grad(f)(x)
    h = 1e-6
    g30 = jax.jit(lambda x: _geometry(x, "superellipsoid", 30)[0][-1])
    fd = np.array([(g30(x.at[i].add(h)) - g30(x.at[i].add(-h))) / (2 * h) for i in range(3)])
    # phi1 is a min-max value: first-order insensitive to the contact points' error, so it
    # agrees to ~1e-6 even where the flat superellipsoid faces leave T ill-determined
    np.testing.assert_allclose(np.asarray(d), fd, atol=1e-5)
    assert np.abs(fd).max() > 0.1  # a real dependence, not a trivially zero derivative
