"""NUTS with window adaptation (BlackJAX), every chain in one vmapped batch.

    draws = sample(log_density, u0, key, warmup=500, draws=500)   # u0 (C, n) chain starts
    draws.position (C, D, n), draws.log_density (C, D), draws.divergent (C, D)

BlackJAX (docs/inference.md says why it rather than NumPyro): `blackjax.window_adaptation`
is Stan's warmup (a fast step-size window, doubling slow windows for a diagonal inverse mass
matrix, a last fast window; dual averaging to `target_accept`), `blackjax.nuts` the
multinomial no-U-turn sampler. Each chain adapts its own step size and mass matrix. The
chains are a jax.vmap of one chain, so the simulator sees a batch of C scenarios per
leapfrog step (all chains step together; a chain whose tree is done waits for the others).

`sample` is pure (jit or vmap it: simulation-based calibration vmaps it over replications).
`Sampler` runs the same in pieces for the command line: the warmup in one compiled call, the
kept draws in compiled chunks of `chunk` draws, so a progress bar can move between them.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import blackjax
import jax
import jax.numpy as jnp

__all__ = ["Draws", "sample", "Sampler"]


class Draws(NamedTuple):
    position: jnp.ndarray  # (C, D, n) unconstrained
    log_density: jnp.ndarray  # (C, D)
    divergent: jnp.ndarray  # (C, D) bool
    tree_depth: jnp.ndarray  # (C, D) leapfrog steps per draw (num_integration_steps)
    step_size: jnp.ndarray  # (C,) adapted


def _warmup(log_density, key, u0, steps: int, target_accept: float, max_depth: int):
    """(NUTS state, parameters) of one chain after window adaptation."""
    if steps == 0:
        params = {"step_size": jnp.asarray(0.1), "inverse_mass_matrix": jnp.ones_like(u0)}
        return blackjax.nuts(log_density, **params).init(u0), params
    adapt = blackjax.window_adaptation(blackjax.nuts, log_density, target_acceptance_rate=target_accept,
                                       max_num_doublings=max_depth)
    (state, params), _ = adapt.run(key, u0, num_steps=steps)
    return state, {"step_size": params["step_size"], "inverse_mass_matrix": params["inverse_mass_matrix"]}


def _draws(log_density, key, state, params, n: int, max_depth: int):
    """n NUTS draws of one chain: (last state, (position, log density, divergent, steps))."""
    kernel = blackjax.nuts(log_density, **params, max_num_doublings=max_depth)

    def one(s, k):
        s, info = kernel.step(k, s)
        return s, (s.position, s.logdensity, info.is_divergent, info.num_integration_steps)

    return jax.lax.scan(one, state, jax.random.split(key, n))


def sample(log_density: Callable, u0, key, warmup: int = 500, draws: int = 500, target_accept: float = 0.8,
           max_depth: int = 8) -> Draws:
    """Warmup then `draws` kept draws of every chain (u0 (C, n)), vmapped over chains."""

    def chain(k, x0):
        k1, k2 = jax.random.split(k)
        state, params = _warmup(log_density, k1, x0, warmup, target_accept, max_depth)
        _, (pos, ld, div, steps) = _draws(log_density, k2, state, params, draws, max_depth)
        return Draws(pos, ld, div, steps, params["step_size"])

    return jax.vmap(chain)(jax.random.split(key, u0.shape[0]), u0)


class Sampler:
    """`sample` in pieces (module docstring): warmup(), then chunk() until done."""

    def __init__(self, log_density: Callable, target_accept: float = 0.8, max_depth: int = 8, chunk: int = 25):
        self.chunk_size = chunk
        self._log_density, self._ta, self._depth = log_density, target_accept, max_depth

        def draws(keys, states, params):
            return jax.vmap(lambda k, s, p: _draws(log_density, k, s, p, chunk, max_depth))(keys, states, params)

        self._chunk = jax.jit(draws)

    def warmup(self, key, u0, steps: int):
        """(states, params) of every chain after `steps` adaptation steps (one compiled call)."""
        f = jax.jit(jax.vmap(lambda k, x0: _warmup(self._log_density, k, x0, steps, self._ta, self._depth)))
        return f(jax.random.split(key, u0.shape[0]), u0)

    def chunk(self, key, states, params):
        """`chunk` more draws of every chain: (states, (position, log density, divergent, steps))."""
        return self._chunk(jax.random.split(key, jax.tree.leaves(states)[0].shape[0]), states, params)
