"""main.c's step-size control as seen in the original program's trace, and a tracker that
records every attempted step (shared by tests/solver and tests/contact).

`DtHistory` is a simulate() tracker that records every attempted step of a scenario.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
import pytest

from jaxmedusa.core.params import Settings
from jaxmedusa.core.scenario import Scenario

from helpers import single

TRACE = Path(__file__).resolve().parent / "data" / "offset_trace_first_contact.txt"
SMALLEST = 3.467167475e-06  # [s] the trace's dt after 7 rejections (checked below)
HOLD_STEPS = 102  # accepted steps at the smallest dt (derived from the trace below)


def trace_steps():
    """(t, dt, accepted, contact) of every STEP line of the original program's trace."""
    rows = []
    for line in TRACE.read_text().splitlines():
        if line.startswith("STEP"):
            t, dt = (float(re.search(rf"\b{k}=(\S+)", line)[1]) for k in ("t", "dt"))
            rows.append((t, dt, line.endswith("accept"), "contact=1" in line))
    return rows


class Steps(NamedTuple):
    n: jnp.ndarray  # () int32 attempts recorded
    dt: jnp.ndarray  # (N,) [s]
    accepted: jnp.ndarray  # (N,) bool
    touching: jnp.ndarray  # (N,) bool, any pair in contact on the predicted state


@dataclass(frozen=True)
class DtHistory:
    """Records (dt, accepted, touching) of the first `size` attempted steps."""

    size: int = 2048

    def init(self, batch_item, state_item) -> Steps:
        return Steps(jnp.zeros((), jnp.int32), jnp.zeros((self.size,)), jnp.zeros((self.size,), bool),
                     jnp.zeros((self.size,), bool))

    def update(self, m: Steps, batch_item, state_item, info) -> Steps:
        at = jnp.arange(self.size) == m.n
        touching = jnp.any(info.pairs.touching)
        return Steps(m.n + 1, jnp.where(at, info.dt, m.dt), jnp.where(at, info.accepted, m.accepted),
                     jnp.where(at, touching, m.touching))


def history(res, b):
    n = min(int(res.metrics.n[b]), int(res.metrics.dt.shape[1]))
    return (np.asarray(res.metrics.dt[b, :n]), np.asarray(res.metrics.accepted[b, :n]),
            np.asarray(res.metrics.touching[b, :n]))


def check_main_c_rules(dt, accepted, touching, settings: Settings, rtol=1e-12):
    """Replays main.c's rules on a recorded history: a predicted contact with dt >= DT_MIN
    rejects the step and divides dt by 1.4641, setting just_reduced = 100; an accepted step
    decrements it and, without contact and once it is below 0, multiplies dt by 1.1 while
    dt < the nominal dt. Returns the number of rejections. rtol: 1e-12 for the simulation
    (a product of a few roundings), 1e-9 for the trace (printed to 10 digits)."""
    hold = -1
    for k in range(len(dt) - 1):
        if not accepted[k]:
            assert touching[k] and dt[k] >= settings.dt_min, k
            assert dt[k + 1] == pytest.approx(dt[k] / 1.4641, rel=rtol), k
            hold = 100
        else:
            assert not (touching[k] and dt[k] >= settings.dt_min), k
            grow = (not touching[k]) and hold < 0 and dt[k] < settings.dt
            assert dt[k + 1] == pytest.approx(dt[k] * 1.1 if grow else dt[k], rel=rtol), k
            hold -= 1
    return int(np.sum(~accepted))


def rear_end(model, gap=0.05, offset=0.4):
    """Vehicle 1 (22 m/s) closes on vehicle 2 (20 m/s), `gap` m between the bumpers."""
    a = single(model, speed=22.0).vehicles[0]
    b = replace(a, x=model.contact_dims[0] + gap, y=offset, speed=20.0)
    return Scenario("rear-end", [model], [a, b])


def far_apart(model):
    """The same two cars 50 m apart laterally: never a contact candidate."""
    sc = rear_end(model)
    return replace(sc, name="free", vehicles=[sc.vehicles[0], replace(sc.vehicles[1], y=50.0)])
