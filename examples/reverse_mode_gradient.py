"""Reverse mode through the one loop: jax.grad of a collision loss w.r.t. every initial state.

    python examples/reverse_mode_gradient.py            # ~1-3 min on a laptop CPU

A batch of offset rear-end collisions (the MEDUSA report's offset example, vehicle 2 placed
0.3 m ahead of contact so the collision happens in the first 0.1 s) is simulated with the
physical contact law. The initial state of each vehicle is given by 12 numbers:

    r (3) [m]        position of the centre of mass
    v (3) [m/s]      velocity of the centre of mass
    theta (3) [rad]  rotation vector: F0 = expm([theta]x) F_eq (small turns of the body)
    omega (3) [1/s]  angular velocity: W0 = [omega]x F0 (rigid rotation of the directors)

so the batch has B x V x 12 parameters. The loss is the mean over the batch of vehicle 2's
squared delta-V, |v2(T) - v2(0)|^2 [m^2/s^2]; `jax.grad` gives all B x V x 12 derivatives
in one backward pass.

Memory: `simulate_fixed` runs the checkpointed loop (solver/simulate.py, adjoint=
"checkpointed"): a lax.scan of a fixed number of steps whose body is rematerialised in the
backward pass, so what is kept is one state per step (~100 floats per vehicle), not every
intermediate of the tire, suspension and contact computations; memory grows linearly in
the number of steps with a small constant. The step control is "constant" (every step taken,
dt fixed): MEDUSA's shrink-on-contact rule has no fixed step count, and its discrete
decisions are not differentiable anyway (docs/sensitivity.md).

The contact points inside each step are differentiated by the implicit function theorem
(contact/shapes/narrow_phase.py), in reverse mode too.
"""
from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxmedusa  # noqa: F401  (float64)
from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.solver.simulate import simulate_fixed

N_STATE = 12  # r, v, theta, omega per vehicle


def skew(a):
    """[a]x, (3,) -> (3, 3): skew(a) @ b = a x b."""
    z = jnp.zeros_like(a[0])
    return jnp.array([[z, -a[2], a[1]], [a[2], z, -a[0]], [-a[1], a[0], z]])


def setup(offsets=(0.2, 0.5, 0.8), speed_difference=3.0, gap=0.3, end_time=0.15, dt=1e-4):
    """(batch, state0, p0 [B, V, 12], settings) of offset collisions at the given lateral
    offsets [m]; vehicle 2 starts `gap` [m] clear of vehicle 1, `speed_difference` [m/s] slower."""
    base, _ = load_scenario(jaxmedusa_root() / "studies" / "medusa" / "offset")
    length = base.models[base.vehicles[0].model].contact_dims[0]
    scenarios = []
    for y in offsets:
        v1, v2 = base.vehicles
        v2 = dataclasses.replace(v2, x=v1.x + length + gap, y=y, speed=v1.speed - speed_difference)
        scenarios.append(dataclasses.replace(base, vehicles=[v1, v2]))
    settings = Settings(end_time=end_time, dt=dt, contact_law="physical", step_control="constant")
    batch, state = build_batch(scenarios, dt=dt, n_vehicles=2)
    vs = state.vehicles
    p0 = jnp.concatenate([vs.r, vs.v, jnp.zeros_like(vs.r), jnp.zeros_like(vs.r)], axis=-1)  # [B, V, 12]
    return batch, state, p0, settings


def jaxmedusa_root():
    from pathlib import Path

    return Path(jaxmedusa.__file__).resolve().parent.parent


def with_parameters(state, p):
    """The initial state with r, v, theta, omega of p [B, V, 12] (module docstring)."""
    vs = state.vehicles
    rot = jax.vmap(jax.vmap(lambda th: jax.scipy.linalg.expm(skew(th))))(p[..., 6:9])
    F = rot @ vs.F
    W = jax.vmap(jax.vmap(skew))(p[..., 9:12]) @ F
    return replace(state, vehicles=replace(vs, r=p[..., 0:3], v=p[..., 3:6], F=F, W=W))


def loss(p, batch, state, settings, n_steps=None):
    """Mean over the batch of vehicle 2's squared delta-V [m^2/s^2]."""
    final = simulate_fixed(batch, with_parameters(state, p), settings, n_steps)
    dv = final.vehicles.v[:, 1] - p[:, 1, 3:6]
    return jnp.mean(jnp.sum(dv * dv, axis=-1))


def main():
    batch, state, p0, settings = setup()
    f = jax.jit(lambda p: loss(p, batch, state, settings))
    g = jax.jit(jax.grad(lambda p: loss(p, batch, state, settings)))
    t0 = time.perf_counter()
    value, grad = float(f(p0)), np.asarray(g(p0))
    print(f"loss {value:.6f} m^2/s^2; gradient of {grad.size} parameters in {time.perf_counter() - t0:.1f} s "
          "(compile included)")
    names = ["x", "y", "z", "vx", "vy", "vz", "theta_x", "theta_y", "theta_z", "omega_x", "omega_y", "omega_z"]
    for b in range(grad.shape[0]):
        for k in range(grad.shape[1]):
            print(f"scenario {b} vehicle {k + 1}: " + " ".join(f"{n} {x:+.4g}" for n, x in zip(names, grad[b, k])))
    # spot check against central differences
    h = 1e-6
    for (b, k, i) in [(1, 1, 1), (1, 0, 3), (2, 1, 8)]:
        e = np.zeros(p0.shape)
        e[b, k, i] = h
        fd = (float(f(p0 + e)) - float(f(p0 - e))) / (2 * h)
        print(f"d loss / d {names[i]} (scenario {b}, vehicle {k + 1}): reverse {grad[b, k, i]:+.6g}, "
              f"central difference {fd:+.6g}")


if __name__ == "__main__":
    main()
