"""Analysis of runs: outcome metrics per scenario and vehicle (outcomes.py), contact
episodes per pair (events.py), both in-run trackers; and the static equilibrium of a
vehicle model (equilibrium.py)."""
from jaxmedusa.analysis.equilibrium import Equilibrium, solve_equilibrium, with_equilibrium
from jaxmedusa.analysis.events import ContactEventTracker, Episodes, episodes_table
from jaxmedusa.analysis.outcomes import VEHICLE_METRICS, Outcomes, outcome_arrays, summarize_batch

__all__ = ["Equilibrium", "solve_equilibrium", "with_equilibrium", "ContactEventTracker", "Episodes",
           "episodes_table", "VEHICLE_METRICS", "Outcomes", "outcome_arrays", "summarize_batch"]
