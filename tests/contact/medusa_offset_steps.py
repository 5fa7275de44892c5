"""Print the offset example's attempted steps near contact under medusa_search, as the
original program's trace does (tests/data/offset_contact_trace.txt): one JSON line
[t, dt, contact, accepted, counts before, counts after] per attempt made while a pair is in
contact or the step size is held (main.c's just_reduced >= 0), from 1.0099 s to `t_end`
(argv[1]). The counts are the StepCounts tracker's (analysis/step_counts.py, COUNT_NAMES
order) since 1.0099 s, updated in the same jitted function as the step.

Run by tests/contact/test_medusa_search.py in a subprocess, so that XLA_FLAGS (no fused
multiply-adds, as the original program's build) apply before JAX starts.
"""
import json
import sys
from dataclasses import replace
from pathlib import Path

import jax
import jax.numpy as jnp

from jaxmedusa.analysis.step_counts import COUNT_NAMES, StepCounts
from jaxmedusa.build import build_batch
from jaxmedusa.core.pytree import replace as tree_replace
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.run import make_settings
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.solver.step import scenario_step

EXAMPLES = Path(__file__).resolve().parents[2] / "studies" / "medusa"


def main(t_end: float):
    scenario, config = load_scenario(EXAMPLES / "offset" / "scenario.toml")
    # no pair is a candidate before 1.01 s, so the shape does not matter up to 1.0099 s: the
    # analytic one compiles in seconds
    pre = make_settings(config, end_time=1.0099, save_every=0.5, contact_geometry="superellipsoid")
    batch, state0 = build_batch([scenario], dt=pre.dt)
    state = jax.tree.map(lambda x: x[0], simulate(batch, state0, pre, record=False).final)
    state = tree_replace(state, pairs=tree_replace(state.pairs, warm=jnp.zeros_like(state.pairs.warm)))
    settings = replace(pre, end_time=10.0, contact_geometry="medusa_search")
    item = jax.tree.map(lambda x: x[0], batch)
    tracker = StepCounts()

    def counted(st, m):
        st, info = scenario_step(item, st, settings)
        return st, info, tracker.update(m, item, st, info)

    step = jax.jit(counted)
    counts = tracker.init(item, state)
    while float(state.clock.t) < t_end:
        t, dt, hold = float(state.clock.t), float(state.clock.dt), int(state.clock.hold)
        before = [int(getattr(counts, k)) for k in COUNT_NAMES]
        state, info, counts = step(state, counts)
        touching = bool(info.pairs.touching[0])
        if touching or hold >= 0:
            after = [int(getattr(counts, k)) for k in COUNT_NAMES]
            print(json.dumps([t, dt, touching, bool(info.accepted), before, after]), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]))
