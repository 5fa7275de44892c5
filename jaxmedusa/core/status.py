"""Scenario status: one enumeration, stored as int32 in the state and in output tables.

`Status.OK` (0) is success; every other value says why a scenario stopped. A failed
scenario keeps its last good state; the others in its batch run on. `label` is the short
name written to tables (`status_name` column) and `message` the sentence the CLI prints.

Not every status other than OK is a failure: `NOT_AT_REST` (a run with end_condition = "rest"
that reached its end_time limit while some vehicle still moved) is a complete run whose
state and metrics are good; only the rest it was asked to reach did not come. `failed`
says which statuses are failures (`Status.failed`, `is_failure` for stored codes).
"""
from __future__ import annotations

from enum import IntEnum

__all__ = ["Status", "status_label", "is_failure", "NOT_FAILURES"]


class Status(IntEnum):
    """Why a scenario stopped (0: it did not). Values are stored in `ScenarioClock.status`."""

    OK = 0
    NAN = 1
    OFF_ROAD = 2
    CONTACT_NOT_CONVERGED = 3
    NOT_AT_REST = 4  # end_condition "rest": end_time came first (not a failure: NOT_FAILURES)
    ENERGY_GAIN = 10  # set after the run (jaxmedusa.run): energy beyond the drivers' work; the run was not stopped

    @property
    def label(self) -> str:
        """Short name used in tables and summaries, e.g. "off_road"."""
        return self.name.lower()

    @property
    def message(self) -> str:
        """One sentence for people."""
        return _MESSAGES[self]

    @property
    def failed(self) -> bool:
        """True when the run broke down (its last state is only the last good one)."""
        return self not in NOT_FAILURES


_MESSAGES = {
    Status.OK: "ran to its end: end_time, or every vehicle at rest (end_condition = \"rest\")",
    Status.NAN: "a state component became NaN or infinite",
    Status.OFF_ROAD: "a vehicle left the road's range (MEDUSA exits there)",
    Status.CONTACT_NOT_CONVERGED: "the contact-point solver residual exceeded its tolerance while in contact",
    Status.NOT_AT_REST: "reached end_time, the limit of end_condition = \"rest\", before every vehicle came to rest",
    Status.ENERGY_GAIN: "ran to the end, but the total energy rose above the initial energy plus the drivers' work "
                        "by more than the margin (physically impossible: the contact law created energy)",
}

# Statuses of runs that went to their end: OK, and NOT_AT_REST (module docstring).
NOT_FAILURES = (Status.OK, Status.NOT_AT_REST)


def is_failure(code):
    """Elementwise: the stored status code(s) `code` (int or array) mark a failed run."""
    ok = code == Status.OK
    for s in NOT_FAILURES[1:]:
        ok = ok | (code == s)
    return ~ok if hasattr(ok, "shape") else not ok


def status_label(code: int) -> str:
    """Label of a stored status code; unknown codes read 'code<N>'."""
    try:
        return Status(int(code)).label
    except ValueError:
        return f"code{int(code)}"
