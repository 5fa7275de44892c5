"""Cost of one call of MEDUSA's contact search (`medusa_search`) on recorded hard inputs.

    python benchmarks/search_cost.py [--vmap] [--counts] [--hlo FILE] [--json out.json]

The 64 detect_contact() inputs of tests/data/offset_pushing_calls.npz (the offset example
after 1.05 s, when the rear car pushes the front one: every call runs the full search) are
given one at a time to `jax.jit(detect_contact)` (with --vmap: `jax.jit(jax.vmap(...))` on
a batch of one, as a vmapped stage calls it). Prints one JSON line: compile seconds (wall,
CPU), CPU milliseconds per call (best of 3 passes over the 64 inputs), the load average.
--counts: also the number of minimize() calls, BFGS iterations (line searches) and dist()
evaluations per call, counted with jax.debug.callback in a second, instrumented compile.
--hlo FILE: write the optimized HLO of the compiled search to FILE (to count the fusions
and copies of each loop body: XLA:CPU pays per operation and per loop iteration).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxmedusa.contact.shapes.medusa_search as MS
import jaxmedusa.contact.shapes.medusa_search_minimize as MM

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "offset_pushing_calls.npz"
NAMES = ("state", "r1", "F1", "A", "r2", "F2", "B")


def _inputs(vmap: bool):
    d = np.load(DATA)
    args = [jnp.asarray(d[k]) for k in NAMES]
    return [[a[i:i + 1] if vmap else a[i] for a in args] for i in range(args[0].shape[0])]


def time_calls(vmap: bool = False, hlo: str | None = None) -> dict:
    calls = _inputs(vmap)
    f = jax.jit(jax.vmap(MS.detect_contact) if vmap else MS.detect_contact)
    w0, c0 = time.perf_counter(), time.process_time()
    comp = f.lower(*calls[0]).compile()
    out = dict(compile_wall=time.perf_counter() - w0, compile_cpu=time.process_time() - c0, vmap=vmap,
               load_before=os.getloadavg()[0])
    if hlo:
        Path(hlo).write_text(comp.as_text())
    jax.block_until_ready([comp(*c) for c in calls])
    passes = []
    for _ in range(3):
        c0 = time.process_time()
        for c in calls:
            jax.block_until_ready(comp(*c))
        passes.append(time.process_time() - c0)
    out.update(cpu_ms_per_call=min(passes) / len(calls) * 1e3, passes_cpu=passes, load_after=os.getloadavg()[0])
    return out


def count_calls() -> dict:
    """minimize() calls, BFGS iterations and dist() evaluations per detect_contact() call."""
    seen = collections.Counter()

    def tick(name):
        return lambda *_: seen.update([name])

    minimize, linsearch, dist = MS.minimize, MM.linsearch, MS.dist
    try:
        MS.minimize = lambda *a, **k: (jax.debug.callback(tick("minimize")), minimize(*a, **k))[1]
        MM.linsearch = lambda *a: (jax.debug.callback(tick("bfgs_iterations")), linsearch(*a))[1]
        MS.dist = lambda *a: (jax.debug.callback(tick("dist")), dist(*a))[1]
        f = jax.jit(MS.detect_contact)
        calls = _inputs(False)
        for c in calls:
            jax.block_until_ready(f(*c))
    finally:
        MS.minimize, MM.linsearch, MS.dist = minimize, linsearch, dist
    return {k: v / len(calls) for k, v in seen.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vmap", action="store_true")
    ap.add_argument("--counts", action="store_true")
    ap.add_argument("--hlo", default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    res = dict(version=MS.__file__, xla_flags=os.environ.get("XLA_FLAGS", ""), **time_calls(a.vmap, a.hlo))
    if a.counts:
        res["per_call"] = count_calls()
    print(json.dumps(res), flush=True)
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    main()
