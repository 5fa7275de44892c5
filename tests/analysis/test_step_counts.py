"""Step and contact counts (analysis/step_counts.py): the tracker on hand-made attempts, and
in runs against step counts derived without jaxmedusa (round(T / dt) for a constant step;
main.c's `while (t <= t2) t += dt` loop in plain Python for MEDUSA's rule before contact).
The counts against the original program's trace, with medusa_search, are checked in
tests/contact/test_medusa_search.py (slow)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import pyarrow.parquet as pq
import pytest

from jaxmedusa.analysis.step_counts import COUNT_NAMES, StepCounts, counts_dict
from jaxmedusa.build import build_batch
from jaxmedusa.contact.crash import CrashInfo
from jaxmedusa.contact.types import PairInfo
from jaxmedusa.core.params import Settings
from jaxmedusa.core.pytree import replace
from jaxmedusa.core.scenario import RoadSpec, Scenario, VehicleSpec
from jaxmedusa.core.status import Status
from jaxmedusa.io.scenario_toml import load_scenario
from jaxmedusa.run import run_scenario
from jaxmedusa.solver.simulate import advance, simulate
from jaxmedusa.solver.step import StepInfo

from helpers import EXAMPLES

TRACKER = StepCounts()
INIT, UPDATE = jax.jit(TRACKER.init), jax.jit(TRACKER.update)


def _info(accepted, touching, wall=False):
    """A hand-made StepInfo of one attempt: one pair, and one vehicle's barrier contact."""
    pairs = PairInfo(touching=jnp.asarray([touching]), phi1=jnp.zeros(1), force=jnp.zeros(1), gamma=jnp.zeros((1, 2)))
    crash = CrashInfo(touching=jnp.asarray([wall, False]), crush=jnp.zeros(2), residual=jnp.zeros(2),
                      power=jnp.zeros(2), partner=jnp.zeros(2, jnp.int32), load=jnp.zeros(2))
    return StepInfo(accepted=jnp.asarray(accepted), dt=jnp.asarray(1e-3), contact_dv=jnp.zeros((2, 3)), pairs=pairs,
                    crash=crash)


def test_hand_made_attempts(models):
    """A sequence of attempts whose counts are read off by hand (comments: accepted /
    rejected / accepted in contact / runs / episodes after each)."""
    vehicles = [VehicleSpec(model=0, x=x, y=0.0, orientation=0.0, speed=20.0) for x in (0.0, 4.5)]
    sc = Scenario(name="t", models=[models[0]], road=RoadSpec(), vehicles=vehicles)
    batch, state = build_batch([sc])
    b, s = jax.tree.map(lambda x: x[0], (batch, state))
    m = INIT(b, s)
    # (dt [s] the clock advances by if accepted, accepted, pair touching, barrier touching, status)
    attempts = [
        (1e-3, True, False, False, Status.OK),  # 1 0 0 0 0
        (1e-3, False, True, False, Status.OK),  # rejected: 1 1 0 0 0
        (1e-3, False, True, False, Status.OK),  # rejected: 1 2 0 0 0
        (1e-3, True, True, False, Status.OK),  # run 1, episode 1: 2 2 1 1 1
        (1e-3, True, True, False, Status.OK),  # the same run: 3 2 2 1 1
        (1e-3, True, False, False, Status.OK),  # run ends: 4 2 2 1 1
        (1e-3, True, True, False, Status.OK),  # run 2, 2 ms after the last contact: 5 2 3 2 1
        (2e-2, True, False, False, Status.OK),  # 20 ms without contact: 6 2 3 2 1
        (1e-3, True, False, True, Status.OK),  # a barrier contact: run 3, episode 2: 7 2 4 3 2
        (1e-3, False, True, False, Status.NAN),  # a failed attempt is not a rejection: 7 2 4 3 2
    ]
    for dt, accepted, touching, wall, status in attempts:
        clock = s.clock
        s = replace(s, clock=replace(clock, t=clock.t + (dt if accepted else 0.0), status=jnp.asarray(int(status))))
        m = UPDATE(m, b, s, _info(accepted, touching, wall))
    got = {k: int(v) for k, v in counts_dict(m).items()}
    assert got == dict(accepted_steps=7, rejected_steps=2, contact_steps=4, contact_runs=3, episodes=2)
    strict = StepCounts(episode_gap=0.0)  # every run a new episode
    m = strict.init(b, s)
    for dt, accepted, touching, wall, status in attempts:
        s = replace(s, clock=replace(s.clock, t=s.clock.t + (dt if accepted else 0.0)))
        m = strict.update(m, b, s, _info(accepted, touching, wall))
    assert int(m.episodes) == int(m.contact_runs) == 3


