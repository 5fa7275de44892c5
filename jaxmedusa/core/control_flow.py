"""Whether data-dependent control flow pays: on a CPU yes, on an accelerator no.

On XLA's CPU backend a `lax.cond`, or a `while_loop` whose exit depends on the data, is a
branch in the compiled time loop: skipping work (pairs that are far apart, searches that
have converged) saves time. On a GPU each evaluation of such an op makes the host read a
flag from the device (a device-to-host copy and a synchronisation, ~10 us), and the
kernels in between are tiny. Measured on an NVIDIA H200 (benchmarks/RESULTS.md, "GPU"), a
step of the offset study with contact cost 1.1 ms at batch 64 and 1.8 ms at batch 10,240,
against 48 us without contact: the contact stage's conditions and search loops, not its
arithmetic. For batches of up to DENSE_MAX_PAIRS pairs it is faster to do more arithmetic
without conditions: evaluate the narrow phase for every pair, masking the far ones
(contact/broad_phase.py, `dense`), and run all its iterations, masking those after
convergence (contact/shapes/narrow_phase.py, `unrolled`). Measured on the H200, offset
study, 3 s: batch 64 8.57 -> 3.41 s, batch 1024 10.0 -> 4.68 s; but batch 10,240 13.3 ->
16.8 s, where evaluating every pair costs more than the conditions save, so large batches
keep the compacted buffer. (A buffer with one condition per step instead of one per round,
tried in between, compiled for 89 s and ran batch 64 in 9.9 s: not kept.)

`branchless()` is the switch, read when a function is traced: False on a CPU, True on a
GPU or TPU. `JAXMEDUSA_BRANCHLESS=1` (or `0`) overrides it, so that tests run the
accelerator path on a CPU; the executable cache keys on it (core/executable_cache.py).
`dense_pairs(n)` applies it to a batch of n pairs. Both paths give the same answers up to
rounding (tests/contact/test_branchless.py).
"""
from __future__ import annotations

import os

import jax

__all__ = ["branchless", "dense_pairs", "ENV", "DENSE_MAX_PAIRS"]

ENV = "JAXMEDUSA_BRANCHLESS"
# Largest batch of pairs for the branchless contact stage: measured faster at 64 and 1,024
# pairs, slower at 10,240 (module docstring); the crossover between is not measured.
DENSE_MAX_PAIRS = 4096


def branchless() -> bool:
    """True when the code being traced should avoid data-dependent conditions and loops."""
    forced = os.environ.get(ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    return jax.default_backend() != "cpu"


def dense_pairs(n_pairs: int) -> bool:
    """Whether a contact stage of `n_pairs` pairs (batch x pairs, static) runs branchless."""
    return branchless() and n_pairs <= DENSE_MAX_PAIRS
