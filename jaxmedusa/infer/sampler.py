"""NUTS with window adaptation (BlackJAX), every chain in one vmapped batch.

    draws = sample(log_density, u0, key, warmup=500, draws=500)   # u0 (C, n) chain starts
    draws.position (C, D, n), draws.log_density (C, D), draws.divergent (C, D)

BlackJAX (docs/inference.md says why it rather than NumPyro): `blackjax.window_adaptation`
is Stan's warmup (a fast step-size window, doubling slow windows for the inverse mass
matrix, dense or diagonal, a last fast window; dual averaging to `target_accept`),
`blackjax.nuts` the multinomial no-U-turn sampler. Each chain adapts its own step size and
mass matrix. The chains are a jax.vmap of one chain, so the simulator sees a batch of C
scenarios per leapfrog step (all chains step together; a chain whose tree is done waits for
the others); `Sampler` splits them over the process's devices (over_chains), each device
waiting only for its own chains.

`sample` is pure (jit or vmap it: simulation-based calibration vmaps it over replications).
`Sampler` runs the same in pieces for the command line: the warmup in one compiled call, the
kept draws in compiled chunks of `chunk` draws, so a progress bar can move between them.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import blackjax
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

__all__ = ["Draws", "sample", "Sampler", "over_chains", "chain_devices"]


class Draws(NamedTuple):
    position: jnp.ndarray  # (C, D, n) unconstrained
    log_density: jnp.ndarray  # (C, D)
    divergent: jnp.ndarray  # (C, D) bool
    tree_depth: jnp.ndarray  # (C, D) leapfrog steps per draw (num_integration_steps)
    step_size: jnp.ndarray  # (C,) adapted
    inverse_mass_matrix: jnp.ndarray  # (C, n, n) dense or (C, n) diagonal, adapted


def _warmup(log_density, key, u0, steps: int, target_accept: float, max_depth: int, dense: bool,
            inverse_mass=None):
    """(NUTS state, parameters) of one chain after window adaptation; `dense`: a full inverse
    mass matrix (n, n) estimated from the slow windows' draws, else its diagonal (n,).
    `inverse_mass`: the one used until the first slow window ends (default the identity)."""
    if inverse_mass is None:
        inverse_mass = jnp.eye(u0.shape[0]) if dense else jnp.ones_like(u0)
    if steps == 0:
        params = {"step_size": jnp.asarray(0.1), "inverse_mass_matrix": inverse_mass}
        return blackjax.nuts(log_density, **params).init(u0), params
    adapt = blackjax.window_adaptation(blackjax.nuts, log_density, is_mass_matrix_diagonal=not dense,
                                       initial_inverse_mass_matrix=inverse_mass,
                                       target_acceptance_rate=target_accept, max_num_doublings=max_depth)
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
           max_depth: int = 8, dense: bool = False) -> Draws:
    """Warmup then `draws` kept draws of every chain (u0 (C, n)), vmapped over chains;
    `dense` as _warmup's. Draws.inverse_mass_matrix: each chain's adapted one."""

    def chain(k, x0):
        k1, k2 = jax.random.split(k)
        state, params = _warmup(log_density, k1, x0, warmup, target_accept, max_depth, dense)
        _, (pos, ld, div, steps) = _draws(log_density, k2, state, params, draws, max_depth)
        return Draws(pos, ld, div, steps, params["step_size"], params["inverse_mass_matrix"])

    return jax.vmap(chain)(jax.random.split(key, u0.shape[0]), u0)


def chain_devices(chains: int, devices=None) -> list:
    """The local devices the chains are split over: the most of them (at most len(devices))
    that divide the chain count evenly (one device: plain vmap)."""
    devs = list(devices if devices is not None else jax.local_devices())
    d = max(k for k in range(1, len(devs) + 1) if chains % k == 0)
    return devs[:d]


def over_chains(f: Callable, chains: int, devices=None) -> Callable:
    """jit of f vmapped over the chains (every argument's and result's leading axis), the
    chains split evenly over the local devices (chain_devices) by jax.shard_map: each device
    runs the vmapped program of its chains, with no communication (the chains are
    independent). A CPU process has as many devices as JAXMEDUSA_CPU_DEVICES says
    (core/xla_flags.py): each runs its share on its own core."""
    devs = chain_devices(chains, devices)
    if len(devs) == 1:
        return jax.jit(jax.vmap(f))
    mesh = Mesh(np.array(devs), ("chain",))
    return jax.jit(jax.shard_map(jax.vmap(f), mesh=mesh, in_specs=P("chain"), out_specs=P("chain"),
                                 check_vma=False))


class Sampler:
    """`sample` in pieces (module docstring): warmup(), then chunk() until done, the chains
    split over the local devices (over_chains)."""

    def __init__(self, log_density: Callable, chains: int, target_accept: float = 0.8, max_depth: int = 8,
                 chunk: int = 25, dense: bool = False, devices=None):
        self.chunk_size, self.chains = chunk, chains
        self.devices = chain_devices(chains, devices)
        self._log_density, self._ta, self._depth, self._dense = log_density, target_accept, max_depth, dense
        self._warmups = {}
        self._chunk = over_chains(lambda k, s, p: _draws(log_density, k, s, p, chunk, max_depth), chains, devices)

    def warmup(self, key, u0, steps: int, inverse_mass=None):
        """(states, params) of every chain after `steps` adaptation steps (one compiled call);
        inverse_mass (C, n, n) dense or (C, n) diagonal: each chain's first (default identity)."""
        if inverse_mass is None:
            inverse_mass = jnp.broadcast_to(jnp.eye(u0.shape[1]) if self._dense else jnp.ones(u0.shape[1]),
                                            (self.chains, *((u0.shape[1],) * (2 if self._dense else 1))))
        if steps not in self._warmups:  # one compiled warmup per length
            self._warmups[steps] = over_chains(
                lambda k, x0, m: _warmup(self._log_density, k, x0, steps, self._ta, self._depth, self._dense, m),
                self.chains, self.devices)
        return self._warmups[steps](jax.random.split(key, self.chains), u0, inverse_mass)

    def chunk(self, key, states, params):
        """`chunk` more draws of every chain: (states, (position, log density, divergent, steps))."""
        return self._chunk(jax.random.split(key, self.chains), states, params)