def test_constant_step_counts_under_both_adjoints():
    """The straight example with a constant step: exactly round(T / dt) accepted steps and
    none rejected, in the forward (while loop) and the checkpointed (masked scan) loop, and
    through jax.grad of the checkpointed run; the scan's masked no-op steps add nothing."""
    scenario, _ = load_scenario(EXAMPLES / "straight")
    settings = Settings(end_time=0.02, dt=5e-5, step_control="constant")
    batch, state = build_batch([scenario], dt=settings.dt)
    expected = dict(accepted_steps=round(0.02 / 5e-5), rejected_steps=0, contact_steps=0, contact_runs=0, episodes=0)
    fwd = simulate(batch, state, settings, tracker=TRACKER, record=False)
    assert {k: int(v[0]) for k, v in counts_dict(fwd.metrics).items()} == expected
    # 50 more scan steps than needed: they are masked (the scenario is done) and not counted
    ck = simulate(batch, state, settings, tracker=TRACKER, record=False, adjoint="checkpointed", max_steps=450)
    assert {k: int(v[0]) for k, v in counts_dict(ck.metrics).items()} == expected

    def final_x(speed):
        vs = state.vehicles
        st = replace(state, vehicles=replace(vs, v=vs.v.at[0, 0, 0].set(speed)))
        res = simulate(batch, st, settings, tracker=TRACKER, record=False, adjoint="checkpointed")
        return res.final.vehicles.r[0, 0, 0], res.metrics

    grad, metrics = jax.grad(final_x, has_aux=True)(22.0)
    # free rolling on the flat plane: x = x0 + v t, so dx/dv = T (the tires' lag and the
    # suspension move x by far less than the 1e-3 allowed)
    assert float(grad) == pytest.approx(0.02, rel=1e-3)
    assert {k: int(v[0]) for k, v in counts_dict(metrics).items()} == expected


def _main_c_steps(end_time: float, dt: float) -> int:
    """main.c integrate() without contact: `while (t <= t2) { ...; t += dt; }`, in doubles."""
    t, n = 0.0, 0
    while t <= end_time:
        t += dt
        n += 1
    return n


def test_run_counts_medusa_rule_before_contact(tmp_path, monkeypatch):
    """`jaxmedusa run` of the offset example to 1.0 s (contact begins at 1.01 s): MEDUSA's
    rule takes main.c's number of steps (T / dt, plus one when the summed t ends at or below
    T), rejects none; the counts are in RunOutput and the trajectory table's metadata; and
    the counting tracker compiles the step loop once (strongly typed initial counts)."""
    import json

    from jaxmedusa.core import executable_cache

    # the plain jitted loop, whose compilations advance._cache_size() counts: with the test
    # run's executable cache on (tests/conftest.py) a program another test stored is loaded
    # from disk instead, and advance compiles nothing
    monkeypatch.setitem(executable_cache._state, "folder", None)
    advance.clear_cache()
    out = run_scenario(EXAMPLES / "offset", end_time=1.0, save_every=0.1, out_root=tmp_path,
                       contact_geometry="superellipsoid")  # the rule is the shape's business only after contact
    assert advance._cache_size() == 1  # one compiled loop for every chunk of the run
    n = _main_c_steps(1.0, 5e-5)
    assert n in (20000, 20001)  # T / dt, or one more if the summed t ends just below T
    assert out.counts == dict(accepted_steps=n, rejected_steps=0, contact_steps=0, contact_runs=0, episodes=0)
    assert int(out.result.final.clock.steps[0]) == n
    meta = pq.read_schema(tmp_path / "offset" / "trajectory.parquet").metadata
    assert json.loads(meta[b"jaxmedusa.counts"]) == out.counts
    assert tuple(out.counts) == COUNT_NAMES

