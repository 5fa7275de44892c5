"""Time stepping: the step (eq. 1.52), step controls, the one loop, in-run trackers.

step.py advances one scenario by one attempt (predict -> contact stage -> vehicle rates ->
update -> step control); step_control.py holds STEP_CONTROLS ("medusa", "constant");
simulate.py is the one batched loop, forward (while_loop) or checkpointed (reverse mode);
trackers.py defines the in-run metric interface.
"""
from jaxmedusa.solver.simulate import (ADJOINTS, Samples, SimResult, advance, finish, init_metrics, simulate,
                                       simulate_fixed)
from jaxmedusa.solver.step import StepInfo, predict, scenario_step
from jaxmedusa.solver.step_control import STEP_CONTROLS, StepControl, StepProposal
from jaxmedusa.solver.trackers import Tracker

__all__ = ["simulate", "simulate_fixed", "advance", "finish", "init_metrics", "Samples", "SimResult", "ADJOINTS",
           "StepInfo", "predict", "scenario_step", "STEP_CONTROLS", "StepControl", "StepProposal", "Tracker"]
