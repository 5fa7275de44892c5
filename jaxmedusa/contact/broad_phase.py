"""Pay only for the pairs that are near: run a per-pair function on a compacted buffer.

The narrow phase (shapes/narrow_phase.py) costs microseconds per pair and step; most pairs of
a batch are far apart most of the time. `compacted_map` evaluates a per-pair function only
on the pairs a cheap test marked `near`, as jax-md's neighbour lists do:

    slot  = cumsum(near) - 1: where each near pair goes in the packed order
    idx   = indices of the near pairs, packed to the front (a binary search of the cumsum)
    round k: the k-th block of `capacity` indices -> gather inputs -> vmap(fn) -> rows
             [k capacity, (k + 1) capacity) of a packed result buffer
    after the last round, each near pair gathers its result from row `slot`

The buffer has a static capacity (chosen from the problem size when the step is traced);
instead of an overflow flag that makes the caller re-run at a larger capacity, the buffer
is reused: round k runs only while k * capacity < count (a `lax.cond` per round, so a round
that is not needed costs nothing but the test), so an overflow costs one more round, never a
wrong answer and never a recompile. The cost is ceil(count / capacity) rounds: it scales
with the number of near pairs, not with batch x pairs. Pairs that are not near keep
`default`.

`dense=True` evaluates every item and masks the far ones, with no condition at all: what a
small batch wants on an accelerator, where each round's condition costs a device-to-host
round trip per step (core/control_flow.py, `dense_pairs`).

Everything is static-shaped and differentiable: the rounds are a `lax.fori_loop` with a
static trip count (a scan in reverse mode), the conditions are `lax.cond`, and the indices
are integers (no tangent). Called at the batch level, outside `vmap` (under vmap, a cond
would become a select and evaluate both branches). Only gathers, no scatter or sort
(jnp.nonzero and `.at[].set` are both scatters): XLA's CPU backend compiles a time loop
holding a scatter or sort op by op instead of whole (core/xla_flags.py).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp


__all__ = ["compacted_map", "packed_order", "default_capacity", "boxes_overlap", "MIN_CAPACITY", "CAPACITY_DIVISOR", "BOX_SLACK"]

# The buffer holds 1/CAPACITY_DIVISOR of the pairs, but at least MIN_CAPACITY (all of them
# when there are fewer). A round costs about its capacity times a search (the padding of a
# partly filled round included) and little more, so small rounds waste little: in the
# crush-law offset study at B = 256 (18 % of the pairs near on average), rounds of 16 pairs
# ran the study 7-11 % faster than rounds of 32, and rounds of 64 or 128 slower still
# (benchmarks/RESULTS.md, "The broad phase on components").
MIN_CAPACITY = 8
CAPACITY_DIVISOR = 16


# Added to the boxes' projected half-widths [m]: the test is on the same predicted state as
# the narrow phase, so this only absorbs round-off; 1 mm costs nothing in pairs searched.
BOX_SLACK = 1e-3


def boxes_overlap(r1, B1, r2, B2, slack=BOX_SLACK):
    """Whether the parallelepipeds {r + B y : |y_i| <= 1} of two bodies overlap (separating
    axis test: the 3 + 3 face normals and the 9 edge-direction cross products).

    r (..., 3) [m] centre; B (..., 3, 3) unit coordinates -> world offset (columns: the
    deformed semi-axis vectors, F diag(a)); the leading axes are pairs: call it on the whole
    batch, not under vmap (below). Returns (...) bool. Every contact shape lies in its unit box
    (|y_i| <= 1 on a gauge-1 surface), so pairs whose boxes are apart cannot touch. The half-width of a
    box along an axis n is sum_i |n . B[:, i]|; the boxes are apart when some axis has
    |n . (r2 - r1)| > width1 + width2 + slack |n|. Face normals of body k are the rows of
    B_k^-1 (any scale: the test is homogeneous in n). Two cars nose to tail 2 m apart have
    overlapping enclosing spheres but separate boxes: their narrow phase is skipped.
    """
    # Written on components, each an array over the pairs, not with jnp.cross and @ on (3,)
    # and (3, 3) arrays: XLA's CPU code fuses the whole test into elementwise loops vectorised
    # across the pairs. The stacked form vmapped became (pairs, 15, 3) arrays and batched 3x3
    # dot products, 20x slower (51 against 2.4 us for 256 pairs: benchmarks/RESULTS.md, "The
    # broad phase on components"); component-major arrays (3, 15, pairs) were as slow. Called
    # on the batch rather than vmapped, its ~900 operations trace once, not through two
    # batching levels (0.6 s of tracing more in a one-scenario run when vmapped).
    c1 = [tuple(B1[..., k, i] for k in range(3)) for i in range(3)]  # the columns of B1, component by component
    c2 = [tuple(B2[..., k, i] for k in range(3)) for i in range(3)]
    d = tuple(r2[..., k] - r1[..., k] for k in range(3))

    def cross(u, v):
        return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])

    def dot(u, v):
        return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]

    # rows of B_k^-1 up to the common factor 1/det (cofactors: no division, no singularity)
    axes = [cross(c1[1], c1[2]), cross(c1[2], c1[0]), cross(c1[0], c1[1]),
            cross(c2[1], c2[2]), cross(c2[2], c2[0]), cross(c2[0], c2[1])]
    axes += [cross(u, v) for u in c1 for v in c2]  # the 9 edge directions
    apart = jnp.zeros(r1.shape[:-1], bool)
    for n in axes:
        width = sum(jnp.abs(dot(n, c)) for c in c1) + sum(jnp.abs(dot(n, c)) for c in c2)
        apart = apart | (jnp.abs(dot(n, d)) > width + slack * jnp.sqrt(dot(n, n)))
    return ~apart


def default_capacity(n: int) -> int:
    """Static buffer size for `n` pairs (1 <= capacity <= n)."""
    return max(1, min(n, max(MIN_CAPACITY, n // CAPACITY_DIVISOR)))


def packed_order(mask, length: int):
    """(filled, idx): filled [N] int32 the true entries of mask [N] bool up to and including
    each; idx [length] int32 the indices of the true entries in order (idx[j]: the first i
    with filled[i] > j), N past the last one. Only a cumsum and a binary search: no scatter
    or sort (module docstring)."""
    filled = jnp.cumsum(mask.astype(jnp.int32))
    idx = jnp.searchsorted(filled, jnp.arange(1, length + 1, dtype=jnp.int32), side="left", method="scan")
    return filled, idx.astype(jnp.int32)


def compacted_map(fn, near, inputs, default, capacity: int | None = None, dense: bool = False):
    """out[i] = fn(inputs[i]) where near[i], else default[i].

    fn: a function of one item (a pytree without the leading axis) returning a pytree shaped
    like one item of `default`; near: [N] bool; inputs, default: pytrees with leaves [N, ...];
    capacity (static): pairs per round (default_capacity(N) if None). Returns `default`'s
    structure with leaves [N, ...]; fn is evaluated on ceil(count / capacity) * capacity items
    (padding items are gathered from item N - 1 and their results dropped); on an
    accelerator (core/control_flow.py) on all N items, masked.
    """
    def keep(o, v, mask):
        return jnp.where(mask.reshape(mask.shape + (1,) * (o.ndim - 1)), v.astype(o.dtype), o)

    if dense:
        return jax.tree.map(lambda o, v: keep(o, v, near), default, jax.vmap(fn)(inputs))
    n = near.shape[0]
    cap = default_capacity(n) if capacity is None else max(1, min(int(capacity), n))
    rounds = -(-n // cap)
    filled, idx = packed_order(near, rounds * cap)
    count = filled[-1]
    slot = filled - 1  # [N] the packed position of pair i (meaningful where near[i])

    # Each round writes its results, packed, into rows [k cap, (k + 1) cap) of a buffer of
    # rounds x cap items, and after the last round every near pair gathers its own row back,
    # one pass over the N items. (Each round gathering into and selecting over all N items
    # instead, with ~3 rounds a step, made the crush-law study's chunk 1.22x slower:
    # benchmarks/RESULTS.md, "One pass back from the packed buffer".)
    packed0 = jax.tree.map(lambda v: jnp.zeros((rounds * cap,) + v.shape[1:], v.dtype), default)

    def one_round(k, packed):
        def run(packed):
            sel = jax.lax.dynamic_slice(idx, (k * cap,), (cap,))
            y = jax.vmap(fn)(jax.tree.map(lambda v: v[jnp.minimum(sel, n - 1)], inputs))
            return jax.tree.map(lambda p, v: jax.lax.dynamic_update_slice_in_dim(p, v.astype(p.dtype), k * cap, 0),
                                packed, y)

        return jax.lax.cond(k * cap < count, run, lambda p: p, packed)

    packed = jax.lax.fori_loop(0, rounds, one_round, packed0)

    def merge(args):
        default, packed, near, slot = args
        back = jnp.clip(slot, 0, rounds * cap - 1)
        return jax.tree.map(lambda o, p: keep(o, p[back], near), default, packed)

    # In a conditional, whose operands and results XLA stores: selecting on `near` in the open,
    # XLA copied the producer of `near` (boxes_overlap's ~900 elementwise operations) into the
    # select of every result leaf and on into their consumers, which made the offset example's
    # steps 4x slower. A step with no near pair skips the pass.
    return jax.lax.cond(count > 0, merge, lambda args: args[0], (default, packed, near, slot))
