"""Step-size controls: whether a proposed step is taken, and the next dt, per scenario.

A control is a `StepControl` registered in STEP_CONTROLS under the name that
`Settings.step_control` gives:

- "medusa": main.c's rule. A step whose predicted state is in contact is redone with dt
  divided by `shrink` (1.4641 = 1.1^4) unless dt is already below `dt_min` (5e-6 s); after
  a shrink dt is held for `hold_steps` (100) accepted steps, then grows by `grow` (1.1) per
  accepted step without contact, up to the initial dt. Runs end when t > end_time
  (main.c's `while (t <= t2)`).
- "constant": every step is taken with the initial dt; a run takes round(end_time / dt)
  steps (it ends when t >= end_time - dt/2, so round-off in t cannot add a step).

Either control's `running` is also false once the run's rest has come under
end_condition = "rest" (solver/end_condition.py), so that every loop stops there.

Room for an error-based control: `decide` receives the clock and what the step saw
(`touching`); an embedded error estimate would be one more field of `StepProposal`, filled
by solver.step, and a control "pi" would accept when error <= 1 and scale dt by
(1/error)^(1/order) within bounds. Adding a control: a StepControl object plus one
`STEP_CONTROLS.register` line below.

Everything is per scenario (no batch axis) and branch-free; the name resolves once per
compilation, outside traced code.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import jax.numpy as jnp

from jaxmedusa.core.params import Settings
from jaxmedusa.core.registry import Registry
from jaxmedusa.solver.end_condition import at_rest

__all__ = ["StepControl", "StepProposal", "STEP_CONTROLS", "MEDUSA", "CONSTANT", "medusa_decide", "constant_decide",
           "SMOOTH_LAW_STEP"]


class StepProposal(NamedTuple):
    """What a step attempt saw, for the control to judge (per scenario)."""

    touching: jnp.ndarray  # () bool: some pair is in contact on the predicted state


@dataclass(frozen=True)
class StepControl:
    """decide(clock, proposal, settings) -> (accept () bool, dt_next () [s], hold_next () int32):
    whether to take the attempted step, the step size of the next attempt and the hold
    counter (main.c `just_reduced`). running(clock, settings) -> () bool: whether the
    scenario still has steps to take before settings.end_time (and is not at rest)."""

    name: str
    decide: Callable
    running: Callable


def medusa_decide(clock, proposal: StepProposal, s: Settings):
    """main.c `integrate()`: shrink and redo on contact above DT_MIN; hold; then grow by 1.1."""
    dt, touching = clock.dt, proposal.touching
    accept = jnp.logical_not(touching) | (dt < s.dt_min)
    # after an accepted step without contact, grow dt by `grow` once `just_reduced` has
    # counted hold_steps down; a predicted contact above DT_MIN shrinks dt and holds it.
    grow = jnp.logical_not(touching) & (clock.hold < 0) & (dt < s.dt)
    dt_next = jnp.where(accept, jnp.where(grow, dt * s.grow, dt), dt / s.shrink)
    hold_next = jnp.where(accept, clock.hold - 1, s.hold_steps)
    return accept, dt_next, hold_next


def medusa_running(clock, s: Settings):
    """main.c `while (t <= t2)`, and not yet at rest (end_condition "rest")."""
    return (clock.t <= s.end_time) & ~at_rest(clock, s)


def constant_decide(clock, proposal: StepProposal, s: Settings):
    """Every step is taken; dt and the hold counter never change."""
    return jnp.asarray(True), clock.dt, clock.hold


def constant_running(clock, s: Settings):
    """Steps of a fixed dt: the last one ends at end_time (within dt/2 of round-off); not
    yet at rest (end_condition "rest")."""
    return (clock.t < s.end_time - 0.5 * clock.dt) & ~at_rest(clock, s)


# Study defaults of the smooth contact laws (forces continuous in the state, unlike MEDUSA's
# multipliers): a constant dt instead of MEDUSA's shrink-on-contact rule, which only the
# "medusa" law needs. 4e-4 s keeps a factor 4 below the explicit scheme's stability limit of
# the vehicle itself (1.6e-3 s diverges before any contact) and every outcome within 0.5 % of
# dt = 5e-5 s (docs/numerics.md, "Step size of the smooth laws"):
# - physical: the report's offset example, 3 s (worst: the peak penetration, 0.38 %);
# - crush: 8 collisions of studies/offset.toml and the 56 and 8 km/h barrier studies
#   (worst: the striking car's final y after the hardest hit, 0.40 %; in the barriers the
#   pulse duration, 0.19 %, a sum of whole steps; the crash pulse's CFC 60 peak 0.05 %;
#   5e-4 s already gives 0.51 %; benchmarks/crush_step_size.py).
# study.parse applies them when a study's [simulation] names neither dt nor step_control.
SMOOTH_LAW_STEP = {"physical": dict(step_control="constant", dt=4e-4),
                   "crush": dict(step_control="constant", dt=4e-4)}

MEDUSA = StepControl(name="medusa", decide=medusa_decide, running=medusa_running)
CONSTANT = StepControl(name="constant", decide=constant_decide, running=constant_running)

STEP_CONTROLS: Registry[StepControl] = Registry("step control")
STEP_CONTROLS.register("medusa", MEDUSA)  # main.c's shrink-on-contact rule (the default)
STEP_CONTROLS.register("constant", CONSTANT)  # fixed dt, every step taken
