"""A mask, or a value, that XLA's CPU fusion computes once instead of once per consumer.

XLA fuses a chain of cheap elementwise operations (compares, ands, selects, sums of a few
numbers) into every fusion that reads its result, so a per-scenario mask read by the selects
of many state leaves is recomputed inside each of them, for every element of each leaf. The
step's `take` (the step was accepted and nothing failed: the step control's decision and the
finiteness checks of the new state, solver/step.py) is read by the select of every vehicle
state leaf, by the clock, and by every tracker accumulator that counts only accepted steps;
in the optimised HLO of the crush-law offset study's time loop (B = 256) each [256, 2, 1, 3]
accumulator of the damage tracker carried the whole chain, 90 operations, for each of its
1,536 elements.

`computed_once` passes the mask through a square root, which XLA's fusion does not copy into
several consumers (nor an exponential or a division; tests/core/test_fusion.py checks it on the
compiled HLO): the chain is evaluated once, into a buffer of B numbers, and each consumer reads
it. sqrt(0) = 0 and sqrt(1) = 1 exactly, so the mask is the same, bit for bit. Measured on the
study's 3-s chunk at B = 256: 0.748 of the run's time (two fresh processes against two), 0.793
(alternating rounds in one process), free driving within the noise (benchmarks/RESULTS.md,
"The step's accepted mask computed once").
`jax.lax.optimization_barrier` on the same mask gained nothing (1.06): XLA's CPU pipeline
did not keep it in place of the chain.

`stored_once` does the same for a float value: x + (-0.0), written as the sum over an axis of
two, [x, -0.0], which XLA's fusion treats as a reduction and does not copy. The slip angle's
atan2 (core/vector_math.py) is read by four fusions of the step (the new lagged angle, its
rate, and the two finiteness sums); without it each evaluated the arctangent's series.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["computed_once", "stored_once"]


def computed_once(mask):
    """`mask` (bool, any shape), the same values, as one stored result (module docstring).
    No derivative flows through it (a mask has none)."""
    ones = jax.lax.stop_gradient(mask.astype(jnp.float32))
    return jnp.sqrt(ones) > 0.5


def stored_once(x):
    """`x` (float, any shape), the same values except that -0.0 becomes +0.0, as one stored
    result (module docstring). Differentiable: its derivative is the identity."""
    return jnp.sum(jnp.stack([x, jnp.full_like(x, -0.0)], axis=-1), axis=-1)
