"""MEDUSA's step-size control (main.c integrate()) in a mixed batch: one scenario in contact,
one free. Each keeps its own dt; the contact one follows main.c's rules step by step and
the original program's numbers (tests/data/offset_trace_first_contact.txt, the rebuilt C
program on the report's offset example): 7 shrinks by 1.4641 from 5e-5 s to 3.467167475e-6 s
(the first value below DT_MIN = 5e-6 s), 102 accepted steps at that dt, then 28 growths by
1.1 back to 5e-5 s.

The trace reader and the `DtHistory` tracker live in tests/step_trace.py (shared).
"""
from __future__ import annotations

import numpy as np
import pytest

from jaxmedusa.build import build_batch
from jaxmedusa.core.params import Settings
from jaxmedusa.solver.simulate import simulate
from jaxmedusa.core.status import Status

from step_trace import (HOLD_STEPS, SMALLEST, TRACE, DtHistory, Steps, check_main_c_rules, far_apart,  # noqa: F401
                        history, rear_end, trace_steps)


def test_the_original_trace_follows_the_rules():
    """The trace excerpt itself: main.c's rules, its smallest dt and its hold, which the
    simulation tests below compare with."""
    rows = trace_steps()
    t, dt, acc, touch = (np.array(c) for c in zip(*rows))
    burst = slice(0, len(rows) - 1)  # consecutive attempts (the trace prints every attempt
    # while just_reduced >= 0 or in contact); the last line is the next contact, 7.2 ms on
    check_main_c_rules(dt[burst], acc[burst], touch[burst], Settings(), rtol=1e-9)
    assert dt.min() == pytest.approx(SMALLEST, rel=1e-9)
    assert SMALLEST == pytest.approx(5e-5 / 1.4641**7, rel=1e-9)
    # Unprinted between the last two lines: the steps at the smallest dt with just_reduced < 0,
    # then the growth, then steps of 5e-5 s. Only 102 steps at the smallest dt in all (101
    # printed) followed by 28 growths make the gap a whole number of 5e-5 s steps.
    printed = int(np.sum(dt[burst] == dt.min()))
    assert printed == HOLD_STEPS - 1

    def n_nominal(n_hold):
        after = t[-2] + dt.min() * (n_hold - printed + 1) + sum(dt.min() * 1.1**k for k in range(1, 29))
        return (t[-1] - after) / 5e-5
    # the times are printed to 1e-9 s, i.e. 2e-5 of a step
    assert abs(n_nominal(HOLD_STEPS) - round(n_nominal(HOLD_STEPS))) < 1e-3
    assert abs(n_nominal(HOLD_STEPS - 1) - round(n_nominal(HOLD_STEPS - 1))) > 0.05
    assert abs(n_nominal(HOLD_STEPS + 1) - round(n_nominal(HOLD_STEPS + 1))) > 0.05


@pytest.fixture(scope="module")
def mixed(models):
    settings = Settings(end_time=0.06, save_every=0.01, tires=False, contact_geometry="superellipsoid")
    both = simulate(*build_batch([rear_end(models[0]), far_apart(models[0])], dt=settings.dt), settings,
                    tracker=DtHistory())
    return both, settings


def test_each_scenario_keeps_its_own_step_size(mixed):
    res, settings = mixed
    assert list(np.asarray(res.final.clock.status)) == [Status.OK, Status.OK]
    dt, acc, touch = history(res, 1)
    # the free pair: every attempt accepted at the nominal dt, although its neighbour in the
    # batch shrinks its own dt at the same time
    assert np.all(acc) and not np.any(touch)
    assert np.all(dt == settings.dt)
    # 0.06 s of 5e-5 s steps (t accumulates to just below 0.06, so one more)
    assert int(res.final.clock.steps[1]) in (1200, 1201)
    dt0, acc0, _ = history(res, 0)
    assert np.sum(~acc0) > 0 and dt0.min() < settings.dt_min


def test_contact_scenario_follows_main_c_and_the_original_trace(mixed):
    res, settings = mixed
    dt, acc, touch = history(res, 0)
    assert check_main_c_rules(dt, acc, touch, settings) >= 7
    # the smallest dt: 5e-5 / 1.4641^7, the first below DT_MIN, as in the original program
    assert dt.min() == pytest.approx(SMALLEST, rel=1e-9)
    assert settings.dt_min / 1.4641 <= dt.min() < settings.dt_min
    # the first burst: 7 rejections, then the smallest dt for 102 accepted steps if no new
    # contact comes (MEDUSA's law kicks the bodies apart), then 28 growths by 1.1 to 5e-5 s
    first = int(np.argmax(~acc))  # the first rejection
    k = int(np.argmax(dt < settings.dt_min))  # the first step at the smallest dt
    assert np.sum(~acc[first:k]) == 7  # (an attempt without contact may come in between)
    np.testing.assert_allclose(np.unique(dt[first:k]), settings.dt / 1.4641 ** np.arange(7)[::-1], rtol=1e-12)
    assert dt[k] == pytest.approx(SMALLEST, rel=1e-9) and acc[k]
    run = k
    while dt[run] == dt[k]:
        run += 1
    # main.c: the hold (just_reduced = 100 after the last rejection) runs out HOLD_STEPS - 1
    # accepted steps after the first step at the smallest dt; dt then grows on the first
    # accepted step without contact. A new touch at dt < DT_MIN is accepted and only delays
    # the growth: the run at the smallest dt ends exactly there (clean burst: run - k = HOLD_STEPS).
    j = k + HOLD_STEPS - 1
    while touch[j]:
        j += 1
    assert run == j + 1 and np.all(acc[k:run])
    # the growth: 28 steps x 1.1 back to 5e-5 s when no contact comes (a contact in them
    # starts another burst, whose steps check_main_c_rules has replayed above)
    if not np.any(touch[run:run + 28]):
        np.testing.assert_allclose(dt[run:run + 28] / dt[run - 1:run + 27], 1.1, rtol=1e-12)
        assert dt[run + 27] == pytest.approx(settings.dt, rel=1e-12) and dt[run + 28] == dt[run + 27]


def test_contact_scenario_in_the_batch_equals_its_solo_run(mixed, models):
    res, settings = mixed
    # one scenario alone (batch of 2 copies keeps the compiled shapes): bitwise the same run
    solo = simulate(*build_batch([rear_end(models[0]), rear_end(models[0])], dt=settings.dt), settings,
                    tracker=DtHistory())
    for name in ("r", "v", "F", "W"):
        np.testing.assert_array_equal(np.asarray(getattr(res.final.vehicles, name)[0]),
                                      np.asarray(getattr(solo.final.vehicles, name)[0]))
    np.testing.assert_array_equal(np.asarray(res.metrics.dt[0]), np.asarray(solo.metrics.dt[0]))
