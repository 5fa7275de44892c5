"""Whether data-dependent control flow pays: on a CPU yes, on an accelerator no.

On XLA's CPU backend a `lax.cond`, or a `while_loop` whose exit depends on the data, is a
branch in the compiled time loop: skipping work (pairs that are far apart, searches that
have converged) saves time. On a GPU each evaluation of such an op makes the host read a
flag from the device (a device-to-host copy and a synchronisation, ~10 us), and the
kernels in between are tiny. Measured on an NVIDIA H200 (benchmarks/RESULTS.md, "GPU"), a
step of the offset study with contact cost 1.1 ms at batch 64 and 1.8 ms at batch 10,240,
against 48 us without contact: the contact stage's conditions and search loops, not its
arithmetic. There it is faster to evaluate every pair and to run every iteration, masking
the ones that are not needed, so that a step has no condition but the time loop's own.

`branchless()` is the switch, read when a function is traced: False on a CPU, True on a
GPU or TPU. `JAXMEDUSA_BRANCHLESS=1` (or `0`) overrides it, so that tests run the
accelerator path on a CPU; the executable cache keys on it (core/executable_cache.py).
Both paths give the same answers up to rounding (tests/contact/test_branchless.py).
"""
from __future__ import annotations

import os

import jax

__all__ = ["branchless", "ENV"]

ENV = "JAXMEDUSA_BRANCHLESS"


def branchless() -> bool:
    """True when the code being traced should avoid data-dependent conditions and loops."""
    forced = os.environ.get(ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    return jax.default_backend() != "cpu"
