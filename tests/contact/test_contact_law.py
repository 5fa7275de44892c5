"""Contact laws (jaxmedusa.contact.laws): vehicle.c's signs and index pattern, and a two-body
collision in free flight (no tires, no intrinsic forces) integrated here with eq. (1.52)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxmedusa  # noqa: F401
from jaxmedusa.contact.shapes import cold_warm, pair_geometry
from jaxmedusa.contact.laws import medusa_law, physical_law
from jaxmedusa.core.params import contact_params
from jaxmedusa.core.pytree import pytree_dataclass

AX = jnp.array([2.5, 0.9, 0.7])
_geom = jax.jit(lambda r1, F1, r2, F2: pair_geometry("superellipsoid", r1, F1, AX, r2, F2, AX, cold_warm(),
                                                      iters=12))


@pytree_dataclass
class Body:  # the fields the laws read (VehicleState has more)
    r: jnp.ndarray
    F: jnp.ndarray
    v: jnp.ndarray
    W: jnp.ndarray


@pytree_dataclass
class Inertia:  # the fields physical_law reads from VehicleParams
    mass: jnp.ndarray
    my: jnp.ndarray


def body(r, v):
    return Body(jnp.asarray(r, float), jnp.eye(3), jnp.asarray(v, float), jnp.zeros((3, 3)))


def test_medusa_law_signs_and_pattern():
    b1, b2 = body([0, 0, 0], [1.0, 0, 0]), body([4.9, 0.2, 0], [-1.0, 0, 0])
    g = _geom(b1.r, b1.F, b2.r, b2.F)
    assert bool(g.touching)
    gamma, t1, t2 = jax.jit(medusa_law)(g, jnp.zeros(2), b1, b2, contact_params())
    # vehicle.c: phi1 = (rho1 - rho2).n = 0.1, phi2 = (v1 - v2).n = 2; gamma -= p * phi
    np.testing.assert_allclose(gamma, [-2e4 * 0.1, -100 * 2.0], rtol=1e-3)
    np.testing.assert_allclose(gamma[0], 2e4 * g.phi1, rtol=1e-12)  # code phi1 = -geom.phi1
    n = np.asarray(g.n1)
    np.testing.assert_allclose(t1.dr, gamma[0] * n)
    np.testing.assert_allclose(t2.dv, -gamma[1] * n)
    for j in range(3):  # c1[3*j+i] += X1[j]*n1 ; c2[12+3*j+i] -= X2[j]*n2
        np.testing.assert_allclose(t1.dF[:, j], g.X1[j] * gamma[0] * n)
        np.testing.assert_allclose(t2.dW[:, j], -g.X2[j] * gamma[1] * n)
    assert float(jnp.dot(t1.dr, n)) < 0 and float(jnp.dot(t2.dr, n)) > 0  # repulsive
    # not touching: multipliers reset, no terms
    far = body([20.0, 0, 0], [0, 0, 0])
    gf = _geom(b1.r, b1.F, far.r, far.F)
    gamma, t1, _ = medusa_law(gf, jnp.array([5.0, 3.0]), b1, far, contact_params())
    assert np.all(np.asarray(gamma) == 0) and np.all(np.asarray(t1.dv) == 0)


def collide(law, m1, m2, dt, steps, offset=0.4):
    """Two bodies closing at 4 m/s head to tail, offset sideways; explicit predictor-corrector
    (1.52) with g = 0 (free flight). Returns momentum and kinetic energy histories."""
    cp = contact_params(stiffness=2e6, damping=2e4)
    my = jnp.array([600.0, 1400.0, 300.0])
    in1, in2 = Inertia(jnp.asarray(m1), my * m1 / 1500), Inertia(jnp.asarray(m2), my * m2 / 1500)
    b1, b2 = body([0, 0, 0], [4.0, 0, 0]), body([5.05, offset, 0], [0.0, 0, 0])

    def ke(b, i):
        return 0.5 * i.mass * b.v @ b.v + 0.5 * jnp.sum(i.my * jnp.sum(b.W * b.W, axis=0))

    def step(carry, _):
        b1, b2, gamma, warm = carry
        p1 = Body(b1.r + dt * b1.v, b1.F + dt * b1.W, b1.v, b1.W)  # predictor z~1
        p2 = Body(b2.r + dt * b2.v, b2.F + dt * b2.W, b2.v, b2.W)
        g = pair_geometry("superellipsoid", p1.r, p1.F, AX, p2.r, p2.F, AX, warm, iters=3)
        if law == "medusa":
            gamma, t1, t2 = medusa_law(g, gamma, p1, p2, cp)
        else:
            t1, t2 = physical_law(g, p1, p2, in1, in2, cp)

        def adv(b, t):
            return Body(b.r + dt * (b.v + t.dr), b.F + dt * (b.W + t.dF), b.v + dt * t.dv, b.W + dt * t.dW)

        b1, b2 = adv(b1, t1), adv(b2, t2)
        mom = m1 * b1.v + m2 * b2.v
        return (b1, b2, gamma, g.warm), (mom, ke(b1, in1) + ke(b2, in2), g.touching)

    carry = (b1, b2, jnp.zeros(2), cold_warm())
    _, (mom, e, touching) = jax.jit(lambda c: jax.lax.scan(step, c, None, length=steps))(carry)
    e0 = ke(b1, in1) + ke(b2, in2)
    return np.asarray(mom), np.asarray(e), float(e0), np.asarray(touching)


def test_medusa_law_momentum_equal_masses_only():
    mom, _, _, touching = collide("medusa", 1500.0, 1500.0, 5e-5, 1600)
    assert touching.any()
    np.testing.assert_allclose(mom, np.broadcast_to([6000.0, 0, 0], mom.shape), atol=1e-6)
    mom, _, _, _ = collide("medusa", 1500.0, 1000.0, 5e-5, 1600)
    assert np.max(np.abs(mom - [6000.0, 0, 0])) > 1.0  # the defect documented in the notes


def test_physical_law_momentum_and_energy_unequal_masses():
    mom, e, e0, touching = collide("physical", 1500.0, 1000.0, 5e-5, 1600)
    assert touching.any() and not touching[-1]  # the collision is over
    np.testing.assert_allclose(mom, np.broadcast_to([6000.0, 0, 0], mom.shape), atol=1e-6)
    assert e[-1] <= e0 * (1 + 1e-9)
    assert e[-1] < 0.999 * e0  # the dashpot dissipates
